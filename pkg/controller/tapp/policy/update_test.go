package policy

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

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
	if updated.Annotations["keep"] != "1" || updated.Annotations[TemplateKeysAnnotation] != want.Annotations[TemplateKeysAnnotation] {
		t.Errorf("annotations = %v", updated.Annotations)
	}
	if !inplace.InProgress(updated) {
		t.Errorf("image change must record an in-place state")
	}
}
