package v1beta1

import (
	"k8s.io/apimachinery/pkg/conversion"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// Convert_v1beta1_NodePool_To_openyurt_NodePool also reads the nodepool.openyurt.io/hostnetwork annotation,
// which OpenYurt honours in every version: "true" sets spec.hostNetwork. The annotation itself is never
// kept, so the field is the one place the setting lives and the versions cannot disagree.
func Convert_v1beta1_NodePool_To_openyurt_NodePool(in *NodePool, out *openyurt.NodePool, s conversion.Scope) error {
	if err := autoConvert_v1beta1_NodePool_To_openyurt_NodePool(in, out, s); err != nil {
		return err
	}
	var annotated bool
	out.Annotations, annotated = openyurt.HostNetworkFromAnnotations(out.Annotations)
	out.Spec.HostNetwork = out.Spec.HostNetwork || annotated
	return nil
}
