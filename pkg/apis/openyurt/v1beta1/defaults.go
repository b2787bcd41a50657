package v1beta1

import "k8s.io/apimachinery/pkg/runtime"

const defaultNodePoolType = Edge

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_NodePoolSpec sets the pool type to Edge.
func SetDefaults_NodePoolSpec(spec *NodePoolSpec) {
	if spec.Type == "" {
		spec.Type = defaultNodePoolType
	}
}
