package tapp

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// hookedTApp is testTApp whose template labels every pod drain=true and whose lifecycle hooks wait on it.
func hookedTApp(replicas int32, notReady bool) *tkestackv1.TApp {
	tapp := testTApp(replicas)
	tapp.Spec.Template.Labels["drain"] = "true"
	hook := &tkestackv1.LifecycleHook{LabelsHandler: map[string]string{"drain": "true"}, MarkPodNotReady: notReady}
	tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: hook, InPlaceUpdate: hook}
	return tapp
}

func (h *harness) pod(name string) *corev1.Pod {
	h.t.Helper()
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return pod
}

// release removes the drain label from the API's copy of the pod, as a drain tool would.
func (h *harness) release(name string) {
	h.t.Helper()
	pod := h.pod(name)
	delete(pod.Labels, "drain")
	if _, err := h.kube.CoreV1().Pods("ns").Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) syncShown() {
	h.t.Helper()
	h.showPods()
	if err := h.sync(); err != nil {
		h.t.Fatal(err)
	}
}

// TestPreDeleteHookHoldsScaleDown: a scale-down marks the pod PreparingDelete and turns its gate False
// (markPodNotReady) instead of deleting it, reports the wait once, deletes nothing while the label holds
// it, and deletes it once the label is removed.
func TestPreDeleteHookHoldsScaleDown(t *testing.T) {
	tapp := hookedTApp(2, true)
	h := newHarness(t, tapp)
	h.running()
	if got := h.pod("web-1").Labels[tkestack.LifecycleStateLabel]; got != tkestack.LifecycleStateNormal {
		t.Fatalf("new pod state %q, want Normal", got)
	}
	down := tapp.DeepCopy()
	down.Spec.Replicas, down.Generation = 1, 2
	h.setTApp(down)
	h.syncShown()
	pod := h.pod("web-1")
	if got := pod.Labels[tkestack.LifecycleStateLabel]; got != tkestack.LifecycleStatePreparingDelete {
		t.Errorf("state %q, want PreparingDelete", got)
	}
	if c := inplace.GateCondition(pod); c == nil || c.Status != corev1.ConditionFalse || c.Reason != tkestack.LifecycleStatePreparingDelete {
		t.Errorf("gate condition %+v, want False with reason PreparingDelete", c)
	}
	if n := len(h.actions("delete", "pods")); n != 0 {
		t.Fatalf("%d pods deleted while the hook holds", n)
	}
	// Later syncs wait: no delete, the gate stays False, no second Event.
	h.syncShown()
	h.syncShown()
	if n := len(h.actions("delete", "pods")); n != 0 {
		t.Fatalf("%d pods deleted while the hook holds", n)
	}
	if inplace.GateStatus(h.pod("web-1")) != corev1.ConditionFalse {
		t.Errorf("the gate was set True again while the pod waits")
	}
	if got := eventsWithReason(drainEvents(h.recorder), ReasonWaitingForPreDeleteHook); len(got) != 1 {
		t.Errorf("wait events %q, want one", got)
	}
	h.release("web-1")
	h.syncShown()
	deletes := h.actions("delete", "pods")
	if len(deletes) != 1 || deletes[0].(clienttesting.DeleteAction).GetName() != "web-1" {
		t.Fatalf("deletes %v, want web-1", deletes)
	}
}

// TestInPlaceUpdateHookHoldsUpdate: an image change marks the pod PreparingUpdate with its gate False and
// patches no image while the label holds it; once released the image is patched with state Updating, which
// turns Updated once the kubelet runs the new image.
func TestInPlaceUpdateHookHoldsUpdate(t *testing.T) {
	tapp := hookedTApp(1, true)
	h := newHarness(t, tapp)
	h.running()
	h.updateImage(tapp, "nginx:2")
	pod := h.pod("web-0")
	if pod.Labels[tkestack.LifecycleStateLabel] != tkestack.LifecycleStatePreparingUpdate || inplace.GateStatus(pod) != corev1.ConditionFalse {
		t.Fatalf("state %q gate %q, want PreparingUpdate and False", pod.Labels[tkestack.LifecycleStateLabel], inplace.GateStatus(pod))
	}
	h.syncShown()
	if img := h.pod("web-0").Spec.Containers[0].Image; img != "nginx:1" {
		t.Fatalf("image %s patched while the hook holds", img)
	}
	if got := eventsWithReason(drainEvents(h.recorder), ReasonWaitingForInPlaceUpdateHook); len(got) != 1 {
		t.Errorf("wait events %q, want one", got)
	}
	h.release("web-0")
	h.syncShown()
	pod = h.pod("web-0")
	if pod.Spec.Containers[0].Image != "nginx:2" || pod.Labels[tkestack.LifecycleStateLabel] != tkestack.LifecycleStateUpdating {
		t.Fatalf("image %s state %q, want nginx:2 and Updating", pod.Spec.Containers[0].Image, pod.Labels[tkestack.LifecycleStateLabel])
	}
	if pod.Labels["drain"] != "true" {
		t.Errorf("the update did not give the template's labels back: %v", pod.Labels)
	}
	h.restartOnImage(pod, "nginx:2")
	h.syncShown() // completes the update
	h.syncShown() // Updating → Updated
	if got := h.pod("web-0").Labels[tkestack.LifecycleStateLabel]; got != tkestack.LifecycleStateUpdated {
		t.Errorf("state %q after the update, want Updated", got)
	}
	h.syncShown() // hooked again (the template's label): Normal
	if got := h.pod("web-0").Labels[tkestack.LifecycleStateLabel]; got != tkestack.LifecycleStateNormal {
		t.Errorf("state %q once hooked again, want Normal", got)
	}
	if inplace.GateStatus(h.pod("web-0")) != corev1.ConditionTrue {
		t.Errorf("gate not True after the update")
	}
}

