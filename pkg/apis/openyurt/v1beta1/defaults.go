package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/podtemplate"
)

const (
	defaultNodePoolType         = Edge
	defaultRevisionHistoryLimit = 10
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_NodePoolSpec sets the pool type to Edge.
func SetDefaults_NodePoolSpec(spec *NodePoolSpec) {
	if spec.Type == "" {
		spec.Type = defaultNodePoolType
	}
}

// SetDefaults_YurtAppSetSpec sets revisionHistoryLimit to 10, as OpenYurt's webhook does, and defaults the
// protocol of the template's container ports (the key of their list, for server-side apply).
func SetDefaults_YurtAppSetSpec(spec *YurtAppSetSpec) {
	if spec.RevisionHistoryLimit == nil {
		limit := int32(defaultRevisionHistoryLimit)
		spec.RevisionHistoryLimit = &limit
	}
	if t := spec.Workload.WorkloadTemplate.DeploymentTemplate; t != nil {
		podtemplate.SetPortDefaults(&t.Spec.Template.Spec)
	}
	if t := spec.Workload.WorkloadTemplate.StatefulSetTemplate; t != nil {
		podtemplate.SetPortDefaults(&t.Spec.Template.Spec)
	}
}
