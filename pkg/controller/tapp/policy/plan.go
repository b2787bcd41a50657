package policy

import (
	"sort"
	"strconv"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// DeleteReason says why a pod is deleted.
type DeleteReason string

// Delete reasons.
const (
	// ReasonScaleDown: the id is ≥ spec.replicas.
	ReasonScaleDown DeleteReason = "ScaleDown"
	// ReasonKilled: spec.statuses[id] is Killed.
	ReasonKilled DeleteReason = "Killed"
	// ReasonMigrate: the pod finished and migrates (see ShouldMigrate); it is recreated once gone.
	ReasonMigrate DeleteReason = "Migrate"
	// ReasonStray: a pod the TApp controls whose instance label is not a valid id or does not match its
	// name (someone edited the label).
	ReasonStray DeleteReason = "Stray"
	// ReasonNodeLost: force deletion of a terminating pod whose node is lost (spec.forceDeletePod).
	ReasonNodeLost DeleteReason = "NodeLost"
)

// Delete is a pod to delete. The executor should delete with a UID precondition so that a newer pod of
// the same name is never hit.
type Delete struct {
	ID      string // instance id; empty for a stray pod without a valid id
	PodName string
	UID     types.UID
	Reason  DeleteReason
}

// InPlaceUpdate is a pod to update in place to the template named Template. Update is exactly what the
// executor hands to the in-place engine (inplace.Updater.Apply), which applies it as it is:
//   - Revision is the template hash;
//   - Images maps the name of each regular container whose image changes to its new image;
//   - Labels are all the labels the template gives the pod (template labels, instance and hash labels);
//   - RemoveLabels are the label keys the pod's previous template set (recorded in tapppod.TemplateKeysAnnotation)
//     that the new template no longer has, sorted;
//   - Annotations are the template's annotations with the new tapppod.TemplateKeysAnnotation, without
//     tkestack.io/portmapping (the pod's value, if any, is kept; none is added) and without the engine's
//     state annotation;
//   - RemoveAnnotations: like RemoveLabels, for annotations (never tkestack.io/portmapping,
//     tapppod.TemplateKeysAnnotation nor the state annotation), sorted.
type InPlaceUpdate struct {
	ID       string
	PodName  string
	UID      types.UID
	Template string
	inplace.Update
}

// Recreate is a pod to delete now because its template changed beyond images; the instance is created
// again (Creates) by a later plan, once the old pod is gone.
type Recreate struct {
	ID       string
	PodName  string
	UID      types.UID
	Template string
	// Reason, when set, says why a change that was applied in place falls back to recreation (a resize
	// the kubelet marks infeasible).
	Reason string
	// ClaimReason, when set, says why the pod is recreated for its claims
	// (spec.volumeClaimUpdateStrategy: a claim template it does not mount, claims to recreate).
	ClaimReason string
	// DeleteClaims are the instance's claims deleted after its pod (onIncompatibleChange: Recreate); the
	// instance is created again, with new claims, once they are gone.
	DeleteClaims []ClaimRef
}

// Conflict is a pod that holds the name of a wanted instance but is not controlled by this TApp (a
// foreign or orphaned pod). The instance cannot be created until the pod is removed; the controller
// should report it (event/condition) instead of failing creates forever.
type Conflict struct {
	ID      string
	PodName string
	// Owner describes the pod's controller ("no controller" for an orphan).
	Owner string
}

// Adoption is an orphan pod to adopt: it has no controller, carries the name and instance label of a wanted
// instance and matches spec.selector. The executor adds the TApp's controller reference with a patch bound
// to the pod's UID, after re-reading the TApp from the API server (not adopting if it is being deleted).
// The pod is an instance pod of the TApp from the next snapshot on.
type Adoption struct {
	ID      string
	PodName string
	UID     types.UID
}

// Release is a pod the TApp controls that spec.selector no longer matches: the executor removes the TApp's
// owner reference (and only it) with a patch bound to the pod's UID. The pod is left running; if it holds
// the name of a wanted instance it is then reported as a Conflict.
type Release struct {
	PodName string
	UID     types.UID
}

// InstanceError is an instance the plan cannot act on, e.g. because its template does not exist.
type InstanceError struct {
	ID       string
	Template string
	Message  string
}

// Plan is what one sync of a TApp should do, given a snapshot of its pods. Ordering is deterministic:
// Creates, InPlaceUpdates, Relabels, Recreates, Conflicts and Errors are in ascending id order; Deletes and
// ForceDeletes in descending id order (highest first, like StatefulSet), stray pods last by name; Gates by
// pod name.
type Plan struct {
	// Creates are the ids whose pod (and claims, NewPVCs) should be created with NewPod. A wanted id
	// (0..replicas-1, not Killed) with no pod is always created, whatever its previous status: deleting
	// the pod of a finished instance restarts it.
	Creates []string
	// Deletes are graceful deletions.
	Deletes []Delete
	// ForceDeletes are deletions with grace period 0.
	ForceDeletes []Delete
	// InPlaceUpdates are pods to update in place.
	InPlaceUpdates []InPlaceUpdate
	// Recreates are pods to delete now and create later.
	Recreates []Recreate
	// Relabels are pods with foreign hash labels (ForeignHashes) that run their instance's template
	// (CompareToTemplate): one patch gives them the current hash labels and the template's labels and
	// annotations, without touching the containers. They are outside the update budgets (the pod stays
	// available).
	Relabels []InPlaceUpdate
	// Adoptions are orphan pods to adopt, in ascending id order.
	Adoptions []Adoption
	// Releases are pods to release, by name.
	Releases []Release
	// RevisionLabels are pods that run their target template but whose tkestack.ControllerRevisionHashLabel names
	// another revision (another template of the set changed): a label-only patch, no restart, no budget.
	RevisionLabels []InPlaceUpdate
	// Gates are the writes of the tkestack.io/InPlaceUpdate readiness gate condition (pods/status) that the
	// pods of the TApp need, apart from the pods the plan updates in place or relabels (see ComputeGates).
	Gates []Gate
	// Conflicts are foreign pods holding the name of a wanted instance.
	Conflicts []Conflict
	// Errors are instances that cannot be acted on.
	Errors []InstanceError
	// ClaimExpansions are claims whose storage request is raised to their template's
	// (spec.volumeClaimUpdateStrategy), in ascending id order, then by claim name. The executor applies them
	// before it creates pods.
	ClaimExpansions []ClaimExpansion
	// ClaimDeletes are claims of instances without a pod deleted to be created again
	// (onIncompatibleChange: Recreate), in ascending id order, then by claim name.
	ClaimDeletes []ClaimDelete
	// RequeueAfter, when > 0, is when a pending force deletion becomes due, or a ready pod becomes
	// available (spec.minReadySeconds).
	RequeueAfter time.Duration
	// Status is the status to report for the snapshot (before the plan is executed).
	Status Status
	// Topology is what the cluster's nodes offer for spreading the pods NewPod builds (SpreadFor). The
	// plan does not know the nodes: the caller sets it (TopologyOf the nodes) before building pods; the
	// zero value spreads over nodes only.
	Topology Topology

	// LifecycleMarks are writes of pods' lifecycle state label (and readiness gate) that the lifecycle hooks
	// need (ApplyLifecycle), in ascending id order.
	LifecycleMarks []LifecycleMark
	// LifecycleWaits are pods waiting for their hook to be released (ApplyLifecycle), in ascending id order.
	LifecycleWaits []LifecycleWait
	// RemoveFinalizer, when set, says that tkestack.PreDeleteFinalizer can be removed from the TApp being
	// deleted, and why.
	RemoveFinalizer FinalizerRemoval

	// settled are the live pods of wanted instances that need no action (ApplyLifecycle).
	settled []*corev1.Pod
	// templates are the TApp's templates, resolved and hashed once for the plan and its pods (NewPod).
	templates *templateCache
	// current are the templates of the current revision, nil when unknown; held instances use them.
	current *templateCache
	// tapp is the TApp the plan was computed for.
	tapp *tkestackv1.TApp
}

// ComputePlan decides the actions of one sync of tapp, given the pods that may belong to it (typically the
// pods of the namespace that match its selector, or that carry its controllerRef). nodes may be nil, in
// which case no pod is force-deleted. now is compared with pods' deletion timestamps.
//
// Rules:
//   - Pods are matched to an instance by the tapp_instance_key label, and only if they are controlled by the
//     TApp (controllerRef UID) and named <tapp>-<id>. Controlled pods with an invalid id or a label/name
//     mismatch are deleted (ReasonStray).
//   - Ownership follows the built-in controllers (pkg/ownership): an orphan pod (no controller
//     reference) named <tapp>-<id> with tapp_instance_key=<id> for a wanted id, not terminating, whose
//     labels match spec.selector is adopted (Adoptions); a controlled pod that spec.selector no longer
//     matches is released (Releases). Any other pod named <tapp>-<id> for a wanted id, in particular one
//     controlled by another object, is a Conflict and never touched.
//   - Wanted ids are 0..replicas-1 minus the Killed ones (spec.statuses). Pods of other ids are deleted.
//   - A terminating pod is waited for; with spec.forceDeletePod, if it is bound to a node that is NotReady,
//     Unknown or missing and its deletion deadline (deletionTimestamp) has passed, it is force-deleted.
//   - A finished pod (Succeeded/Failed) that migrates (ShouldMigrate) is deleted and recreated later;
//     one that does not is kept as is (it is never updated nor deleted by the controller).
//   - A live pod whose template hash differs from its template's is updated in place when the uniq hash
//     is unchanged (only images/metadata changed), or the resize hash is (only images, container resources
//     and metadata changed, same QoS class: the pod is resized through pods/resize), and every container of
//     the template has a container of the same name in the pod, else recreated. A pod whose resize the
//     kubelet marks infeasible is recreated (Recreate.Reason says why). A pod whose hash labels are foreign
//     (ForeignHashes, e.g. created by the original controller) is judged by content instead
//     (CompareToTemplate against NewPod's spec): it is relabelled when it runs its template (Relabels,
//     outside the budgets), updated in place when only images differ, else recreated.
//   - Budgets: a pod is available when AvailableAt (IsAvailable, and ready for spec.minReadySeconds). Instances on the rolling template
//     (RollingTemplateName) are processed in ascending id order within updateStrategy.maxUnavailable;
//     instances on other templates first, in ascending id order, within forceUpdate.maxUnavailable. Both
//     are a number or a percentage of the number of wanted instances (rounded up, at least 1 when > 0).
//     An available pod is acted on only while more than (wanted − maxUnavailable) pods are available, and
//     acting on it makes it unavailable. A pod that is already unavailable is acted on at once, outside the
//     budget, so an update that fixes broken pods always progresses.
//   - While the TApp is being deleted, nothing is done (the garbage collector removes the pods), unless it
//     carries tkestack.PreDeleteFinalizer: then its pods are deleted through the preDelete hook with
//     background deletion, and the finalizer is removed (RemoveFinalizer) once they are gone, or at once with
//     orphan or foreground deletion (see tappDeletion).
//   - A candidate whose pod is in a preparing lifecycle state (PreparingUpdate, PreparingDelete) counts as
//     unavailable: the hook it waits for holds a slot of the budget (see ApplyLifecycle).
func ComputePlan(tapp *tkestackv1.TApp, pods []*corev1.Pod, nodes NodeLookup, now time.Time) *Plan {
	return ComputePlanWithRevisions(tapp, Revisions{}, pods, nodes, now)
}

// ComputePlanWithRevisions is ComputePlan for a TApp whose ControllerRevisions are known (revisions):
//   - held instances (HoldsInstance: every instance while updateStrategy.paused, else those below
//     updateStrategy.partition) are never updated, neither by the rolling nor by the force update; a held
//     instance without a pod (scale-up, a deleted or migrated pod) is created from the current revision's
//     templates (revisions.CurrentTemplates, else, when the current revision is unknown or lacks the
//     instance's template, from the spec's); a held pod with foreign hash labels that runs its target
//     template is still relabelled;
//   - every pod built or updated gets tkestack.ControllerRevisionHashLabel = the revision of its templates
//     (revisions.Update for the spec's, revisions.Current for the current revision's), and a pod that runs
//     one of them but carries another value is relabelled (RevisionLabels), without restart or budget;
//   - deletions (scale-down, kills, migrations, strays, force deletions) are unchanged.
func ComputePlanWithRevisions(tapp *tkestackv1.TApp, revisions Revisions, pods []*corev1.Pod, nodes NodeLookup, now time.Time) *Plan {
	return ComputePlanWithStorage(tapp, revisions, Storage{}, pods, nodes, now)
}

// ComputePlanWithStorage is ComputePlanWithRevisions for a TApp whose claims and storage classes are known
// (storage). While spec.volumeClaimUpdateStrategy.type is set, the instances' claims follow
// spec.volumeClaimTemplates (unset, storage is not looked at and the plan is ComputePlanWithRevisions'):
//   - a claim matches its template when it has the template's storage class (when the template names
//     one), access modes, volume mode and selector; one that does not is incompatible. A claim controlled
//     by another object is never touched;
//   - when an instance's pod is about to be created (Creates), whatever the type, and the instance is not
//     held: its claims whose storage request is below the template's are expanded first
//     (ClaimExpansions), unless their storage class does not allow expansion; with onIncompatibleChange
//     Recreate its incompatible claims are deleted (ClaimDeletes) and the pod is created once they are
//     gone; while one of its claims is being deleted, the pod is not created;
//   - OnPodRollingUpdate: the live pods of instances that are not held are acted on within the update
//     budgets, like template updates and together with them: a pod without the volume of a claim template
//     is recreated (its claim is created with the new pod); with onIncompatibleChange Recreate, a pod with
//     incompatible claims is recreated and the claims deleted after it (Recreate.DeleteClaims); claims
//     whose request is below the template's are expanded (ClaimExpansions), without touching a pod that
//     needs nothing else. An instance whose claim is being resized (or failed to) is unavailable for the
//     budgets, so at most maxUnavailable instances resize at once;
//   - Status.VolumeClaims and Status.VolumeClaimsCondition report the wanted instances' claims.
func ComputePlanWithStorage(tapp *tkestackv1.TApp, revisions Revisions, storage Storage, pods []*corev1.Pod, nodes NodeLookup, now time.Time) *Plan {
	owned, strays, byName, adopt, release := classify(tapp, pods)
	templates := newTemplateCache(tapp)
	templates.revision = revisions.Update
	p := &planner{tapp: tapp, nodes: nodes, now: now, templates: templates}
	if VolumeClaimUpdateType(tapp) != "" {
		p.claimIdx = newClaimIndex(tapp, storage)
	}
	if cur := revisions.currentTApp(tapp); cur != nil {
		p.current = newTemplateCache(cur)
		p.current.revision = revisions.Current
	}
	p.plan.templates, p.plan.current, p.plan.tapp = p.templates, p.current, tapp
	p.plan.Status = computeStatus(tapp, owned, p.templates, now)
	if p.claimIdx != nil {
		p.plan.Status.VolumeClaims, p.plan.Status.VolumeClaimsCondition = claimsStatus(tapp, p.claimIdx, owned)
	}
	if tapp.DeletionTimestamp != nil {
		p.tappDeletion(owned, strays)
		return &p.plan
	}
	adopting := p.ownership(adopt, release)
	candidates, available := p.instances(owned, strays)
	p.creates(owned, byName, adopting)
	p.updates(candidates, available)
	plan := &p.plan
	plan.Gates = ComputeGates(tapp, pods, plan)
	sort.Slice(plan.Errors, func(i, j int) bool { return ordinal(plan.Errors[i].ID) < ordinal(plan.Errors[j].ID) })
	plan.Deletes = sortDeletes(p.deletes)
	plan.ForceDeletes = sortDeletes(p.forceDeletes)
	sortClaimWork(plan)
	return plan
}

// planner holds what ComputePlan builds up.
type planner struct {
	tapp                  *tkestackv1.TApp
	nodes                 NodeLookup
	now                   time.Time
	templates             *templateCache
	current               *templateCache
	plan                  Plan
	deletes, forceDeletes []deleteItem
	// claimIdx holds the TApp's claims while spec.volumeClaimUpdateStrategy.type is set; nil otherwise.
	claimIdx *claimIndex
}

// ownership records the adoptions and releases, and returns the names of the pods being adopted.
func (p *planner) ownership(adopt, release []*corev1.Pod) map[string]bool {
	adopting := map[string]bool{}
	for _, pod := range adopt {
		id, _ := InstanceID(pod)
		adopting[pod.Name] = true
		p.plan.Adoptions = append(p.plan.Adoptions, Adoption{ID: id, PodName: pod.Name, UID: pod.UID})
	}
	sort.Slice(p.plan.Adoptions, func(i, j int) bool { return ordinal(p.plan.Adoptions[i].ID) < ordinal(p.plan.Adoptions[j].ID) })
	for _, pod := range release {
		p.plan.Releases = append(p.plan.Releases, Release{PodName: pod.Name, UID: pod.UID})
	}
	sort.Slice(p.plan.Releases, func(i, j int) bool { return p.plan.Releases[i].PodName < p.plan.Releases[j].PodName })
	return adopting
}

// remove deletes pod (ordinal n, -1 for a stray) for reason; a terminating pod is waited for, or
// force-deleted once its node is lost and its deletion deadline has passed.
func (p *planner) remove(n int, id string, pod *corev1.Pod, reason DeleteReason) {
	if !isTerminating(pod) {
		p.deletes = append(p.deletes, deleteItem{n, Delete{id, pod.Name, pod.UID, reason}})
		return
	}
	if !p.tapp.Spec.ForceDeletePod || p.nodes == nil || pod.Spec.NodeName == "" || !p.nodes(pod.Spec.NodeName).lost() {
		return
	}
	if wait := pod.DeletionTimestamp.Time.Sub(p.now); wait > 0 {
		p.requeueAfter(wait)
		return
	}
	p.forceDeletes = append(p.forceDeletes, deleteItem{n, Delete{id, pod.Name, pod.UID, ReasonNodeLost}})
}

// instances decides the removals of strays and instance pods, and the relabels; it returns the live pods of
// wanted instances that need an update, and the available ones by ordinal.
func (p *planner) instances(owned map[int]*corev1.Pod, strays []*corev1.Pod) ([]candidate, map[int]bool) {
	tapp, replicas := p.tapp, desiredReplicas(p.tapp)
	for _, pod := range strays {
		p.remove(-1, "", pod, ReasonStray)
	}
	var candidates []candidate
	available := make(map[int]bool, len(owned))
	for _, n := range sortedOrdinals(owned) {
		pod, id := owned[n], idString(n)
		switch {
		case n >= replicas:
			p.remove(n, id, pod, ReasonScaleDown)
			continue
		case IsKilled(tapp, id):
			p.remove(n, id, pod, ReasonKilled)
			continue
		case isTerminating(pod):
			p.remove(n, id, pod, "")
			continue
		case isFinished(pod):
			if ShouldMigrate(tapp, pod) {
				p.remove(n, id, pod, ReasonMigrate)
			}
			continue
		}
		if ok, wait := AvailableAt(pod, tapp.Spec.MinReadySeconds, p.now); ok {
			available[n] = true
		} else if wait > 0 {
			p.requeueAfter(wait) // the budget grows when the pod has been ready long enough
		}
		if claimsFollowRollingUpdate(tapp) && p.claimIdx.instance(id, pod).resizing {
			delete(available, n) // a claim being resized takes a slot of the budget
		}
		t := p.templates.forID(id)
		if HoldsInstance(tapp, n) {
			p.plan.settled = append(p.plan.settled, pod)
			p.held(id, pod, t)
			continue
		}
		if t.err != nil {
			p.plan.Errors = append(p.plan.Errors, InstanceError{ID: id, Template: t.name, Message: t.err.Error()})
			continue
		}
		if reason := resizeInfeasible(pod); reason != "" {
			candidates = p.withClaims(candidates, &candidate{n: n, pod: pod, template: t, recreateReason: reason}, n, pod, t)
			continue
		}
		if pod.Labels[tkestack.TemplateHashLabel] == t.hash {
			p.plan.settled = append(p.plan.settled, pod)
			p.revisionLabel(id, pod, t)
			candidates = p.withClaims(candidates, nil, n, pod, t)
			continue
		}
		inPlace := pod.Labels[tkestack.UniqHashLabel] == t.uniq || t.resizable(pod)
		if ForeignHashes(pod) {
			want := t.prepared.New(PodOwner(tapp), id)
			match, _ := CompareToTemplate(&want.Spec, &pod.Spec)
			if match == RunsTemplate {
				if u, ok := t.inPlaceUpdate(id, pod); ok && len(u.Images) == 0 {
					p.plan.settled = append(p.plan.settled, pod)
					p.plan.Relabels = append(p.plan.Relabels, u)
					candidates = p.withClaims(candidates, nil, n, pod, t)
					continue
				}
			}
			inPlace = match == ImagesDiffer
		}
		candidates = p.withClaims(candidates, &candidate{n: n, pod: pod, template: t, inPlace: inPlace}, n, pod, t)
	}
	return candidates, available
}

// requeueAfter asks for a sync after d at the latest.
func (p *planner) requeueAfter(d time.Duration) {
	if p.plan.RequeueAfter == 0 || d < p.plan.RequeueAfter {
		p.plan.RequeueAfter = d
	}
}

// currentFor returns the current revision's template of instance id, or nil when it is unknown.
func (p *planner) currentFor(id string) *templateInfo {
	if p.current == nil {
		return nil
	}
	if t := p.current.forID(id); t.err == nil {
		return t
	}
	return nil
}

// held decides what a held instance's live pod needs: nothing if it runs the spec's template t or the
// current revision's (apart from its revision label), a relabel if its hash labels are foreign and it
// runs its target template (the current revision's, else t), and never an update.
func (p *planner) held(id string, pod *corev1.Pod, t *templateInfo) {
	if t.err == nil && pod.Labels[tkestack.TemplateHashLabel] == t.hash {
		p.revisionLabel(id, pod, t)
		return
	}
	target := p.currentFor(id)
	if target != nil && pod.Labels[tkestack.TemplateHashLabel] == target.hash {
		p.revisionLabel(id, pod, target)
		return
	}
	if target == nil {
		target = t
	}
	if target.err != nil || !ForeignHashes(pod) {
		return
	}
	want := target.prepared.New(PodOwner(p.tapp), id)
	if match, _ := CompareToTemplate(&want.Spec, &pod.Spec); match == RunsTemplate {
		if u, ok := target.inPlaceUpdate(id, pod); ok && len(u.Images) == 0 {
			p.plan.Relabels = append(p.plan.Relabels, u)
		}
	}
}

// revisionLabel relabels pod, which runs template t, when its tkestack.ControllerRevisionHashLabel is not t's revision.
func (p *planner) revisionLabel(id string, pod *corev1.Pod, t *templateInfo) {
	if t.revision == "" || pod.Labels[tkestack.ControllerRevisionHashLabel] == t.revision {
		return
	}
	p.plan.RevisionLabels = append(p.plan.RevisionLabels, InPlaceUpdate{ID: id, PodName: pod.Name, UID: pod.UID, Template: t.name,
		Update: inplace.Update{Revision: t.hash, Labels: map[string]string{tkestack.ControllerRevisionHashLabel: t.revision}}})
}

// createTemplate returns the template the pod of instance ordinal n (id) is created from: the current
// revision's for a held instance, when known, else the spec's.
func (p *Plan) createTemplate(n int, id string) *templateInfo {
	if p.current != nil && HoldsInstance(p.tapp, n) {
		if t := p.current.forID(id); t.err == nil {
			return t
		}
	}
	return p.templates.forID(id)
}

// creates decides the creations of the wanted instances without a pod, and the conflicts.
func (p *planner) creates(owned map[int]*corev1.Pod, byName map[string]*corev1.Pod, adopting map[string]bool) {
	tapp := p.tapp
	for n := 0; n < desiredReplicas(tapp); n++ {
		id := idString(n)
		if _, ok := owned[n]; ok || IsKilled(tapp, id) {
			continue
		}
		if other, ok := byName[PodName(tapp, id)]; ok {
			if !IsControlledBy(other, tapp) && !adopting[other.Name] {
				p.plan.Conflicts = append(p.plan.Conflicts, Conflict{ID: id, PodName: other.Name, Owner: podDescription(other)})
			}
			// A stray pod of ours holds the name (deleted above, or being released), or the pod is
			// being adopted: decide again from the next snapshot.
			continue
		}
		if t := p.plan.createTemplate(n, id); t.err != nil {
			p.plan.Errors = append(p.plan.Errors, InstanceError{ID: id, Template: t.name, Message: t.err.Error()})
			continue
		}
		if p.claimIdx != nil && !HoldsInstance(tapp, n) && !p.claimsAtCreate(id) {
			continue // its claims are being deleted first
		}
		p.plan.Creates = append(p.plan.Creates, id)
	}
}

// updates decides which candidates are updated now, within the budgets, and how: in place or by
// recreation.
func (p *planner) updates(candidates []candidate, available map[int]bool) {
	tapp := p.tapp
	wanted := 0
	for n := 0; n < desiredReplicas(tapp); n++ {
		if !IsKilled(tapp, idString(n)) {
			wanted++
		}
	}
	rolling := RollingTemplateName(tapp)
	var forced, rolled []candidate
	for _, c := range candidates {
		if c.template.name == rolling {
			rolled = append(rolled, c)
		} else {
			forced = append(forced, c)
		}
	}
	forceMax := MaxUnavailable(tapp.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable, wanted)
	rollMax := MaxUnavailable(tapp.Spec.UpdateStrategy.MaxUnavailable, wanted)
	for _, c := range candidates {
		if isPreparing(c.pod) {
			delete(available, c.n) // its hook holds a slot of the budget
		}
	}
	var acted []candidate
	for _, group := range []struct {
		cands []candidate
		max   int
	}{{forced, forceMax}, {rolled, rollMax}} {
		minAvailable := wanted - group.max
		for _, c := range group.cands {
			if available[c.n] {
				if len(available) <= minAvailable {
					continue // held back by the budget
				}
				delete(available, c.n)
			}
			acted = append(acted, c)
		}
	}
	sort.Slice(acted, func(i, j int) bool { return acted[i].n < acted[j].n })
	for _, c := range acted {
		id := idString(c.n)
		p.actOnClaims(c)
		if c.claimOnly {
			continue
		}
		if c.inPlace {
			if u, ok := c.template.inPlaceUpdate(id, c.pod); ok {
				p.plan.InPlaceUpdates = append(p.plan.InPlaceUpdates, u)
				continue
			}
		}
		p.plan.Recreates = append(p.plan.Recreates, Recreate{ID: id, PodName: c.pod.Name, UID: c.pod.UID, Template: c.template.name, Reason: c.recreateReason,
			ClaimReason: c.claimReason, DeleteClaims: recreateClaims(tapp, c)})
	}
}

// MaxUnavailable resolves a budget against total wanted instances: an integer is taken as is (negative
// → 0); a percentage is rounded up and is at least 1 when it is > 0. The budgets are defaulted and validated
// by the API; nil or a value validation would refuse allows nothing.
func MaxUnavailable(v *intstr.IntOrString, total int) int {
	if v == nil {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, true)
	if err != nil || n < 0 {
		return 0
	}
	if n == 0 && v.Type == intstr.String {
		if p, err := intstr.GetScaledValueFromIntOrPercent(v, 100, true); err == nil && p > 0 {
			return 1
		}
	}
	return n
}

type candidate struct {
	n        int
	pod      *corev1.Pod
	template *templateInfo
	// inPlace: the pod differs from the template at most in images, container resources (same QoS
	// class) and metadata.
	inPlace bool
	// recreateReason: the pod is recreated because its in-place resize cannot be done (resizeInfeasible).
	recreateReason string
	// claims is the instance's claim state (spec.volumeClaimUpdateStrategy OnPodRollingUpdate), nil otherwise.
	claims *instanceClaims
	// claimOnly: only the claims need work (expansions); the pod is left alone.
	claimOnly bool
	// claimReason: the pod is recreated for its claims (instanceClaims.recreatePod).
	claimReason string
}

type deleteItem struct {
	n int
	d Delete
}

func sortDeletes(items []deleteItem) []Delete {
	sort.Slice(items, func(i, j int) bool {
		if items[i].n != items[j].n {
			return items[i].n > items[j].n
		}
		return items[i].d.PodName < items[j].d.PodName
	})
	var out []Delete
	for _, it := range items {
		out = append(out, it.d)
	}
	return out
}

// Owner is the TApp as pkg/ownership sees it: its selector, and the pods that belong to it are
// the instance pods of wanted ids (name <tapp>-<id> and tapp_instance_key=<id>, id < replicas, not
// Killed).
func Owner(tapp *tkestackv1.TApp) ownership.Owner {
	replicas := desiredReplicas(tapp)
	return ownership.OwnerOf(tapp, tapp.Spec.Selector, func(obj metav1.Object) bool {
		id := obj.GetLabels()[tkestack.InstanceIDLabel]
		n, ok := ParseID(id)
		return ok && n < replicas && obj.GetName() == PodName(tapp, id) && !IsKilled(tapp, id)
	})
}

// classify splits pods into the instance pods controlled by the TApp (by ordinal), controlled pods that
// are not valid instance pods (strays), an index of every pod by name, the orphans to adopt and the pods to
// release (neither of which is in owned or strays).
func classify(tapp *tkestackv1.TApp, pods []*corev1.Pod) (owned map[int]*corev1.Pod, strays []*corev1.Pod, byName map[string]*corev1.Pod, adopt, release []*corev1.Pod) {
	// Sized for the pods at once: a TApp of thousands of instances would otherwise grow these maps through
	// a dozen rehashes on every sync.
	owned = make(map[int]*corev1.Pod, len(pods))
	byName = make(map[string]*corev1.Pod, len(pods))
	owner := Owner(tapp)
	for _, pod := range pods {
		if pod == nil || pod.Namespace != tapp.Namespace {
			continue
		}
		if _, dup := byName[pod.Name]; dup {
			continue
		}
		byName[pod.Name] = pod
		switch ownership.Decide(owner, pod) {
		case ownership.Adopt:
			adopt = append(adopt, pod)
			continue
		case ownership.Release:
			release = append(release, pod)
			continue
		}
		if !IsControlledBy(pod, tapp) {
			continue
		}
		id, _ := InstanceID(pod)
		n, ok := ParseID(id)
		if !ok || pod.Name != PodName(tapp, id) {
			strays = append(strays, pod)
			continue
		}
		owned[n] = pod
	}
	return owned, strays, byName, adopt, release
}

func desiredReplicas(tapp *tkestackv1.TApp) int {
	if tapp.Spec.Replicas < 0 {
		return 0
	}
	return int(tapp.Spec.Replicas)
}

func idString(n int) string { return strconv.Itoa(n) }

func ordinal(id string) int {
	n, ok := ParseID(id)
	if !ok {
		return -1
	}
	return n
}

func sortedOrdinals(m map[int]*corev1.Pod) []int {
	out := make([]int, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}
