package policy

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/poolplacement"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

// DeleteReason says why a child is deleted.
type DeleteReason string

// Delete reasons.
const (
	// ReasonPoolNotSelected: the child's pool no longer matches nodepoolSelector, or no longer exists.
	ReasonPoolNotSelected DeleteReason = "PoolNotSelected"
	// ReasonKindChanged: the child is of the other kind than the current template (Deployment ↔
	// StatefulSet); the child of the new kind is created in the same plan.
	ReasonKindChanged DeleteReason = "KindChanged"
	// ReasonDuplicate: another child serves the same pool; the oldest one is kept.
	ReasonDuplicate DeleteReason = "Duplicate"
	// ReasonNoPool: a child we control that names no pool (neither PoolNameLabel nor RefNodePoolAnnotation).
	ReasonNoPool DeleteReason = "NoPool"
)

// UpdateReason says why a child is updated.
type UpdateReason string

// Update reasons, in the order they are reported.
const (
	// UpdateRevision: the child's RevisionHashLabel (or its pod template's) is not the current revision.
	UpdateRevision UpdateReason = "RevisionChanged"
	// UpdatePlacement: the pool's taints changed since the child was rendered (PlacementHashAnnotation),
	// or the child's pods are not pinned to the pool or do not tolerate one of its taints.
	UpdatePlacement UpdateReason = "PlacementChanged"
	// UpdateReplicas: the template sets replicas and the child has another value.
	UpdateReplicas UpdateReason = "ReplicasChanged"
	// UpdateMetadata: the child's PoolNameLabel, RefNodePoolAnnotation or pod PoolNameLabel is missing or wrong.
	UpdateMetadata UpdateReason = "MetadataChanged"
	// UpdateContainers: at the current revision, the names or images of the child's containers or init
	// containers differ from the template (edited by hand).
	UpdateContainers UpdateReason = "ContainersChanged"
)

// Create is a child to create. Exactly one of Deployment and StatefulSet is set.
type Create struct {
	Pool        string
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet
}

// Update is a child to update. Exactly one of Deployment and StatefulSet is set: the complete object to
// send with Update, built from the live child (its resourceVersion, so a stale snapshot fails with a
// conflict and is retried), with:
//   - labels and annotations: the live ones overlaid with the rendered ones (keys set by others, such as
//     deployment.kubernetes.io/revision, are kept; keys the template no longer has are not removed);
//   - spec: the rendered spec, except the fields the API server does not allow to change, taken from the
//     live child (selector; for StatefulSets also serviceName, podManagementPolicy and
//     volumeClaimTemplates), and replicas taken from the live child when the template leaves them unset.
type Update struct {
	Pool        string
	Kind        v1alpha1.TemplateType
	Name        string
	UID         types.UID
	Reasons     []UpdateReason
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet
}

// Delete is a child to delete; the executor should use a UID precondition.
type Delete struct {
	Pool   string // empty for ReasonNoPool
	Kind   v1alpha1.TemplateType
	Name   string
	UID    types.UID
	Reason DeleteReason
}

// Conflict is a workload of the template's kind that holds the name a pool's child should get, but is
// not a child of this YurtAppDaemon for that pool. The pool gets no child until it is removed; it is never
// adopted, updated or deleted.
type Conflict struct {
	Pool string
	Kind v1alpha1.TemplateType
	Name string
	// Owner describes the holder: "no controller", "<Kind> <name>" of its controller, or the pool of this
	// YurtAppDaemon that it serves.
	Owner string
}

// Waiting is a pool whose child name is held by one of our children that is terminating or being deleted
// by this plan; it is created by a later plan, once the name is free.
type Waiting struct {
	Pool string
	Name string
}

// PoolError is a selected pool that cannot get a child.
type PoolError struct {
	Pool    string
	Message string
}

