package inplace

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// template returns a fresh template: containers app and log, init container setup.
func template() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"team": "a", "note": "x"},
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup", Image: "busybox:1"}},
			Containers: []corev1.Container{
				{
					Name:  "app",
					Image: "nginx:1.25",
					Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
					},
				},
				{Name: "log", Image: "fluentbit:2"},
			},
		},
	}
}

// podFrom returns a running pod created from tpl, with the gate, admission additions and kubelet statuses.
func podFrom(tpl *corev1.PodTemplateSpec) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       "ns",
			Name:            "web-0",
			UID:             "uid-1",
			ResourceVersion: "10",
			Generation:      1,
			Labels:          map[string]string{"tapp_instance_key": "0", "tapp_template_hash_key": "h1", "foreign": "keep"},
			Annotations:     map[string]string{"foreign": "keep", "tkestack.io/portmapping": "pod-value"},
		},
		Spec: *tpl.Spec.DeepCopy(),
	}
	for k, v := range tpl.Labels {
		pod.Labels[k] = v
	}
	for k, v := range tpl.Annotations {
		pod.Annotations[k] = v
	}
	// Things the API server, admission and the scheduler add.
	pod.Spec.NodeName = "node-1"
	pod.Spec.SchedulerName = "default-scheduler"
	pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists})
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "istio-proxy", Image: "proxy:1"})
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].TerminationMessagePath = "/dev/termination-log"
	}
	AddReadinessGate(&pod.Spec)
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))},
			{Type: ReadinessGate, Status: corev1.ConditionTrue, Reason: ReasonNotUpdating, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			running("app", "nginx:1.25", "sha256:aaa", "containerd://c-app-1", 0),
			running("log", "fluentbit:2", "sha256:log", "containerd://c-log-1", 2),
			running("istio-proxy", "proxy:1", "sha256:proxy", "containerd://c-proxy-1", 0),
		},
	}
	return pod
}

func running(name, image, imageID, containerID string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:         name,
		Image:        image,
		ImageID:      imageID,
		ContainerID:  containerID,
		RestartCount: restarts,
		Ready:        true,
		State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
	}
}

func waiting(name, image, imageID, containerID string, restarts int32, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:         name,
		Image:        image,
		ImageID:      imageID,
		ContainerID:  containerID,
		RestartCount: restarts,
		State:        corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}},
	}
}

func withImage(tpl *corev1.PodTemplateSpec, name, image string) *corev1.PodTemplateSpec {
	out := tpl.DeepCopy()
	for i := range out.Spec.Containers {
		if out.Spec.Containers[i].Name == name {
			out.Spec.Containers[i].Image = image
		}
	}
	return out
}

func setStatus(pod *corev1.Pod, cs corev1.ContainerStatus) {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == cs.Name {
			pod.Status.ContainerStatuses[i] = cs
			return
		}
	}
	pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
}

// imageUpdate returns an Update that sets the image of each named container: name, image, name, image...
func imageUpdate(nameImages ...string) Update {
	u := Update{Images: map[string]string{}}
	for i := 0; i+1 < len(nameImages); i += 2 {
		u.Images[nameImages[i]] = nameImages[i+1]
	}
	return u
}
