package tkestack

import corev1 "k8s.io/api/core/v1"

// PodTemplate returns spec.template, or an empty template when it is nil (a TApp built by hand; a decoded one
// always has its template). The result must not be changed: it may be shared with other TApps.
func (s *TAppSpec) PodTemplate() *corev1.PodTemplateSpec {
	if s.Template == nil {
		return &corev1.PodTemplateSpec{}
	}
	return s.Template
}
