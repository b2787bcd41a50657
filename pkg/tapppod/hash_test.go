package tapppod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// goldenTemplate must never change: its hashes are committed below. If a library upgrade changes them,
// every pod of every TApp would be updated after a controller upgrade; the test catches that.
func goldenTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"team": "a"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:  corev1.RestartPolicyAlways,
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1.36", Command: []string{"true"}}},
			Containers: []corev1.Container{{
				Name:  "nginx",
				Image: "nginx:1.25",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

const (
	goldenTemplateHash = "c55570c8e4"
	goldenUniqHash     = "8329faae45"
)

func TestHashGolden(t *testing.T) {
	tmpl := goldenTemplate()
	if got := TemplateHash(tmpl); got != goldenTemplateHash {
		t.Errorf("TemplateHash = %q, want %q: the canonical encoding changed, existing pods would all be updated", got, goldenTemplateHash)
	}
	if got := UniqHash(tmpl); got != goldenUniqHash {
		t.Errorf("UniqHash = %q, want %q: the canonical encoding changed, existing pods would all be recreated", got, goldenUniqHash)
	}
}

func TestHashChanges(t *testing.T) {
	base := goldenTemplate()
	cases := []struct {
		name         string
		mutate       func(*corev1.PodTemplateSpec)
		templateSame bool
		uniqSame     bool
	}{
		{"no change", func(*corev1.PodTemplateSpec) {}, true, true},
		{"hash labels are ignored", func(p *corev1.PodTemplateSpec) {
			p.Labels[tkestack.TemplateHashLabel] = "x"
			p.Labels[tkestack.UniqHashLabel] = "y"
		}, true, true},
		{"nil and empty slices are the same", func(p *corev1.PodTemplateSpec) {
			p.Spec.Tolerations = []corev1.Toleration{}
			p.Spec.Containers[0].Args = []string{}
		}, true, true},
		{"canonical quantity", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("0.5")
		}, true, true},
		{"container image", func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "nginx:1.26" }, false, true},
		{"label added", func(p *corev1.PodTemplateSpec) { p.Labels["v"] = "2" }, false, true},
		{"label removed", func(p *corev1.PodTemplateSpec) { delete(p.Labels, "tier") }, false, true},
		{"annotation changed", func(p *corev1.PodTemplateSpec) { p.Annotations["team"] = "b" }, false, true},
		{"init container image recreates", func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers[0].Image = "busybox:1.37" }, false, false},
		{"env", func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Env[0].Value = "dev" }, false, false},
		{"restartPolicy", func(p *corev1.PodTemplateSpec) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, false, false},
		{"resources", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1")
		}, false, false},
		{"container renamed", func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Name = "web" }, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := goldenTemplate()
			tc.mutate(m)
			if got := TemplateHash(m) == TemplateHash(base); got != tc.templateSame {
				t.Errorf("template hash unchanged = %v, want %v", got, tc.templateSame)
			}
			if got := UniqHash(m) == UniqHash(base); got != tc.uniqSame {
				t.Errorf("uniq hash unchanged = %v, want %v", got, tc.uniqSame)
			}
		})
	}
}

func TestHashDoesNotMutate(t *testing.T) {
	tmpl := goldenTemplate()
	tmpl.Labels[tkestack.TemplateHashLabel] = "old"
	TemplateHash(tmpl)
	UniqHash(tmpl)
	ResizeHash(tmpl)
	if tmpl.Labels[tkestack.TemplateHashLabel] != "old" || tmpl.Spec.Containers[0].Image != "nginx:1.25" ||
		len(tmpl.Spec.Containers[0].Resources.Limits) != 2 {
		t.Fatalf("hashing mutated the template: %+v", tmpl)
	}
}

// TestUniqHashRestartedAt: a template without the restart annotation hashes as it always did (the golden
// value), other annotations stay metadata, and a new value of the restart annotation changes UniqHash, so
// the pods are replaced rather than updated in place.
func TestUniqHashRestartedAt(t *testing.T) {
	base := goldenTemplate()
	plain := UniqHash(base)

	other := base.DeepCopy()
	other.Annotations["team"] = "b"
	if got := UniqHash(other); got != plain {
		t.Errorf("UniqHash changed with an ordinary annotation: %s, want %s", got, plain)
	}

	first := base.DeepCopy()
	first.Annotations[RestartedAtAnnotation] = "2026-11-24T19:00:00Z"
	second := base.DeepCopy()
	second.Annotations[RestartedAtAnnotation] = "2026-11-24T20:00:00Z"
	h1, h2 := UniqHash(first), UniqHash(second)
	if h1 == plain || h2 == plain || h1 == h2 {
		t.Errorf("UniqHash with restartedAt: none %s, first %s, second %s; want three different values", plain, h1, h2)
	}
	imageOnly := first.DeepCopy()
	imageOnly.Spec.Containers[0].Image = "nginx:2"
	if got := UniqHash(imageOnly); got != h1 {
		t.Errorf("UniqHash changed with the image under the same restartedAt: %s, want %s", got, h1)
	}
}
