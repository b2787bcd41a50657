package localcluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func resizeTestResources(cpu, memory string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// step runs one sync of the simulator's status computation on pod and stores the status, as a status write
// followed by the informer's update would.
func step(t *testing.T, k *kubelet, pod *corev1.Pod) {
	t.Helper()
	status := k.runningStatus(pod, metav1.Now(), func(string, string) bool { return true })
	if err := k.resize(context.Background(), pod, status); err != nil {
		t.Fatal(err)
	}
	pod.Status = *status
}

func hasCondition(pod *corev1.Pod, t corev1.PodConditionType, reason string) bool {
	c := findCondition(pod.Status.Conditions, t)
	return c != nil && c.Reason == reason
}

func TestSimulatedResize(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}}
	k := &kubelet{client: fake.NewClientset(node)}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{
			Name: "c", Image: "nginx:1", Resources: resizeTestResources("100m", "64Mi"),
			ResizePolicy: []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}},
		}}},
	}
	step(t, k, pod)
	cs := &pod.Status.ContainerStatuses[0]
	if cs.Resources == nil || cs.Resources.Requests.Cpu().String() != "100m" {
		t.Fatalf("a new container reports %v", cs.Resources)
	}

	// cpu (no policy: NotRequired): in progress first, then the new resources without a restart.
	pod.Spec.Containers[0].Resources = resizeTestResources("200m", "64Mi")
	step(t, k, pod)
	if !hasCondition(pod, corev1.PodResizeInProgress, "") || pod.Status.ContainerStatuses[0].Resources.Requests.Cpu().String() != "100m" {
		t.Fatalf("first step: conditions %v resources %v", pod.Status.Conditions, pod.Status.ContainerStatuses[0].Resources)
	}
	step(t, k, pod)
	cs = &pod.Status.ContainerStatuses[0]
	if findCondition(pod.Status.Conditions, corev1.PodResizeInProgress) != nil || cs.Resources.Requests.Cpu().String() != "200m" || cs.RestartCount != 0 {
		t.Fatalf("second step: conditions %v resources %v restarts %d", pod.Status.Conditions, cs.Resources, cs.RestartCount)
	}

	// memory with RestartContainer: one restart.
	pod.Spec.Containers[0].Resources = resizeTestResources("200m", "128Mi")
	step(t, k, pod)
	step(t, k, pod)
	cs = &pod.Status.ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.Resources.Requests.Memory().String() != "128Mi" || cs.LastTerminationState.Terminated == nil {
		t.Fatalf("memory resize: restarts %d resources %v", cs.RestartCount, cs.Resources)
	}
	step(t, k, pod)
	if pod.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Fatal("a finished resize restarted the container again")
	}

	// More cpu than the node has: Infeasible, resources unchanged.
	pod.Spec.Containers[0].Resources = resizeTestResources("8", "128Mi")
	step(t, k, pod)
	step(t, k, pod)
	if !hasCondition(pod, corev1.PodResizePending, corev1.PodReasonInfeasible) || pod.Status.ContainerStatuses[0].Resources.Requests.Cpu().String() != "200m" {
		t.Fatalf("infeasible: conditions %v resources %v", pod.Status.Conditions, pod.Status.ContainerStatuses[0].Resources)
	}
	// Back to what it runs: the condition goes.
	pod.Spec.Containers[0].Resources = resizeTestResources("200m", "128Mi")
	step(t, k, pod)
	if findCondition(pod.Status.Conditions, corev1.PodResizePending) != nil {
		t.Fatalf("conditions %v", pod.Status.Conditions)
	}
}
