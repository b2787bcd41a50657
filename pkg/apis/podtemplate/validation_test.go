package podtemplate

import (
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// emptyDir is a volume source for volumes whose source does not matter.
var emptyDir = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}

// wantErr is one expected error: its type, its full path and, if set, a substring of its detail.
type wantErr struct {
	typ    field.ErrorType
	field  string
	detail string
}

// assertErrors checks that errs are exactly want, in any order.
func assertErrors(t *testing.T, errs field.ErrorList, want []wantErr) {
	t.Helper()
	got := make([]string, 0, len(errs))
	for _, err := range errs {
		got = append(got, string(err.Type)+" "+err.Field)
	}
	expected := make([]string, 0, len(want))
	for _, w := range want {
		expected = append(expected, string(w.typ)+" "+w.field)
	}
	sort.Strings(got)
	sort.Strings(expected)
	if strings.Join(got, "\n") != strings.Join(expected, "\n") {
		t.Fatalf("errors differ\n got: %q\nwant: %q\nfull: %v", got, expected, errs)
	}
	for _, w := range want {
		if w.detail == "" {
			continue
		}
		found := false
		for _, err := range errs {
			if err.Type == w.typ && err.Field == w.field && strings.Contains(err.Detail, w.detail) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s error on %s with detail containing %q: %v", w.typ, w.field, w.detail, errs)
		}
	}
}

func validTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"example.com/note": "anything goes here"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			InitContainers: []corev1.Container{{
				Name:  "init",
				Image: "busybox",
				Ports: []corev1.ContainerPort{{Name: "init-port", ContainerPort: 9000, Protocol: corev1.ProtocolUDP}},
			}},
			Containers: []corev1.Container{{
				Name:  "nginx",
				Image: "nginx:1.7.9",
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP},
					{ContainerPort: 81}, // protocol left for defaulting
					{Name: "sctp", ContainerPort: 82, Protocol: corev1.ProtocolSCTP},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "config", MountPath: "/etc/nginx"},
					{Name: "data", MountPath: "/data"},
				},
				VolumeDevices: []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/xvda"}},
			}},
			Volumes: []corev1.Volume{{
				Name:         "config",
				VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
			}},
		},
	}
}

