// Package podtemplate owns the defaulting and validation of the core/v1 pod templates that TApps and
// YurtAppDaemons embed. It covers what a controller needs to create valid pods; the exact core API rules
// are checked by a dry-run admission plugin in cluster mode.
package podtemplate

import corev1 "k8s.io/api/core/v1"

// SetPortDefaults sets the protocol of every container port that has none to TCP, as the core API does, so
// that ports merge by (containerPort, protocol) in server-side apply.
func SetPortDefaults(spec *corev1.PodSpec) {
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			for j := range containers[i].Ports {
				if containers[i].Ports[j].Protocol == "" {
					containers[i].Ports[j].Protocol = corev1.ProtocolTCP
				}
			}
		}
	}
}
