package policy

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// Lifecycle hooks (spec.lifecycle). Names of the hooks, as LifecycleMark.Hook and LifecycleWait.Hook give them.
const (
	HookPreDelete     = "preDelete"
	HookInPlaceUpdate = "inPlaceUpdate"
)

// ReasonTAppDeleted: the TApp is being deleted (background propagation) with spec.lifecycle.preDelete; its
// pods go through the hook and are deleted by the controller.
const ReasonTAppDeleted DeleteReason = "TAppDeleted"

// Deletion finalizers the garbage collector uses for the other propagation policies.
const (
	orphanFinalizer     = "orphan"
	foregroundFinalizer = "foregroundDeletion"
)

// FinalizerRemoval says why tkestack.PreDeleteFinalizer is removed from a TApp being deleted.
type FinalizerRemoval string

// Finalizer removals.
const (
	// FinalizerPodsGone: every pod the TApp controls went through the preDelete hook and is gone or terminating.
	FinalizerPodsGone FinalizerRemoval = "PodsGone"
	// FinalizerOrphan: orphan deletion keeps the pods; no hook runs.
	FinalizerOrphan FinalizerRemoval = "Orphan"
	// FinalizerForeground: with foreground deletion the garbage collector deletes the pods itself; the hooks
	// cannot be honoured.
	FinalizerForeground FinalizerRemoval = "Foreground"
	// FinalizerNoHook: spec.lifecycle.preDelete was removed.
	FinalizerNoHook FinalizerRemoval = "NoHook"
)

// LifecycleMark is a write of a pod's tkestack.LifecycleStateLabel (a patch bound to the pod's UID), and, with
// NotReady, of its readiness gate condition False (reason State) afterwards.
type LifecycleMark struct {
	ID      string
	PodName string
	UID     types.UID
	// State is the label's new value.
	State string
	// NotReady: the hook asks markPodNotReady, and the pod's gate condition is not False yet.
	NotReady bool
	// Hook names the hook the pod now waits for (HookPreDelete, HookInPlaceUpdate); empty when the pod
	// leaves a hook (Normal, Updated).
	Hook string
	// HeldBy is what holds the pod now (HookHolds), empty when nothing does.
	HeldBy []string
}

// LifecycleWait is a pod that waits for its hook to be released: the plan does nothing else to it.
type LifecycleWait struct {
	ID      string
	PodName string
	UID     types.UID
	Hook    string
	State   string
	HeldBy  []string
}

// hookFor returns the hook that guards state (PreparingDelete: preDelete, PreparingUpdate: inPlaceUpdate),
// and its name; nil when the TApp has none.
func hookFor(tapp *tkestackv1.TApp, state string) (*tkestackv1.LifecycleHook, string) {
	l := tapp.Spec.Lifecycle
	switch {
	case l == nil:
		return nil, ""
	case state == tkestack.LifecycleStatePreparingDelete:
		return l.PreDelete, HookPreDelete
	case state == tkestack.LifecycleStatePreparingUpdate:
		return l.InPlaceUpdate, HookInPlaceUpdate
	}
	return nil, ""
}

// HookHolds returns what of hook holds pod, labels then finalizers, each sorted: "label k=v" for every label of labelsHandler the pod
// carries with that value, "finalizer f" for every finalizer of finalizersHandler it carries. The pod is
// hooked while the list is not empty.
func HookHolds(hook *tkestackv1.LifecycleHook, pod *corev1.Pod) []string {
	if hook == nil {
		return nil
	}
	var labels, finalizers []string
	for k, v := range hook.LabelsHandler {
		if have, ok := pod.Labels[k]; ok && have == v {
			labels = append(labels, "label "+k+"="+v)
		}
	}
	for _, f := range hook.FinalizersHandler {
		for _, have := range pod.Finalizers {
			if have == f {
				finalizers = append(finalizers, "finalizer "+f)
				break
			}
		}
	}
	sort.Strings(labels)
	sort.Strings(finalizers)
	return append(labels, finalizers...)
}

// LifecycleState returns the pod's lifecycle state (Normal when it has no label), the hook it waits on
// (empty unless it is in a preparing state of a hook the TApp has) and what holds it there.
func LifecycleState(tapp *tkestackv1.TApp, pod *corev1.Pod) (state, hook string, heldBy []string) {
	state = pod.Labels[tkestack.LifecycleStateLabel]
	if state == "" {
		state = tkestack.LifecycleStateNormal
	}
	h, name := hookFor(tapp, state)
	if h == nil {
		return state, "", nil
	}
	return state, name, HookHolds(h, pod)
}

// isPreparing reports whether the pod is in one of the preparing states (waiting for a hook or about to be
// acted on).
func isPreparing(pod *corev1.Pod) bool {
	s := pod.Labels[tkestack.LifecycleStateLabel]
	return s == tkestack.LifecycleStatePreparingDelete || s == tkestack.LifecycleStatePreparingUpdate
}

