package policy

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/poolplacement"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

// DeleteReason says why a workload is deleted.
type DeleteReason string

// Delete reasons.
const (
	// ReasonPoolNotSelected: the workload's pool is no longer selected, or no longer exists.
	ReasonPoolNotSelected DeleteReason = "PoolNotSelected"
	// ReasonKindChanged: the workload is of the other kind than the template.
	ReasonKindChanged DeleteReason = "KindChanged"
	// ReasonDuplicate: another workload serves the same pool; the oldest is kept.
	ReasonDuplicate DeleteReason = "Duplicate"
	// ReasonNoPool: a workload of the YurtAppSet that names no pool.
	ReasonNoPool DeleteReason = "NoPool"
)

// UpdateReason says why a workload is updated.
type UpdateReason string

// Update reasons, in the order they are reported.
const (
	// UpdatePods: the pod template differs from the rendering (samePods); it is rewritten.
	UpdatePods UpdateReason = "PodTemplateChanged"
	// UpdateSpec: a workload-level field (replicas, strategy...) differs from the rendering.
	UpdateSpec UpdateReason = "SpecChanged"
	// UpdateMetadata: a rendered label or annotation (the revision label among them) is missing or wrong.
	UpdateMetadata UpdateReason = "MetadataChanged"
)

// Create is a workload to create (with GenerateName). Exactly one of Deployment and StatefulSet is set.
type Create struct {
	Pool        string
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet
}

// Update is a workload to update. Exactly one of Deployment and StatefulSet is set: the complete object to
// send, built from the live one (its resourceVersion: a stale snapshot fails with a conflict), with the
// rendered labels and annotations laid over the live ones, and the rendered spec except: the selector
// (immutable) and, for StatefulSets, serviceName, podManagementPolicy and volumeClaimTemplates are the
// live ones; replicas are the live ones when the rendering leaves them unset; the pod template is the
// live one unless UpdatePods is a reason (PodsKept), so its pods are not restarted.
type Update struct {
	Pool        string
	Kind        Kind
	Name        string
	UID         types.UID
	Reasons     []UpdateReason
	PodsKept    bool
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet
}

// Delete is a workload to delete; the executor uses a UID precondition.
type Delete struct {
	Pool   string
	Kind   Kind
	Name   string
	UID    types.UID
	Reason DeleteReason
}

// Adoption is an orphan workload labelled RefYurtAppSetLabel=<yas> that becomes the workload of Pool under
// its name; the executor adds the controller reference with a patch bound to UID.
type Adoption struct {
	Pool string
	Kind Kind
	Name string
	UID  types.UID
}

// Release is a workload of the YurtAppSet whose RefYurtAppSetLabel no longer names it: its reference is
// removed (the workload keeps running).
type Release struct {
	Pool string
	Kind Kind
	Name string
	UID  types.UID
}

// PoolError is a selected pool that cannot get a workload (its name is not a label value, or its
// rendering with the tweaks failed).
type PoolError struct {
	Pool    string
	Message string
}

// Plan is what one sync of a YurtAppSet should do. Pools, Creates, Updates, Adoptions and PoolErrors are in
// pool order; Deletes and Releases in (pool, kind, name) order.
type Plan struct {
	Kind     Kind
	Revision string
	// Pools are the selected pools; MissingPools the names in spec.pools that no NodePool has.
	Pools        []string
	MissingPools []string

	Creates    []Create
	Updates    []Update
	Adoptions  []Adoption
	Releases   []Release
	Deletes    []Delete
	PoolErrors []PoolError

	// Status describes the snapshot (before the plan is executed).
	Status Status
}

// workload is a Deployment or StatefulSet seen through the fields the plan reads.
type workload struct {
	kind        Kind
	meta        *metav1.ObjectMeta
	pod         *corev1.PodTemplateSpec
	replicas    *int32
	observed    int64
	ready       int32
	updated     int32
	deployment  *appsv1.Deployment
	statefulSet *appsv1.StatefulSet
}

func (w *workload) pool() string {
	if p := w.meta.Labels[PoolNameLabel]; p != "" {
		return p
	}
	return w.meta.Annotations[RefNodePoolAnnotation]
}

func collect(ns string, deployments []*appsv1.Deployment, statefulSets []*appsv1.StatefulSet) []*workload {
	var out []*workload
	for _, d := range deployments {
		if d != nil && d.Namespace == ns {
			out = append(out, &workload{kind: DeploymentKind, meta: &d.ObjectMeta, pod: &d.Spec.Template,
				replicas: d.Spec.Replicas, observed: d.Status.ObservedGeneration, ready: d.Status.ReadyReplicas,
				updated: d.Status.UpdatedReplicas, deployment: d})
		}
	}
	for _, s := range statefulSets {
		if s != nil && s.Namespace == ns {
			out = append(out, &workload{kind: StatefulSetKind, meta: &s.ObjectMeta, pod: &s.Spec.Template,
				replicas: s.Spec.Replicas, observed: s.Status.ObservedGeneration, ready: s.Status.ReadyReplicas,
				updated: s.Status.UpdatedReplicas, statefulSet: s})
		}
	}
	return out
}