func TestValidatePodTemplateSpec(t *testing.T) {
	claims := sets.New("data")
	const c0 = "tpl.spec.containers[0]"
	cases := []struct {
		name   string
		mutate func(*corev1.PodTemplateSpec)
		want   []wantErr
	}{
		{name: "valid template", mutate: func(*corev1.PodTemplateSpec) {}},
		{name: "empty restartPolicy means Always", mutate: func(p *corev1.PodTemplateSpec) { p.Spec.RestartPolicy = "" }},
		{
			name:   "invalid label",
			mutate: func(p *corev1.PodTemplateSpec) { p.Labels["app"] = "not a label value" },
			want:   []wantErr{{field.ErrorTypeInvalid, "tpl.metadata.labels", ""}},
		},
		{
			name:   "invalid annotation key",
			mutate: func(p *corev1.PodTemplateSpec) { p.Annotations = map[string]string{"bad key!": "x"} },
			want:   []wantErr{{field.ErrorTypeInvalid, "tpl.metadata.annotations", ""}},
		},
		{
			name: "no containers",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers = nil
			},
			want: []wantErr{{field.ErrorTypeRequired, "tpl.spec.containers", "at least one container"}},
		},
		{
			name:   "container name not a DNS label",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Name = "Nginx_1" },
			want:   []wantErr{{field.ErrorTypeInvalid, c0 + ".name", ""}},
		},
		{
			name:   "container name missing",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Name = "" },
			want:   []wantErr{{field.ErrorTypeRequired, c0 + ".name", ""}},
		},
		{
			name:   "container name duplicates an init container",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Name = "init" },
			want:   []wantErr{{field.ErrorTypeDuplicate, c0 + ".name", ""}},
		},
		{
			name: "duplicate container names",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "nginx", Image: "nginx"})
			},
			want: []wantErr{{field.ErrorTypeDuplicate, "tpl.spec.containers[1].name", ""}},
		},
		{
			name:   "missing image",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "" },
			want:   []wantErr{{field.ErrorTypeRequired, c0 + ".image", ""}},
		},
		{
			name:   "missing init container image",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers[0].Image = " " },
			want:   []wantErr{{field.ErrorTypeRequired, "tpl.spec.initContainers[0].image", ""}},
		},
		{
			name:   "containerPort zero",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 },
			want:   []wantErr{{field.ErrorTypeInvalid, c0 + ".ports[0].containerPort", ""}},
		},
		{
			name:   "containerPort too large",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[0].ContainerPort = 65536 },
			want:   []wantErr{{field.ErrorTypeInvalid, c0 + ".ports[0].containerPort", ""}},
		},
		{
			name:   "hostPort out of range",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[0].HostPort = 70000 },
			want:   []wantErr{{field.ErrorTypeInvalid, c0 + ".ports[0].hostPort", ""}},
		},
		{
			name:   "negative hostPort",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[0].HostPort = -1 },
			want:   []wantErr{{field.ErrorTypeInvalid, c0 + ".ports[0].hostPort", ""}},
		},
		{
			name:   "unsupported protocol",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[0].Protocol = "tcp" },
			want:   []wantErr{{field.ErrorTypeNotSupported, c0 + ".ports[0].protocol", ""}},
		},
		{
			name:   "invalid port name",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[0].Name = "this-name-is-far-too-long" },
			want:   []wantErr{{field.ErrorTypeInvalid, c0 + ".ports[0].name", ""}},
		},
		{
			name:   "port name duplicated across containers",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[2].Name = "init-port" },
			want:   []wantErr{{field.ErrorTypeDuplicate, c0 + ".ports[2].name", ""}},
		},
		{
			name:   "unsupported restartPolicy",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.RestartPolicy = "Sometimes" },
			want:   []wantErr{{field.ErrorTypeNotSupported, "tpl.spec.restartPolicy", ""}},
		},
		{
			name: "request above limit",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
			},
			want: []wantErr{{field.ErrorTypeInvalid, c0 + ".resources.requests[cpu]", "must be less than or equal to cpu limit"}},
		},
		{
			name: "negative limit",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("-1Mi")
				delete(p.Spec.Containers[0].Resources.Requests, corev1.ResourceMemory)
			},
			want: []wantErr{{field.ErrorTypeInvalid, c0 + ".resources.limits[memory]", "greater than or equal to 0"}},
		},
		{
			name: "negative init container request",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.InitContainers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
			},
			want: []wantErr{{field.ErrorTypeInvalid, "tpl.spec.initContainers[0].resources.requests[cpu]", "greater than or equal to 0"}},
		},
		{
			name: "volume name not a DNS label",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "Bad.Name", VolumeSource: emptyDir})
			},
			want: []wantErr{{field.ErrorTypeInvalid, "tpl.spec.volumes[1].name", ""}},
		},
		{
			name: "duplicate volume",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "config", VolumeSource: emptyDir})
			},
			want: []wantErr{{field.ErrorTypeDuplicate, "tpl.spec.volumes[1].name", ""}},
		},
		{
			name:   "volumeMount without volume or claim",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].VolumeMounts[0].Name = "missing" },
			want:   []wantErr{{field.ErrorTypeNotFound, c0 + ".volumeMounts[0].name", ""}},
		},
		{
			name:   "volumeDevice without volume or claim",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].VolumeDevices[0].Name = "missing" },
			want:   []wantErr{{field.ErrorTypeNotFound, c0 + ".volumeDevices[0].name", ""}},
		},
		{
			name:   "empty mountPath",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].VolumeMounts[1].MountPath = "" },
			want:   []wantErr{{field.ErrorTypeRequired, c0 + ".volumeMounts[1].mountPath", ""}},
		},
		{
			name:   "image with spaces",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "nginx with spaces" },
			want:   []wantErr{{field.ErrorTypeInvalid, c0 + ".image", "must not contain whitespace"}},
		},
		{
			name:   "image with a trailing newline",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.InitContainers[0].Image = "busybox\n" },
			want:   []wantErr{{field.ErrorTypeInvalid, "tpl.spec.initContainers[0].image", "must not contain whitespace"}},
		},
		{
			name: "volume without a source",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "scratch"})
			},
			want: []wantErr{{field.ErrorTypeRequired, "tpl.spec.volumes[1]", "must specify a volume type"}},
		},
		{
			name:   "negative terminationGracePeriodSeconds",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-5) },
			want:   []wantErr{{field.ErrorTypeInvalid, "tpl.spec.terminationGracePeriodSeconds", "greater than or equal to 0"}},
		},
		{
			name:   "zero terminationGracePeriodSeconds",
			mutate: func(p *corev1.PodTemplateSpec) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) },
		},
		{
			name: "ephemeral containers",
			mutate: func(p *corev1.PodTemplateSpec) {
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
			},
			want: []wantErr{{field.ErrorTypeForbidden, "tpl.spec.ephemeralContainers", ""}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			template := validTemplate()
			tc.mutate(template)
			assertErrors(t, ValidatePodTemplateSpec(template, claims, field.NewPath("tpl")), tc.want)
		})
	}
}

func TestValidatePodTemplateSpecClaimNames(t *testing.T) {
	// Without the claim "data" the mounts that use it do not resolve.
	errs := ValidatePodTemplateSpec(validTemplate(), nil, field.NewPath("tpl"))
	assertErrors(t, errs, []wantErr{
		{field.ErrorTypeNotFound, "tpl.spec.containers[0].volumeMounts[1].name", ""},
		{field.ErrorTypeNotFound, "tpl.spec.containers[0].volumeDevices[0].name", ""},
	})
}

func TestValidatePodTemplateLabelsMatchSelector(t *testing.T) {
	template := validTemplate()
	path := field.NewPath("spec", "template")
	if errs := ValidatePodTemplateLabelsMatchSelector(template, labels.SelectorFromSet(labels.Set{"app": "web"}), path); len(errs) != 0 {
		t.Fatalf("matching selector: unexpected errors %v", errs)
	}
	errs := ValidatePodTemplateLabelsMatchSelector(template, labels.SelectorFromSet(labels.Set{"app": "db"}), path)
	assertErrors(t, errs, []wantErr{{field.ErrorTypeInvalid, "spec.template.metadata.labels", "does not match"}})
	errs = ValidatePodTemplateLabelsMatchSelector(template, nil, path)
	assertErrors(t, errs, []wantErr{{field.ErrorTypeInvalid, "spec.template.metadata.labels", "does not match"}})
}
