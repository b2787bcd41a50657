package actions

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSlowStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count int
		fails map[int]bool // indexes whose call fails
		// calls are the indexes called.
		calls int
	}{
		{name: "nothing", count: 0, calls: 0},
		{name: "all succeed", count: 10, calls: 10},
		{name: "first fails", count: 10, fails: map[int]bool{0: true}, calls: 1},
		{name: "second batch fails", count: 10, fails: map[int]bool{2: true}, calls: 3},
		{name: "fourth batch fails: the whole batch is made", count: 100, fails: map[int]bool{7: true}, calls: 15},
		{name: "last, short batch fails", count: 5, fails: map[int]bool{4: true}, calls: 5},
		{name: "batches larger than MaxParallel", count: 100, calls: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var called []int
			SlowStart(context.Background(), tc.count, func(i int) bool {
				mu.Lock()
				defer mu.Unlock()
				called = append(called, i)
				return !tc.fails[i]
			})
			sort.Ints(called)
			want := make([]int, tc.calls)
			for i := range want {
				want[i] = i
			}
			if fmt.Sprint(called) != fmt.Sprint(want) {
				t.Errorf("called %v, want 0..%d", called, tc.calls-1)
			}
		})
	}
}

func TestSlowStartStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	SlowStart(ctx, 100, func(int) bool {
		calls++
		cancel()
		return true
	})
	if calls != 1 {
		t.Errorf("%d calls after the context was cancelled by the first, want 1", calls)
	}
}

func TestFieldManager(t *testing.T) {
	if got := FieldManager("tapp"); got != "tapp-controller" {
		t.Errorf("FieldManager(tapp) = %q", got)
	}
}

func failures(n int, reason string) []Failure {
	out := make([]Failure, n)
	for i := range out {
		out[i] = Failure{Reason: reason, Message: fmt.Sprintf("m%d", i)}
	}
	return out
}

func TestSummary(t *testing.T) {
	conflict := Failure{Reason: ReasonConflict, Message: "the object changed", Retry: true}
	for _, tc := range []struct {
		name     string
		failures []Failure
		reason   string
		message  string
		ok       bool
	}{
		{name: "none"},
		{name: "only conflicts", failures: []Failure{conflict, conflict}},
		{name: "one", failures: failures(1, "FailedCreate"), reason: "FailedCreate", message: "m0", ok: true},
		{name: "the first reported reason", failures: append([]Failure{conflict, {Reason: "InstanceConflict", Message: "x"}}, failures(1, "FailedCreate")...),
			reason: "InstanceConflict", message: "x; m0", ok: true},
		{name: "five", failures: failures(5, "FailedDelete"), reason: "FailedDelete", message: "m0; m1; m2; m3; m4", ok: true},
		{name: "six: and 1 more", failures: failures(6, "FailedDelete"), reason: "FailedDelete", message: "m0; m1; m2; m3; m4; and 1 more", ok: true},
		{name: "twelve and a conflict: and 7 more", failures: append(failures(12, "FailedUpdate"), conflict), reason: "FailedUpdate",
			message: "m0; m1; m2; m3; m4; and 7 more", ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, message, ok := Summary(tc.failures)
			if reason != tc.reason || message != tc.message || ok != tc.ok {
				t.Errorf("Summary = %q, %q, %v; want %q, %q, %v", reason, message, ok, tc.reason, tc.message, tc.ok)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	apiConflict := apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("changed"))
	errs := Errors([]Failure{
		{Reason: "InstanceConflict", Message: "held by another"},
		{Reason: "FailedCreate", Message: "quota", Retry: true},
		{Reason: ReasonConflict, Message: apiConflict.Error(), Retry: true, Err: apiConflict},
	})
	if len(errs) != 2 {
		t.Fatalf("errors %v, want 2 (a failure without Retry returns none)", errs)
	}
	if errs[0].Error() != "FailedCreate: quota" {
		t.Errorf("error %q, want reason: message", errs[0])
	}
	if !apierrors.IsConflict(errs[1]) {
		t.Errorf("error %v, want the API's conflict", errs[1])
	}
}

func TestFailuresConcurrent(t *testing.T) {
	var f Failures
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			f.Add(Failure{Reason: "R", Message: fmt.Sprint(i)})
		}(i)
	}
	wg.Wait()
	list := f.List()
	if len(list) != 50 {
		t.Fatalf("%d failures, want 50", len(list))
	}
	list[0].Message = "changed"
	if reflect.DeepEqual(f.List(), list) || strings.Contains(fmt.Sprint(f.List()), "changed") {
		t.Error("List shares its slice with the collector")
	}
}

// TestSlowStartRunsABatchAtOnce: MaxParallelCreates calls of a batch (all of a smaller batch) are in flight at
// the same time, and never more: here batches up to twice MaxParallelCreates. Each call waits, a few seconds
// at most, until as many calls as its batch may run at once are in flight.
func TestSlowStartRunsABatchAtOnce(t *testing.T) {
	const count = 4*MaxParallelCreates - 1 // batches of 1, 2, 4, ..., 2*MaxParallelCreates
	var mu sync.Mutex
	inFlight, most := 0, map[int]int{} // most in flight per batch start
	arrived := map[int]*sync.WaitGroup{}
	batchOf := func(i int) (start, size int) {
		for start, size = 0, 1; i >= start+size; start, size = start+size, size*2 {
		}
		return start, size
	}
	timedOut := map[int]bool{}
	SlowStart(context.Background(), count, func(i int) bool {
		start, size := batchOf(i)
		mu.Lock()
		inFlight++
		most[start] = max(most[start], inFlight)
		wg, ok := arrived[start]
		if !ok {
			wg = &sync.WaitGroup{}
			wg.Add(min(size, MaxParallelCreates))
			arrived[start] = wg
		}
		mu.Unlock()
		if i-start < MaxParallelCreates {
			wg.Done() // the first MaxParallelCreates calls of the batch meet
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				mu.Lock()
				timedOut[start] = true
				mu.Unlock()
			}
		}
		time.Sleep(10 * time.Millisecond) // long enough for any call allowed to run alongside to start
		mu.Lock()
		inFlight--
		mu.Unlock()
		return true
	})
	for start, size := 0, 1; start < count; start, size = start+size, size*2 {
		if want := min(size, MaxParallelCreates); most[start] != want || timedOut[start] {
			t.Errorf("batch of %d calls at %d: at most %d in flight (timed out: %v), want %d", size, start, most[start], timedOut[start], want)
		}
	}
}
