package openyurt

import "strings"

// The hostnetwork annotation and spec.hostNetwork.
//
// v1alpha1 has no spec.hostNetwork and carries it, as OpenYurt does, as NodePoolHostNetworkAnnotation;
// v1beta1 has the field. NodePools are stored as v1alpha1, so the annotation is what the store keeps, and
// nothing a client writes may change on the way (a GitOps tool would otherwise see its manifest drift
// forever). The rules:
//
//   - v1alpha1 "true" (exactly) is the form the server writes for hostNetwork: it becomes the field and
//     is written back as "true".
//   - Any other value stays on the object as written: "false" (any case) means no host network, a value
//     "true" in another case (say "TRUE") means host network, and both round-trip unchanged in both
//     versions. Every other value ("1", " true", "") is refused (validation), never reinterpreted.
//   - v1beta1 objects carry the field and the annotation as written. An annotation that contradicts the
//     field (hostNetwork false, or absent, beside "true") is refused naming both: the JSON of a v1beta1
//     object cannot tell hostNetwork: false from no field, so the annotation cannot quietly win. The
//     exact "true" beside hostNetwork: true is refused too: the stored v1alpha1 object cannot tell it
//     from the field alone, so it could not be returned as written.

// HostNetworkAnnotationTrue is the value the server writes for spec.hostNetwork in v1alpha1.
const HostNetworkAnnotationTrue = "true"

// HostNetworkFromAnnotations reads NodePoolHostNetworkAnnotation from the annotations of a v1alpha1
// NodePool: it reports whether the annotation means host network ("true" in any case) and returns the
// annotations to keep on the internal object, without the annotation only when its value is exactly
// "true" (the field then says it). The given map is never modified; nil is returned instead of an empty
// map.
func HostNetworkFromAnnotations(annotations map[string]string) (map[string]string, bool) {
	value, ok := annotations[NodePoolHostNetworkAnnotation]
	if !ok {
		return annotations, false
	}
	if value != HostNetworkAnnotationTrue {
		return annotations, strings.EqualFold(value, HostNetworkAnnotationTrue)
	}
	out := make(map[string]string, len(annotations)-1)
	for k, v := range annotations {
		if k != NodePoolHostNetworkAnnotation {
			out[k] = v
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, true
}

// HostNetworkToAnnotations writes spec.hostNetwork as NodePoolHostNetworkAnnotation for v1alpha1: when it
// is set and the annotations do not already say so (kept as written by HostNetworkFromAnnotations), the
// annotation "true" is added. Annotations are otherwise returned as they are. The given map is never
// modified.
func HostNetworkToAnnotations(annotations map[string]string, hostNetwork bool) map[string]string {
	if !hostNetwork {
		return annotations
	}
	if value, ok := annotations[NodePoolHostNetworkAnnotation]; ok && strings.EqualFold(value, HostNetworkAnnotationTrue) {
		return annotations
	}
	out := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		out[k] = v
	}
	out[NodePoolHostNetworkAnnotation] = HostNetworkAnnotationTrue
	return out
}

// HostNetworkAnnotationProblem says what is wrong with the hostnetwork annotation of an internal NodePool
// (see the rules above), "" when nothing is. badValue reports whether the value itself is unknown (as
// opposed to contradicting or repeating spec.hostNetwork).
func HostNetworkAnnotationProblem(annotations map[string]string, hostNetwork bool) (problem string, badValue bool) {
	value, ok := annotations[NodePoolHostNetworkAnnotation]
	if !ok {
		return "", false
	}
	var says bool
	switch {
	case strings.EqualFold(value, "true"):
		says = true
	case strings.EqualFold(value, "false"):
		says = false
	default:
		return `must be "true" or "false"`, true
	}
	switch {
	case says != hostNetwork:
		return "contradicts spec.hostNetwork (" + boolString(hostNetwork) + "): in v1beta1 the field sets the host network " +
			"(hostNetwork: false and no field are the same); make them agree or remove the annotation", false
	case value == HostNetworkAnnotationTrue:
		return "repeats spec.hostNetwork: true, which v1beta1 sets with the field alone; " +
			"remove the annotation (it is how v1alpha1 writes the field, and could not be returned beside it)", false
	}
	return "", false
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
