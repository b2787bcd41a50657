package v1beta2

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_NodePoolSpec sets the pool type to Edge, the leader election strategy to random, the leader
// replicas to 1, and adds v1 services and discovery.k8s.io/v1 endpointslices to poolScopeMetadata, as
// OpenYurt does.
func SetDefaults_NodePoolSpec(spec *NodePoolSpec) {
	if spec.Type == "" {
		spec.Type = Edge
	}
	if spec.LeaderElectionStrategy == "" {
		spec.LeaderElectionStrategy = LeaderElectionStrategy(openyurt.DefaultLeaderElectionStrategy)
	}
	if spec.LeaderReplicas == 0 {
		spec.LeaderReplicas = openyurt.DefaultLeaderReplicas
	}
	spec.PoolScopeMetadata = openyurt.WithDefaultPoolScopeMetadata(spec.PoolScopeMetadata)
}
