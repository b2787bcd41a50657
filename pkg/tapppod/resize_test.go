package tapppod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestQOSClass(t *testing.T) {
	for _, tc := range []struct {
		name       string
		containers []corev1.ResourceRequirements
		want       corev1.PodQOSClass
	}{
		{"nothing", []corev1.ResourceRequirements{{}}, corev1.PodQOSBestEffort},
		{"only ephemeral storage", []corev1.ResourceRequirements{{Requests: list("ephemeral-storage", "1Gi")}}, corev1.PodQOSBestEffort},
		{"limits only", []corev1.ResourceRequirements{{Limits: list("cpu", "1", "memory", "1Gi")}}, corev1.PodQOSGuaranteed},
		{"requests equal limits", []corev1.ResourceRequirements{{Requests: list("cpu", "1000m", "memory", "1Gi"), Limits: list("cpu", "1", "memory", "1Gi")}}, corev1.PodQOSGuaranteed},
		{"request below limit", []corev1.ResourceRequirements{{Requests: list("cpu", "500m", "memory", "1Gi"), Limits: list("cpu", "1", "memory", "1Gi")}}, corev1.PodQOSBurstable},
		{"no memory limit", []corev1.ResourceRequirements{{Limits: list("cpu", "1")}}, corev1.PodQOSBurstable},
		{"one container without resources", []corev1.ResourceRequirements{{Limits: list("cpu", "1", "memory", "1Gi")}, {}}, corev1.PodQOSBurstable},
		{"requests only", []corev1.ResourceRequirements{{Requests: list("memory", "1Gi")}}, corev1.PodQOSBurstable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &corev1.PodSpec{}
			for _, r := range tc.containers {
				spec.Containers = append(spec.Containers, corev1.Container{Name: "c", Resources: r})
			}
			if got := QOSClass(spec); got != tc.want {
				t.Errorf("QOSClass = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestResizeHash(t *testing.T) {
	base := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1",
			Resources: corev1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "64Mi"), Limits: list("cpu", "1", "memory", "1Gi")},
		}}}}
	}
	h := ResizeHash(base())
	for _, tc := range []struct {
		name   string
		change func(*corev1.PodTemplateSpec)
		same   bool
	}{
		{"cpu and memory, same QoS", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Requests = list("cpu", "200m", "memory", "128Mi")
		}, true},
		{"image and resources", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Image = "nginx:2"
			t.Spec.Containers[0].Resources.Limits = list("cpu", "2", "memory", "2Gi")
		}, true},
		{"metadata", func(t *corev1.PodTemplateSpec) { t.Labels = map[string]string{"a": "b"} }, true},
		{"to Guaranteed", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Requests = list("cpu", "1", "memory", "1Gi")
		}, false},
		{"to BestEffort", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Resources = corev1.ResourceRequirements{} }, false},
		{"resize policy", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: "memory", RestartPolicy: corev1.RestartContainer}}
		}, false},
		{"command", func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Command = []string{"sh"} }, false},
		{"restart asked", func(t *corev1.PodTemplateSpec) {
			t.Annotations = map[string]string{RestartedAtAnnotation: "now"}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := base()
			tc.change(tpl)
			if got := ResizeHash(tpl); (got == h) != tc.same {
				t.Errorf("ResizeHash same = %v, want %v", got == h, tc.same)
			}
		})
	}
	// UniqHash is not changed by the resize label: a template hashes as before.
	if UniqHash(base()) == UniqHash(func() *corev1.PodTemplateSpec {
		t := base()
		t.Spec.Containers[0].Resources.Requests = list("cpu", "200m", "memory", "128Mi")
		return t
	}()) {
		t.Error("UniqHash ignores resources")
	}
}
