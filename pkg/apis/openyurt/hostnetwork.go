package openyurt

import "strings"

// HostNetworkFromAnnotations reads NodePoolHostNetworkAnnotation from the annotations of a NodePool in a
// version without spec.hostNetwork: it reports whether the annotation says "true" (in any case) and returns
// the annotations without it. The given map is never modified; nil is returned instead of an empty map.
func HostNetworkFromAnnotations(annotations map[string]string) (map[string]string, bool) {
	value, ok := annotations[NodePoolHostNetworkAnnotation]
	if !ok {
		return annotations, false
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
	return out, strings.EqualFold(value, "true")
}

// HostNetworkToAnnotations writes spec.hostNetwork as NodePoolHostNetworkAnnotation for a version without
// the field: "true" when set, absent otherwise. The given map is never modified.
func HostNetworkToAnnotations(annotations map[string]string, hostNetwork bool) map[string]string {
	if !hostNetwork {
		out, _ := HostNetworkFromAnnotations(annotations)
		return out
	}
	out := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		out[k] = v
	}
	out[NodePoolHostNetworkAnnotation] = "true"
	return out
}
