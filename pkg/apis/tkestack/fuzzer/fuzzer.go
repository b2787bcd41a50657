// Package fuzzer holds the fuzz functions for round-trip tests of the apps.tkestack.io group. They keep
// fuzzed internal objects fixed points of defaulting, because decoding defaults and the round trip compares
// the decoded object with the original.
package fuzzer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	podtemplatefuzzer "github.com/tapp-io/tapp-apiserver/pkg/apis/podtemplate/fuzzer"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// Funcs returns the fuzz functions of the group.
var Funcs = func(codecs runtimeserializer.CodecFactory) []interface{} {
	return append([]interface{}{
		func(spec *tkestack.TAppSpec, c randfill.Continue) {
			c.FillNoCustom(spec)
			// The legacy key is folded into defaultTemplateName and never stored.
			spec.LegacyDefaultTemplateName = ""
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
			if spec.RevisionHistoryLimit == nil {
				v := int32(tkestack.DefaultRevisionHistoryLimit)
				spec.RevisionHistoryLimit = &v
			}
			if spec.PersistentVolumeClaimRetentionPolicy == nil {
				spec.PersistentVolumeClaimRetentionPolicy = &tkestack.TAppPersistentVolumeClaimRetentionPolicy{}
			}
			if spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
				spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = tkestack.RetainPersistentVolumeClaimRetentionPolicyType
			}
			if spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
				spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = tkestack.RetainPersistentVolumeClaimRetentionPolicyType
			}
			if spec.PodManagementPolicy == "" {
				spec.PodManagementPolicy = tkestack.ParallelPodManagement
			}
			// Decoding always gives the internal spec a template (it is a pointer only to be shared).
			if spec.Template == nil {
				spec.Template = &corev1.PodTemplateSpec{}
			}
			// Defaulting derives a missing selector from the template labels.
			if spec.Selector == nil {
				spec.Selector = &metav1.LabelSelector{}
			}
		},
	}, podtemplatefuzzer.Funcs()...)
}
