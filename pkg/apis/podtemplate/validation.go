package podtemplate

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodTemplateSpec checks an embedded pod template. claimNames are the names of volume claim
// templates that a volumeMount may refer to in addition to the pod's own volumes.
func ValidatePodTemplateSpec(template *corev1.PodTemplateSpec, claimNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	// TODO: implemented by the validation work.
	return nil
}
