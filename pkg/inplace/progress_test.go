package inplace

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// patchedPod returns a pod whose "app" image was changed in place from nginx:1.25 to nginx:1.26, with the
// kubelet statuses of before the patch, after calling before on the pod as it was before the patch.
func patchedPod(t *testing.T, before func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	pod := podFrom(template())
	if before != nil {
		before(pod)
	}
	u := imageUpdate("app", "nginx:1.26")
	u.Revision = "h2"
	out, err := UpdatedPod(pod, u, t0)
	if err != nil {
		t.Fatal(err)
	}
	out.Generation = pod.Generation + 1 // what the API server does on a spec change
	return out
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		before     func(*corev1.Pod) // pod before the patch
		after      func(*corev1.Pod) // kubelet's view after the patch
		wantDone   bool
		wantFailed bool
		wantMsg    string
	}{
		{
			name:    "status from before the patch",
			after:   func(*corev1.Pod) {},
			wantMsg: `waiting for container "app" to run image "nginx:1.26"`,
		},
		{
			name: "old image still reported, status observed the old generation",
			after: func(p *corev1.Pod) {
				p.Status.ObservedGeneration = 1
				setStatus(p, running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1)) // would be done
			},
			wantMsg: "observe generation 2",
		},
		{
			name: "imageID changed and running",
			after: func(p *corev1.Pod) {
				setStatus(p, running("app", "docker.io/library/nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1))
			},
			wantDone: true,
		},
		{
			name: "imageID changed, status observed the new generation",
			after: func(p *corev1.Pod) {
				p.Status.ObservedGeneration = 2
				setStatus(p, running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1))
			},
			wantDone: true,
		},
		{
			name: "restart observed with the same imageID (new tag, same digest)",
			after: func(p *corev1.Pod) {
				setStatus(p, running("app", "nginx:1.25", "sha256:aaa", "containerd://c-app-2", 1))
			},
			wantDone: true,
		},
		{
			name: "restartCount increased, containerID not reported",
			after: func(p *corev1.Pod) {
				setStatus(p, running("app", "nginx:1.25", "sha256:aaa", "", 1))
			},
			wantDone: true,
		},
		{
			name: "containerID changed, restartCount not increased",
			after: func(p *corev1.Pod) {
				setStatus(p, running("app", "nginx:1.25", "sha256:aaa", "containerd://c-app-2", 0))
			},
			wantDone: true,
		},
		{
			name: "new container being created",
			after: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:1.26", "", "", 0, "ContainerCreating"))
			},
			wantMsg: "waiting for container",
		},
		{
			name: "restarted but not running yet",
			after: func(p *corev1.Pod) {
				cs := running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1)
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
				setStatus(p, cs)
			},
			wantMsg: "waiting for container",
		},
		{
			name: "ErrImagePull of the new image",
			after: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:1.26", "sha256:aaa", "containerd://c-app-1", 0, "ErrImagePull"))
			},
			wantFailed: true,
			wantMsg:    `container "app" cannot run image "nginx:1.26": ErrImagePull`,
		},
		{
			name: "ImagePullBackOff of the new image",
			after: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:1.26", "", "", 0, "ImagePullBackOff"))
			},
			wantFailed: true,
			wantMsg:    "ImagePullBackOff",
		},
		{
			name: "fixing a broken image: pull error already there before the patch is not blamed on the new image",
			before: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:broken", "", "", 0, "ImagePullBackOff"))
			},
			after: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:broken", "", "", 0, "ErrImagePull"))
			},
			wantMsg: "waiting for container",
		},
		{
			name: "fixing a broken image: pull error after the kubelet observed the patch",
			before: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:broken", "", "", 0, "ImagePullBackOff"))
			},
			after: func(p *corev1.Pod) {
				p.Status.ObservedGeneration = 2
				setStatus(p, waiting("app", "nginx:1.26", "", "", 0, "ImagePullBackOff"))
			},
			wantFailed: true,
		},
		{
			name: "fixing a broken image: the new image runs",
			before: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:broken", "", "", 0, "ImagePullBackOff"))
			},
			after: func(p *corev1.Pod) {
				setStatus(p, running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-1", 0))
			},
			wantDone: true,
		},
		{
			name: "new container crash-loops",
			after: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-3", 3, "CrashLoopBackOff"))
			},
			wantFailed: true,
			wantMsg:    "CrashLoopBackOff",
		},
		{
			name: "old container crash-looping before the patch is not a failure of the update",
			before: func(p *corev1.Pod) {
				setStatus(p, waiting("app", "nginx:1.25", "sha256:aaa", "containerd://c-app-1", 4, "CrashLoopBackOff"))
			},
			after:   func(*corev1.Pod) {},
			wantMsg: "waiting for container",
		},
		{
			name: "containers not in the change are ignored",
			after: func(p *corev1.Pod) {
				setStatus(p, running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1))
				setStatus(p, waiting("log", "fluentbit:2", "sha256:log", "containerd://c-log-1", 9, "ImagePullBackOff"))
				setStatus(p, waiting("istio-proxy", "proxy:1", "", "", 0, "CrashLoopBackOff"))
			},
			wantDone: true,
		},
		{
			name: "no status for the container",
			after: func(p *corev1.Pod) {
				p.Status.ContainerStatuses = p.Status.ContainerStatuses[1:]
			},
			wantMsg: `container "app" has no status yet`,
		},
		{
			name: "terminating pod",
			after: func(p *corev1.Pod) {
				now := metav1.NewTime(t0)
				p.DeletionTimestamp = &now
				setStatus(p, running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1))
			},
			wantMsg: "terminating",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := patchedPod(t, tc.before)
			tc.after(pod)
			got := Check(pod)
			if got.Done != tc.wantDone || got.Failed != tc.wantFailed {
				t.Errorf("Check = %+v, want done=%v failed=%v", got, tc.wantDone, tc.wantFailed)
			}
			if !strings.Contains(got.Message, tc.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", got.Message, tc.wantMsg)
			}
			if done, failed := Finished(pod); done != got.Done || failed != got.Failed {
				t.Errorf("Finished = %v, %v, Check = %+v", done, failed, got)
			}
		})
	}
}

func TestCheckBothContainers(t *testing.T) {
	pod, err := UpdatedPod(podFrom(template()), imageUpdate("app", "nginx:1.26", "log", "fluentbit:3"), t0)
	if err != nil {
		t.Fatal(err)
	}
	setStatus(pod, running("app", "nginx:1.26", "sha256:bbb", "containerd://c-app-2", 1))
	if done, _ := Finished(pod); done {
		t.Fatal("done while log still runs its old container")
	}
	setStatus(pod, running("log", "fluentbit:3", "sha256:log3", "containerd://c-log-2", 3))
	if done, failed := Finished(pod); !done || failed {
		t.Fatalf("Finished = %v, %v; want done", done, failed)
	}
}

func TestCheckWithoutState(t *testing.T) {
	for _, value := range []string{"", "true", "null", "{}", `{"containers":{}}`, "not json"} {
		pod := podFrom(template())
		if value != "" {
			pod.Annotations[StateAnnotation] = value
		}
		// Even with statuses that would fail an update, there is nothing in progress.
		setStatus(pod, waiting("app", "nginx:1.25", "", "", 0, "ImagePullBackOff"))
		if r := Check(pod); !r.Done || r.Failed {
			t.Errorf("state %q: Check = %+v, want done (no update in progress)", value, r)
		}
		if InProgress(pod) {
			t.Errorf("state %q: InProgress = true", value)
		}
	}
}
