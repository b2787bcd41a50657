package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// richTemplate is a template that sets a fair part of a pod spec, as users write it.
func richTemplate() corev1.PodSpec {
	auto := false
	return corev1.PodSpec{
		AutomountServiceAccountToken: &auto,
		NodeSelector:                 map[string]string{"disk": "ssd"},
		Containers: []corev1.Container{{
			Name:    "main",
			Image:   "nginx:1",
			Command: []string{"nginx", "-g", "daemon off;"},
			Env:     []corev1.EnvVar{{Name: "A", Value: "1"}},
			Ports:   []corev1.ContainerPort{{ContainerPort: 80}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("0.5"), corev1.ResourceMemory: resource.MustParse("64Mi"),
			}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		}, {
			Name: "sidecar", Image: "busybox:1", Args: []string{"sleep", "inf"},
		}},
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
		Volumes:        []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Tolerations:    []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}},
		ReadinessGates: []corev1.PodReadinessGate{{ConditionType: InPlaceUpdateGate}},
	}
}

// admitted returns spec as the API server stores it after defaulting, admission and scheduling, in the
// order they write things (the original controller put claim volumes first, for instance).
func admitted(spec corev1.PodSpec) corev1.PodSpec {
	s := *spec.DeepCopy()
	grace, prio, links := int64(30), int32(0), true
	s.NodeName = "node-7"
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	s.DNSPolicy = corev1.DNSClusterFirst
	s.SchedulerName = corev1.DefaultSchedulerName
	s.SecurityContext = &corev1.PodSecurityContext{}
	s.TerminationGracePeriodSeconds = &grace
	s.Priority = &prio
	s.EnableServiceLinks = &links
	s.ServiceAccountName = "default"
	s.DeprecatedServiceAccount = "default"
	s.Volumes = append([]corev1.Volume{{Name: "kube-api-access-x1", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}, s.Volumes...)
	s.Tolerations = append(s.Tolerations,
		corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		corev1.Toleration{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	for _, list := range [][]corev1.Container{s.Containers, s.InitContainers} {
		for i := range list {
			c := &list[i]
			c.ImagePullPolicy = corev1.PullIfNotPresent
			c.TerminationMessagePath = corev1.TerminationMessagePathDefault
			c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "kube-api-access-x1", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true})
			c.Env = append(c.Env, corev1.EnvVar{Name: "INJECTED", Value: "by-webhook"})
			for j := range c.Ports {
				c.Ports[j].Protocol = corev1.ProtocolTCP
			}
			if lim := c.Resources.Limits; lim != nil && c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
				for k, v := range lim {
					c.Resources.Requests[k] = v
				}
				// The API server stores quantities canonically.
				c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
			}
			if p := c.ReadinessProbe; p != nil {
				p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 10, 1, 3
				p.HTTPGet.Scheme = corev1.URISchemeHTTP
			}
		}
	}
	return s
}

