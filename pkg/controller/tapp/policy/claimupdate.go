package policy

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// Reasons of the VolumeClaimsUpdated condition (tkestackv1.TAppVolumeClaimsUpdated).
const (
	// ReasonClaimsUpdated: every wanted instance's claims match their templates and are ready.
	ReasonClaimsUpdated = "Updated"
	// ReasonClaimsUpdating: claims are being created, resized or recreated, or (OnDelete) wait for their
	// pod to be recreated.
	ReasonClaimsUpdating = "Updating"
	// ReasonExpansionNotAllowed: a claim's storage class does not allow volume expansion; the claim is not
	// changed.
	ReasonExpansionNotAllowed = "ExpansionNotAllowed"
	// ReasonResizeFailed: a claim reports ControllerResizeError or NodeResizeError, or an infeasible resize.
	ReasonResizeFailed = "ResizeFailed"
	// ReasonClaimsIncompatible: a claim no longer matches its template and onIncompatibleChange is Refuse.
	ReasonClaimsIncompatible = "Incompatible"
)

// maxNamedClaims bounds the claims a condition message names.
const maxNamedClaims = 3

// Storage is what the plan knows of a TApp's claims and of the cluster's storage classes. It is used only
// while spec.volumeClaimUpdateStrategy.type is set.
type Storage struct {
	// Claims are the claims of the TApp's namespace (those of other namespaces are ignored).
	Claims []*corev1.PersistentVolumeClaim
	// Expansion maps a storage class name to its allowVolumeExpansion. A class it does not know is
	// expanded anyway: the API server's admission refuses the patch if it must.
	Expansion map[string]bool
}

// ClaimExpansion is a claim whose storage request the executor raises to Storage (a patch bound to UID).
type ClaimExpansion struct {
	ID       string
	Name     string
	UID      types.UID
	From     resource.Quantity
	Storage  resource.Quantity
	Template string // the claim template's name
}

// ClaimRef names one claim, for a deletion bound to its UID.
type ClaimRef struct {
	Name string
	UID  types.UID
}

// ClaimDelete is a claim the executor deletes (with a UID precondition) because it no longer matches its
// template and onIncompatibleChange is Recreate. The instance has no pod; it is created, with a new claim,
// once the claim is gone.
type ClaimDelete struct {
	ID string
	ClaimRef
	// Field is the first field of the claim that differs from its template.
	Field string
}

// VolumeClaimUpdateType returns spec.volumeClaimUpdateStrategy.type, "" when unset.
func VolumeClaimUpdateType(tapp *tkestackv1.TApp) tkestackv1.VolumeClaimUpdateStrategyType {
	if s := tapp.Spec.VolumeClaimUpdateStrategy; s != nil {
		return s.Type
	}
	return ""
}

// recreatesClaims reports whether onIncompatibleChange is Recreate.
func recreatesClaims(tapp *tkestackv1.TApp) bool {
	s := tapp.Spec.VolumeClaimUpdateStrategy
	return s != nil && s.OnIncompatibleChange == tkestackv1.RecreateVolumeClaimIncompatibleChange
}

// claimProblem is a claim that cannot follow its template now.
type claimProblem struct {
	reason string // ReasonExpansionNotAllowed, ReasonResizeFailed or ReasonClaimsIncompatible
	claim  string
	detail string
}

// instanceClaims is the state of one instance's claims against the claim templates.
type instanceClaims struct {
	// unmounted are the claim templates the instance's pod has no volume for (a template added since).
	unmounted []string
	// expand are the claims whose storage request is below their template's, in an expandable class.
	expand []ClaimExpansion
	// incompatible are the claims that no longer match their template; field is the first difference.
	incompatible []ClaimDelete
	// terminating: a claim of the instance is being deleted.
	terminating bool
	// resizing: a claim's resize is in progress or failed.
	resizing bool
	problems []claimProblem
	// compatible and ready count, per template index, whether the instance's claim matches it and is ready.
	compatible, ready []bool
}

// recreatePod says why the instance's pod must be recreated for its claims ("" when it need not):
// a claim template it does not mount, or incompatible claims to recreate (with onIncompatibleChange
// Recreate).
func (ic *instanceClaims) recreatePod(recreate bool) string {
	var parts []string
	if len(ic.unmounted) > 0 {
		parts = append(parts, "mount the claims of new claim templates "+strings.Join(ic.unmounted, ", "))
	}
	if recreate && len(ic.incompatible) > 0 {
		names := make([]string, 0, len(ic.incompatible))
		for _, d := range ic.incompatible {
			names = append(names, d.Name+" ("+d.Field+" differs)")
		}
		parts = append(parts, "recreate claims that no longer match their templates (onIncompatibleChange: Recreate): "+strings.Join(names, ", "))
	}
	return strings.Join(parts, "; ")
}

