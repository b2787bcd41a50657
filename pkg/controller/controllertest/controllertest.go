// Package controllertest holds what the embedded controllers' unit tests share around fake clientsets:
// fake APIs that stamp writes as a real API server does (StampWrites), the keys a controller's handlers
// queued (Drain), moving a controller's fake clock until its queue's delayed keys are there
// (StepUntilQueued), and running a controller until it has done something (RunUntil). It is imported by
// tests only.
package controllertest

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
)

// StampWrites makes the fake API behave like a real one on writes: a new resourceVersion on every create
// and update, and a UID and a creationTimestamp (one minute after the previous one) on every create that
// has none.
func StampWrites(f *clienttesting.Fake) {
	rv := 100
	created := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	f.PrependReactor("*", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		var obj runtime.Object
		switch a := action.(type) {
		case clienttesting.CreateAction:
			obj = a.GetObject()
		case clienttesting.UpdateAction:
			obj = a.GetObject()
		default:
			return false, nil, nil
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return false, nil, nil
		}
		rv++
		m.SetResourceVersion(fmt.Sprint(rv))
		if action.GetVerb() == "create" {
			if m.GetUID() == "" {
				m.SetUID(types.UID(fmt.Sprintf("uid-%s-%d", m.GetName(), rv)))
			}
			if ts := m.GetCreationTimestamp(); ts.IsZero() {
				created = created.Add(time.Minute)
				m.SetCreationTimestamp(metav1.NewTime(created))
			}
		}
		return false, nil, nil
	})
}

// Drain empties a controller's queue and returns its keys, sorted.
func Drain(queue workqueue.TypedRateLimitingInterface[string]) []string {
	var keys []string
	for queue.Len() > 0 {
		key, _ := queue.Get()
		queue.Done(key)
		queue.Forget(key)
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// StepUntilQueued steps clk, the clock of queue, by step at a time until queue holds n keys, and fails the
// test when it does not within 10 seconds. The queue adds a delayed key on a goroutine of its own, which
// reads the clock and then sets a timer: a step made in between defers the key to a later step, so the
// clock is stepped again, by step each time, while the keys are missing. Use it where only which keys are
// queued matters, not when.
func StepUntilQueued(t testing.TB, clk *clocktesting.FakeClock, queue workqueue.TypedRateLimitingInterface[string], step time.Duration, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for queue.Len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d keys queued after stepping the clock for 10 seconds, want %d", queue.Len(), n)
		}
		clk.Step(step)
		for wait := time.Now().Add(20 * time.Millisecond); queue.Len() < n && time.Now().Before(wait); {
			time.Sleep(time.Millisecond)
		}
	}
}

// Factory is an informer factory of a controller under test.
type Factory interface {
	Start(stopCh <-chan struct{})
	Shutdown()
}

// RunUntil starts the factories, runs run (a controller's Run) and waits until reached reports true (it
// says what is still missing otherwise), then ends run's context and checks that run returns. Each wait is
// bounded by 10 seconds.
func RunUntil(t testing.TB, run func(ctx context.Context), reached func() (bool, string), factories ...Factory) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, f := range factories {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	stopped := make(chan struct{})
	go func() {
		run(ctx)
		close(stopped)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for ok, missing := reached(); !ok; ok, missing = reached() {
		if time.Now().After(deadline) {
			t.Errorf("the running controller did not get there: %s", missing)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Error("Run did not return after the context ended")
	}
	if t.Failed() {
		t.FailNow()
	}
}
