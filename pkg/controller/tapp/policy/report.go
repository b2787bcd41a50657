package policy

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// Reasons of the Available, Progressing and Paused conditions that DesiredStatus decides.
const (
	// ReasonMinimumInstancesAvailable: Available is True.
	ReasonMinimumInstancesAvailable = "MinimumInstancesAvailable"
	// ReasonMinimumInstancesUnavailable: Available is False.
	ReasonMinimumInstancesUnavailable = "MinimumInstancesUnavailable"
	// ReasonRolloutComplete: Progressing, every wanted instance runs its current template and is ready.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonRolloutInProgress: Progressing, a rollout is under way.
	ReasonRolloutInProgress = "RolloutInProgress"
	// ReasonRolloutPaused: Progressing is Unknown and Paused True while spec.updateStrategy.paused holds the
	// rollout.
	ReasonRolloutPaused = "RolloutPaused"
	// ReasonProgressDeadlineExceeded: Progressing is False, the rollout made no progress for
	// spec.progressDeadlineSeconds (the reason a Deployment gives).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)

// Failure is what the ReplicaFailure condition reports: the first reason of the sync's failures and their
// bounded message (the executor's actions.Summary); an empty Reason means nothing failed.
type Failure struct {
	Reason, Message string
}

// DesiredStatus returns the status to report for tapp at now, given the plan's view of its pods (s), its
// revisions, its collision count and what failed in this sync. Conditions keep their transition times while
// their status does not change; a condition whose status changes gets now. status.scaleLabelSelector is the
// API server's (its strategy renders spec.selector at every write) and is carried over.
//
// status.updateRevision is the revision of the spec's templates; status.currentRevision stays the revision
// the instances ran before the rollout until every wanted instance runs the spec's templates
// (RolloutComplete), then becomes the update revision.
//
// Available is True while at least (wanted instances − updateStrategy.maxUnavailable) are ready (available,
// with spec.minReadySeconds); Progressing is True with RolloutComplete or RolloutInProgress, Unknown with
// RolloutPaused while paused (and Paused True), False with ProgressDeadlineExceeded once a rollout has made
// no progress for spec.progressDeadlineSeconds (see LastProgressTime); ReplicaFailure is True while failure
// has a reason.
func DesiredStatus(tapp *tkestackv1.TApp, s Status, revisions Revisions, collisionCount *int32, failure Failure, now time.Time) tkestackv1.TAppStatus {
	status := *tapp.Status.DeepCopy()
	status.ObservedGeneration = tapp.Generation
	status.Replicas = s.Replicas
	status.ReadyReplicas = s.ReadyReplicas
	status.UpdatedReplicas = s.UpdatedReplicas
	status.UpdatedReadyReplicas = s.UpdatedReadyReplicas
	status.AvailableReplicas = s.AvailableReplicas
	status.AppStatus = s.App
	status.Statuses = s.Instances
	if revisions.Update != "" {
		status.UpdateRevision, status.CurrentRevision = revisions.Update, revisions.Current
		if RolloutComplete(tapp, s) {
			status.CurrentRevision = revisions.Update
		}
		status.CollisionCount = collisionCount
	}

	wanted := WantedInstances(tapp)
	maxUnavailable := int32(MaxUnavailable(tapp.Spec.UpdateStrategy.MaxUnavailable, int(wanted)))
	minAvailable := wanted - maxUnavailable
	if minAvailable < 0 {
		minAvailable = 0
	}
	available := metav1.Condition{Type: tkestackv1.TAppAvailable, Status: metav1.ConditionTrue, Reason: ReasonMinimumInstancesAvailable,
		Message: fmt.Sprintf("%d of %d instances ready, at least %d required", s.ReadyReplicas, wanted, minAvailable)}
	counted := s.ReadyReplicas
	if tapp.Spec.MinReadySeconds > 0 {
		counted = s.AvailableReplicas
		available.Message = fmt.Sprintf("%d of %d instances available (ready for %ds), at least %d required", s.AvailableReplicas, wanted, tapp.Spec.MinReadySeconds, minAvailable)
	}
	if counted < minAvailable {
		available.Status, available.Reason = metav1.ConditionFalse, ReasonMinimumInstancesUnavailable
	}
	progressing := metav1.Condition{Type: tkestackv1.TAppProgressing, Status: metav1.ConditionTrue, Reason: ReasonRolloutComplete,
		Message: fmt.Sprintf("all %d instances run their current template and are ready", wanted)}
	if s.UpdatedReadyReplicas < wanted {
		progressing.Reason = ReasonRolloutInProgress
		progressing.Message = fmt.Sprintf("%d of %d instances updated, %d of them ready", s.UpdatedReplicas, wanted, s.UpdatedReadyReplicas)
	}
	if tapp.Spec.UpdateStrategy.Paused {
		progressing.Status, progressing.Reason = metav1.ConditionUnknown, ReasonRolloutPaused
		progressing.Message = fmt.Sprintf("rollout paused by spec.updateStrategy.paused: %d of %d instances updated", s.UpdatedReplicas, wanted)
		setCondition(&status.Conditions, metav1.Condition{Type: tkestackv1.TAppPaused, Status: metav1.ConditionTrue, Reason: ReasonRolloutPaused,
			Message: "spec.updateStrategy.paused is true: no instance is updated; new instances use status.currentRevision"}, tapp.Generation, now)
	} else {
		meta.RemoveStatusCondition(&status.Conditions, tkestackv1.TAppPaused)
		if p := tapp.Spec.UpdateStrategy.Partition; p > 0 && progressing.Reason == ReasonRolloutInProgress {
			progressing.Message += fmt.Sprintf("; instances below updateStrategy.partition %d keep status.currentRevision", p)
		}
	}
	status.LastProgressTime = lastProgressTime(tapp, &status, progressing.Reason, now)
	if progressing.Reason == ReasonRolloutInProgress && deadlinePassed(tapp, status.LastProgressTime, now) {
		progressing.Status, progressing.Reason = metav1.ConditionFalse, ReasonProgressDeadlineExceeded
		progressing.Message = fmt.Sprintf("no instance was updated or became ready for spec.progressDeadlineSeconds (%ds, since %s): %s",
			*tapp.Spec.ProgressDeadlineSeconds, status.LastProgressTime.UTC().Format(time.RFC3339), progressing.Message)
	}
	setCondition(&status.Conditions, available, tapp.Generation, now)
	setCondition(&status.Conditions, progressing, tapp.Generation, now)

	// The claims (spec.volumeClaimUpdateStrategy): reported only while its type is set.
	status.VolumeClaims = s.VolumeClaims
	if s.VolumeClaimsCondition != nil {
		setCondition(&status.Conditions, *s.VolumeClaimsCondition, tapp.Generation, now)
	} else {
		meta.RemoveStatusCondition(&status.Conditions, tkestackv1.TAppVolumeClaimsUpdated)
	}

	if failure.Reason != "" {
		setCondition(&status.Conditions, metav1.Condition{Type: tkestackv1.TAppReplicaFailure, Status: metav1.ConditionTrue,
			Reason: failure.Reason, Message: failure.Message}, tapp.Generation, now)
	} else {
		meta.RemoveStatusCondition(&status.Conditions, tkestackv1.TAppReplicaFailure)
	}
	return status
}

// lastProgressTime returns status.lastProgressTime for the new status next (its counts and revisions set)
// of tapp, whose Progressing reason will be reason (before the deadline is applied). It is kept only while
// spec.progressDeadlineSeconds is set (nil otherwise: a TApp without a deadline writes no such field), and
// is now when the rollout makes progress, compared with the status the TApp has (what the last write
// recorded, so it survives restarts of the controller):
//   - there is no time yet (the deadline was just set, or the TApp is new);
//   - status.updateRevision changed (a new rollout);
//   - updatedReplicas, updatedReadyReplicas, readyReplicas or availableReplicas rose (an instance was
//     updated, or became ready or available);
//   - a rollout starts or resumes: the TApp's Progressing condition is not RolloutInProgress nor
//     ProgressDeadlineExceeded (it is RolloutComplete, RolloutPaused or absent) and the new one is
//     RolloutInProgress. So the time spent paused never counts, and a scale-up of a TApp whose last
//     rollout ended long ago has the whole deadline.
//
// Otherwise the TApp's time is kept.
func lastProgressTime(tapp *tkestackv1.TApp, next *tkestackv1.TAppStatus, reason string, now time.Time) *metav1.Time {
	if tapp.Spec.ProgressDeadlineSeconds == nil {
		return nil
	}
	cur := &tapp.Status
	progressed := cur.LastProgressTime == nil ||
		next.UpdateRevision != cur.UpdateRevision ||
		next.UpdatedReplicas > cur.UpdatedReplicas || next.UpdatedReadyReplicas > cur.UpdatedReadyReplicas ||
		next.ReadyReplicas > cur.ReadyReplicas || next.AvailableReplicas > cur.AvailableReplicas
	if !progressed && reason == ReasonRolloutInProgress {
		c := meta.FindStatusCondition(cur.Conditions, tkestackv1.TAppProgressing)
		progressed = c == nil || (c.Reason != ReasonRolloutInProgress && c.Reason != ReasonProgressDeadlineExceeded)
	}
	if !progressed {
		return cur.LastProgressTime.DeepCopy()
	}
	t := metav1.NewTime(now.Truncate(time.Second)) // the precision the API keeps
	return &t
}

// deadlinePassed reports whether spec.progressDeadlineSeconds has passed at now since last.
func deadlinePassed(tapp *tkestackv1.TApp, last *metav1.Time, now time.Time) bool {
	d, ok := ProgressDeadlineIn(tapp, last, now)
	return ok && d <= 0
}

// ProgressDeadlineIn returns how long after now spec.progressDeadlineSeconds passes for a rollout whose
// last progress was at last (status.lastProgressTime), and false when there is no deadline (no
// progressDeadlineSeconds or no time). The controller syncs the TApp again when it passes, so that
// Progressing turns False without any other event.
func ProgressDeadlineIn(tapp *tkestackv1.TApp, last *metav1.Time, now time.Time) (time.Duration, bool) {
	if tapp.Spec.ProgressDeadlineSeconds == nil || last == nil {
		return 0, false
	}
	return last.Add(time.Duration(*tapp.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now), true
}

// ProgressRecheck returns when the TApp must be synced again for its progress deadline, given the status
// DesiredStatus decided at now: while a rollout is in progress and the deadline has not passed, the time
// until it does; 0 otherwise.
func ProgressRecheck(tapp *tkestackv1.TApp, status *tkestackv1.TAppStatus, now time.Time) time.Duration {
	c := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppProgressing)
	if c == nil || c.Reason != ReasonRolloutInProgress {
		return 0
	}
	if d, ok := ProgressDeadlineIn(tapp, status.LastProgressTime, now); ok && d > 0 {
		return d
	}
	return 0
}

// setCondition sets c with generation; a condition whose status changes (or that is new) gets now as its
// transition time, one whose status stays keeps its time.
func setCondition(conditions *[]metav1.Condition, c metav1.Condition, generation int64, now time.Time) {
	c.ObservedGeneration = generation
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	meta.SetStatusCondition(conditions, c)
}
