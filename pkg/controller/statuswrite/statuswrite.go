// Package statuswrite is the one way the embedded controllers write an object's status: through the status
// subresource, only when the computed status differs from the object's, and on a conflict (the cache was
// behind, often because of the controller's own previous write) again on a fresh read of the object,
// with retry.RetryOnConflict.
package statuswrite

import (
	"context"
	"fmt"

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
	obj, fresh := cached, false
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
		updated, write := with(obj)
		if !write {
			return nil
		}
		_, last = client.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager})
		counter.CountAction("update-status", last)
		return last
	})
	if last != nil {
		// The error of the last attempt: retry.OnError returns instead its last retriable error (nil when
		// there was none) for an error that wait.Interrupted matches, such as the context's cancellation.
		err = last
	}
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}