// TestTAppDeletionHonoursPreDelete: a TApp deleted with background propagation keeps its finalizer while a
// pod is held and removes it once the pods are gone; orphan and foreground deletion remove it at once without
// touching a pod.
func TestTAppDeletionHonoursPreDelete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra string // finalizer of the propagation policy
	}{{"background", ""}, {"orphan", "orphan"}, {"foreground", "foregroundDeletion"}} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := hookedTApp(2, false)
			h := newHarness(t, tapp)
			h.running()
			deleting := h.storedTApp().DeepCopy()
			now := metav1.Now()
			deleting.DeletionTimestamp = &now
			deleting.Finalizers = []string{tkestack.PreDeleteFinalizer}
			if tc.extra != "" {
				deleting.Finalizers = append(deleting.Finalizers, tc.extra)
			}
			stored, err := h.tapps.TKEStackAppsV1().TApps("ns").Update(context.Background(), deleting, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			h.setTApp(stored)
			h.syncShown()
			finalizers := h.storedTApp().Finalizers
			if tc.extra != "" {
				if len(finalizers) != 1 || finalizers[0] != tc.extra {
					t.Errorf("finalizers %q, want only %q", finalizers, tc.extra)
				}
				if len(h.actions("delete", "pods"))+len(h.specPatches()) != 0 {
					t.Errorf("pods touched: %v", append(h.actions("delete", "pods"), h.specPatches()...))
				}
				if got := eventsWithReason(drainEvents(h.recorder), ReasonPreDeleteHookSkipped); len(got) != 1 {
					t.Errorf("events %q, want one %s", got, ReasonPreDeleteHookSkipped)
				}
				return
			}
			for _, name := range []string{"web-0", "web-1"} {
				if got := h.pod(name).Labels[tkestack.LifecycleStateLabel]; got != tkestack.LifecycleStatePreparingDelete {
					t.Errorf("%s state %q, want PreparingDelete", name, got)
				}
			}
			h.syncShown()
			if n := len(h.actions("delete", "pods")); n != 0 || len(h.storedTApp().Finalizers) != 1 {
				t.Fatalf("%d deletes, finalizers %q while both pods are held", n, h.storedTApp().Finalizers)
			}
			h.release("web-0")
			h.syncShown()
			if deletes := h.actions("delete", "pods"); len(deletes) != 1 || deletes[0].(clienttesting.DeleteAction).GetName() != "web-0" {
				t.Fatalf("deletes %v, want web-0", deletes)
			}
			h.release("web-1")
			h.syncShown()
			h.showPods()
			if err := h.sync(); err != nil {
				t.Logf("sync: %v", err)
			}
			if f := h.storedTApp().Finalizers; len(f) != 0 {
				t.Errorf("finalizers %q once the pods are gone, want none", f)
			}
		})
	}
}

// TestLifecycleMarkFailureIsReported: a state label patch the API server refuses is a FailedUpdate Event and a
// retried failure, and the pod is neither deleted nor reported waiting.
func TestLifecycleMarkFailureIsReported(t *testing.T) {
	tapp := hookedTApp(2, false)
	h := newHarness(t, tapp)
	h.running()
	h.kube.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
		}
		return false, nil, nil
	})
	down := tapp.DeepCopy()
	down.Spec.Replicas, down.Generation = 1, 2
	h.setTApp(down)
	h.showPods()
	if err := h.sync(); err == nil || !strings.Contains(err.Error(), "etcd is away") {
		t.Errorf("sync error %v, want the refused patch", err)
	}
	events := drainEvents(h.recorder)
	if got := eventsWithReason(events, ReasonFailedUpdate); len(got) != 1 || !strings.Contains(got[0], tkestack.LifecycleStateLabel) {
		t.Errorf("FailedUpdate events %q, want one naming the label", got)
	}
	if got := eventsWithReason(events, ReasonWaitingForPreDeleteHook); len(got) != 0 {
		t.Errorf("wait events %q for a pod that was not marked", got)
	}
	if n := len(h.actions("delete", "pods")); n != 0 {
		t.Errorf("%d pods deleted", n)
	}
}
