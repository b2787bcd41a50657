// Package fuzzer holds the fuzz functions for the core/v1 pod templates that both API groups embed.
package fuzzer

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/randfill"
)

// Funcs fill the core/v1 fields of embedded pod templates that the generated defaulters set, so fuzzed
// objects are fixed points of defaulting.
func Funcs() []interface{} {
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
