package policy

import (
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// The plan's update, applied by the engine, gives the pod exactly the labels and annotations NewPod gives a
// new pod, and leaves the keys the template does not manage alone.
func TestInPlaceUpdateMovesPodToNewTemplate(t *testing.T) {
	tapp := newTApp(2)
	tapp.Spec.Template.Labels["old"] = "x"
	tapp.Spec.Template.Annotations = map[string]string{"keep": "1", "drop": "2"}
	pod := mustPod(t, tapp, "1")
	pod.ResourceVersion = "7"
	pod.Labels["added-by-user"] = "yes"

	delete(tapp.Spec.Template.Labels, "old")
	delete(tapp.Spec.Template.Annotations, "drop")
	tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	plan := ComputePlan(tapp, []*corev1.Pod{mustPod(t, tapp, "0"), pod}, nil, time.Now())
	if len(plan.InPlaceUpdates) != 1 {
		t.Fatalf("want one in-place update, got %+v", plan)
	}
	updated, err := inplace.UpdatedPod(pod, plan.InPlaceUpdates[0].Update, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewPod(tapp, "1")
	if got := updated.Spec.Containers[0].Image; got != "nginx:2" {
		t.Errorf("image = %q", got)
	}
	for k, v := range want.Labels {
		if updated.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, updated.Labels[k], v)
		}
	}
	if _, ok := updated.Labels["old"]; ok {
		t.Errorf("label removed from the template is still on the pod")
	}
	if updated.Labels["added-by-user"] != "yes" {
		t.Errorf("label not managed by the template was removed")
	}
	if _, ok := updated.Annotations["drop"]; ok {
		t.Errorf("annotation removed from the template is still on the pod")
	}
	if updated.Annotations["keep"] != "1" || updated.Annotations[tapppod.TemplateKeysAnnotation] != want.Annotations[tapppod.TemplateKeysAnnotation] {
		t.Errorf("annotations = %v", updated.Annotations)
	}
	if !inplace.InProgress(updated) {
		t.Errorf("image change must record an in-place state")
	}
}

// Gates: which pods need a gate write, from the pods' in-place state and the kubelet's container statuses.
func TestComputeGates(t *testing.T) {
	tapp := newTApp(6)
	var pods []*corev1.Pod
	for _, id := range []string{"0", "1", "2", "3", "4", "5"} {
		pods = append(pods, mustPod(t, tapp, id))
	}
	// 0: up to date, gate True: nothing. 1: gate False, no update in progress: True.
	setCond(pods[1], InPlaceUpdateGate, corev1.ConditionFalse)
	// 2, 3, 4: an image update in progress; the kubelet has restarted 2's container, 3's cannot pull its
	// image, 4's still runs the old one.
	for _, pod := range pods[2:5] {
		pod.Status.ContainerStatuses[0].ImageID = "sha256:old"
		pod.Status.ContainerStatuses[0].Image = "nginx:1"
		pod.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{}
		updated, err := inplace.UpdatedPod(pod, inplace.Update{Images: map[string]string{"main": "nginx:2"}}, testNow)
		if err != nil {
			t.Fatal(err)
		}
		setCond(updated, InPlaceUpdateGate, corev1.ConditionFalse)
		*pod = *updated
	}
	pods[2].Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "main", Image: "nginx:2", ImageID: "sha256:new", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	pods[3].Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "main", Image: "nginx:2",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}}
	// 5: terminating, gate False: left alone.
	setCond(pods[5], InPlaceUpdateGate, corev1.ConditionFalse)
	pods[5].DeletionTimestamp = &metav1.Time{Time: testNow}

	gates := ComputeGates(tapp, pods, &Plan{})
	var got []string
	for _, g := range gates {
		got = append(got, g.PodName+"="+string(g.Action))
		if g.Action == GateFailed && g.Message == "" {
			t.Errorf("gate %+v: no message", g)
		}
	}
	want := []string{"app-1=True", "app-2=Complete", "app-3=Failed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("gates = %v, want %v", got, want)
	}
	// Pods the plan updates are left to the update.
	if gates := ComputeGates(tapp, pods, &Plan{InPlaceUpdates: []InPlaceUpdate{{PodName: "app-1"}}, Relabels: []InPlaceUpdate{{PodName: "app-2"}}}); len(gates) != 1 || gates[0].PodName != "app-3" {
		t.Errorf("gates = %+v, want only app-3", gates)
	}
}
