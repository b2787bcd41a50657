// Package actions owns how the embedded controllers' executors carry out a plan's API calls: at most
// MaxParallel at a time, creations in slow-start batches (SlowStart, as Kubernetes' slowStartBatch), every
// write under the controller's field manager (FieldManager), and the failures of a sync (Failure): the
// errors the sync returns to be retried and the one bounded message of the condition that reports them.
package actions

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"k8s.io/client-go/util/workqueue"
)

// MaxParallel bounds the concurrent API calls of one sync other than creations: deletions, in-place updates,
// readiness-gate writes, adoptions. The controller's client rate limiter is the budget; this bound keeps a sync
// of thousands of pods from holding thousands of requests in flight at once, and is large enough that,
// unthrottled, the calls are bound by the API server's latency, not by the sync: an update budget of 250
// in-place updates, two writes each, is carried out in four rounds.
const MaxParallel = 64

// MaxParallelCreates bounds the calls of a slow-start batch (SlowStart) in flight at once. Unthrottled, the
// API server's latency under load sets how many creations a controller needs in flight to keep up (with 128, a
// scale-up of 1000 pods took 7 s of creations against kube-controller-manager's 4 s). Beyond what API Priority
// and Fairness queues for one flow they are refused: kube-apiserver's default workload-high level queues a flow
// in 6 queues of 50 requests beside the seats it executes, and a whole batch of 512 in flight (as
// kube-controller-manager's slowStartBatch has) was refused 4-26 creations with 429 per unthrottled scale-up of
// 1000 pods (client-go retries each a second later), where the readiness-gate writes made beside the creations
// take seats of the same level. An HTTP/2 connection carries at most 250 streams, so the controllers' clients
// spread their requests over connections of their own (the manager's overConnections): a client with more
// requests in flight than its connection carries dials a TLS connection for each request beyond (measured: 466
// connections of less than half a second in one unthrottled scale-up of 1000 pods).
const MaxParallelCreates = 256

// FieldManager is the field manager of the writes of the controller named name (its name in
// --controllers): <name>-controller.
func FieldManager(name string) string {
	return name + "-controller"
}

// SlowStart calls fn for the indexes 0 to count-1 in batches of 1, 2, 4, ... calls, MaxParallelCreates calls
// of a batch at once, and stops after the first batch in which a call failed (fn returned false), as Kubernetes'
// slowStartBatch does: a sync whose creations are all refused (quota, admission) costs a few calls, not count
// calls. Every call of a batch is made, whatever the others return.
func SlowStart(ctx context.Context, count int, fn func(i int) bool) {
	done := 0
	for batch := 1; done < count; batch *= 2 {
		batch = min(batch, count-done)
		var mu sync.Mutex
		failed := false
		start := done
		workqueue.ParallelizeUntil(ctx, min(batch, MaxParallelCreates), batch, func(i int) {
			if !fn(start + i) {
				mu.Lock()
				failed = true
				mu.Unlock()
			}
		})
		done += batch
		if failed || ctx.Err() != nil {
			return
		}
	}
}

// ReasonConflict is the reason of a failure that is an optimistic-concurrency retry (the object changed
// since the cache showed it): it is retried, but not reported in a condition or an event.
const ReasonConflict = "Conflict"

// Failure is an action of a sync that could not be carried out; it ends up in the condition that reports
// the sync's failures and, when Retry is set, in the error the sync returns.
type Failure struct {
	Reason  string
	Message string
	// Retry: the sync is retried with backoff (API errors); false for what only a spec or user change
	// fixes (a missing template, a foreign object holding a name).
	Retry bool
	// Err, when set, is the error the sync returns for the failure (the API's, so that the work loop sees
	// a conflict as one), instead of one made of Reason and Message.
	Err error
}

// Failures collects the failures of one sync from concurrent actions. The zero value is ready to use.
type Failures struct {
	mu   sync.Mutex
	list []Failure
}

// Add records failures.
func (f *Failures) Add(failures ...Failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, failures...)
}

// List returns the failures recorded, in the order they were added.
func (f *Failures) List() []Failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Failure(nil), f.list...)
}

// Errors returns the errors a sync returns for failures, to be retried: one for each failure with Retry
// set (its Err, or "<reason>: <message>").
func Errors(failures []Failure) []error {
	var errs []error
	for _, f := range failures {
		switch {
		case !f.Retry:
		case f.Err != nil:
			errs = append(errs, f.Err)
		default:
			errs = append(errs, fmt.Errorf("%s: %s", f.Reason, f.Message))
		}
	}
	return errs
}

// MaxMessages is how many failure messages a condition carries; the others are counted ("and N more").
const MaxMessages = 5

// Reported returns the failures a condition reports: all but the conflicts (ReasonConflict).
func Reported(failures []Failure) []Failure {
	var out []Failure
	for _, f := range failures {
		if f.Reason != ReasonConflict {
			out = append(out, f)
		}
	}
	return out
}

// Summary returns the reason and message of the condition that reports failures: the reason of the first
// reported failure, and their messages joined by "; ", the first MaxMessages of them and then "and N
// more". ok is false when no failure is reported (Reported).
func Summary(failures []Failure) (reason, message string, ok bool) {
	reported := Reported(failures)
	if len(reported) == 0 {
		return "", "", false
	}
	messages := make([]string, 0, min(len(reported), MaxMessages)+1)
	for _, f := range reported[:min(len(reported), MaxMessages)] {
		messages = append(messages, f.Message)
	}
	if len(reported) > MaxMessages {
		messages = append(messages, fmt.Sprintf("and %d more", len(reported)-MaxMessages))
	}
	return reported[0].Reason, TruncateMessage(strings.Join(messages, "; ")), true
}

// MaxConditionMessageLength is the longest message a condition may carry: the core API's bound of a
// metav1.Condition's message, which the servers' validation applies to the conditions of TApps and
// YurtAppDaemons alike. A status whose condition says more is refused, so the controllers cut the message.
const MaxConditionMessageLength = 32 * 1024

// truncatedMark ends a message TruncateMessage cut.
const truncatedMark = " ... (truncated)"

// TruncateMessage returns message if it is at most MaxConditionMessageLength bytes long, else its beginning,
// cut on a character boundary, followed by a mark, within that length.
func TruncateMessage(message string) string {
	if len(message) <= MaxConditionMessageLength {
		return message
	}
	cut := MaxConditionMessageLength - len(truncatedMark)
	for cut > 0 && !utf8.RuneStart(message[cut]) {
		cut--
	}
	return message[:cut] + truncatedMark
}
