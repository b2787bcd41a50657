// Package statuswrite is the one way the embedded controllers write an object's status: through the status
// subresource, only when the computed status differs from the object's, and on a conflict (the cache was
// behind, often because of the controller's own previous write) again on a fresh read of the object,
// with retry.RetryOnConflict; with Written, from the object its last write returned while the cache is behind
// that write.
package statuswrite

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// Client is the part of a generated typed client (one namespace's, for a namespaced kind) that writes
// status, such as TAppInterface.
type Client[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// Counter records one write and its outcome, such as workloop.Metrics.
type Counter interface {
	CountAction(action string, err error)
}

// Write writes the status computed by the controller on the object named name, cached being the cache's
// copy. with returns a copy of the object it is given carrying the computed status, and whether to write it:
// false when its status already says the same, or when the status computed does not apply to that object
// (say, its spec changed since the status was computed: the sync that change triggers writes it). cached
// and the objects given to with are never modified by Write. Each write is counted as "update-status".
// The error of the last write is returned wrapped ("writing status: ...").
func Write[T any](ctx context.Context, client Client[T], name string, cached T, with func(T) (T, bool), fieldManager string, counter Counter) error {
	_, _, err := write(ctx, client, name, cached, with, fieldManager, counter)
	return err
}

// write is Write; it also returns the object the API server returned for the write made, if one was.
func write[T any](ctx context.Context, client Client[T], name string, cached T, with func(T) (T, bool), fieldManager string, counter Counter) (T, bool, error) {
	obj, fresh := cached, false
	var out T
	written := false
	var last error // of the last attempt
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		last = nil
		if fresh {
			cur, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				last = err
				return err
			}
			obj = cur
		}
		fresh = true
		updated, changed := with(obj)
		if !changed {
			return nil
		}
		var result T
		result, last = client.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
		counter.CountAction("update-status", last)
		if last == nil {
			out, written = result, true
		}
		return last
	})
	if last != nil {
		// The error of the last attempt: retry.OnError returns instead its last retriable error (nil when
		// there was none) for an error that wait.Interrupted matches, such as the context's cancellation.
		err = last
	}
	if err != nil {
		var zero T
		return zero, false, fmt.Errorf("writing status: %w", err)
	}
	return out, written, nil
}

// Written remembers, for each object, what the API server returned for its last status write, until the
// informer's cache shows that version or a newer one. A controller whose syncs of one object follow each other
// faster than its cache shows its own writes then writes from the object it wrote last rather than from the
// cache's older copy, which would fail with a Conflict and cost a read and a second write (for a TApp, each
// carrying a status entry per instance). The zero value is ready to use; it is safe for concurrent use.
type Written[T metav1.Object] struct {
	mu   sync.Mutex
	objs map[string]T
}

// Write is Write from the newer of cached and the object the last write for key returned (key names the
// object for Forget, such as its namespace/name).
func (w *Written[T]) Write(ctx context.Context, client Client[T], key string, cached T, with func(T) (T, bool), fieldManager string, counter Counter) error {
	out, ok, err := write(ctx, client, cached.GetName(), w.latest(key, cached), with, fieldManager, counter)
	if ok {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.objs == nil {
			w.objs = map[string]T{}
		}
		w.objs[key] = out
	}
	return err
}

// Forget drops what is remembered for key: call it when the object is deleted.
func (w *Written[T]) Forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.objs, key)
}

// Len returns how many objects are remembered.
func (w *Written[T]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.objs)
}

// Seen tells that the informer's cache now holds cached for key: what is remembered for key is dropped once
// the cache is as new (or holds another object), so that it is held only while the cache is behind. Call it
// from the informer's update handler, for every update, status-only ones included: without it an object
// written once stays remembered until its next sync, a second copy of every object a controller wrote.
func (w *Written[T]) Seen(key string, cached T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if last, ok := w.objs[key]; ok && !newer(last, cached) {
		delete(w.objs, key)
	}
}

// newer reports whether last is the same object as cached (same UID) with a higher resourceVersion.
// ResourceVersions that are not numbers are never compared: last is not newer.
func newer[T metav1.Object](last, cached T) bool {
	lastRV, err1 := strconv.ParseUint(last.GetResourceVersion(), 10, 64)
	cachedRV, err2 := strconv.ParseUint(cached.GetResourceVersion(), 10, 64)
	return err1 == nil && err2 == nil && last.GetUID() == cached.GetUID() && lastRV > cachedRV
}

// latest returns the object remembered for key if it is the same object as cached (same UID) with a
// higher resourceVersion, and cached otherwise; once cached is as new, or another object, the remembered
// one is dropped. ResourceVersions that are not numbers are never compared: cached is used.
func (w *Written[T]) latest(key string, cached T) T {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.objs[key]
	if !ok {
		return cached
	}
	if newer(last, cached) {
		return last
	}
	delete(w.objs, key)
	return cached
}
