package tapppod

import (
	"encoding/json"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// TemplateKeysAnnotation records, on every pod, which label and annotation keys came from its template
// (JSON {"labels":[...],"annotations":[...]}, keys sorted). An in-place update removes the keys that were
// in the old template and are not in the new one, and leaves keys added by anyone else alone.
const TemplateKeysAnnotation = "tkestack.io/template-keys"

// TemplateKeys is the value of TemplateKeysAnnotation.
type TemplateKeys struct {
	Labels      []string `json:"labels,omitempty"`
	Annotations []string `json:"annotations,omitempty"`
}

// TemplateKeysValue is the TemplateKeysAnnotation value for template t. The instance and hash labels are
// always managed and not listed, nor is the annotation itself.
func TemplateKeysValue(t *corev1.PodTemplateSpec) string {
	var keys TemplateKeys
	for _, k := range slices.Sorted(maps.Keys(t.Labels)) {
		if k != tkestack.InstanceIDLabel && k != tkestack.TemplateHashLabel && k != tkestack.UniqHashLabel && k != ResizeHashLabel {
			keys.Labels = append(keys.Labels, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t.Annotations)) {
		if k != TemplateKeysAnnotation {
			keys.Annotations = append(keys.Annotations, k)
		}
	}
	data, _ := json.Marshal(keys)
	return string(data)
}

// RecordedTemplateKeys reads TemplateKeysAnnotation from a pod; pods without it (created by the original
// controller) have no recorded keys, so nothing is removed from them.
func RecordedTemplateKeys(pod *corev1.Pod) TemplateKeys {
	var keys TemplateKeys
	if v, ok := pod.Annotations[TemplateKeysAnnotation]; ok {
		_ = json.Unmarshal([]byte(v), &keys)
	}
	return keys
}
