package inplace

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCanUpdateInPlace(t *testing.T) {
	tests := []struct {
		name       string
		previous   *corev1.PodTemplateSpec
		mutate     func(*corev1.PodTemplateSpec)
		want       bool
		wantReason string // substring
	}{
		{name: "identical", mutate: func(*corev1.PodTemplateSpec) {}, want: true},
		{
			name:   "image of one container",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "nginx:1.26" },
			want:   true,
		},
		{
			name: "images of all containers",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[0].Image = "nginx@sha256:0123"
				p.Spec.Containers[1].Image = "fluentbit:3"
			},
			want: true,
		},
		{
			name: "labels and annotations only",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Labels = map[string]string{"app": "web", "new": "1"}
				p.Annotations = nil
			},
			want: true,
		},
		{
			name: "empty list equals missing list",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[1].Env = []corev1.EnvVar{}
			},
			want: true,
		},
		{
			name: "equal quantity spelled differently",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.1")
			},
			want: true,
		},
		{
			name: "containers reordered",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[0], p.Spec.Containers[1] = p.Spec.Containers[1], p.Spec.Containers[0]
			},
			wantReason: "reordered",
		},
		{
			name:       "container renamed",
			mutate:     func(p *corev1.PodTemplateSpec) { p.Spec.Containers[1].Name = "logger" },
			wantReason: "renamed",
		},
		{
			name: "container added",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "extra", Image: "x"})
			},
			wantReason: "added or removed",
		},
		{
			name:       "container removed",
			mutate:     func(p *corev1.PodTemplateSpec) { p.Spec.Containers = p.Spec.Containers[:1] },
			wantReason: "added or removed",
		},
		{
			name: "env change with image change",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[0].Image = "nginx:1.26"
				p.Spec.Containers[0].Env[0].Value = "dev"
			},
			wantReason: `container "app": env changed`,
		},
		{
			name: "resources change",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
			},
			wantReason: `container "app": resources changed`,
		},
		{
			name:       "command change",
			mutate:     func(p *corev1.PodTemplateSpec) { p.Spec.Containers[1].Command = []string{"run"} },
			wantReason: `container "log": command changed`,
		},
		{
			name:       "init container image change",
			mutate:     func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers[0].Image = "busybox:2" },
			wantReason: `init container "setup": image changed`,
		},
		{
			name:       "init container removed",
			mutate:     func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers = nil },
			wantReason: "init containers were added or removed",
		},
		{
			name:       "pod-level field change",
			mutate:     func(p *corev1.PodTemplateSpec) { p.Spec.NodeSelector = map[string]string{"zone": "a"} },
			wantReason: "spec.nodeSelector changed",
		},
		{
			name:       "volumes change",
			mutate:     func(p *corev1.PodTemplateSpec) { p.Spec.Volumes = []corev1.Volume{{Name: "v"}} },
			wantReason: "spec.volumes changed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			previous := template()
			desired := template()
			tc.mutate(desired)
			before := desired.DeepCopy()
			got, reason := CanUpdateInPlace(previous, desired)
			if got != tc.want {
				t.Fatalf("CanUpdateInPlace = %v (%q), want %v", got, reason, tc.want)
			}
			if tc.want && reason != "" {
				t.Errorf("reason = %q, want empty", reason)
			}
			if !tc.want && !strings.Contains(reason, tc.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", reason, tc.wantReason)
			}
			if !reflect.DeepEqual(before, desired) || !reflect.DeepEqual(previous, template()) {
				t.Errorf("inputs were modified")
			}
		})
	}
}

func TestCanUpdateInPlaceNilTemplates(t *testing.T) {
	if ok, _ := CanUpdateInPlace(nil, template()); ok {
		t.Error("unknown previous template must not allow an in-place update")
	}
	if ok, _ := CanUpdateInPlace(template(), nil); ok {
		t.Error("unknown desired template must not allow an in-place update")
	}
}

func TestChangedImages(t *testing.T) {
	desired := withImage(template(), "log", "fluentbit:3")
	desired.Spec.InitContainers[0].Image = "ignored:2"
	got := ChangedImages(template(), desired)
	want := map[string]string{"log": "fluentbit:3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ChangedImages = %v, want %v", got, want)
	}
	if got := ChangedImages(template(), template()); len(got) != 0 {
		t.Errorf("ChangedImages of equal templates = %v, want none", got)
	}
}
