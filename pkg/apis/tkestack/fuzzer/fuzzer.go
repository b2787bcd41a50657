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
			// Defaulting derives a missing selector from the template labels.
			if spec.Selector == nil {
				spec.Selector = &metav1.LabelSelector{}
			}
		},
	}, coreV1Funcs()...)
}

// coreV1Funcs fill the core/v1 fields of embedded pod templates that the generated defaulters set.
func coreV1Funcs() []interface{} {
	return []interface{}{
		func(p *corev1.ContainerPort, c randfill.Continue) {
			c.FillNoCustom(p)
			if p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		},
		func(s *corev1.FileKeySelector, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Optional == nil {
				s.Optional = new(bool)
			}
		},
		func(g *corev1.GRPCAction, c randfill.Continue) {
			c.FillNoCustom(g)
			if g.Service == nil {
				g.Service = new(string)
			}
		},
		func(v *corev1.ISCSIVolumeSource, c randfill.Continue) {
			c.FillNoCustom(v)
			if v.ISCSIInterface == "" {
				v.ISCSIInterface = "default"
			}
		},
		func(v *corev1.RBDVolumeSource, c randfill.Continue) {
			c.FillNoCustom(v)
			if v.RBDPool == "" {
				v.RBDPool = "rbd"
			}
			if v.RadosUser == "" {
				v.RadosUser = "admin"
			}
			if v.Keyring == "" {
				v.Keyring = "/etc/ceph/keyring"
			}
		},
		func(v *corev1.AzureDiskVolumeSource, c randfill.Continue) {
			c.FillNoCustom(v)
			if v.CachingMode == nil {
				mode := corev1.AzureDataDiskCachingReadWrite
				v.CachingMode = &mode
			}
			if v.FSType == nil {
				fsType := "ext4"
				v.FSType = &fsType
			}
			if v.ReadOnly == nil {
				v.ReadOnly = new(bool)
			}
			if v.Kind == nil {
				kind := corev1.AzureSharedBlobDisk
				v.Kind = &kind
			}
		},
		func(v *corev1.ScaleIOVolumeSource, c randfill.Continue) {
			c.FillNoCustom(v)
			if v.StorageMode == "" {
				v.StorageMode = "ThinProvisioned"
			}
			if v.FSType == "" {
				v.FSType = "xfs"
			}
		},
	}
}
