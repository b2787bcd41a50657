package workloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/controllertest"
)

var (
	conflict = apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("stale"))
	wrapped  = fmt.Errorf("writing status: %w", conflict)
	boom     = errors.New("boom")
)

func TestResult(t *testing.T) {
	// The errors of each result label.
	for label, errs := range map[string][]error{
		ResultSuccess: {nil},
		ResultConflict: {
			conflict,
			wrapped,
			utilerrors.NewAggregate([]error{conflict, wrapped}),
			fmt.Errorf("sync: %w", utilerrors.NewAggregate([]error{conflict})),
		},
		ResultError: {
			boom,
			apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"),
			utilerrors.NewAggregate([]error{conflict, boom}),
		},
	} {
		for _, err := range errs {
			if got := Result(err); got != label {
				t.Errorf("Result(%v) = %q, want %q", err, got, label)
			}
		}
	}
}

// recordingQueue records what ProcessNext does with its keys.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	forgotten, rateLimited []string
}

func (q *recordingQueue) Forget(key string) {
	q.forgotten = append(q.forgotten, key)
	q.TypedRateLimitingInterface.Forget(key)
}

func (q *recordingQueue) AddRateLimited(key string) {
	q.rateLimited = append(q.rateLimited, key)
	q.TypedRateLimitingInterface.AddRateLimited(key)
}

// gathered returns the value of the metric called name whose labels include labels: a histogram's sample
// count and sum, or a counter's value (as count).
func gathered(t *testing.T, name string, labels map[string]string) (count, sum float64) {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok {
					if v != l.GetValue() {
						continue metric
					}
					matched++
				}
			}
			if matched != len(labels) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount()), h.GetSampleSum()
			}
			return m.GetCounter().GetValue(), 0
		}
	}
	return 0, 0
}

func TestProcessNext(t *testing.T) {
	m := NewMetrics("workloop_test", "Thing")
	reported := 0
	defer func(handlers []utilruntime.ErrorHandler) { utilruntime.ErrorHandlers = handlers }(utilruntime.ErrorHandlers)
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(context.Context, error, string, ...interface{}) { reported++ },
	}

	for _, tc := range []struct {
		name                       string
		err                        error
		result                     string
		forgotten, requeued, error bool
	}{
		{name: "success", result: ResultSuccess, forgotten: true},
		{name: "conflict", err: conflict, result: ResultConflict, requeued: true},
		{name: "aggregate of conflicts", err: utilerrors.NewAggregate([]error{conflict, wrapped}), result: ResultConflict, requeued: true},
		{name: "error", err: boom, result: ResultError, requeued: true, error: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Now())
			q := &recordingQueue{TypedRateLimitingInterface: NewQueue("workloop-test", clk)}
			defer q.ShutDown()
			var synced []string
			l := &Loop{Name: "thing", Kind: "Thing", Queue: q, Clock: clk, Metrics: m,
				Sync: func(_ context.Context, key string) error {
					synced = append(synced, key)
					clk.Step(2 * time.Second)
					return tc.err
				}}
			labels := map[string]string{"result": tc.result}
			count0, sum0 := gathered(t, "workloop_test_sync_duration_seconds", labels)
			reported = 0

			q.Add("ns/a")
			if !l.ProcessNext(context.Background()) {
				t.Fatal("ProcessNext = false with a key queued")
			}
			if len(synced) != 1 || synced[0] != "ns/a" {
				t.Errorf("synced %q, want [ns/a]", synced)
			}
			if got := len(q.forgotten) == 1; got != tc.forgotten {
				t.Errorf("forgotten %q, want forgotten: %v", q.forgotten, tc.forgotten)
			}
			if got := len(q.rateLimited) == 1; got != tc.requeued {
				t.Errorf("requeued rate-limited %q, want requeued: %v", q.rateLimited, tc.requeued)
			}
			if got := reported > 0; got != tc.error {
				t.Errorf("%d errors reported, want reported: %v", reported, tc.error)
			}
			count, sum := gathered(t, "workloop_test_sync_duration_seconds", labels)
			if count != count0+1 || sum != sum0+2 {
				t.Errorf("sync histogram{result=%s}: count %v sum %v, want %v and %v", tc.result, count, sum, count0+1, sum0+2)
			}
		})
	}
}

func TestProcessNextAfterShutDown(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	q := NewQueue("workloop-test", clk)
	q.ShutDown()
	l := &Loop{Name: "thing", Kind: "Thing", Queue: q, Clock: clk,
		Sync: func(context.Context, string) error { t.Error("synced after shut down"); return nil }}
	if l.ProcessNext(context.Background()) {
		t.Error("ProcessNext = true after the queue shut down")
	}
}