// Owner is the YurtAppSet as pkg/ownership sees it: its workloads are selected by
// RefYurtAppSetLabel=<name>, and an orphan belongs to it when it is of kind and serves a pool in valid.
func Owner(yas *v1beta1.YurtAppSet, kind Kind, valid map[string]*v1alpha1.NodePool, kinds map[*metav1.ObjectMeta]Kind) ownership.Owner {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{RefYurtAppSetLabel: yas.Name}}
	return ownership.OwnerOf(yas, sel, func(obj metav1.Object) bool {
		meta, ok := obj.(*metav1.ObjectMeta)
		if !ok || kinds[meta] != kind {
			return false
		}
		return valid[(&workload{meta: meta}).pool()] != nil
	})
}

// ComputePlan decides one sync of yas at revision (RevisionName, or the name of the revision the
// controller reuses). pools is the complete list of NodePools; deployments and statefulSets are the
// workloads of its namespace. An error is returned, and nothing planned, when the template is missing or
// ambiguous or nodepoolSelector is invalid: a broken spec never deletes workloads.
func ComputePlan(yas *v1beta1.YurtAppSet, revision string, pools []*v1alpha1.NodePool, deployments []*appsv1.Deployment, statefulSets []*appsv1.StatefulSet) (*Plan, error) {
	kind, err := TemplateKind(yas)
	if err != nil {
		return nil, err
	}
	selected, missing, err := SelectPools(yas, pools)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Kind: kind, Revision: revision, MissingPools: missing}
	valid := map[string]*v1alpha1.NodePool{}
	for _, p := range selected {
		plan.Pools = append(plan.Pools, p.Name)
		if err := validatePoolName(p.Name); err != nil {
			plan.PoolErrors = append(plan.PoolErrors, PoolError{Pool: p.Name, Message: err.Error()})
			continue
		}
		valid[p.Name] = p
	}

	all := collect(yas.Namespace, deployments, statefulSets)
	kinds := map[*metav1.ObjectMeta]Kind{}
	for _, w := range all {
		kinds[w.meta] = w.kind
	}
	owner := Owner(yas, kind, valid, kinds)
	deleting := yas.DeletionTimestamp != nil
	byPool := map[string][]*workload{}
	adoptable := map[string][]*workload{}
	for _, w := range all {
		switch ownership.Decide(owner, w.meta) {
		case ownership.Adopt:
			adoptable[w.pool()] = append(adoptable[w.pool()], w)
		case ownership.Release:
			plan.Releases = append(plan.Releases, Release{Pool: w.pool(), Kind: w.kind, Name: w.meta.Name, UID: w.meta.UID})
		case ownership.Keep:
			if w.meta.DeletionTimestamp != nil {
				continue // it is going: a new one is created for its pool if needed
			}
			switch {
			case w.kind != kind:
				plan.delete(w, ReasonKindChanged)
			case w.pool() == "":
				plan.delete(w, ReasonNoPool)
			case valid[w.pool()] == nil:
				plan.delete(w, ReasonPoolNotSelected)
			default:
				byPool[w.pool()] = append(byPool[w.pool()], w)
			}
		}
	}
	kept := map[string]*workload{}
	for pool, group := range byPool {
		sort.SliceStable(group, func(i, j int) bool { return older(group[i], group[j]) })
		kept[pool] = group[0]
		for _, w := range group[1:] {
			plan.delete(w, ReasonDuplicate)
		}
	}

	updates := map[string]bool{}
	for _, p := range selected {
		if valid[p.Name] == nil || deleting {
			continue
		}
		if kept[p.Name] == nil {
			if group := adoptable[p.Name]; len(group) > 0 {
				sort.SliceStable(group, func(i, j int) bool { return older(group[i], group[j]) })
				w := group[0]
				plan.Adoptions = append(plan.Adoptions, Adoption{Pool: p.Name, Kind: kind, Name: w.meta.Name, UID: w.meta.UID})
				continue
			}
		}
		desired, err := render(yas, kind, p, revision)
		if err != nil {
			plan.PoolErrors = append(plan.PoolErrors, PoolError{Pool: p.Name, Message: err.Error()})
			continue
		}
		live := kept[p.Name]
		if live == nil {
			plan.Creates = append(plan.Creates, Create{Pool: p.Name, Deployment: desired.deployment, StatefulSet: desired.statefulSet})
			continue
		}
		if u, ok := buildUpdate(p, live, desired); ok {
			updates[p.Name] = true
			plan.Updates = append(plan.Updates, u)
		}
	}
	if deleting {
		plan.Deletes, plan.Releases = nil, nil
	}
	sort.SliceStable(plan.PoolErrors, func(i, j int) bool { return plan.PoolErrors[i].Pool < plan.PoolErrors[j].Pool })
	sort.SliceStable(plan.Deletes, func(i, j int) bool {
		return less(plan.Deletes[i].Pool, plan.Deletes[i].Kind, plan.Deletes[i].Name, plan.Deletes[j].Pool, plan.Deletes[j].Kind, plan.Deletes[j].Name)
	})
	sort.SliceStable(plan.Releases, func(i, j int) bool {
		return less(plan.Releases[i].Pool, plan.Releases[i].Kind, plan.Releases[i].Name, plan.Releases[j].Pool, plan.Releases[j].Kind, plan.Releases[j].Name)
	})
	plan.Status = computeStatus(plan, selected, kept, updates)
	return plan, nil
}

