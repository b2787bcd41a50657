package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// Convert_v1beta1_NodePool_To_openyurt_NodePool keeps spec.hostNetwork and the
// nodepool.openyurt.io/hostnetwork annotation as written: the annotation never sets the field in v1beta1.
// Validation refuses an annotation that contradicts the field or repeats it (openyurt/hostnetwork.go says
// why), so that what a client writes is what it reads back. The fields of v1beta2 ride in the leader
// annotations nodepool.tapp.io/<field> (openyurt/leaderannotations.go), as in v1alpha1.
func Convert_v1beta1_NodePool_To_openyurt_NodePool(in *NodePool, out *openyurt.NodePool, s conversion.Scope) error {
	if err := autoConvert_v1beta1_NodePool_To_openyurt_NodePool(in, out, s); err != nil {
		return err
	}
	out.Annotations = openyurt.LeaderFieldsFromAnnotations(out.Annotations, &out.Spec, &out.Status)
	return nil
}

// Convert_openyurt_NodePool_To_v1beta1_NodePool writes the v1beta2 fields as leader annotations.
func Convert_openyurt_NodePool_To_v1beta1_NodePool(in *openyurt.NodePool, out *NodePool, s conversion.Scope) error {
	if err := autoConvert_openyurt_NodePool_To_v1beta1_NodePool(in, out, s); err != nil {
		return err
	}
	out.Annotations = openyurt.LeaderFieldsToAnnotations(out.Annotations, &in.Spec, &in.Status)
	return nil
}

// Convert_openyurt_NodePoolSpec_To_v1beta1_NodePoolSpec converts every field v1beta1 has; the v1beta2
// fields go into the object's annotations (Convert_openyurt_NodePool_To_v1beta1_NodePool).
func Convert_openyurt_NodePoolSpec_To_v1beta1_NodePoolSpec(in *openyurt.NodePoolSpec, out *NodePoolSpec, s conversion.Scope) error {
	return autoConvert_openyurt_NodePoolSpec_To_v1beta1_NodePoolSpec(in, out, s)
}

// Convert_openyurt_NodePoolStatus_To_v1beta1_NodePoolStatus converts the node counts and names; the
// leader fields go into the object's annotations.
func Convert_openyurt_NodePoolStatus_To_v1beta1_NodePoolStatus(in *openyurt.NodePoolStatus, out *NodePoolStatus, s conversion.Scope) error {
	return autoConvert_openyurt_NodePoolStatus_To_v1beta1_NodePoolStatus(in, out, s)
}
