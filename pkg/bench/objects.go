package bench

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// Object shapes of the API path benchmark.
const (
	// shapeTutorial is artifacts/examples/tapp.yaml: 3 replicas, one templatePool entry.
	shapeTutorial = "tutorial"
	// shapePool5 is the tutorial TApp with a pool of 5 realistic templates (ports, env, resources, probes).
	shapePool5 = "pool5"
)

// benchTApp returns the TApp of a shape with every field tapp-apiserver would default already set, so the
// object stored by tapp-apiserver and by the CRD (which defaults nothing) is the same.
func benchTApp(shape, name string) *tkestackv1.TApp {
	labels := map[string]string{"app": "example-tapp"}
	fifty := intstr.FromString("50%")
	all := intstr.FromString("100%")
	t := &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tkestackv1.TAppSpec{
			Replicas: 3,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9"}}},
			},
			TemplatePool: map[string]corev1.PodTemplateSpec{
				"test": {
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9"}}},
				},
			},
			Templates:           map[string]string{"1": "test"},
			DefaultTemplateName: "default",
			UpdateStrategy: tkestackv1.TAppUpdateStrategy{
				Template:       "default",
				MaxUnavailable: &fifty,
				ForceUpdate:    tkestackv1.ForceUpdateStrategy{MaxUnavailable: &all},
			},
		},
	}
	if shape == shapePool5 {
		t.Spec.Replicas = 10
		t.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{}
		t.Spec.Templates = map[string]string{}
		for i := 0; i < 5; i++ {
			pool := fmt.Sprintf("pool-%d", i)
			t.Spec.TemplatePool[pool] = richTemplate(labels, i)
			t.Spec.Templates[fmt.Sprint(2*i)] = pool
		}
	}
	return t
}

// richTemplate is a pod template as real services write them.
func richTemplate(labels map[string]string, i int) corev1.PodTemplateSpec {
	probe := &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
		InitialDelaySeconds: 5, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      labels,
			Annotations: map[string]string{"example.com/pool": fmt.Sprint(i), "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: fmt.Sprintf("registry.example.com/team/app:v1.%d.0", i),
				Args:  []string{"--listen=:8080", "--metrics=:9090", fmt.Sprintf("--shard=%d", i)},
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "SHARD", Value: fmt.Sprint(i)},
					{Name: "LOG_LEVEL", Value: "info"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
				ReadinessProbe: probe,
				LivenessProbe:  probe.DeepCopy(),
				VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}},
			}}},
		},
	}
}
