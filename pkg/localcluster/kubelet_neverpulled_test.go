package localcluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSimulatorNeverPullsTheNeverPulledRegistry: a pod with an image of NeverPulledRegistry stays Pending,
// its container waiting in ErrImagePull, and settles (no write once reported); a running container changed
// in place to such an image keeps running the old one.
func TestSimulatorNeverPullsTheNeverPulledRegistry(t *testing.T) {
	pod := testPod("p", func(p *corev1.Pod) { p.Spec.Containers[0].Image = NeverPulledRegistry + "nginx:1" })
	h := newSimulatorHarness(t, nil, pod)
	h.writes(pod)
	got := h.refresh(pod)
	if got.Status.Phase != corev1.PodPending || len(got.Status.ContainerStatuses) != 1 {
		t.Fatalf("status %+v, want Pending with one container", got.Status)
	}
	if w := got.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" || !strings.Contains(w.Message, "never-pulled.invalid") {
		t.Fatalf("container state %+v, want waiting in ErrImagePull", got.Status.ContainerStatuses[0].State)
	}

	running := testPod("r")
	h = newSimulatorHarness(t, nil, running)
	h.writes(running)
	if got := h.refresh(running); got.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s, want Running", got.Status.Phase)
	}
	h.update(running, func(p *corev1.Pod) { p.Spec.Containers[0].Image = NeverPulledRegistry + "nginx:2" })
	h.writes(running)
	got = h.refresh(running)
	if s := got.Status.ContainerStatuses[0]; s.Image != "nginx:1" || s.State.Running == nil || s.RestartCount != 0 {
		t.Errorf("container status %+v, want the old container still running", s)
	}
}
