package tapp

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// desiredStatus returns the status the policy decides for tapp at now (policy.DesiredStatus), with the
// failures of this sync in its ReplicaFailure condition. Conflicts are optimistic-concurrency retries, not
// failures a user should see (actions.Summary leaves them out).
func desiredStatus(tapp *tkestackv1.TApp, s policy.Status, revisions policy.Revisions, collisionCount *int32, failures []actions.Failure, now time.Time) tkestackv1.TAppStatus {
	var failure policy.Failure
	if reason, message, ok := actions.Summary(failures); ok {
		failure = policy.Failure{Reason: reason, Message: message}
	}
	return policy.DesiredStatus(tapp, s, revisions, collisionCount, failure, now)
}

// statusPace is how often, at most, the status of a TApp of up to statusPaceInstances instances is written
// while only the progress of its instances changes (the counts, instances starting: NotCreated, Pending,
// Running in status.statuses, the conditions' messages): a scale-up of a thousand instances would otherwise
// rewrite the status, which holds an entry per instance, hundreds of times. A change of the observed
// generation, the revisions, the selector, the app status or a condition's status or reason is written at
// once, and so is an instance entering any other state (Updating, Killing, Failed...: short states users
// watch for, and failures); a paced write is made when the pace allows, by a requeued sync.
const statusPace = time.Second

// statusPaceInstances is how many instances' entries one statusPace covers: a larger TApp's progress is
// written statusPace per statusPaceInstances entries apart (paceFor), up to maxStatusPace. Each write
// carries every entry, and is decoded, validated, stored and sent to every watcher whole: with a fixed pace
// the bytes written during a scale-up would grow with the square of the instances (a 10,000-instance
// scale-up wrote its 170 KB status 70 times). Scaled, they grow with the instances.
const statusPaceInstances = 1000

// maxStatusPace bounds the pace: a TApp's progress is never more than this behind in its status.
const maxStatusPace = 10 * time.Second

// paceFor returns the pace of progress-only status writes of a status of entries instances.
func paceFor(entries int) time.Duration {
	steps := max(1, (entries+statusPaceInstances-1)/statusPaceInstances)
	return min(time.Duration(steps)*statusPace, maxStatusPace)
}

// progressOnly reports whether next differs from cur only in the progress of the instances.
func progressOnly(cur, next *tkestackv1.TAppStatus) bool {
	for id, state := range next.Statuses {
		switch state {
		case policy.StatusNotCreated, policy.StatusPending, policy.StatusRunning:
		default:
			if cur.Statuses[id] != state {
				return false
			}
		}
	}
	if cur.ObservedGeneration != next.ObservedGeneration || cur.UpdateRevision != next.UpdateRevision ||
		cur.CurrentRevision != next.CurrentRevision || !equality.Semantic.DeepEqual(cur.CollisionCount, next.CollisionCount) ||
		cur.ScaleLabelSelector != next.ScaleLabelSelector || cur.AppStatus != next.AppStatus ||
		len(cur.Conditions) != len(next.Conditions) {
		return false
	}
	for i := range next.Conditions {
		c := meta.FindStatusCondition(cur.Conditions, next.Conditions[i].Type)
		if c == nil || c.Status != next.Conditions[i].Status || c.Reason != next.Conditions[i].Reason {
			return false
		}
	}
	return true
}

// statusPacer remembers when the status of each TApp was last written. It is safe for concurrent use.
type statusPacer struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// wait returns how long a progress-only status write of key with entries instances must wait at now, and 0
// if it may be made.
func (p *statusPacer) wait(key string, entries int, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.last[key]
	if !ok {
		return 0
	}
	return max(0, last.Add(paceFor(entries)).Sub(now))
}

// wrote records a status write of key at now.
func (p *statusPacer) wrote(key string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	p.last[key] = now
}

// forget drops what is remembered of key: call it when the TApp is deleted.
func (p *statusPacer) forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}

