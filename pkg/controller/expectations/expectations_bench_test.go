package expectations

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// benchCache is a pod cache of n pods web-0...web-<n-1> at resourceVersion 1, looked up by name as the TApp
// controller looks its pod cache up (one name at a time).
func benchCache(n int) func(string) metav1.Object {
	pods := make(map[string]metav1.Object, n)
	for i := 0; i < n; i++ {
		name := "web-" + strconv.Itoa(i)
		pods[name] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"}}
	}
	return func(name string) metav1.Object {
		if p, ok := pods[name]; ok {
			return p
		}
		return nil
	}
}

// raiseUnobserved raises, for key, n writes that a cache of benchCache(n) pods (names web-<n>... absent)
// does not show: creates of pods beyond the cache, deletes and updates of cached pods, in turn.
func raiseUnobserved(e *Expectations[string], key string, n int) {
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			e.Raise(key, "web-"+strconv.Itoa(n+i), Create())
		case 1:
			e.Raise(key, "web-"+strconv.Itoa(i), Delete(types.UID("uid-web-"+strconv.Itoa(i))))
		default:
			e.Raise(key, "web-"+strconv.Itoa(i), UpdateFrom("1"))
		}
	}
}

// BenchmarkSatisfied: the question each sync asks first, for a TApp with pending writes the pod cache does
// not show yet (every pending write is looked up and kept), while keys-1 other TApps have 10 pending writes
// each. pending=0 is the common case: nothing expected.
func BenchmarkSatisfied(b *testing.B) {
	for _, pending := range []int{0, 10, 1000, 10000} {
		for _, keys := range []int{1, 1000} {
			b.Run(fmt.Sprintf("pending=%d/keys=%d", pending, keys), func(b *testing.B) {
				e := New[string](clock.RealClock{})
				for k := 1; k < keys; k++ {
					raiseUnobserved(e, "ns/other-"+strconv.Itoa(k), 10)
				}
				raiseUnobserved(e, "ns/web", pending)
				lookup := benchCache(pending)
				b.ReportAllocs()
				for b.Loop() {
					if e.Satisfied("ns/web", lookup) != (pending == 0) {
						b.Fatal("Satisfied answered otherwise than the pending writes say")
					}
				}
			})
		}
	}
}

// BenchmarkRaiseAndObserve: a TApp's n writes raised, then all observed by one Satisfied (the cache shows
// them: the pods created, the deleted ones gone, the updated ones at a new version), per op; ns/write is
// the cost of one write's expectation.
func BenchmarkRaiseAndObserve(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("writes=%d", n), func(b *testing.B) {
			e := New[string](clock.RealClock{})
			names := make([]string, n)
			for i := range names {
				names[i] = "web-" + strconv.Itoa(i)
			}
			shown := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "2"}}
			lookup := func(string) metav1.Object { return shown }
			b.ReportAllocs()
			for b.Loop() {
				for _, name := range names {
					e.Raise("ns/web", name, UpdateFrom("1"))
				}
				if !e.Satisfied("ns/web", lookup) {
					b.Fatal("writes the cache shows are still expected")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/write")
		})
	}
}

// BenchmarkRaise: one more write raised for a TApp that already has pending writes (replacing the
// expectation of a pod already expected, so the count stays), while 999 other TApps have 10 each.
func BenchmarkRaise(b *testing.B) {
	for _, pending := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			e := New[string](clock.RealClock{})
			for k := 1; k < 1000; k++ {
				raiseUnobserved(e, "ns/other-"+strconv.Itoa(k), 10)
			}
			names := make([]string, pending)
			for i := range names {
				names[i] = "web-" + strconv.Itoa(i)
				e.Raise("ns/web", names[i], Create())
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				e.Raise("ns/web", names[i%pending], Create())
				i++
			}
			if got := e.Pending("ns/web").Creates; got != pending {
				b.Fatalf("%d creates pending, want %d", got, pending)
			}
		})
	}
}
