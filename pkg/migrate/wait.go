package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// stopError ends a wait at once: waiting longer cannot help (the cluster refused a request for good).
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// stop marks err as a reason to end a wait at once; waitUntil returns err itself.
func stop(err error) error { return &stopError{err: err} }

// timeoutError is what waitUntil returns when its timeout passes: the last real reason the wait went on,
// never the deadline's own (see deadlineError).
type timeoutError struct {
	after time.Duration
	last  error
}

func (e *timeoutError) Error() string {
	if e.last == nil {
		return fmt.Sprintf("not done after %s", e.after)
	}
	return e.last.Error()
}

func (e *timeoutError) Unwrap() error { return e.last }

// waitUntil calls condition at once and then every m.Interval until it reports done, it returns a reason
// made with stop (returned as it is), or m.Timeout passes. condition returns whether it is done and, while
// it is not, why: an error of a call or a description of what it is waiting for. On timeout the error
// returned says the last such reason that was not caused by the deadline itself: a call cut short because
// the deadline passed, or refused by the client's rate limiter because it would have, says nothing about
// why the wait did not end, and hid the real cause (say, the server refusing an APIService) behind
// "rate: Wait(n=1) would exceed context deadline".
func (m *Migrator) waitUntil(ctx context.Context, condition func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, m.Interval, m.Timeout, true, func(ctx context.Context) (bool, error) {
		done, reason := condition(ctx)
		var s *stopError
		if errors.As(reason, &s) {
			return false, s
		}
		if done {
			return true, nil
		}
		if reason != nil && (last == nil || !deadlineError(ctx, reason)) {
			last = reason
		}
		return false, nil
	})
	var s *stopError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &s):
		return s.err
	case ctx.Err() != nil:
		// The caller gave up (interrupted), not the timeout.
		if last != nil {
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		}
		return ctx.Err()
	}
	return &timeoutError{after: m.Timeout, last: last}
}

// deadlineError reports whether err is the deadline's doing rather than the cluster's: the wait's context
// is done, err wraps a context error, or err is client-go's rate limiter refusing to wait past the
// deadline (its error does not wrap one).
func deadlineError(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "would exceed context deadline") || strings.Contains(msg, context.DeadlineExceeded.Error())
}