// writeStatus writes the status when it differs from the TApp's (and syncs the TApp again when a rollout's
// progress deadline, spec.progressDeadlineSeconds, would pass: policy.ProgressRecheck), from the TApp its previous status write
// returned while the cache does not show that write yet (statuswrite.Written: syncs of a TApp whose pods
// change follow one another faster than the cache shows each status write), retried on a fresh read after a
// conflict. The status describes the pods, not the TApp's resourceVersion, so it is written on the current
// TApp, unless that is another TApp or its spec changed since the plan (the sync its change triggers writes
// the status).
func (c *Controller) writeStatus(ctx context.Context, key string, tapp *tkestackv1.TApp, plan *policy.Plan, revisions policy.Revisions, failures []actions.Failure) error {
	now := c.clock.Now()
	var paced time.Duration              // how long a progress-only write waits for the pace
	var writing bool                     // whether the last status computed was written
	var deadline time.Duration           // when the progress deadline of the last status computed passes
	var exceeded string                  // the Progressing message of a write that reports the deadline exceeded
	var claimReason, claimMessage string // the Event of a write that turns VolumeClaimsUpdated to a problem
	err := c.statusWritten.Write(ctx, c.client.TKEStackAppsV1().TApps(tapp.Namespace), key, tapp,
		func(cur *tkestackv1.TApp) (*tkestackv1.TApp, bool) {
			if cur.UID != tapp.UID || cur.Generation != tapp.Generation {
				return cur, false
			}
			paced, writing = 0, false
			status := desiredStatus(cur, plan.Status, revisions, tapp.Status.CollisionCount, failures, now)
			deadline = policy.ProgressRecheck(cur, &status, now)
			if equality.Semantic.DeepEqual(status, cur.Status) {
				return cur, false
			}
			if progressOnly(&cur.Status, &status) {
				if paced = c.statusPacer.wait(key, len(status.Statuses), now); paced > 0 {
					return cur, false
				}
			}
			writing, exceeded = true, deadlineExceeded(&cur.Status, &status)
			claimReason, claimMessage = claimsTransition(&cur.Status, &status)
			updated := cur.DeepCopy()
			updated.Status = status
			return updated, true
		}, fieldManager, metrics)
	switch {
	case err != nil:
	case writing:
		c.statusPacer.wrote(key, now)
		if exceeded != "" {
			c.recorder.Event(tapp, corev1.EventTypeWarning, policy.ReasonProgressDeadlineExceeded, exceeded)
		}
		if claimReason != "" {
			c.recorder.Event(tapp, corev1.EventTypeWarning, claimReason, claimMessage)
		}
	case paced > 0:
		c.queue.AddAfter(key, paced)
	}
	if deadline > 0 {
		c.queue.AddAfter(key, deadline)
	}
	return err
}

// deadlineExceeded returns the Progressing message when next reports the progress deadline exceeded and cur
// did not, so that the transition is told once as an Event; "" otherwise.
func deadlineExceeded(cur, next *tkestackv1.TAppStatus) string {
	c := meta.FindStatusCondition(next.Conditions, tkestackv1.TAppProgressing)
	if c == nil || c.Reason != policy.ReasonProgressDeadlineExceeded {
		return ""
	}
	if old := meta.FindStatusCondition(cur.Conditions, tkestackv1.TAppProgressing); old != nil && old.Reason == c.Reason {
		return ""
	}
	return c.Message
}

// claimEventReasons are the Event reasons of the VolumeClaimsUpdated reasons told when the condition turns to
// them.
var claimEventReasons = map[string]string{
	policy.ReasonExpansionNotAllowed: ReasonExpansionNotAllowed,
	policy.ReasonResizeFailed:        ReasonClaimResizeFailed,
	policy.ReasonClaimsIncompatible:  ReasonClaimsIncompatible,
}

// claimsTransition returns the Event reason and message when next's VolumeClaimsUpdated condition turns to a
// reason that needs the user (a class without expansion, a failed resize, incompatible claims) and cur's
// had another reason, so that the transition is told once; "" otherwise.
func claimsTransition(cur, next *tkestackv1.TAppStatus) (string, string) {
	c := meta.FindStatusCondition(next.Conditions, tkestackv1.TAppVolumeClaimsUpdated)
	if c == nil || claimEventReasons[c.Reason] == "" {
		return "", ""
	}
	if old := meta.FindStatusCondition(cur.Conditions, tkestackv1.TAppVolumeClaimsUpdated); old != nil && old.Reason == c.Reason {
		return "", ""
	}
	return claimEventReasons[c.Reason], c.Message
}
