package policy

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// Condition types, typed for the versioned API.
const (
	ConditionProvisioned = v1alpha1.YurtAppDaemonConditionType(openyurt.WorkLoadProvisioned)
	ConditionUpdated     = v1alpha1.YurtAppDaemonConditionType(openyurt.WorkLoadUpdated)
	ConditionFailure     = v1alpha1.YurtAppDaemonConditionType(openyurt.WorkLoadFailure)
)

// Condition reasons written by this package.
const (
	// WorkLoadProvisioned True.
	ReasonAllPoolsProvisioned = "AllPoolsProvisioned"
	ReasonNoPoolSelected      = "NoPoolSelected"
	// WorkLoadProvisioned False, by priority: a name is held by a foreign workload, a pool name is not a
	// valid label value, or children are simply missing (to be created, or waiting for an old one to go).
	ReasonWorkloadConflict = "WorkloadConflict"
	ReasonInvalidPool      = "InvalidPool"
	ReasonWorkloadsMissing = "WorkloadsMissing"
	// WorkLoadUpdated.
	ReasonAllWorkloadsUpdated = "AllWorkloadsUpdated"
	ReasonWorkloadsOutdated   = "WorkloadsOutdated"
)

// maxListedNames bounds the names listed in a condition message.
const maxListedNames = 10

// Status is the status a YurtAppDaemon reports for a snapshot.
type Status struct {
	// NodePools are the names of the selected pools, sorted.
	NodePools []string
	// TemplateType is the kind of the template.
	TemplateType v1alpha1.TemplateType
	// CurrentRevision is RevisionName: always the revision of the current template.
	CurrentRevision string
	// Conditions are WorkLoadProvisioned and WorkLoadUpdated, in that order, without transition times
	// (see ApplyStatus). WorkLoadFailure belongs to the controller (API errors).
	Conditions []v1alpha1.YurtAppDaemonCondition
	// Workloads counts the kept children (one per provisioned pool). ReadyWorkloads counts those whose
	// controller observed their generation and whose ready replicas reach spec.replicas (default 1).
	// UpdatedWorkloads counts those that need no update and whose updated replicas reach spec.replicas.
	Workloads        int32
	ReadyWorkloads   int32
	UpdatedWorkloads int32
}

func computeStatus(kind v1alpha1.TemplateType, revision string, pools []string, kept map[string]*child, updates map[string]bool, plan *Plan) Status {
	s := Status{NodePools: pools, TemplateType: kind, CurrentRevision: revision}
	var missing, outdated []string
	for _, pool := range pools {
		c := kept[pool]
		if c == nil {
			missing = append(missing, pool)
			continue
		}
		s.Workloads++
		want := int32(1)
		if c.replicas != nil {
			want = *c.replicas
		}
		current := c.observed >= c.meta.Generation
		if current && c.ready >= want {
			s.ReadyWorkloads++
		}
		needsUpdate := updates[pool] || c.meta.Labels[RevisionHashLabel] != revision
		if needsUpdate {
			outdated = append(outdated, c.meta.Name)
		} else if current && c.updated >= want {
			s.UpdatedWorkloads++
		}
	}
	sort.Strings(outdated)

	provisioned := v1alpha1.YurtAppDaemonCondition{Type: ConditionProvisioned, Status: corev1.ConditionTrue}
	switch {
	case len(pools) == 0:
		provisioned.Reason = ReasonNoPoolSelected
		provisioned.Message = "no NodePool matches nodepoolSelector"
	case len(missing) == 0:
		provisioned.Reason = ReasonAllPoolsProvisioned
		provisioned.Message = fmt.Sprintf("every selected pool (%d) has a %s", len(pools), kind)
	default:
		provisioned.Status = corev1.ConditionFalse
		provisioned.Reason = ReasonWorkloadsMissing
		if len(plan.PoolErrors) > 0 {
			provisioned.Reason = ReasonInvalidPool
		}
		if len(plan.Conflicts) > 0 {
			provisioned.Reason = ReasonWorkloadConflict
		}
		provisioned.Message = fmt.Sprintf("%d of %d selected pools have no %s: %s", len(missing), len(pools), kind, listNames(missing))
		for _, c := range plan.Conflicts {
			provisioned.Message += fmt.Sprintf("; %s %s of pool %s is held by %s", c.Kind, c.Name, c.Pool, c.Owner)
		}
	}

	updated := v1alpha1.YurtAppDaemonCondition{Type: ConditionUpdated, Status: corev1.ConditionTrue,
		Reason:  ReasonAllWorkloadsUpdated,
		Message: fmt.Sprintf("all %d %s workloads are at revision %s", s.Workloads, kind, revision)}
	if len(outdated) > 0 {
		updated.Status = corev1.ConditionFalse
		updated.Reason = ReasonWorkloadsOutdated
		updated.Message = fmt.Sprintf("%d of %d %s workloads are not at revision %s or drifted: %s", len(outdated), s.Workloads, kind, revision, listNames(outdated))
	}
	s.Conditions = []v1alpha1.YurtAppDaemonCondition{provisioned, updated}
	return s
}

func listNames(names []string) string {
	if len(names) <= maxListedNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListedNames], ", "), len(names)-maxListedNames)
}

// ApplyStatus writes s into status: nodepools, templateType, currentRevision and the conditions (through
// SetCondition, with now as the transition time of the conditions whose status changes). It leaves
// observedGeneration, collisionCount and the WorkLoadFailure condition to the controller.
func ApplyStatus(status *v1alpha1.YurtAppDaemonStatus, s Status, now metav1.Time) {
	status.NodePools = nil
	if len(s.NodePools) > 0 {
		status.NodePools = append([]string(nil), s.NodePools...)
	}
	status.TemplateType = s.TemplateType
	status.CurrentRevision = s.CurrentRevision
	for _, c := range s.Conditions {
		status.Conditions = SetCondition(status.Conditions, c, now)
	}
}

// SetCondition returns conds with c set: an existing condition of c's type is replaced in place, keeping
// its lastTransitionTime when the status is unchanged (reason and message are always refreshed); a new
// one is appended. now is used as the transition time otherwise (and when c has none).
func SetCondition(conds []v1alpha1.YurtAppDaemonCondition, c v1alpha1.YurtAppDaemonCondition, now metav1.Time) []v1alpha1.YurtAppDaemonCondition {
	out := append([]v1alpha1.YurtAppDaemonCondition(nil), conds...)
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

// RemoveCondition returns conds without the condition of type t.
func RemoveCondition(conds []v1alpha1.YurtAppDaemonCondition, t v1alpha1.YurtAppDaemonConditionType) []v1alpha1.YurtAppDaemonCondition {
	var out []v1alpha1.YurtAppDaemonCondition
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}