// keepsNotReady reports whether the pod's readiness gate must stay False: it is in a preparing state whose hook
// asks markPodNotReady. ComputeGates does not set such a gate True.
func keepsNotReady(tapp *tkestackv1.TApp, pod *corev1.Pod) bool {
	h, _ := hookFor(tapp, pod.Labels[tkestack.LifecycleStateLabel])
	return h != nil && h.MarkPodNotReady
}

// ApplyLifecycle puts the actions of plan through the TApp's lifecycle hooks (spec.lifecycle). It is applied
// to the plan of ComputePlan after OrderPlan, so the hooks see only the actions that are due now. Rules:
//   - A deletion for a scale-down, a kill or the TApp's deletion, and a recreation, of a TApp with preDelete;
//     and an in-place update of a TApp with inPlaceUpdate: while the pod's state is not the hook's preparing
//     state (PreparingDelete, PreparingUpdate), the action is replaced by a LifecycleMark to that state
//     (NotReady when the hook asks markPodNotReady and the pod's gate condition is not False); once it is, the
//     pod waits (LifecycleWaits) while the hook holds it (HookHolds) or a markPodNotReady gate is not False yet
//     (marked again); then the action is carried out. An in-place update that proceeds sets the state
//     Updating (Normal when the TApp has no inPlaceUpdate hook but the pod had another state).
//   - Migrations, stray pods and force deletions of pods on lost nodes go through no hook.
//   - A pod that needs no action (ComputePlan's settled pods: it runs its template and its instance is
//     wanted, or it is held by the rollout's partition or pause) and is in a preparing state returns to
//     Normal; an Updating pod whose in-place update is done becomes Updated; an Updated pod becomes Normal once
//     its inPlaceUpdate hook holds it again, or at once when the TApp has no inPlaceUpdate hook.
//
// A TApp without spec.lifecycle whose pods carry no state label gets the plan unchanged. Marks and waits are
// in ascending id order. plan is changed in place and returned.
func ApplyLifecycle(tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *Plan) *Plan {
	if plan == nil {
		return plan
	}
	byName := make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		if pod != nil {
			byName[pod.Name] = pod
		}
	}
	g := gatekeeper{tapp: tapp, plan: plan}
	var deletes []Delete
	for _, d := range plan.Deletes {
		pod := byName[d.PodName]
		hooked := d.Reason == ReasonScaleDown || d.Reason == ReasonKilled || d.Reason == ReasonTAppDeleted
		if !hooked || pod == nil || g.proceed(d.ID, pod, tkestack.LifecycleStatePreparingDelete) {
			deletes = append(deletes, d)
		}
	}
	plan.Deletes = deletes
	var recreates []Recreate
	for _, r := range plan.Recreates {
		if pod := byName[r.PodName]; pod == nil || g.proceed(r.ID, pod, tkestack.LifecycleStatePreparingDelete) {
			recreates = append(recreates, r)
		}
	}
	plan.Recreates = recreates
	var updates []InPlaceUpdate
	for _, u := range plan.InPlaceUpdates {
		pod := byName[u.PodName]
		if pod != nil && !g.proceed(u.ID, pod, tkestack.LifecycleStatePreparingUpdate) {
			continue
		}
		if state := updatedState(tapp, pod); state != "" {
			labels := make(map[string]string, len(u.Labels)+1)
			for k, v := range u.Labels {
				labels[k] = v
			}
			labels[tkestack.LifecycleStateLabel] = state
			u.Labels = labels
		}
		updates = append(updates, u)
	}
	plan.InPlaceUpdates = updates
	for _, pod := range plan.settled {
		g.settle(pod)
	}
	sort.SliceStable(plan.LifecycleMarks, func(i, j int) bool {
		return lifecycleOrder(plan.LifecycleMarks[i].ID, plan.LifecycleMarks[i].PodName) < lifecycleOrder(plan.LifecycleMarks[j].ID, plan.LifecycleMarks[j].PodName)
	})
	sort.SliceStable(plan.LifecycleWaits, func(i, j int) bool {
		return lifecycleOrder(plan.LifecycleWaits[i].ID, plan.LifecycleWaits[i].PodName) < lifecycleOrder(plan.LifecycleWaits[j].ID, plan.LifecycleWaits[j].PodName)
	})
	return plan
}

// lifecycleOrder sorts by ordinal, pods without a valid id last.
func lifecycleOrder(id, _ string) int {
	if n := ordinal(id); n >= 0 {
		return n
	}
	return tkestack.MaxReplicas + 1
}

