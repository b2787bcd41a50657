package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// Convert_v1beta1_NodePool_To_openyurt_NodePool keeps spec.hostNetwork and the
// nodepool.openyurt.io/hostnetwork annotation as written: the annotation never sets the field in v1beta1.
// Validation refuses an annotation that contradicts the field or repeats it (openyurt/hostnetwork.go says
// why), so that what a client writes is what it reads back.
func Convert_v1beta1_NodePool_To_openyurt_NodePool(in *NodePool, out *openyurt.NodePool, s conversion.Scope) error {
	return autoConvert_v1beta1_NodePool_To_openyurt_NodePool(in, out, s)
}
