package tapppod

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// TemplateHash returns the hash of the whole template (metadata and spec), ignoring the two hash labels
// if the template carries them. A pod whose TemplateHashLabel differs from it is out of date.
//
// The hash is computed over canonical JSON, not over a dump of Go structs: the template is encoded with
// encoding/json (map keys sorted, zero-valued omitempty fields and nil pointers left out), then nulls and
// empty arrays are removed. A field that a newer k8s.io/api adds is optional and therefore absent from the
// JSON of a template that does not use it, so upgrading the libraries does not change the hash and does not
// restart pods. Quantities are encoded in their canonical form ("1000m" and "1" hash the same).
//
// The value is the first 10 hex characters of the sha256 of that JSON. Pods created by the original
// controller carry decimal fnv hashes; they never match and are updated through the normal budgets.
func TemplateHash(t *corev1.PodTemplateSpec) string {
	_, hasTemplateHash := t.Labels[tkestack.TemplateHashLabel]
	_, hasUniqHash := t.Labels[tkestack.UniqHashLabel]
	if !hasTemplateHash && !hasUniqHash {
		return stablehash.Object(t)
	}
	// A shallow copy with labels of its own: the hash only reads the template.
	c := *t
	c.Labels = maps.Clone(t.Labels)
	delete(c.Labels, tkestack.TemplateHashLabel)
	delete(c.Labels, tkestack.UniqHashLabel)
	return stablehash.Object(&c)
}

// UniqHash returns the hash of the template spec with the image of every regular container blanked. Two
// templates with the same UniqHash differ only in container images and metadata, which the in-place update
// applies to a running pod; any other difference recreates the pod.
//
// Decisions:
//   - metadata (labels, annotations) is not part of it: a label or annotation change is applied in place,
//     except RestartedAtAnnotation: `kubectl tapp rollout restart` (like `kubectl rollout restart`) sets it
//     to ask for new pods, so its value is part of the hash when the template has it (a template without it
//     hashes as before, and a pod created before it was set is recreated once it is);
//   - init container images ARE part of it: the kubelet does not rerun init containers of a running pod,
//     so an init image change can only take effect by recreating the pod (never half-applied in place);
//   - ephemeral containers are not part of a template and are ignored.
func UniqHash(t *corev1.PodTemplateSpec) string {
	spec := specWithContainers(&t.Spec)
	for i := range spec.Containers {
		spec.Containers[i].Image = ""
	}
	if restartedAt := t.Annotations[RestartedAtAnnotation]; restartedAt != "" {
		return stablehash.Object(struct {
			Spec        *corev1.PodSpec `json:"spec"`
			RestartedAt string          `json:"restartedAt"`
		}{spec, restartedAt})
	}
	return stablehash.Object(spec)
}

// specWithContainers returns a shallow copy of spec with a copy of its regular containers, whose own fields
// the caller may then blank: the hashes only read the rest.
func specWithContainers(spec *corev1.PodSpec) *corev1.PodSpec {
	c := *spec
	c.Containers = slices.Clone(spec.Containers)
	return &c
}

// RestartedAtAnnotation is the template annotation `kubectl rollout restart` sets (and `kubectl tapp rollout
// restart` sets on a TApp's templates) to have every pod replaced.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
