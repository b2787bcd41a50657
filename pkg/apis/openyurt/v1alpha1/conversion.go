package v1alpha1

import (
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// v1alpha1 has no spec.hostNetwork: it carries it, as OpenYurt does, as the NodePool annotation
// nodepool.openyurt.io/hostnetwork, so that nothing is lost between versions. A value other than exactly
// "true" stays on the object as written (openyurt/hostnetwork.go has the rules). The fields of v1beta2
// (interConnectivity, the leader election fields, poolScopeMetadata, and status leaderEndpoints,
// leaderNum, leaderLastElectedTime, conditions) ride in the leader annotations nodepool.tapp.io/<field>
// (openyurt/leaderannotations.go).

// Convert_v1alpha1_NodePool_To_openyurt_NodePool reads the hostnetwork and leader annotations into their
// fields.
func Convert_v1alpha1_NodePool_To_openyurt_NodePool(in *NodePool, out *openyurt.NodePool, s conversion.Scope) error {
	if err := autoConvert_v1alpha1_NodePool_To_openyurt_NodePool(in, out, s); err != nil {
		return err
	}
	out.Annotations, out.Spec.HostNetwork = openyurt.HostNetworkFromAnnotations(out.Annotations)
	out.Annotations = openyurt.LeaderFieldsFromAnnotations(out.Annotations, &out.Spec, &out.Status)
	return nil
}

// Convert_openyurt_NodePool_To_v1alpha1_NodePool writes spec.hostNetwork and the v1beta2 fields as
// annotations.
func Convert_openyurt_NodePool_To_v1alpha1_NodePool(in *openyurt.NodePool, out *NodePool, s conversion.Scope) error {
	if err := autoConvert_openyurt_NodePool_To_v1alpha1_NodePool(in, out, s); err != nil {
		return err
	}
	out.Annotations = openyurt.HostNetworkToAnnotations(out.Annotations, in.Spec.HostNetwork)
	out.Annotations = openyurt.LeaderFieldsToAnnotations(out.Annotations, &in.Spec, &in.Status)
	return nil
}

// Convert_openyurt_NodePoolSpec_To_v1alpha1_NodePoolSpec converts every field v1alpha1 has; hostNetwork and
// the v1beta2 fields go into the object's annotations (Convert_openyurt_NodePool_To_v1alpha1_NodePool).
func Convert_openyurt_NodePoolSpec_To_v1alpha1_NodePoolSpec(in *openyurt.NodePoolSpec, out *NodePoolSpec, s conversion.Scope) error {
	return autoConvert_openyurt_NodePoolSpec_To_v1alpha1_NodePoolSpec(in, out, s)
}

// Convert_openyurt_NodePoolStatus_To_v1alpha1_NodePoolStatus converts the node counts and names; the
// leader fields go into the object's annotations.
func Convert_openyurt_NodePoolStatus_To_v1alpha1_NodePoolStatus(in *openyurt.NodePoolStatus, out *NodePoolStatus, s conversion.Scope) error {
	return autoConvert_openyurt_NodePoolStatus_To_v1alpha1_NodePoolStatus(in, out, s)
}