func TestCompareToTemplate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(pod *corev1.PodSpec)
		want   Match
		reason string
	}{
		{name: "equal", edit: func(*corev1.PodSpec) {}, want: RunsTemplate},
		{name: "fields added by defaulting, admission and the scheduler", edit: func(p *corev1.PodSpec) { *p = admitted(*p) }, want: RunsTemplate},
		{name: "injected sidecar container", edit: func(p *corev1.PodSpec) {
			p.Containers = append(p.Containers, corev1.Container{Name: "istio-proxy", Image: "proxy:1"})
		}, want: RunsTemplate},
		{name: "pod without the in-place readiness gate", edit: func(p *corev1.PodSpec) { p.ReadinessGates = nil }, want: RunsTemplate},
		{name: "image only", edit: func(p *corev1.PodSpec) { p.Containers[0].Image = "nginx:0" }, want: ImagesDiffer},
		{name: "image only, admitted", edit: func(p *corev1.PodSpec) { *p = admitted(*p); p.Containers[1].Image = "busybox:0" }, want: ImagesDiffer},
		{name: "init container image", edit: func(p *corev1.PodSpec) { p.InitContainers[0].Image = "busybox:0" }, want: Differs, reason: "spec.initContainers[init].image"},
		{name: "image and command", edit: func(p *corev1.PodSpec) {
			p.Containers[0].Image = "nginx:0"
			p.Containers[0].Command = []string{"nginx"}
		}, want: Differs, reason: "spec.containers[main].command"},
		{name: "container missing", edit: func(p *corev1.PodSpec) { p.Containers = p.Containers[:1] }, want: Differs, reason: "spec.containers[sidecar] is missing"},
		{name: "env value", edit: func(p *corev1.PodSpec) { p.Containers[0].Env[0].Value = "2" }, want: Differs, reason: "spec.containers[main].env[A].value"},
		{name: "resource limit", edit: func(p *corev1.PodSpec) {
			p.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("128Mi")
		}, want: Differs, reason: "spec.containers[main].resources.limits[memory]"},
		{name: "node selector value", edit: func(p *corev1.PodSpec) { p.NodeSelector["disk"] = "hdd" }, want: Differs, reason: "spec.nodeSelector[disk]"},
		{name: "explicit false set to true", edit: func(p *corev1.PodSpec) {
			yes := true
			p.AutomountServiceAccountToken = &yes
		}, want: Differs, reason: "spec.automountServiceAccountToken"},
		{name: "toleration of the template missing", edit: func(p *corev1.PodSpec) { p.Tolerations = nil }, want: Differs, reason: "spec.tolerations[0]"},
		{name: "volume source", edit: func(p *corev1.PodSpec) {
			p.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/d"}}
		}, want: Differs, reason: "spec.volumes[data].emptyDir"},
		{name: "volume mounted elsewhere", edit: func(p *corev1.PodSpec) { p.Containers[0].VolumeMounts[0].MountPath = "/other" }, want: Differs, reason: "spec.containers[main].volumeMounts[data at /data] (missing)"},
		{name: "probe path", edit: func(p *corev1.PodSpec) {
			*p = admitted(*p)
			p.Containers[0].ReadinessProbe.HTTPGet.Path = "/healthz"
		}, want: Differs, reason: "spec.containers[main].readinessProbe.httpGet.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := richTemplate()
			have := richTemplate()
			tc.edit(&have)
			got, reason := CompareToTemplate(&want, &have)
			if got != tc.want {
				t.Fatalf("CompareToTemplate = %s (%s), want %s", got, reason, tc.want)
			}
			if tc.reason != "" && !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q does not name %q", reason, tc.reason)
			}
			if (got == Differs) != (reason != "") {
				t.Errorf("reason %q with result %s", reason, got)
			}
		})
	}
}

func TestCompareToTemplateSetsNothingOnItsArguments(t *testing.T) {
	want, have := richTemplate(), richTemplate()
	have.Containers[0].Image = "nginx:0"
	if m, _ := CompareToTemplate(&want, &have); m != ImagesDiffer {
		t.Fatalf("got %s", m)
	}
	if have.Containers[0].Image != "nginx:0" || len(want.ReadinessGates) != 1 {
		t.Error("CompareToTemplate modified its arguments")
	}
}

func TestForeignHashes(t *testing.T) {
	for _, tc := range []struct {
		template, uniq string
		foreign        bool
	}{
		{"0123456789", "abcdef0123", false},
		{"8571628173525391740", "1740216837251739174", true}, // the original controller's decimal fnv64
		{"", "", true},
		{"0123456789", "", true},
		{"0123456789", "ABCDEF0123", true},
		{"01234567890", "abcdef0123", true},
	} {
		pod := &corev1.Pod{}
		pod.Labels = map[string]string{}
		if tc.template != "" {
			pod.Labels[tkestack.TemplateHashLabel] = tc.template
		}
		if tc.uniq != "" {
			pod.Labels[tkestack.UniqHashLabel] = tc.uniq
		}
		if got := ForeignHashes(pod); got != tc.foreign {
			t.Errorf("ForeignHashes(%q, %q) = %v, want %v", tc.template, tc.uniq, got, tc.foreign)
		}
	}
}