func (plan *Plan) delete(w *workload, reason DeleteReason) {
	plan.Deletes = append(plan.Deletes, Delete{Pool: w.pool(), Kind: w.kind, Name: w.meta.Name, UID: w.meta.UID, Reason: reason})
}

func less(p1 string, k1 Kind, n1 string, p2 string, k2 Kind, n2 string) bool {
	if p1 != p2 {
		return p1 < p2
	}
	if k1 != k2 {
		return k1 < k2
	}
	return n1 < n2
}

// older orders the workloads of one pool: creation time, then name.
func older(a, b *workload) bool {
	ta, tb := a.meta.CreationTimestamp, b.meta.CreationTimestamp
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.meta.Name < b.meta.Name
}

func render(yas *v1beta1.YurtAppSet, kind Kind, pool *v1alpha1.NodePool, revision string) (*workload, error) {
	if kind == StatefulSetKind {
		s, err := RenderStatefulSet(yas, pool, revision)
		if err != nil {
			return nil, err
		}
		return &workload{kind: kind, meta: &s.ObjectMeta, pod: &s.Spec.Template, replicas: s.Spec.Replicas, statefulSet: s}, nil
	}
	d, err := RenderDeployment(yas, pool, revision)
	if err != nil {
		return nil, err
	}
	return &workload{kind: kind, meta: &d.ObjectMeta, pod: &d.Spec.Template, replicas: d.Spec.Replicas, deployment: d}, nil
}

// buildUpdate returns the update of live towards desired, and false when live needs none.
func buildUpdate(pool *v1alpha1.NodePool, live, desired *workload) (Update, bool) {
	u := Update{Pool: pool.Name, Kind: live.kind, Name: live.meta.Name, UID: live.meta.UID}
	podsSame := samePods(live.pod, desired.pod) && poolplacement.Placed(&live.pod.Spec, pool.Name, pool.Spec.Taints)
	if !podsSame {
		u.Reasons = append(u.Reasons, UpdatePods)
	}
	u.PodsKept = podsSame
	overlay := func(meta *metav1.ObjectMeta) {
		meta.Labels = overlayMap(meta.Labels, desired.meta.Labels)
		meta.Annotations = overlayMap(meta.Annotations, desired.meta.Annotations)
	}
	if live.deployment != nil {
		d := live.deployment.DeepCopy()
		overlay(&d.ObjectMeta)
		spec := desired.deployment.Spec.DeepCopy()
		spec.Selector = d.Spec.Selector
		if spec.Replicas == nil {
			spec.Replicas = d.Spec.Replicas
		}
		if podsSame {
			spec.Template = d.Spec.Template
		}
		if !covers(withoutPods(live.deployment.Spec), withoutPods(*spec)) {
			u.Reasons = appendOnce(u.Reasons, UpdateSpec)
		}
		d.Spec = *spec
		u.Deployment = d
	} else {
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
		if podsSame {
			spec.Template = s.Spec.Template
		}
		if !covers(withoutPodsS(live.statefulSet.Spec), withoutPodsS(*spec)) {
			u.Reasons = appendOnce(u.Reasons, UpdateSpec)
		}
		s.Spec = *spec
		u.StatefulSet = s
	}
	if !coversMap(live.meta.Labels, desired.meta.Labels) || !coversMap(live.meta.Annotations, desired.meta.Annotations) {
		u.Reasons = append(u.Reasons, UpdateMetadata)
	}
	if len(u.Reasons) == 0 {
		return Update{}, false
	}
	return u, true
}

func appendOnce(list []UpdateReason, rs ...UpdateReason) []UpdateReason {
	for _, r := range rs {
		found := false
		for _, x := range list {
			found = found || x == r
		}
		if !found {
			list = append(list, r)
		}
	}
	return list
}

func overlayMap(base, top map[string]string) map[string]string {
	out := copyMap(base)
	for k, v := range top {
		out[k] = v
	}
	return out
}

func withoutPods(s appsv1.DeploymentSpec) appsv1.DeploymentSpec {
	s.Template = corev1.PodTemplateSpec{}
	return s
}

func withoutPodsS(s appsv1.StatefulSetSpec) appsv1.StatefulSetSpec {
	s.Template = corev1.PodTemplateSpec{}
	return s
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
