package policy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
)

// Condition types, as yurt-manager reports them.
const (
	ConditionPoolFound     = v1beta1.AppSetPoolFound
	ConditionAppDispatched = v1beta1.AppSetAppDispatched
	ConditionAppDeleted    = v1beta1.AppSetAppDeleted
	ConditionAppUpdated    = v1beta1.AppSetAppUpdated
	ConditionAppReady      = v1beta1.AppSetAppReady
)

// Condition reasons. The False reasons of yurt-manager are kept: NoFindPools; CreateWorkloadError,
// DeleteWorkloadError and UpdateWorkloadError (set by the controller when a write fails);
// NoWorkloadFound, NotAllWorkloadsReady, AllWorkloadsReady.
const (
	ReasonFindPools            = "FindPools"
	ReasonNoFindPools          = "NoFindPools"
	ReasonPoolNotFound         = "PoolNotFound"
	ReasonAllWorkloadsCreated  = "AllWorkloadsCreated"
	ReasonWorkloadsMissing     = "WorkloadsMissing"
	ReasonInvalidPool          = "InvalidPool"
	ReasonNoUnexpectedWorkload = "NoUnexpectedWorkload"
	ReasonDeletingWorkloads    = "DeletingWorkloads"
	ReasonAllWorkloadsUpdated  = "AllWorkloadsUpdated"
	ReasonUpdatingWorkloads    = "UpdatingWorkloads"
	ReasonCreateWorkloadError  = "CreateWorkloadError"
	ReasonDeleteWorkloadError  = "DeleteWorkloadError"
	ReasonUpdateWorkloadError  = "UpdateWorkloadError"
	ReasonNoWorkloadFound      = "NoWorkloadFound"
	ReasonNotAllWorkloadsReady = "NotAllWorkloadsReady"
	ReasonAllWorkloadsReady    = "AllWorkloadsReady"
)

// maxListedNames bounds the names listed in a condition message.
const maxListedNames = 10

// Status is what a YurtAppSet reports for a snapshot.
type Status struct {
	// TotalWorkloads counts the workloads kept (one per selected pool that has one). ReadyWorkloads counts
	// those whose controller observed their generation and whose ready replicas reach spec.replicas
	// (default 1); UpdatedWorkloads those at the current revision that need no update and whose updated
	// replicas reach spec.replicas.
	TotalWorkloads, ReadyWorkloads, UpdatedWorkloads int32
	// Conditions are PoolFound, AppDispatched, AppDeleted, AppUpdated and AppReady, in that order, without
	// transition times (ApplyStatus sets them).
	Conditions []v1beta1.YurtAppSetCondition
}

func computeStatus(plan *Plan, selected []*v1alpha1.NodePool, kept map[string]*workload, updates map[string]bool) Status {
	var s Status
	var missing []string
	for _, p := range selected {
		w := kept[p.Name]
		if w == nil {
			missing = append(missing, p.Name)
			continue
		}
		s.TotalWorkloads++
		want := int32(1)
		if w.replicas != nil {
			want = *w.replicas
		}
		current := w.observed >= w.meta.Generation
		if current && w.ready >= want {
			s.ReadyWorkloads++
		}
		if !updates[p.Name] && w.meta.Labels[RevisionHashLabel] == plan.Revision && current && w.updated >= want {
			s.UpdatedWorkloads++
		}
	}
	cond := func(t v1beta1.YurtAppSetConditionType, ok bool, reason, message string) v1beta1.YurtAppSetCondition {
		status := corev1.ConditionTrue
		if !ok {
			status = corev1.ConditionFalse
		}
		return v1beta1.YurtAppSetCondition{Type: t, Status: status, Reason: reason, Message: message}
	}

	var found v1beta1.YurtAppSetCondition
	switch {
	case len(plan.MissingPools) > 0:
		found = cond(ConditionPoolFound, false, ReasonPoolNotFound, fmt.Sprintf("spec.pools names NodePools that do not exist: %s", listNames(plan.MissingPools)))
	case len(selected) == 0:
		found = cond(ConditionPoolFound, false, ReasonNoFindPools, "There are no matched nodepools for YurtAppSet")
	default:
		found = cond(ConditionPoolFound, true, ReasonFindPools, fmt.Sprintf("There are %d matched nodepools: %s", len(plan.Pools), listNames(plan.Pools)))
	}

	dispatched := cond(ConditionAppDispatched, true, ReasonAllWorkloadsCreated, "All expected workloads are created")
	if len(missing) > 0 {
		reason := ReasonWorkloadsMissing
		if len(plan.PoolErrors) > 0 {
			reason = ReasonInvalidPool
		}
		msg := fmt.Sprintf("%d of %d selected pools have no %s: %s", len(missing), len(selected), plan.Kind, listNames(missing))
		for i, e := range plan.PoolErrors {
			if i == maxListedNames {
				break
			}
			msg += fmt.Sprintf("; pool %s: %s", e.Pool, e.Message)
		}
		dispatched = cond(ConditionAppDispatched, false, reason, msg)
	}
	deleted := cond(ConditionAppDeleted, true, ReasonNoUnexpectedWorkload, "No workload of an unselected pool is left")
	if len(plan.Deletes) > 0 {
		names := make([]string, len(plan.Deletes))
		for i, d := range plan.Deletes {
			names[i] = d.Name
		}
		deleted = cond(ConditionAppDeleted, false, ReasonDeletingWorkloads, fmt.Sprintf("%d workloads to delete: %s", len(names), listNames(names)))
	}
	updated := cond(ConditionAppUpdated, true, ReasonAllWorkloadsUpdated, fmt.Sprintf("All %d workloads are at revision %s", s.TotalWorkloads, plan.Revision))
	if len(plan.Updates) > 0 {
		names := make([]string, len(plan.Updates))
		for i, u := range plan.Updates {
			names[i] = u.Name
		}
		updated = cond(ConditionAppUpdated, false, ReasonUpdatingWorkloads, fmt.Sprintf("%d workloads to update to revision %s: %s", len(names), plan.Revision, listNames(names)))
	}
	var ready v1beta1.YurtAppSetCondition
	switch {
	case s.TotalWorkloads == 0:
		ready = cond(ConditionAppReady, false, ReasonNoWorkloadFound, "No workload found")
	case s.ReadyWorkloads == s.TotalWorkloads:
		ready = cond(ConditionAppReady, true, ReasonAllWorkloadsReady, fmt.Sprintf("All %d workloads are ready", s.TotalWorkloads))
	default:
		ready = cond(ConditionAppReady, false, ReasonNotAllWorkloadsReady, fmt.Sprintf("%d of %d workloads are ready", s.ReadyWorkloads, s.TotalWorkloads))
	}
	s.Conditions = []v1beta1.YurtAppSetCondition{found, dispatched, deleted, updated, ready}
	return s
}

func listNames(names []string) string {
	if len(names) <= maxListedNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListedNames], ", "), len(names)-maxListedNames)
}

// SetCondition returns conds with c set: an existing condition of c's type is replaced in place, keeping
// its lastTransitionTime when its status is unchanged; a new one is appended. now is the transition time
// otherwise.
func SetCondition(conds []v1beta1.YurtAppSetCondition, c v1beta1.YurtAppSetCondition, now metav1.Time) []v1beta1.YurtAppSetCondition {
	out := append([]v1beta1.YurtAppSetCondition(nil), conds...)
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = now
	}
	for i := range out {
		if out[i].Type != c.Type {
			continue
		}
		if out[i].Status == c.Status {
			c.LastTransitionTime = out[i].LastTransitionTime
		}
		out[i] = c
		return out
	}
	return append(out, c)
}