func TestMetricNames(t *testing.T) {
	m := NewMetrics("names_test_controller", "Thing")
	m.CountAction("create", utilerrors.NewAggregate([]error{conflict}))
	m.CountAction("create", nil)
	m.CountAction("create", nil)
	for _, tc := range []struct {
		result string
		want   float64
	}{{ResultConflict, 1}, {ResultSuccess, 2}, {ResultError, 0}} {
		if got, _ := gathered(t, "names_test_controller_actions_total", map[string]string{"action": "create", "result": tc.result}); got != tc.want {
			t.Errorf("names_test_controller_actions_total{action=create,result=%s} = %v, want %v", tc.result, got, tc.want)
		}
	}
	m.ObserveSync(time.Second, nil)
	if count, _ := gathered(t, "names_test_controller_sync_duration_seconds", map[string]string{"result": ResultSuccess}); count != 1 {
		t.Errorf("names_test_controller_sync_duration_seconds{result=success} count = %v, want 1", count)
	}
}

// TestWatchAndEnqueue: Watch registers the handler and makes Run wait for the informer; Enqueue keys
// objects and tombstones.
func TestWatchAndEnqueue(t *testing.T) {
	l := New("watch-test", "Pod", clock.RealClock{}, func(context.Context, string) error { return nil }, NewMetrics("watch_test", "Pod"))
	defer l.Queue.ShutDown()
	client := kubefake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	factory := informers.NewSharedInformerFactory(client, 0)
	if err := l.Watch(factory.Core().V1().Pods().Informer(), cache.ResourceEventHandlerFuncs{AddFunc: l.Enqueue}); err != nil {
		t.Fatal(err)
	}
	if len(l.Synced) != 1 || l.Synced[0]() {
		t.Fatalf("Synced = %d functions, want the informer's, not synced before it starts", len(l.Synced))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), l.Synced...) {
		t.Fatal("cache not synced")
	}
	l.Enqueue(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}})
	l.Enqueue(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	got := map[string]bool{}
	for i := 0; i < 3; i++ {
		key, _ := l.Queue.Get()
		got[key] = true
		l.Queue.Done(key)
	}
	if !got["ns/a"] || !got["ns/b"] || !got["n"] {
		t.Errorf("queued %v, want ns/a (the handler), ns/b (a tombstone) and n (cluster-scoped)", got)
	}
}

// clockTestMetrics are TestOneClock's (metrics register once per process).
var clockTestMetrics = NewMetrics("clock_test", "Thing")

// TestOneClock: New gives its clock to the queue, whose delays (AddAfter, the backoff of AddRateLimited)
// pass only as that clock moves.
func TestOneClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	l := New("clock-test", "Thing", clk, func(context.Context, string) error { return nil }, clockTestMetrics)
	defer l.Queue.ShutDown()
	if l.Clock != clk {
		t.Fatalf("Loop.Clock = %v, want the clock given to New", l.Clock)
	}
	l.Queue.AddAfter("ns/a", time.Hour)
	l.Queue.AddRateLimited("ns/b")
	if got := l.Queue.Len(); got != 0 {
		t.Fatalf("%d keys queued before the clock moved, want 0", got)
	}
	controllertest.StepUntilQueued(t, clk, l.Queue, time.Hour, 2)
	if got := controllertest.Drain(l.Queue); fmt.Sprint(got) != "[ns/a ns/b]" {
		t.Errorf("queued %v once the clock passed the delays, want [ns/a ns/b]", got)
	}
}

func TestDeleted(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	for _, tc := range []struct {
		name string
		obj  any
		ok   bool
	}{
		{"the object", pod, true},
		{"a tombstone of it", cache.DeletedFinalStateUnknown{Key: "p", Obj: pod}, true},
		{"another kind", &corev1.Node{}, false},
		{"a tombstone of another kind", cache.DeletedFinalStateUnknown{Key: "n", Obj: &corev1.Node{}}, false},
		{"nothing", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Deleted[*corev1.Pod](tc.obj)
			if ok != tc.ok || (ok && got != pod) {
				t.Errorf("Deleted = %v, %v; want the pod: %v", got, ok, tc.ok)
			}
		})
	}
}

// TestSyncLogsCarryTheKey: the logger of Sync's context names the key under the controller's name.
func TestSyncLogsCarryTheKey(t *testing.T) {
	var logged string
	ctx := klog.NewContext(context.Background(), funcr.New(func(_, args string) { logged = args }, funcr.Options{}))
	clk := clocktesting.NewFakeClock(time.Now())
	q := NewQueue("workloop-test", clk)
	defer q.ShutDown()
	l := &Loop{Name: "thing", Kind: "Thing", Queue: q, Clock: clk, Metrics: NewMetrics("logs_test", "Thing"),
		Sync: func(ctx context.Context, _ string) error {
			klog.FromContext(ctx).Info("synced")
			return nil
		}}
	q.Add("ns/a")
	l.ProcessNext(ctx)
	if !strings.Contains(logged, `"thing"="ns/a"`) {
		t.Errorf("Sync logged %s, want the key under the controller's name", logged)
	}
}
