package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/podtemplate"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_TAppSpec fills the fields a user may leave out:
//   - defaultTemplateName from the legacy "DefaultTemplateName" key, else "default";
//   - updateStrategy.template from defaultTemplateName;
//   - updateStrategy.maxUnavailable 1 and forceUpdate.maxUnavailable "100%";
//   - revisionHistoryLimit 10;
//   - persistentVolumeClaimRetentionPolicy whenDeleted and whenScaled Retain;
//   - podManagementPolicy Parallel;
//   - selector from the labels of spec.template, without the instance and hash labels (tapp_instance_key,
//     tapp_template_hash_key, tapp_uniq_hash_key: the controller rewrites them on every pod, and a TApp moved
//     from the original controller carries its hashes in its template labels);
//   - container port protocol TCP in every template, so ports merge by (containerPort, protocol).
func SetDefaults_TAppSpec(spec *TAppSpec) {
	if spec.DefaultTemplateName == "" {
		spec.DefaultTemplateName = spec.LegacyDefaultTemplateName
	}
	if spec.DefaultTemplateName == "" {
		spec.DefaultTemplateName = tkestack.DefaultTemplateName
	}
	if spec.UpdateStrategy.Template == "" {
		spec.UpdateStrategy.Template = spec.DefaultTemplateName
	}
	if spec.UpdateStrategy.MaxUnavailable == nil {
		v := intstr.FromInt32(tkestack.DefaultMaxUnavailable)
		spec.UpdateStrategy.MaxUnavailable = &v
	}
	if spec.UpdateStrategy.ForceUpdate.MaxUnavailable == nil {
		v := intstr.FromString(tkestack.DefaultForceUpdateMaxUnavailable)
		spec.UpdateStrategy.ForceUpdate.MaxUnavailable = &v
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &TAppPersistentVolumeClaimRetentionPolicy{}
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = ParallelPodManagement
	}
	if spec.RevisionHistoryLimit == nil {
		v := int32(tkestack.DefaultRevisionHistoryLimit)
		spec.RevisionHistoryLimit = &v
	}
	if spec.Selector == nil && len(spec.Template.Labels) > 0 {
		matchLabels := make(map[string]string, len(spec.Template.Labels))
		for k, v := range spec.Template.Labels {
			if k != tkestack.InstanceIDLabel && k != tkestack.TemplateHashLabel && k != tkestack.UniqHashLabel {
				matchLabels[k] = v
			}
		}
		if len(matchLabels) > 0 {
			spec.Selector = &metav1.LabelSelector{MatchLabels: matchLabels}
		}
	}
	podtemplate.SetPortDefaults(&spec.Template.Spec)
	for name, template := range spec.TemplatePool {
		podtemplate.SetPortDefaults(&template.Spec)
		spec.TemplatePool[name] = template
	}
}
