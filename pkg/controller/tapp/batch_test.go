package tapp

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestPodEventBatchFollowsPlanning: the pod events of a TApp wait ten of its plannings, between
// podEventBatch and maxPodEventBatch; a deleted TApp's planning is forgotten.
func TestPodEventBatchFollowsPlanning(t *testing.T) {
	for _, tc := range []struct {
		planning time.Duration
		observed bool
		want     time.Duration
	}{
		{want: podEventBatch},
		{planning: 0, observed: true, want: podEventBatch},
		{planning: time.Millisecond, observed: true, want: podEventBatch},
		{planning: 5 * time.Millisecond, observed: true, want: 50 * time.Millisecond},
		{planning: 20 * time.Millisecond, observed: true, want: 200 * time.Millisecond},
		{planning: 100 * time.Millisecond, observed: true, want: time.Second},
		{planning: 2 * time.Minute, observed: true, want: maxPodEventBatch},
	} {
		t.Run(fmt.Sprint(tc.planning, tc.observed), func(t *testing.T) {
			var costs planCosts
			if tc.observed {
				costs.observe("ns/web", tc.planning)
			}
			if got := costs.batch("ns/web"); got != tc.want {
				t.Errorf("batch after a planning of %v: %v, want %v", tc.planning, got, tc.want)
			}
			if got := costs.batch("ns/other"); got != podEventBatch {
				t.Errorf("batch of a TApp never planned: %v, want %v", got, podEventBatch)
			}
			costs.forget("ns/web")
			if got := costs.batch("ns/web"); got != podEventBatch {
				t.Errorf("batch after forget: %v, want %v", got, podEventBatch)
			}
		})
	}
}

// TestSlowPlanningBatchesLonger: after a planning of 60 ms, a pod event of the TApp is queued once 600 ms
// have passed on the controller's clock, not at the shortest batch; deleting the TApp forgets it.
func TestSlowPlanningBatchesLonger(t *testing.T) {
	h := newHarness(t, testTApp(3))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "uid-0",
		ResourceVersion: "1", OwnerReferences: []metav1.OwnerReference{tappOwner("web", "tapp-uid")}}}
	h.ctrl.planCosts.observe("ns/web", 60*time.Millisecond)
	start := h.clock.Now()
	h.ctrl.podAdded(pod)
	for h.clock.Since(start) < 550*time.Millisecond {
		h.clock.Step(podEventBatch)
		time.Sleep(2 * time.Millisecond)
		if got := h.ctrl.queue.Len(); got != 0 {
			t.Fatalf("queued once the clock moved %v, before the batch of 600ms passed", h.clock.Since(start))
		}
	}
	for deadline := time.Now().Add(10 * time.Second); h.ctrl.queue.Len() == 0 && time.Now().Before(deadline); {
		h.clock.Step(podEventBatch / 5)
		time.Sleep(5 * time.Millisecond)
	}
	if got := queued(h.ctrl); fmt.Sprint(got) != "[ns/web]" {
		t.Fatalf("queued %v once the clock moved %v, want [ns/web]", got, h.clock.Since(start))
	}
	if elapsed := h.clock.Since(start); elapsed < 600*time.Millisecond {
		t.Errorf("queued once the clock moved %v, want 600ms at least", elapsed)
	}
	h.ctrl.tappDeleted(&tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: types.UID("tapp-uid")}})
	if got := h.ctrl.planCosts.batch("ns/web"); got != podEventBatch {
		t.Errorf("batch after the TApp was deleted: %v, want %v", got, podEventBatch)
	}
}

// tappStatusStub answers a status write with the TApp at resourceVersion 8.
type tappStatusStub struct{}

func (tappStatusStub) Get(context.Context, string, metav1.GetOptions) (*tkestackv1.TApp, error) {
	return nil, errors.New("not expected")
}

func (tappStatusStub) UpdateStatus(_ context.Context, t *tkestackv1.TApp, _ metav1.UpdateOptions) (*tkestackv1.TApp, error) {
	out := t.DeepCopy()
	out.ResourceVersion = "8"
	return out, nil
}

// TestWrittenStatusIsDroppedOnceCached: the TApp a status write returned is held only until the informer
// shows that version; a status-only update of the cache drops it.
func TestWrittenStatusIsDroppedOnceCached(t *testing.T) {
	h := newHarness(t, testTApp(1))
	obj, _, err := h.tappInf.TKEStackApps().V1().TApps().Informer().GetIndexer().GetByKey("ns/web")
	if err != nil || obj == nil {
		t.Fatalf("the TApp is not in the cache: %v", err)
	}
	cached := obj.(*tkestackv1.TApp).DeepCopy()
	cached.ResourceVersion = "7"
	err = h.ctrl.statusWritten.Write(context.Background(), tappStatusStub{}, "ns/web", cached,
		func(cur *tkestackv1.TApp) (*tkestackv1.TApp, bool) {
			out := cur.DeepCopy()
			out.Status.ObservedGeneration++
			return out, true
		}, fieldManager, metrics)
	if err != nil || h.ctrl.statusWritten.Len() != 1 {
		t.Fatalf("write: %v, %d held, want 1", err, h.ctrl.statusWritten.Len())
	}
	behind := cached.DeepCopy()
	behind.Annotations = map[string]string{"a": "b"} // an update the cache shows before the status write
	behind.ResourceVersion = "7"
	h.ctrl.tappUpdated(cached, behind)
	if h.ctrl.statusWritten.Len() != 1 {
		t.Fatal("dropped while the cache was behind the write")
	}
	caughtUp := cached.DeepCopy()
	caughtUp.ResourceVersion = "8"
	caughtUp.Status.ObservedGeneration++
	h.ctrl.tappUpdated(cached, caughtUp)
	if n := h.ctrl.statusWritten.Len(); n != 0 {
		t.Errorf("%d held once the cache showed the write, want 0", n)
	}
}
