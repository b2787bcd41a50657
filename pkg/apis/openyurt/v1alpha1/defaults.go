package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/podtemplate"
)

const (
	defaultRevisionHistoryLimit = 10
	defaultNodePoolType         = NodePoolType("Edge")
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_YurtAppDaemonSpec sets revisionHistoryLimit to 10, copies spec.selector into the workload
// template's selector (the two must never differ) and defaults container port protocols.
func SetDefaults_YurtAppDaemonSpec(spec *YurtAppDaemonSpec) {
	if spec.RevisionHistoryLimit == nil {
		limit := int32(defaultRevisionHistoryLimit)
		spec.RevisionHistoryLimit = &limit
	}
	if t := spec.WorkloadTemplate.DeploymentTemplate; t != nil {
		if t.Spec.Selector == nil && spec.Selector != nil {
			t.Spec.Selector = spec.Selector.DeepCopy()
		}
		podtemplate.SetPortDefaults(&t.Spec.Template.Spec)
	}
	if t := spec.WorkloadTemplate.StatefulSetTemplate; t != nil {
		if t.Spec.Selector == nil && spec.Selector != nil {
			t.Spec.Selector = spec.Selector.DeepCopy()
		}
		podtemplate.SetPortDefaults(&t.Spec.Template.Spec)
	}
}

// SetDefaults_NodePoolSpec sets the pool type to Edge.
func SetDefaults_NodePoolSpec(spec *NodePoolSpec) {
	if spec.Type == "" {
		spec.Type = defaultNodePoolType
	}
}
