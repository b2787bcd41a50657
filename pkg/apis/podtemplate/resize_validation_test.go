package podtemplate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// TestValidateResizePolicy: resizePolicy entries are checked as the core API checks them, on containers and
// on init containers (sidecars or not: the core API accepts the field on both).
func TestValidateResizePolicy(t *testing.T) {
	const c0 = "spec.containers[0].resizePolicy"
	const i0 = "spec.initContainers[0].resizePolicy"
	rp := func(name corev1.ResourceName, policy corev1.ResourceResizeRestartPolicy) corev1.ContainerResizePolicy {
		return corev1.ContainerResizePolicy{ResourceName: name, RestartPolicy: policy}
	}
	cases := []struct {
		name   string
		mutate func(*corev1.PodSpec)
		want   []wantErr
	}{
		{"cpu and memory", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", corev1.NotRequired), rp("memory", corev1.RestartContainer)}
		}, nil},
		{"restart container with restartPolicy OnFailure", func(s *corev1.PodSpec) {
			s.RestartPolicy = corev1.RestartPolicyOnFailure
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("memory", corev1.RestartContainer)}
		}, nil},
		{"not required with restartPolicy Never", func(s *corev1.PodSpec) {
			s.RestartPolicy = corev1.RestartPolicyNever
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", corev1.NotRequired), rp("memory", corev1.NotRequired)}
		}, nil},
		{"unknown resource", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("gpu", corev1.NotRequired)}
		}, []wantErr{{field.ErrorTypeNotSupported, c0 + "[0].resourceName", `"cpu"`}}},
		{"storage is no resize resource", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("ephemeral-storage", corev1.NotRequired)}
		}, []wantErr{{field.ErrorTypeNotSupported, c0 + "[0].resourceName", ""}}},
		{"resource name in capitals", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("CPU", corev1.NotRequired)}
		}, []wantErr{{field.ErrorTypeNotSupported, c0 + "[0].resourceName", ""}}},
		{"duplicate resource", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", corev1.NotRequired), rp("memory", corev1.NotRequired), rp("cpu", corev1.RestartContainer)}
		}, []wantErr{{field.ErrorTypeDuplicate, c0 + "[2].resourceName", ""}}},
		{"empty entry", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{}}
		}, []wantErr{{field.ErrorTypeRequired, c0 + "[0].resourceName", ""}, {field.ErrorTypeRequired, c0 + "[0].restartPolicy", ""}}},
		{"no restart policy", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", "")}
		}, []wantErr{{field.ErrorTypeRequired, c0 + "[0].restartPolicy", ""}}},
		{"unknown restart policy", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", "Sometimes")}
		}, []wantErr{{field.ErrorTypeNotSupported, c0 + "[0].restartPolicy", `"NotRequired"`}}},
		{"restart policy in lower case", func(s *corev1.PodSpec) {
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("memory", "restartContainer")}
		}, []wantErr{{field.ErrorTypeNotSupported, c0 + "[0].restartPolicy", ""}}},
		{"restart container with restartPolicy Never", func(s *corev1.PodSpec) {
			s.RestartPolicy = corev1.RestartPolicyNever
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", corev1.NotRequired), rp("memory", corev1.RestartContainer)}
		}, []wantErr{{field.ErrorTypeInvalid, c0 + "[1].restartPolicy", "must be NotRequired"}}},
		{"every entry of a second container", func(s *corev1.PodSpec) {
			s.Containers = append(s.Containers, corev1.Container{Name: "side", Image: "busybox",
				ResizePolicy: []corev1.ContainerResizePolicy{rp("", "Bogus"), rp("disk", corev1.NotRequired)}})
		}, []wantErr{
			{field.ErrorTypeRequired, "spec.containers[1].resizePolicy[0].resourceName", ""},
			{field.ErrorTypeNotSupported, "spec.containers[1].resizePolicy[0].restartPolicy", ""},
			{field.ErrorTypeNotSupported, "spec.containers[1].resizePolicy[1].resourceName", ""},
		}},
		{"init container", func(s *corev1.PodSpec) {
			s.InitContainers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", corev1.NotRequired)}
		}, nil},
		{"init container with a bad entry", func(s *corev1.PodSpec) {
			s.InitContainers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", "Always")}
		}, []wantErr{{field.ErrorTypeNotSupported, i0 + "[0].restartPolicy", ""}}},
		{"sidecar init container", func(s *corev1.PodSpec) {
			s.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			s.InitContainers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("cpu", corev1.NotRequired), rp("memory", corev1.RestartContainer)}
		}, nil},
		{"sidecar init container with a bad entry", func(s *corev1.PodSpec) {
			s.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			s.InitContainers[0].ResizePolicy = []corev1.ContainerResizePolicy{rp("memory", corev1.NotRequired), rp("memory", corev1.NotRequired)}
		}, []wantErr{{field.ErrorTypeDuplicate, i0 + "[1].resourceName", ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			template := validTemplate()
			tc.mutate(&template.Spec)
			assertErrors(t, ValidatePodTemplateSpec(template, sets.New("data"), field.NewPath("spec", "template")), prefixed(tc.want, "spec.template."))
		})
	}
}

// prefixed returns want with prefix before every field.
func prefixed(want []wantErr, prefix string) []wantErr {
	out := make([]wantErr, len(want))
	for i, w := range want {
		out[i] = wantErr{w.typ, prefix + w.field, w.detail}
	}
	return out
}