// claimIndex holds the claims of one TApp by name.
type claimIndex struct {
	tapp      *tkestackv1.TApp
	byName    map[string]*corev1.PersistentVolumeClaim
	expansion map[string]bool
}

func newClaimIndex(tapp *tkestackv1.TApp, storage Storage) *claimIndex {
	idx := &claimIndex{tapp: tapp, byName: map[string]*corev1.PersistentVolumeClaim{}, expansion: storage.Expansion}
	for _, c := range storage.Claims {
		if c != nil && c.Namespace == tapp.Namespace {
			idx.byName[c.Name] = c
		}
	}
	return idx
}

// instance returns the state of the claims of instance id, whose pod is pod (nil when it has none).
// Claims another object controls are left out: they are not the TApp's to change.
func (idx *claimIndex) instance(id string, pod *corev1.Pod) *instanceClaims {
	tapp := idx.tapp
	n := len(tapp.Spec.VolumeClaimTemplates)
	ic := &instanceClaims{compatible: make([]bool, n), ready: make([]bool, n)}
	for i := range tapp.Spec.VolumeClaimTemplates {
		t := &tapp.Spec.VolumeClaimTemplates[i]
		name := PVCName(t.Name, tapp, id)
		if pod != nil && !mountsClaim(pod, t.Name, name) {
			ic.unmounted = append(ic.unmounted, t.Name)
		}
		c, ok := idx.byName[name]
		if !ok {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(c); ref != nil && ref.UID != tapp.UID {
			continue
		}
		if c.DeletionTimestamp != nil {
			ic.terminating = true
			continue
		}
		if field := claimMismatch(c, t); field != "" {
			ic.incompatible = append(ic.incompatible, ClaimDelete{ID: id, ClaimRef: ClaimRef{Name: c.Name, UID: c.UID}, Field: field})
			ic.problems = append(ic.problems, claimProblem{ReasonClaimsIncompatible, c.Name, field + " differs from the template's"})
			continue
		}
		want := t.Spec.Resources.Requests[corev1.ResourceStorage]
		failed, resizing := resizeState(c)
		if failed != "" {
			ic.problems = append(ic.problems, claimProblem{ReasonResizeFailed, c.Name, failed})
		}
		ic.resizing = ic.resizing || resizing || failed != ""
		has := c.Spec.Resources.Requests[corev1.ResourceStorage]
		if has.Cmp(want) < 0 {
			class := claimClass(c)
			if allowed, known := idx.expansion[class]; known && !allowed {
				ic.problems = append(ic.problems, claimProblem{ReasonExpansionNotAllowed, c.Name,
					fmt.Sprintf("storage class %q does not allow volume expansion (%s requested, %s wanted)", class, has.String(), want.String())})
			} else {
				ic.expand = append(ic.expand, ClaimExpansion{ID: id, Name: c.Name, UID: c.UID, From: has.DeepCopy(), Storage: want.DeepCopy(), Template: t.Name})
			}
			continue
		}
		ic.compatible[i] = true
		capacity, hasCapacity := c.Status.Capacity[corev1.ResourceStorage]
		ic.ready[i] = c.Status.Phase == corev1.ClaimBound && hasCapacity && capacity.Cmp(want) >= 0 && !resizing && failed == ""
	}
	return ic
}

// mountsClaim reports whether pod has the volume NewPod gives it for claim template name.
func mountsClaim(pod *corev1.Pod, volume, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == volume && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

// claimClass returns the claim's storage class name ("" without one).
func claimClass(c *corev1.PersistentVolumeClaim) string {
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

// claimMismatch returns the first field of claim c that differs from template t in a way a claim cannot
// follow, "" when it matches: the storage class (when the template names one; an unset class is the
// cluster's default, which admission wrote into the claim), the access modes, the volume mode (unset is
// Filesystem) and the selector. The storage request is not a mismatch: a smaller one is expanded.
func claimMismatch(c *corev1.PersistentVolumeClaim, t *corev1.PersistentVolumeClaim) string {
	if t.Spec.StorageClassName != nil && *t.Spec.StorageClassName != claimClass(c) {
		return "spec.storageClassName"
	}
	if !sameAccessModes(c.Spec.AccessModes, t.Spec.AccessModes) {
		return "spec.accessModes"
	}
	if volumeMode(c.Spec.VolumeMode) != volumeMode(t.Spec.VolumeMode) {
		return "spec.volumeMode"
	}
	if !equality.Semantic.DeepEqual(c.Spec.Selector, t.Spec.Selector) {
		return "spec.selector"
	}
	return ""
}

func sameAccessModes(a, b []corev1.PersistentVolumeAccessMode) bool {
	set := func(modes []corev1.PersistentVolumeAccessMode) map[corev1.PersistentVolumeAccessMode]bool {
		m := map[corev1.PersistentVolumeAccessMode]bool{}
		for _, mode := range modes {
			m[mode] = true
		}
		return m
	}
	return equality.Semantic.DeepEqual(set(a), set(b))
}

func volumeMode(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *m
}

// resizeState returns why the claim's resize failed ("" when it did not: a ControllerResizeError or
// NodeResizeError condition, or an infeasible allocated resource status) and whether a resize is in
// progress (a Resizing or FileSystemResizePending condition, a resize status in progress or pending, or a
// bound claim whose capacity is below its request).
func resizeState(c *corev1.PersistentVolumeClaim) (failed string, resizing bool) {
	for _, cond := range c.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case corev1.PersistentVolumeClaimControllerResizeError, corev1.PersistentVolumeClaimNodeResizeError:
			msg := string(cond.Type)
			if cond.Message != "" {
				msg += ": " + cond.Message
			}
			return msg, false
		case corev1.PersistentVolumeClaimResizing, corev1.PersistentVolumeClaimFileSystemResizePending:
			resizing = true
		}
	}
	switch s := c.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; s {
	case corev1.PersistentVolumeClaimControllerResizeInfeasible, corev1.PersistentVolumeClaimNodeResizeInfeasible:
		return string(s), false
	case corev1.PersistentVolumeClaimControllerResizeInProgress, corev1.PersistentVolumeClaimNodeResizePending, corev1.PersistentVolumeClaimNodeResizeInProgress:
		resizing = true
	}
	if c.Status.Phase == corev1.ClaimBound {
		request := c.Spec.Resources.Requests[corev1.ResourceStorage]
		if capacity, ok := c.Status.Capacity[corev1.ResourceStorage]; ok && capacity.Cmp(request) < 0 {
			resizing = true
		}
	}
	return "", resizing
}

// claimsFollowRollingUpdate reports whether the claims of live pods follow their templates through the
// rolling update.
func claimsFollowRollingUpdate(tapp *tkestackv1.TApp) bool {
	return VolumeClaimUpdateType(tapp) == tkestackv1.OnPodRollingUpdateVolumeClaimUpdateStrategyType &&
		len(tapp.Spec.VolumeClaimTemplates) > 0
}

// claimsStatus computes status.volumeClaims and the VolumeClaimsUpdated condition (without its times and
// generation) over the wanted instances, given each one's claim state (states, by id; a wanted instance
// without an entry has no pod).
func claimsStatus(tapp *tkestackv1.TApp, idx *claimIndex, owned map[int]*corev1.Pod) ([]tkestackv1.TAppVolumeClaimStatus, *metav1.Condition) {
	templates := tapp.Spec.VolumeClaimTemplates
	var out []tkestackv1.TAppVolumeClaimStatus
	if len(templates) > 0 {
		out = make([]tkestackv1.TAppVolumeClaimStatus, len(templates))
	}
	for i := range templates {
		out[i].VolumeClaimName = templates[i].Name
	}
	problems := map[string][]claimProblem{}
	wanted, done := 0, 0
	for n := 0; n < desiredReplicas(tapp); n++ {
		id := idString(n)
		if IsKilled(tapp, id) {
			continue
		}
		wanted++
		var pod *corev1.Pod
		if p, ok := owned[n]; ok && !isTerminating(p) {
			pod = p
		}
		ic := idx.instance(id, pod)
		all := len(ic.unmounted) == 0
		for i := range templates {
			if ic.compatible[i] {
				out[i].CompatibleReplicas++
				if ic.ready[i] {
					out[i].CompatibleReadyReplicas++
				}
			}
			all = all && ic.ready[i]
		}
		if all {
			done++
		}
		for _, pr := range ic.problems {
			if pr.reason == ReasonClaimsIncompatible && recreatesClaims(tapp) {
				continue // being recreated: Updating
			}
			problems[pr.reason] = append(problems[pr.reason], pr)
		}
	}
	cond := &metav1.Condition{Type: tkestackv1.TAppVolumeClaimsUpdated, Status: metav1.ConditionTrue, Reason: ReasonClaimsUpdated,
		Message: fmt.Sprintf("the claims of all %d instances match their templates and are ready", wanted)}
	for _, reason := range []string{ReasonResizeFailed, ReasonExpansionNotAllowed, ReasonClaimsIncompatible} {
		if len(problems[reason]) > 0 {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reason, describeProblems(problems[reason])
			if reason == ReasonClaimsIncompatible {
				cond.Message += "; set spec.volumeClaimUpdateStrategy.onIncompatibleChange to Recreate to recreate them (their data is lost)"
			}
			return out, cond
		}
	}
	if done < wanted {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonClaimsUpdating
		cond.Message = fmt.Sprintf("the claims of %d of %d instances match their templates and are ready", done, wanted)
		if VolumeClaimUpdateType(tapp) == tkestackv1.OnDeleteVolumeClaimUpdateStrategyType {
			cond.Message += "; with OnDelete, the claims of an instance follow when its pod is recreated"
		}
	}
	return out, cond
}

// describeProblems names at most maxNamedClaims problems, sorted by claim name, and how many more there are.
func describeProblems(problems []claimProblem) string {
	sort.Slice(problems, func(i, j int) bool { return problems[i].claim < problems[j].claim })
	parts := make([]string, 0, maxNamedClaims+1)
	for i, pr := range problems {
		if i == maxNamedClaims {
			parts = append(parts, fmt.Sprintf("and %d more", len(problems)-maxNamedClaims))
			break
		}
		parts = append(parts, "claim "+pr.claim+": "+pr.detail)
	}
	return strings.Join(parts, "; ")
}

// claimsAtCreate decides, for instance id whose pod is about to be created (the strategy type is set), what
// its claims need first: the expansions, and with onIncompatibleChange Recreate the deletions of the claims
// that no longer match. It reports false when the pod must not be created yet: a claim is being deleted,
// or one is deleted now.
func (p *planner) claimsAtCreate(id string) bool {
	ic := p.claimIdx.instance(id, nil)
	if ic.terminating {
		return false
	}
	if recreatesClaims(p.tapp) && len(ic.incompatible) > 0 {
		p.plan.ClaimDeletes = append(p.plan.ClaimDeletes, ic.incompatible...)
		return false
	}
	p.plan.ClaimExpansions = append(p.plan.ClaimExpansions, ic.expand...)
	return true
}

// withClaims adds to candidates the claim work of a live pod on instance ordinal n (OnPodRollingUpdate): c is
// the pod's update when it needs one (nil otherwise). The claims' expansions go with the update; a pod that
// must be recreated for its claims is recreated (not updated in place); a pod that needs nothing but
// expansions is a claim-only candidate, which takes a slot of the budget like an update.
func (p *planner) withClaims(candidates []candidate, c *candidate, n int, pod *corev1.Pod, t *templateInfo) []candidate {
	if !claimsFollowRollingUpdate(p.tapp) {
		if c != nil {
			candidates = append(candidates, *c)
		}
		return candidates
	}
	ic := p.claimIdx.instance(idString(n), pod)
	why := ic.recreatePod(recreatesClaims(p.tapp))
	switch {
	case c == nil && why == "" && len(ic.expand) == 0:
		return candidates
	case c == nil:
		c = &candidate{n: n, pod: pod, template: t, claimOnly: why == ""}
	}
	c.claims = ic
	if why != "" {
		c.inPlace, c.claimOnly, c.claimReason = false, false, why
	}
	return append(candidates, *c)
}

// actOnClaims records the claim work of candidate c, which the budget lets act now.
func (p *planner) actOnClaims(c candidate) {
	if c.claims == nil {
		return
	}
	p.plan.ClaimExpansions = append(p.plan.ClaimExpansions, c.claims.expand...)
}

// recreateClaims returns the claims deleted with the pod of candidate c.
func recreateClaims(tapp *tkestackv1.TApp, c candidate) []ClaimRef {
	if c.claims == nil || !recreatesClaims(tapp) {
		return nil
	}
	out := make([]ClaimRef, 0, len(c.claims.incompatible))
	for _, d := range c.claims.incompatible {
		out = append(out, d.ClaimRef)
	}
	return out
}

// sortClaimWork orders the claim actions of the plan by instance ordinal, then claim name.
func sortClaimWork(plan *Plan) {
	sort.SliceStable(plan.ClaimExpansions, func(i, j int) bool {
		a, b := plan.ClaimExpansions[i], plan.ClaimExpansions[j]
		if ordinal(a.ID) != ordinal(b.ID) {
			return ordinal(a.ID) < ordinal(b.ID)
		}
		return a.Name < b.Name
	})
	sort.SliceStable(plan.ClaimDeletes, func(i, j int) bool {
		a, b := plan.ClaimDeletes[i], plan.ClaimDeletes[j]
		if ordinal(a.ID) != ordinal(b.ID) {
			return ordinal(a.ID) < ordinal(b.ID)
		}
		return a.Name < b.Name
	})
}
