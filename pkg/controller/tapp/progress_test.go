package tapp

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// TestProgressDeadlineIsReachedByARequeue: a rollout that makes no progress is synced again when its
// spec.progressDeadlineSeconds passes (on the controller's clock), without any other event, and that sync
// reports Progressing False with ProgressDeadlineExceeded; the time of the last progress is in the status,
// so a controller started afresh measures from it too.
func TestProgressDeadlineIsReachedByARequeue(t *testing.T) {
	tapp := testTApp(1)
	tapp.Spec.ProgressDeadlineSeconds = ptr.To[int32](60)
	h := newHarness(t, tapp)
	start := h.clock.Now()
	if err := h.sync(); err != nil { // creates the pod, which the cache never shows ready
		t.Fatal(err)
	}
	stored := h.storedTApp()
	if stored.Status.LastProgressTime == nil || stored.Status.LastProgressTime.Unix() != start.Unix() {
		t.Fatalf("lastProgressTime %v, want the controller's clock's %v", stored.Status.LastProgressTime, start)
	}
	h.setTApp(stored)
	drain := func() {
		for h.ctrl.queue.Len() > 0 {
			key, _ := h.ctrl.queue.Get()
			h.ctrl.queue.Done(key)
			h.ctrl.queue.Forget(key)
		}
	}
	drain()
	h.clock.Step(30 * time.Second)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(h.storedTApp().Status.Conditions, tkestackv1.TAppProgressing); c == nil || c.Reason != policy.ReasonRolloutInProgress {
		t.Fatalf("Progressing %v after 30s, want RolloutInProgress", c)
	}
	drain()
	h.clock.Step(29 * time.Second)
	time.Sleep(100 * time.Millisecond)
	if n := h.ctrl.queue.Len(); n != 0 {
		t.Fatalf("%d TApps queued before the deadline, want none", n)
	}
	h.clock.Step(time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for h.ctrl.queue.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the TApp was not queued when its progress deadline passed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A controller started afresh (no memory of the earlier syncs) decides from the stored status.
	restarted := newHarness(t, h.storedTApp())
	restarted.clock.SetTime(h.clock.Now())
	if err := restarted.sync(); err != nil {
		t.Fatal(err)
	}
	got := restarted.storedTApp().Status
	c := meta.FindStatusCondition(got.Conditions, tkestackv1.TAppProgressing)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != policy.ReasonProgressDeadlineExceeded {
		t.Fatalf("Progressing %v once the deadline passed, want False/ProgressDeadlineExceeded", c)
	}
	if !got.LastProgressTime.Equal(stored.Status.LastProgressTime) {
		t.Errorf("lastProgressTime moved to %v without progress", got.LastProgressTime)
	}
	// The transition is told once, as a warning Event; not before it, and not again while it lasts.
	if hasEvent(h.recorder, policy.ReasonProgressDeadlineExceeded) {
		t.Errorf("a %s event before the deadline passed", policy.ReasonProgressDeadlineExceeded)
	}
	if !hasEvent(restarted.recorder, policy.ReasonProgressDeadlineExceeded) {
		t.Errorf("no %s event when the deadline passed", policy.ReasonProgressDeadlineExceeded)
	}
	restarted.setTApp(restarted.storedTApp())
	restarted.clock.Step(time.Minute)
	if err := restarted.sync(); err != nil {
		t.Fatal(err)
	}
	if hasEvent(restarted.recorder, policy.ReasonProgressDeadlineExceeded) {
		t.Errorf("a second %s event while the deadline stays exceeded", policy.ReasonProgressDeadlineExceeded)
	}
}