// Plan is what one sync of a YurtAppDaemon should do, given a snapshot of the NodePools and of the
// children. Creates, Updates, Waiting, Conflicts and PoolErrors are in pool-name order; Deletes in (pool,
// kind, name) order.
type Plan struct {
	// Kind is the kind of the template; Revision is RevisionName, the revision label of every child.
	Kind     v1alpha1.TemplateType
	Revision string

	Creates []Create
	Updates []Update
	// Adoptions are orphan workloads adopted as the child of a pool that has none (at most one per pool).
	Adoptions []Adoption
	// Releases are children that spec.selector no longer matches.
	Releases   []Release
	Deletes    []Delete
	Conflicts  []Conflict
	Waiting    []Waiting
	PoolErrors []PoolError

	// Status describes the snapshot (before the plan is executed).
	Status Status
}

// child is a Deployment or StatefulSet seen through the fields the plan reads.
type child struct {
	kind        v1alpha1.TemplateType
	meta        *metav1.ObjectMeta
	pod         *corev1.PodTemplateSpec
	replicas    *int32
	observed    int64
	ready       int32
	updated     int32
	deployment  *appsv1.Deployment
	statefulSet *appsv1.StatefulSet
}

func (c *child) pool() string {
	if p := c.meta.Labels[PoolNameLabel]; p != "" {
		return p
	}
	return c.meta.Annotations[RefNodePoolAnnotation]
}

func collectChildren(ns string, deployments []*appsv1.Deployment, statefulSets []*appsv1.StatefulSet) []*child {
	var out []*child
	for _, d := range deployments {
		if d == nil || d.Namespace != ns {
			continue
		}
		out = append(out, &child{kind: DeploymentKind, meta: &d.ObjectMeta, pod: &d.Spec.Template,
			replicas: d.Spec.Replicas, observed: d.Status.ObservedGeneration, ready: d.Status.ReadyReplicas,
			updated: d.Status.UpdatedReplicas, deployment: d})
	}
	for _, s := range statefulSets {
		if s == nil || s.Namespace != ns {
			continue
		}
		out = append(out, &child{kind: StatefulSetKind, meta: &s.ObjectMeta, pod: &s.Spec.Template,
			replicas: s.Spec.Replicas, observed: s.Status.ObservedGeneration, ready: s.Status.ReadyReplicas,
			updated: s.Status.UpdatedReplicas, statefulSet: s})
	}
	return out
}

func controlledBy(meta *metav1.ObjectMeta, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(meta)
	return ref != nil && ref.UID == uid
}

func ownerString(meta *metav1.ObjectMeta) string {
	ref := metav1.GetControllerOfNoCopy(meta)
	if ref == nil {
		return "no controller"
	}
	return ref.Kind + " " + ref.Name
}