// updatedState is the state an in-place update gives pod: Updating with an inPlaceUpdate hook, Normal without
// one for a pod that has another state, "" (unchanged) otherwise.
func updatedState(tapp *tkestackv1.TApp, pod *corev1.Pod) string {
	if tapp.Spec.Lifecycle != nil && tapp.Spec.Lifecycle.InPlaceUpdate != nil {
		return tkestack.LifecycleStateUpdating
	}
	if pod != nil {
		if s, ok := pod.Labels[tkestack.LifecycleStateLabel]; ok && s != tkestack.LifecycleStateNormal {
			return tkestack.LifecycleStateNormal
		}
	}
	return ""
}

// gatekeeper records the marks and waits of ApplyLifecycle.
type gatekeeper struct {
	tapp *tkestackv1.TApp
	plan *Plan
}

// proceed reports whether the action on pod (instance id) that the hook of state guards can be carried out
// now; if not, it records the mark or the wait.
func (g gatekeeper) proceed(id string, pod *corev1.Pod, state string) bool {
	hook, name := hookFor(g.tapp, state)
	if hook == nil {
		return true
	}
	notReady := hook.MarkPodNotReady && inplace.HasReadinessGate(pod) && inplace.GateStatus(pod) != corev1.ConditionFalse
	held := HookHolds(hook, pod)
	if pod.Labels[tkestack.LifecycleStateLabel] != state || notReady {
		g.plan.LifecycleMarks = append(g.plan.LifecycleMarks, LifecycleMark{ID: id, PodName: pod.Name, UID: pod.UID,
			State: state, NotReady: notReady, Hook: name, HeldBy: held})
		return false
	}
	if len(held) > 0 {
		g.plan.LifecycleWaits = append(g.plan.LifecycleWaits, LifecycleWait{ID: id, PodName: pod.Name, UID: pod.UID,
			Hook: name, State: state, HeldBy: held})
		return false
	}
	return true
}

// settle moves a pod that needs no action out of the hook states (see ApplyLifecycle).
func (g gatekeeper) settle(pod *corev1.Pod) {
	state, ok := pod.Labels[tkestack.LifecycleStateLabel]
	if !ok {
		return
	}
	var inPlaceHook *tkestackv1.LifecycleHook
	if g.tapp.Spec.Lifecycle != nil {
		inPlaceHook = g.tapp.Spec.Lifecycle.InPlaceUpdate
	}
	next := ""
	switch state {
	case tkestack.LifecycleStatePreparingDelete, tkestack.LifecycleStatePreparingUpdate:
		next = tkestack.LifecycleStateNormal
	case tkestack.LifecycleStateUpdating:
		if !inplace.InProgress(pod) {
			next = tkestack.LifecycleStateUpdated
		}
	case tkestack.LifecycleStateUpdated:
		if inPlaceHook == nil || len(HookHolds(inPlaceHook, pod)) > 0 {
			next = tkestack.LifecycleStateNormal
		}
	}
	if next == "" {
		return
	}
	id, _ := InstanceID(pod)
	g.plan.LifecycleMarks = append(g.plan.LifecycleMarks, LifecycleMark{ID: id, PodName: pod.Name, UID: pod.UID, State: next})
}

// tappDeletion plans what a TApp being deleted needs while it carries tkestack.PreDeleteFinalizer: with
// orphan or foreground deletion, or without a preDelete hook, the finalizer's removal at once; otherwise
// (background deletion) the deletion of every pod it controls (ReasonTAppDeleted, through the hook by
// ApplyLifecycle; stray pods without it), and the finalizer's removal once they are all gone or terminating.
// Nothing is created, updated, adopted or released.
func (p *planner) tappDeletion(owned map[int]*corev1.Pod, strays []*corev1.Pod) {
	tapp := p.tapp
	has := func(f string) bool {
		for _, have := range tapp.Finalizers {
			if have == f {
				return true
			}
		}
		return false
	}
	switch {
	case !has(tkestack.PreDeleteFinalizer):
		return
	case has(orphanFinalizer):
		p.plan.RemoveFinalizer = FinalizerOrphan
		return
	case has(foregroundFinalizer):
		p.plan.RemoveFinalizer = FinalizerForeground
		return
	case tapp.Spec.Lifecycle == nil || tapp.Spec.Lifecycle.PreDelete == nil:
		p.plan.RemoveFinalizer = FinalizerNoHook
		return
	}
	live := 0
	for _, pod := range strays {
		if !isTerminating(pod) {
			live++
			p.deletes = append(p.deletes, deleteItem{-1, Delete{"", pod.Name, pod.UID, ReasonStray}})
		}
	}
	for _, n := range sortedOrdinals(owned) {
		if pod := owned[n]; !isTerminating(pod) {
			live++
			p.deletes = append(p.deletes, deleteItem{n, Delete{idString(n), pod.Name, pod.UID, ReasonTAppDeleted}})
		}
	}
	if live == 0 {
		p.plan.RemoveFinalizer = FinalizerPodsGone
	}
	p.plan.Deletes = sortDeletes(p.deletes)
}
