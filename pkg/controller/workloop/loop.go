package workloop

import (
	"context"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// NewQueue returns a controller's workqueue of keys, named name, with the default controller rate limiter.
// Its delays (AddAfter, and the backoff of AddRateLimited) are timed by clk.
func NewQueue(name string, clk clock.WithTicker) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: clk})
}

// Loop hands the keys of a controller's queue to its sync function, one key to one worker at a time.
type Loop struct {
	// Name is the controller's name: the cache sync's, and the logs' key for the synced object.
	Name string
	// Kind is what the controller syncs, in error messages (e.g. "TApp").
	Kind string
	// Queue holds the keys to sync; Run shuts it down.
	Queue workqueue.TypedRateLimitingInterface[string]
	// Synced are the informers' HasSynced; Run starts no worker before they all are.
	Synced []cache.InformerSynced
	// Sync syncs the object of one key; an error requeues the key with backoff. The logger of its context
	// carries the key, under the controller's name.
	Sync func(ctx context.Context, key string) error
	// Clock times the syncs. It is the clock of the controller: New gives the same one to the queue, and the
	// controller to everything else of its own that reads the time.
	Clock clock.WithTicker
	// Metrics record the syncs' durations and results.
	Metrics *Metrics
}

// New returns the loop of the controller named name, which syncs objects of kind with sync and records
// metrics, timed by clk (clock.RealClock{} outside tests): its queue is NewQueue(name, clk). The informers
// it waits for are added by Watch.
func New(name, kind string, clk clock.WithTicker, sync func(ctx context.Context, key string) error, metrics *Metrics) *Loop {
	return &Loop{Name: name, Kind: kind, Queue: NewQueue(name, clk), Sync: sync, Clock: clk, Metrics: metrics}
}

// Watch registers handler with informer, and makes Run wait for the informer's cache before it starts a
// worker. Call it before Run.
func (l *Loop) Watch(informer cache.SharedIndexInformer, handler cache.ResourceEventHandler) error {
	if _, err := informer.AddEventHandler(handler); err != nil {
		return err
	}
	l.Synced = append(l.Synced, informer.HasSynced)
	return nil
}

// Enqueue adds the key (namespace/name, or name) of obj, an object or a deletion tombstone, to the queue.
func (l *Loop) Enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	l.Queue.Add(key)
}

// Deleted returns the object of a delete event as a T, unwrapping a tombstone (a delete the informer
// missed and learnt from a relist); false when it is not a T.
func Deleted[T any](obj any) (T, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	t, ok := obj.(T)
	return t, ok
}

// Run waits for the caches, then syncs keys with workers goroutines until ctx is done, and returns once
// the workers stopped.
func (l *Loop) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrash()
	defer l.Queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", l.Name)
	if !cache.WaitForNamedCacheSync(l.Name, ctx.Done(), l.Synced...) {
		return
	}
	logger.Info("Controller started", "workers", workers)
	done := make(chan struct{}, workers)
	for i := 0; i < workers; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			wait.UntilWithContext(ctx, l.worker, time.Second)
		}()
	}
	<-ctx.Done()
	l.Queue.ShutDown()
	for i := 0; i < workers; i++ {
		<-done
	}
	logger.Info("Controller stopped")
}

func (l *Loop) worker(ctx context.Context) {
	for l.ProcessNext(ctx) {
	}
}

// ProcessNext syncs the next key of the queue, waiting for one: on success the key's backoff is forgotten,
// on error the key is requeued rate-limited (a conflict is logged at V(2), another error is reported). It
// returns false once the queue is shut down.
func (l *Loop) ProcessNext(ctx context.Context) bool {
	key, quit := l.Queue.Get()
	if quit {
		return false
	}
	defer l.Queue.Done(key)
	start := l.Clock.Now()
	err := l.Sync(klog.NewContext(ctx, klog.FromContext(ctx).WithValues(l.Name, key)), key)
	l.Metrics.ObserveSync(l.Clock.Since(start), err)
	if err == nil {
		l.Queue.Forget(key)
		return true
	}
	if IsConflict(err) {
		klog.FromContext(ctx).V(2).Info("Conflict, syncing again", l.Name, key, "err", err)
	} else {
		utilruntime.HandleErrorWithContext(ctx, err, "Syncing "+l.Kind, l.Name, key)
	}
	l.Queue.AddRateLimited(key)
	return true
}
