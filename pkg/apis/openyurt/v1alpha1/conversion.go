package v1alpha1

import (
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// v1alpha1 has no spec.hostNetwork: it carries it, as OpenYurt does, as the NodePool annotation
// nodepool.openyurt.io/hostnetwork, so that nothing is lost between versions. A value other than exactly
// "true" stays on the object as written (openyurt/hostnetwork.go has the rules).

// Convert_v1alpha1_NodePool_To_openyurt_NodePool reads the hostnetwork annotation into spec.hostNetwork.
func Convert_v1alpha1_NodePool_To_openyurt_NodePool(in *NodePool, out *openyurt.NodePool, s conversion.Scope) error {
	if err := autoConvert_v1alpha1_NodePool_To_openyurt_NodePool(in, out, s); err != nil {
		return err
	}
	out.Annotations, out.Spec.HostNetwork = openyurt.HostNetworkFromAnnotations(out.Annotations)
	return nil
}

// Convert_openyurt_NodePool_To_v1alpha1_NodePool writes spec.hostNetwork as the hostnetwork annotation.
func Convert_openyurt_NodePool_To_v1alpha1_NodePool(in *openyurt.NodePool, out *NodePool, s conversion.Scope) error {
	if err := autoConvert_openyurt_NodePool_To_v1alpha1_NodePool(in, out, s); err != nil {
		return err
	}
	out.Annotations = openyurt.HostNetworkToAnnotations(out.Annotations, in.Spec.HostNetwork)
	return nil
}

// Convert_openyurt_NodePoolSpec_To_v1alpha1_NodePoolSpec converts every field but hostNetwork, which
// Convert_openyurt_NodePool_To_v1alpha1_NodePool carries in the object's annotations.
func Convert_openyurt_NodePoolSpec_To_v1alpha1_NodePoolSpec(in *openyurt.NodePoolSpec, out *NodePoolSpec, s conversion.Scope) error {
	return autoConvert_openyurt_NodePoolSpec_To_v1alpha1_NodePoolSpec(in, out, s)
}
