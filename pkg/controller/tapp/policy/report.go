package policy

import (
	"fmt"

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
)

// Failure is what the ReplicaFailure condition reports: the first reason of the sync's failures and their
// bounded message (the executor's actions.Summary); an empty Reason means nothing failed.
type Failure struct {
	Reason, Message string
}

// DesiredStatus returns the status to report for tapp, given the plan's view of its pods (s), its revisions,
// its collision count and what failed in this sync. Conditions keep their transition times while their
// status does not change. status.scaleLabelSelector is the API server's (its strategy renders spec.selector
// at every write) and is carried over.
//
// status.updateRevision is the revision of the spec's templates; status.currentRevision stays the revision
// the instances ran before the rollout until every wanted instance runs the spec's templates
// (RolloutComplete), then becomes the update revision.
//
// Available is True while at least (wanted instances − updateStrategy.maxUnavailable) are ready (available,
// with spec.minReadySeconds); Progressing is True with RolloutComplete or RolloutInProgress, Unknown with
// RolloutPaused while paused (and Paused True); ReplicaFailure is True while failure has a reason.
func DesiredStatus(tapp *tkestackv1.TApp, s Status, revisions Revisions, collisionCount *int32, failure Failure) tkestackv1.TAppStatus {
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
			Message: "spec.updateStrategy.paused is true: no instance is updated; new instances use status.currentRevision"}, tapp.Generation)
	} else {
		meta.RemoveStatusCondition(&status.Conditions, tkestackv1.TAppPaused)
		if p := tapp.Spec.UpdateStrategy.Partition; p > 0 && progressing.Reason == ReasonRolloutInProgress {
			progressing.Message += fmt.Sprintf("; instances below updateStrategy.partition %d keep status.currentRevision", p)
		}
	}
	setCondition(&status.Conditions, available, tapp.Generation)
	setCondition(&status.Conditions, progressing, tapp.Generation)

	if failure.Reason != "" {
		setCondition(&status.Conditions, metav1.Condition{Type: tkestackv1.TAppReplicaFailure, Status: metav1.ConditionTrue,
			Reason: failure.Reason, Message: failure.Message}, tapp.Generation)
	} else {
		meta.RemoveStatusCondition(&status.Conditions, tkestackv1.TAppReplicaFailure)
	}
	return status
}

func setCondition(conditions *[]metav1.Condition, c metav1.Condition, generation int64) {
	c.ObservedGeneration = generation
	meta.SetStatusCondition(conditions, c)
}