// ComputePlan decides the actions of one sync of yad. pools is the complete list of NodePools (the
// selection is made here with SelectPools); deployments and statefulSets are the workloads that may be
// children (typically every Deployment and StatefulSet of the namespace, or those matching spec.selector).
//
// Rules:
//   - A child is a workload of yad's namespace whose controller ownerReference has yad's UID; it serves
//     the pool named by its PoolNameLabel (or RefNodePoolAnnotation). Other workloads are ignored, except
//     those holding the name a selected pool's child should get, which are Conflicts, and the orphans it
//     adopts. Terminating children are left alone (they only hold their name).
//   - A selected pool without a child adopts the oldest orphan workload of the template's kind that names
//     it and whose pod template labels match spec.selector (Adoptions), instead of creating one; a child
//     whose pod template labels no longer match is released (Releases) and treated as gone.
//   - Children that name no pool, serve a pool that is not selected (or whose name is invalid), or are of
//     the other kind are deleted. Among the children of one selected pool the oldest (creation time, then
//     the ChildName, then name) is kept and the others deleted.
//   - A selected pool without a child gets one (RenderDeployment/RenderStatefulSet), unless its name is
//     held (Conflicts, Waiting) or invalid (PoolErrors).
//   - A kept child is updated when it is not at the current revision, its placement or metadata is not
//     the rendered one, its replicas differ from the template's, or its containers were changed.
//   - While yad is being deleted nothing is done (the garbage collector removes the children); the
//     status is still computed.
//
// An error is returned, and nothing is planned, when the template is missing or ambiguous, spec.selector
// is nil or nodepoolSelector is invalid: a broken spec never deletes children.
func ComputePlan(yad *v1alpha1.YurtAppDaemon, pools []*v1alpha1.NodePool, deployments []*appsv1.Deployment, statefulSets []*appsv1.StatefulSet) (*Plan, error) {
	kind, err := TemplateType(yad)
	if err != nil {
		return nil, err
	}
	if yad.Spec.Selector == nil {
		return nil, fmt.Errorf("YurtAppDaemon %s/%s has no selector", yad.Namespace, yad.Name)
	}
	selected, err := SelectPools(yad, pools)
	if err != nil {
		return nil, err
	}
	revision := RevisionName(yad)
	plan := &Plan{Kind: kind, Revision: revision}

	valid := map[string]*v1alpha1.NodePool{}
	var poolNames []string
	for _, p := range selected {
		poolNames = append(poolNames, p.Name)
		if err := validatePoolName(p.Name); err != nil {
			plan.PoolErrors = append(plan.PoolErrors, PoolError{Pool: p.Name, Message: err.Error()})
			continue
		}
		valid[p.Name] = p
	}

	children := collectChildren(yad.Namespace, deployments, statefulSets)
	deleted := map[*child]bool{}
	owner := Owner(yad, kind, valid)
	adoptable := map[string][]*child{}
	for _, c := range children {
		if c.kind != kind {
			continue
		}
		switch ownership.Decide(owner, ownershipView(c)) {
		case ownership.Adopt:
			adoptable[c.pool()] = append(adoptable[c.pool()], c)
		case ownership.Release:
			deleted[c] = true // it keeps its name, but is no longer ours from the next snapshot on
			plan.Releases = append(plan.Releases, Release{Pool: c.pool(), Kind: c.kind, Name: c.meta.Name, UID: c.meta.UID})
		}
	}
	remove := func(c *child, pool string, reason DeleteReason) {
		deleted[c] = true
		plan.Deletes = append(plan.Deletes, Delete{Pool: pool, Kind: c.kind, Name: c.meta.Name, UID: c.meta.UID, Reason: reason})
	}
	byPool := map[string][]*child{}
	for _, c := range children {
		if !controlledBy(c.meta, yad.UID) || c.meta.DeletionTimestamp != nil || deleted[c] {
			continue
		}
		pool := c.pool()
		switch {
		case pool == "":
			remove(c, "", ReasonNoPool)
		case c.kind != kind:
			remove(c, pool, ReasonKindChanged)
		case valid[pool] == nil:
			remove(c, pool, ReasonPoolNotSelected)
		default:
			byPool[pool] = append(byPool[pool], c)
		}
	}

	kept := map[string]*child{}
	for _, p := range selected {
		group := byPool[p.Name]
		if len(group) == 0 {
			continue
		}
		want := ChildName(yad.Name, p.Name)
		sort.SliceStable(group, func(i, j int) bool { return older(group[i], group[j], want) })
		kept[p.Name] = group[0]
		for _, dup := range group[1:] {
			remove(dup, p.Name, ReasonDuplicate)
		}
	}

	adopting := map[string]bool{}
	for _, p := range selected {
		group := adoptable[p.Name]
		if kept[p.Name] != nil || len(group) == 0 {
			continue
		}
		want := ChildName(yad.Name, p.Name)
		sort.SliceStable(group, func(i, j int) bool { return older(group[i], group[j], want) })
		adopting[p.Name] = true
		plan.Adoptions = append(plan.Adoptions, Adoption{Pool: p.Name, Kind: kind, Name: group[0].meta.Name, UID: group[0].meta.UID})
	}

	var updates map[string]bool
	if yad.DeletionTimestamp == nil {
		updates = plan.addCreatesAndUpdates(yad, selected, valid, kept, children, deleted, adopting)
	} else {
		plan.Deletes = nil
	}
	sort.SliceStable(plan.Deletes, func(i, j int) bool {
		a, b := plan.Deletes[i], plan.Deletes[j]
		if a.Pool != b.Pool {
			return a.Pool < b.Pool
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	plan.Status = computeStatus(kind, revision, poolNames, kept, updates, plan)
	return plan, nil
}

func (plan *Plan) addCreatesAndUpdates(yad *v1alpha1.YurtAppDaemon, selected []*v1alpha1.NodePool, valid map[string]*v1alpha1.NodePool,
	kept map[string]*child, children []*child, deleted map[*child]bool, adopting map[string]bool) map[string]bool {
	keptPool := map[*child]string{}
	for pool, c := range kept {
		keptPool[c] = pool
	}
	updates := map[string]bool{}
	for _, p := range selected {
		if valid[p.Name] == nil || adopting[p.Name] {
			continue
		}
		desired, err := render(yad, plan.Kind, p, plan.Revision)
		if err != nil {
			plan.PoolErrors = append(plan.PoolErrors, PoolError{Pool: p.Name, Message: err.Error()})
			continue
		}
		if c := kept[p.Name]; c != nil {
			if u := recordOriginal(yad, p, c, desired, plan.Revision); u != nil {
				updates[p.Name] = true
				plan.Updates = append(plan.Updates, *u)
				continue
			}
			if reasons := updateReasons(c, desired, p, plan.Revision); len(reasons) > 0 {
				updates[p.Name] = true
				plan.Updates = append(plan.Updates, buildUpdate(p.Name, c, desired, reasons))
			}
			continue
		}
		name := desired.meta.Name
		var holder *child
		for _, c := range children {
			if c.kind == plan.Kind && c.meta.Name == name {
				holder = c
				break
			}
		}
		switch {
		case holder == nil:
			plan.Creates = append(plan.Creates, Create{Pool: p.Name, Deployment: desired.deployment, StatefulSet: desired.statefulSet})
		case !controlledBy(holder.meta, yad.UID):
			plan.Conflicts = append(plan.Conflicts, Conflict{Pool: p.Name, Kind: plan.Kind, Name: name, Owner: ownerString(holder.meta)})
		case holder.meta.DeletionTimestamp != nil || deleted[holder]:
			plan.Waiting = append(plan.Waiting, Waiting{Pool: p.Name, Name: name})
		default:
			plan.Conflicts = append(plan.Conflicts, Conflict{Pool: p.Name, Kind: plan.Kind, Name: name,
				Owner: fmt.Sprintf("YurtAppDaemon %s (pool %s)", yad.Name, keptPool[holder])})
		}
	}
	sort.SliceStable(plan.PoolErrors, func(i, j int) bool { return plan.PoolErrors[i].Pool < plan.PoolErrors[j].Pool })
	return updates
}

// older orders the children of one pool: creation time, then the one named want, then by name.
func older(a, b *child, want string) bool {
	ta, tb := a.meta.CreationTimestamp, b.meta.CreationTimestamp
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	if (a.meta.Name == want) != (b.meta.Name == want) {
		return a.meta.Name == want
	}
	return a.meta.Name < b.meta.Name
}

// render returns the rendered child of pool as a child view.
func render(yad *v1alpha1.YurtAppDaemon, kind v1alpha1.TemplateType, pool *v1alpha1.NodePool, revision string) (*child, error) {
	if kind == StatefulSetKind {
		s, err := RenderStatefulSet(yad, pool, revision)
		if err != nil {
			return nil, err
		}
		return &child{kind: kind, meta: &s.ObjectMeta, pod: &s.Spec.Template, replicas: s.Spec.Replicas, statefulSet: s}, nil
	}
	d, err := RenderDeployment(yad, pool, revision)
	if err != nil {
		return nil, err
	}
	return &child{kind: kind, meta: &d.ObjectMeta, pod: &d.Spec.Template, replicas: d.Spec.Replicas, deployment: d}, nil
}

func updateReasons(live, desired *child, pool *v1alpha1.NodePool, revision string) []UpdateReason {
	var out []UpdateReason
	podAtRevision := live.pod.Labels[RevisionHashLabel] == revision || live.meta.Annotations[AdoptedTemplateAnnotation] == revision
	if live.meta.Labels[RevisionHashLabel] != revision || !podAtRevision {
		out = append(out, UpdateRevision)
	}
	if live.meta.Annotations[PlacementHashAnnotation] != desired.meta.Annotations[PlacementHashAnnotation] ||
		!poolplacement.Placed(&live.pod.Spec, pool.Name, pool.Spec.Taints) {
		out = append(out, UpdatePlacement)
	}
	if desired.replicas != nil && (live.replicas == nil || *live.replicas != *desired.replicas) {
		out = append(out, UpdateReplicas)
	}
	if live.meta.Labels[PoolNameLabel] != pool.Name || live.meta.Annotations[RefNodePoolAnnotation] != pool.Name ||
		live.pod.Labels[PoolNameLabel] != pool.Name {
		out = append(out, UpdateMetadata)
	}
	// Container drift is only looked for at the current revision: a new revision re-renders them anyway.
	if len(out) == 0 || out[0] != UpdateRevision {
		if !sameImages(live.pod.Spec.Containers, desired.pod.Spec.Containers) ||
			!sameImages(live.pod.Spec.InitContainers, desired.pod.Spec.InitContainers) {
			out = append(out, UpdateContainers)
		}
	}
	return out
}

func sameImages(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Image != b[i].Image {
			return false
		}
	}
	return true
}

func buildUpdate(pool string, live, desired *child, reasons []UpdateReason) Update {
	u := Update{Pool: pool, Kind: live.kind, Name: live.meta.Name, UID: live.meta.UID, Reasons: reasons}
	// A pod template recorded as the original's rendering is kept while only replicas or metadata change;
	// otherwise it is replaced by the rendered one, and the record goes.
	keepTemplate := keepsAdoptedTemplate(live, desired.meta.Labels[RevisionHashLabel], reasons)
	overlay := func(meta *metav1.ObjectMeta) {
		meta.Labels = overlayMap(meta.Labels, desired.meta.Labels)
		meta.Annotations = overlayMap(meta.Annotations, desired.meta.Annotations)
		if !keepTemplate {
			delete(meta.Annotations, AdoptedTemplateAnnotation)
		}
	}
	if live.deployment != nil {
		d := live.deployment.DeepCopy()
		overlay(&d.ObjectMeta)
		spec := desired.deployment.Spec.DeepCopy()
		spec.Selector = d.Spec.Selector
		if spec.Replicas == nil {
			spec.Replicas = d.Spec.Replicas
		}
		if keepTemplate {
			spec.Template = d.Spec.Template
		}
		d.Spec = *spec
		u.Deployment = d
		return u
	}
	s := live.statefulSet.DeepCopy()
	overlay(&s.ObjectMeta)
	spec := desired.statefulSet.Spec.DeepCopy()
	spec.Selector = s.Spec.Selector
	spec.ServiceName = s.Spec.ServiceName
	spec.PodManagementPolicy = s.Spec.PodManagementPolicy
	spec.VolumeClaimTemplates = s.Spec.VolumeClaimTemplates
	if spec.Replicas == nil {
		spec.Replicas = s.Spec.Replicas
	}
	if keepTemplate {
		spec.Template = s.Spec.Template
	}
	s.Spec = *spec
	u.StatefulSet = s
	return u
}

func overlayMap(base, top map[string]string) map[string]string {
	out := copyMap(base)
	for k, v := range top {
		out[k] = v
	}
	return out
}
