//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// resizeTApp is a one-instance TApp whose container is Burstable (requests below limits) with the given
// resizePolicy for memory (cpu is NotRequired).
func resizeTApp(name, memoryPolicy string) string {
	return fmt.Sprintf(`apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: %[1]s
spec:
  replicas: 1
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: nginx
        image: nginx:1.7.9
        resizePolicy:
        - resourceName: cpu
          restartPolicy: NotRequired
        - resourceName: memory
          restartPolicy: %[2]s
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 500m, memory: 256Mi}
`, name, memoryPolicy)
}

// resizeResources patches the container's requests and limits of the TApp's template.
func resizeResources(t *testing.T, ns, name, requestCPU, requestMemory, limitCPU, limitMemory string) {
	t.Helper()
	mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type=json", "-p", fmt.Sprintf(
		`[{"op":"replace","path":"/spec/template/spec/containers/0/resources","value":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":%q}}}]`,
		requestCPU, requestMemory, limitCPU, limitMemory))
}

// waitResized waits until the pod of instance 0 reports (status resources) the cpu and memory requests asked
// for, with no resize condition and no in-place update left in progress, and returns it.
func waitResized(t *testing.T, ns, name, requestCPU, requestMemory string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	pollUntil(t, ctrlTimeout, "pod "+podName(name, 0)+" resized to "+requestCPU+"/"+requestMemory, func() error {
		pod = getPod(t, ns, podName(name, 0))
		if pod == nil {
			return fmt.Errorf("no pod")
		}
		cs := containerStatus(pod, "nginx")
		if cs == nil || cs.Resources == nil {
			return fmt.Errorf("no status resources: %s", describePod(pod))
		}
		cpu, memory := cs.Resources.Requests[corev1.ResourceCPU], cs.Resources.Requests[corev1.ResourceMemory]
		if cpu.Cmp(resource.MustParse(requestCPU)) != 0 || memory.Cmp(resource.MustParse(requestMemory)) != 0 {
			return fmt.Errorf("status requests cpu %s memory %s", cpu.String(), memory.String())
		}
		for _, c := range []corev1.PodConditionType{corev1.PodResizePending, corev1.PodResizeInProgress} {
			if podCondition(pod, c) != nil {
				return fmt.Errorf("condition %s is set", c)
			}
		}
		if inplace.InProgress(pod) || inplace.GateStatus(pod) != corev1.ConditionTrue || !podReady(pod) {
			return fmt.Errorf("in-place update not completed: %s", describePod(pod))
		}
		return nil
	})
	return pod
}

// TestTAppResize: a change of cpu and memory keeps the pod (same UID) and, with NotRequired resize policies,
// its restart count; with RestartContainer for memory a memory change restarts the container once; a change
// that moves the pod to another QoS class recreates it, and so does a resize the kubelet marks infeasible
// (with a ResizeInfeasible event).
func TestTAppResize(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-resize")

	t.Run("NotRequired", func(t *testing.T) {
		const name = "resize"
		mustKubectlIn(t, resizeTApp(name, "NotRequired"), "apply", "-n", ns, "-f", "-")
		before := waitResized(t, ns, name, "100m", "64Mi")
		resizeResources(t, ns, name, "200m", "128Mi", "1", "512Mi")
		after := waitResized(t, ns, name, "200m", "128Mi")
		if after.UID != before.UID {
			t.Errorf("pod recreated: uid %s, was %s", after.UID, before.UID)
		}
		if got, was := containerStatus(after, "nginx").RestartCount, containerStatus(before, "nginx").RestartCount; got != was {
			t.Errorf("restartCount = %d, was %d", got, was)
		}
		limit := after.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		if limit.Cmp(resource.MustParse("512Mi")) != 0 {
			t.Errorf("spec memory limit = %s", limit.String())
		}

		// A change of QoS class (requests equal to limits: Guaranteed) recreates the pod.
		resizeResources(t, ns, name, "1", "512Mi", "1", "512Mi")
		pollUntil(t, ctrlTimeout, "pod recreated as Guaranteed", func() error {
			pod := getPod(t, ns, podName(name, 0))
			switch {
			case pod == nil:
				return fmt.Errorf("no pod")
			case pod.UID == before.UID:
				return fmt.Errorf("pod not recreated")
			case pod.Status.QOSClass != corev1.PodQOSGuaranteed:
				return fmt.Errorf("qos class %s", pod.Status.QOSClass)
			case !podReady(pod):
				return fmt.Errorf("not ready: %s", describePod(pod))
			}
			return nil
		})
	})

	t.Run("Infeasible", func(t *testing.T) {
		const name = "resize-infeasible"
		mustKubectlIn(t, resizeTApp(name, "NotRequired"), "apply", "-n", ns, "-f", "-")
		before := waitResized(t, ns, name, "100m", "64Mi")
		// More cpu than any node's allocatable (64): the kubelet marks the resize Infeasible and the
		// controller falls back to recreating the pod (which then stays Pending: nothing fits it).
		resizeResources(t, ns, name, "100", "64Mi", "200", "256Mi")
		pollUntil(t, ctrlTimeout, "pod recreated after an infeasible resize, with an event", func() error {
			pod := getPod(t, ns, podName(name, 0))
			if pod == nil || pod.UID == before.UID {
				return fmt.Errorf("pod not recreated")
			}
			events, err := kubeClient.CoreV1().Events(ns).List(testContext(t, 30*time.Second), metav1.ListOptions{
				FieldSelector: "involvedObject.name=" + name + ",reason=ResizeInfeasible"})
			if err != nil {
				return err
			}
			if len(events.Items) == 0 {
				return fmt.Errorf("no ResizeInfeasible event")
			}
			if !strings.Contains(events.Items[0].Message, "cpu") {
				return fmt.Errorf("event does not say why: %q", events.Items[0].Message)
			}
			return nil
		})
	})

	t.Run("RestartContainer", func(t *testing.T) {
		const name = "resize-restart"
		mustKubectlIn(t, resizeTApp(name, "RestartContainer"), "apply", "-n", ns, "-f", "-")
		before := waitResized(t, ns, name, "100m", "64Mi")
		resizeResources(t, ns, name, "100m", "128Mi", "500m", "512Mi")
		after := waitResized(t, ns, name, "100m", "128Mi")
		if after.UID != before.UID {
			t.Errorf("pod recreated: uid %s, was %s", after.UID, before.UID)
		}
		if got, was := containerStatus(after, "nginx").RestartCount, containerStatus(before, "nginx").RestartCount; got != was+1 {
			t.Errorf("restartCount = %d, want %d", got, was+1)
		}
		// A cpu change (NotRequired) does not restart it.
		resizeResources(t, ns, name, "200m", "128Mi", "500m", "512Mi")
		again := waitResized(t, ns, name, "200m", "128Mi")
		if again.UID != before.UID || containerStatus(again, "nginx").RestartCount != containerStatus(after, "nginx").RestartCount {
			t.Errorf("a cpu resize with NotRequired restarted or recreated the pod: %s", describePod(again))
		}
	})
}
