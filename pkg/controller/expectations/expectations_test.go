package expectations

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func claim(uid, storage string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: types.UID(uid)},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(storage)}}}}
}

func pod(uid, resourceVersion string, labels map[string]string, terminating bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID(uid), ResourceVersion: resourceVersion, Labels: labels}}
	if terminating {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

// TestObserved: what the cache must hold to show each kind of write.
func TestObserved(t *testing.T) {
	for _, tc := range []struct {
		name     string
		write    Write
		cached   metav1.Object // nil: no object of that name
		observed bool
	}{
		{"create, nothing cached", Create(), nil, false},
		{"create, cached", Create(), pod("u1", "1", nil, false), true},
		{"delete, still cached", Delete("u1"), pod("u1", "1", nil, false), false},
		{"delete, terminating", Delete("u1"), pod("u1", "2", nil, true), true},
		{"delete, gone", Delete("u1"), nil, true},
		{"delete, name holds another object", Delete("u1"), pod("u2", "3", nil, false), true},
		{"update from 5, cache at 5", UpdateFrom("5"), pod("u1", "5", nil, false), false},
		{"update from 5, cache moved on", UpdateFrom("5"), pod("u1", "6", nil, false), true},
		{"update from 5, gone", UpdateFrom("5"), nil, true},
		{"update to h2, cache has h1", UpdateTo("hash", "h2"), pod("u1", "7", map[string]string{"hash": "h1"}, false), false},
		{"update to h2, cache has no label", UpdateTo("hash", "h2"), pod("u1", "7", nil, false), false},
		{"update to h2, cache has h2", UpdateTo("hash", "h2"), pod("u1", "8", map[string]string{"hash": "h2"}, false), true},
		{"update to h2, gone", UpdateTo("hash", "h2"), nil, true},
		{"storage to 2Gi, cache requests 1Gi", StorageRequest("u1", resource.MustParse("2Gi")), claim("u1", "1Gi"), false},
		{"storage to 2Gi, cache requests 2Gi", StorageRequest("u1", resource.MustParse("2Gi")), claim("u1", "2048Mi"), true},
		{"storage to 2Gi, cache requests more", StorageRequest("u1", resource.MustParse("2Gi")), claim("u1", "3Gi"), true},
		{"storage to 2Gi, gone", StorageRequest("u1", resource.MustParse("2Gi")), nil, true},
		{"storage to 2Gi, name holds another claim", StorageRequest("u1", resource.MustParse("2Gi")), claim("u2", "1Gi"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New[string](clocktesting.NewFakePassiveClock(time.Now()))
			e.Raise("ns/a", "p", tc.write)
			if got := e.Satisfied("ns/a", func(string) metav1.Object { return tc.cached }); got != tc.observed {
				t.Errorf("Satisfied = %v, want %v", got, tc.observed)
			}
			// Observed writes are forgotten: a later cache state does not bring them back.
			if tc.observed && !e.Satisfied("ns/a", func(string) metav1.Object { return nil }) {
				t.Error("an observed write is still expected")
			}
		})
	}
}

// TestLifecycle: raise, lower, observe, expiry and forget, per key.
func TestLifecycle(t *testing.T) {
	none := func(string) metav1.Object { return nil }
	cached := func(string) metav1.Object { return pod("u1", "1", nil, false) }
	for _, tc := range []struct {
		name string
		// steps act on expectations of keys "ns/a" and "ns/b".
		steps     func(e *Expectations[string], clk *clocktesting.FakePassiveClock)
		lookup    func(string) metav1.Object
		satisfied bool
		// pending is what Pending counts before Satisfied looks at the cache.
		pending Counts
	}{
		{name: "nothing expected", steps: func(*Expectations[string], *clocktesting.FakePassiveClock) {}, lookup: none, satisfied: true},
		{name: "create not shown", lookup: none, pending: Counts{Creates: 1},
			steps: func(e *Expectations[string], _ *clocktesting.FakePassiveClock) { e.Raise("ns/a", "a-0", Create()) }},
		{name: "create lowered after a failure", lookup: none, satisfied: true,
			steps: func(e *Expectations[string], _ *clocktesting.FakePassiveClock) {
				e.Raise("ns/a", "a-0", Create())
				e.Lower("ns/a", "a-0")
			}},
		{name: "one of two lowered", lookup: cached, pending: Counts{Deletes: 1},
			steps: func(e *Expectations[string], _ *clocktesting.FakePassiveClock) {
				e.Raise("ns/a", "a-0", Create())
				e.Raise("ns/a", "a-1", Delete("u1"))
				e.Lower("ns/a", "a-0")
			}},
		{name: "a later write of a name replaces the earlier", lookup: cached, satisfied: true, pending: Counts{Creates: 1},
			steps: func(e *Expectations[string], _ *clocktesting.FakePassiveClock) {
				e.Raise("ns/a", "a-0", Delete("u1"))
				e.Raise("ns/a", "a-0", Create())
			}},
		{name: "another key's writes do not hold this one", lookup: none, satisfied: true,
			steps: func(e *Expectations[string], _ *clocktesting.FakePassiveClock) { e.Raise("ns/b", "b-0", Create()) }},
		{name: "expired", lookup: none, satisfied: true, pending: Counts{Creates: 1},
			steps: func(e *Expectations[string], clk *clocktesting.FakePassiveClock) {
				e.Raise("ns/a", "a-0", Create())
				clk.SetTime(clk.Now().Add(TTL + time.Second))
			}},
		{name: "not yet expired", lookup: none, pending: Counts{Creates: 1, Updates: 1},
			steps: func(e *Expectations[string], clk *clocktesting.FakePassiveClock) {
				e.Raise("ns/a", "a-0", Create())
				clk.SetTime(clk.Now().Add(TTL - time.Second))
				e.Raise("ns/a", "a-1", UpdateFrom("3")) // the TTL counts from the last write
				clk.SetTime(clk.Now().Add(2 * time.Second))
			}},
		{name: "forgotten", lookup: none, satisfied: true,
			steps: func(e *Expectations[string], _ *clocktesting.FakePassiveClock) {
				e.Raise("ns/a", "a-0", Create())
				e.Forget("ns/a")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Now())
			e := New[string](clk)
			tc.steps(e, clk)
			if got := e.Pending("ns/a"); got != tc.pending {
				t.Errorf("Pending = %+v, want %+v", got, tc.pending)
			}
			if got := e.Satisfied("ns/a", tc.lookup); got != tc.satisfied {
				t.Errorf("Satisfied = %v, want %v", got, tc.satisfied)
			}
		})
	}
}
