package history

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// HashLabel on a ControllerRevision is its revision hash, under the key Kubernetes' own controllers use on
// theirs.
const HashLabel = "controller.kubernetes.io/hash"

// OwnerLabelValue is the value of the label that names a revision's owner: the owner's name, or its stable
// hash when the name is not a valid label value. Ownership is decided by the controller reference alone.
func OwnerLabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	return stablehash.String(name)
}

// Owner says who a ControllerRevision belongs to and how it is labelled.
type Owner struct {
	Namespace, Name string
	// Ref is the controller reference the revision carries.
	Ref metav1.OwnerReference
	// Label is the key of the label whose value is OwnerLabelValue(Name).
	Label string
}

// NewControllerRevision returns the revision named name, numbered number, that holds data of hash for
// owner.
func NewControllerRevision(owner Owner, name, hash string, data []byte, number int64) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: owner.Namespace,
			Labels: map[string]string{
				owner.Label: OwnerLabelValue(owner.Name),
				HashLabel:   hash,
			},
			OwnerReferences: []metav1.OwnerReference{owner.Ref},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
}
