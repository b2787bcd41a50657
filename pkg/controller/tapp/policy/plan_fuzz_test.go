package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/install"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/validation"
)

// FuzzComputePlan gives ComputePlan a TApp the API would accept (decoded, defaulted and valid) and arbitrary
// pods: it must never panic, and every action of the plan must be one the controller may take: it acts only
// on pods that exist with the UID it names and that no other controller owns, and it never creates a pod
// whose name is taken.
func FuzzComputePlan(f *testing.F) {
	tapp := newTApp(4)
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"other": podTemplate("nginx:2", corev1.RestartPolicyAlways)}
	tapp.Spec.Templates = map[string]string{"1": "other"}
	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"3": "Killed"}
	tappJSON, err := json.Marshal(tapp)
	if err != nil {
		f.Fatal(err)
	}
	var pods []*corev1.Pod
	for i := 0; i < 4; i++ {
		pods = append(pods, mustPod(f, tapp, strconv.Itoa(i)))
	}
	pods[0].Labels[tkestack.TemplateHashLabel] = "123456789012345" // foreign hash
	pods[2].Spec.Containers[0].Image = "nginx:0"                   // out of date
	pods[3].OwnerReferences = nil                                  // an orphan of a killed instance
	pods[1].OwnerReferences[0].UID = "someone-else"                // another controller's
	podsJSON, err := json.Marshal(pods)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tappJSON, podsJSON, uint8(0))
	// Spread off, a progress deadline, and a pool template with constraints of its own.
	other := tapp.DeepCopy()
	other.Spec.SpreadPolicy = tkestackv1.SpreadPolicyNone
	other.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	own := other.Spec.TemplatePool["other"]
	own.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "rack", WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	other.Spec.TemplatePool["other"] = own
	otherJSON, err := json.Marshal(other)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(otherJSON, []byte(`[]`), uint8(0))
	other.Spec.SpreadPolicy = ""
	if otherJSON, err = json.Marshal(other); err != nil {
		f.Fatal(err)
	}
	f.Add(otherJSON, []byte(`[]`), uint8(1))
	// Lifecycle hooks, pods in every state, and the TApp being deleted with its preDelete finalizer.
	hooked := tapp.DeepCopy()
	hooked.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(true), InPlaceUpdate: drainHook(false)}
	hookedJSON, err := json.Marshal(hooked)
	if err != nil {
		f.Fatal(err)
	}
	statePods := []*corev1.Pod{mustPod(f, tapp, "0"), mustPod(f, tapp, "1"), mustPod(f, tapp, "2"), mustPod(f, tapp, "4")}
	statePods[0].Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStatePreparingUpdate
	statePods[0].Labels[drainLabel] = "true"
	statePods[1].Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStateUpdated
	statePods[2].Spec.Containers[0].Image = "nginx:0"
	statePods[3].Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStatePreparingDelete
	statePods[3].Finalizers = []string{"example.com/drain"}
	statePodsJSON, err := json.Marshal(statePods)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(hookedJSON, statePodsJSON, uint8(0))
	hooked.Finalizers = []string{tkestack.PreDeleteFinalizer}
	hooked.DeletionTimestamp = &metav1.Time{Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if hookedJSON, err = json.Marshal(hooked); err != nil {
		f.Fatal(err)
	}
	f.Add(hookedJSON, statePodsJSON, uint8(1))
	f.Add(tappJSON, []byte(`[null,{},{"metadata":{"name":"app-0","namespace":"ns"}},{"metadata":{"name":"app-99","namespace":"ns","labels":{"app":"web","tapp_instance_key":"99"}}}]`), uint8(3))
	f.Add(tappJSON, []byte(`[{"metadata":{"name":"app-1","namespace":"ns","labels":{"app":"web","tapp_instance_key":"01"},"deletionTimestamp":"2020-01-01T00:00:00Z"},"spec":{"nodeName":"gone","readinessGates":[{"conditionType":"tkestack.io/InPlaceUpdate"}]},"status":{"phase":"Failed"}}]`), uint8(2))

	scheme := runtime.NewScheme()
	install.Install(scheme)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// The seed TApp is one the API accepts, and its plan acts, so the target does not test only refusals.
	seed := &tkestack.TApp{}
	if err := scheme.Convert(tapp, seed, nil); err != nil {
		f.Fatal(err)
	}
	if errs := validation.ValidateTApp(seed); len(errs) > 0 {
		f.Fatalf("the seed TApp is invalid: %v", errs)
	}
	if plan := ComputePlan(tapp, pods, func(string) NodeState { return NodeReady }, now); len(plan.InPlaceUpdates)+len(plan.Relabels) == 0 {
		f.Fatalf("the seed's plan updates nothing: %+v", plan)
	}
	f.Fuzz(func(t *testing.T, tappJSON, podsJSON []byte, nodeState uint8) {
		tapp := &tkestackv1.TApp{}
		if json.Unmarshal(tappJSON, tapp) != nil {
			return
		}
		tapp.Name, tapp.Namespace, tapp.UID = "app", "ns", "tapp-uid"
		scheme.Default(tapp)
		internal := &tkestack.TApp{}
		if scheme.Convert(tapp, internal, nil) != nil || len(validation.ValidateTApp(internal)) > 0 {
			return // the API refuses it: the controller never sees it
		}
		var pods []*corev1.Pod
		if json.Unmarshal(podsJSON, &pods) != nil {
			return
		}
		states := []NodeState{NodeReady, NodeNotReady, NodeUnknown, NodeMissing, NodeNoCondition}
		state := states[int(nodeState)%len(states)]
		plan := ComputePlan(tapp, pods, func(string) NodeState { return state }, now)
		if err := checkPlanActions(tapp, pods, plan); err != nil {
			t.Fatal(err)
		}
		before := countOf(plan)
		plan = ApplyLifecycle(tapp, pods, OrderPlan(tapp, pods, plan))
		if err := checkPlanActions(tapp, pods, plan); err != nil {
			t.Fatal(err)
		}
		if err := checkLifecycle(tapp, pods, plan); err != nil {
			t.Fatal(err)
		}
		if tapp.Spec.Lifecycle == nil && tapp.Spec.PodManagementPolicy != tkestackv1.OrderedReadyPodManagement && !anyStateLabel(pods) && countOf(plan) != before {
			t.Fatalf("a TApp without lifecycle hooks: ApplyLifecycle changed the plan from %+v to %+v", before, countOf(plan))
		}
		plan.Topology = Topology{Zones: nodeState%2 == 1}
		if err := checkNewPods(tapp, plan); err != nil {
			t.Fatal(err)
		}
	})
}

// checkNewPods checks the pods of plan's creates: each is built, and its topology spread constraints are
// those of its template when it has any, none with spreadPolicy None, else the default soft ones.
func checkNewPods(tapp *tkestackv1.TApp, plan *Plan) error {
	for _, id := range plan.Creates {
		pod, err := plan.NewPod(id)
		if err != nil {
			return fmt.Errorf("create of %s: %v", id, err)
		}
		n, _ := ParseID(id)
		template := plan.createTemplate(n, id).template
		got := pod.Spec.TopologySpreadConstraints
		switch {
		case len(template.Spec.TopologySpreadConstraints) > 0 || tapp.Spec.SpreadPolicy == tkestackv1.SpreadPolicyNone:
			if !equality.Semantic.DeepEqual(got, template.Spec.TopologySpreadConstraints) {
				return fmt.Errorf("create of %s: constraints %v, want the template's %v", id, got, template.Spec.TopologySpreadConstraints)
			}
		default:
			if want := 1 + map[bool]int{true: 1}[plan.Topology.Zones]; len(got) != want {
				return fmt.Errorf("create of %s: %d constraints, want %d", id, len(got), want)
			}
			for _, c := range got {
				if c.WhenUnsatisfiable != corev1.ScheduleAnyway || !equality.Semantic.DeepEqual(c.LabelSelector, tapp.Spec.Selector) {
					return fmt.Errorf("create of %s: constraint %v is not the default spread", id, c)
				}
			}
		}
	}
	return nil
}

// checkPlanActions checks that every action of plan is on a pod of pods (same name and UID) that no other
// controller owns, and that no create takes the name of an existing pod.
func checkPlanActions(tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *Plan) error {
	byName := map[string]*corev1.Pod{}
	for _, pod := range pods {
		if pod != nil && pod.Namespace == tapp.Namespace {
			byName[pod.Name] = pod
		}
	}
	acted := func(kind, name string, uid types.UID) error {
		pod, ok := byName[name]
		if !ok || pod.UID != uid {
			return fmt.Errorf("%s of %s (uid %q): no such pod", kind, name, uid)
		}
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ref.UID != tapp.UID {
			return fmt.Errorf("%s of %s, which %s %s controls", kind, name, ref.Kind, ref.UID)
		}
		return nil
	}
	for _, id := range plan.Creates {
		if name := PodName(tapp, id); byName[name] != nil {
			return fmt.Errorf("create of %s, whose name is taken", name)
		}
	}
	for _, d := range append(append([]Delete{}, plan.Deletes...), plan.ForceDeletes...) {
		if err := acted("delete", d.PodName, d.UID); err != nil {
			return err
		}
	}
	for _, u := range append(append([]InPlaceUpdate{}, plan.InPlaceUpdates...), plan.Relabels...) {
		if err := acted("in-place update", u.PodName, u.UID); err != nil {
			return err
		}
	}
	for _, r := range plan.Recreates {
		if err := acted("recreate", r.PodName, r.UID); err != nil {
			return err
		}
	}
	return nil
}

// FuzzComputePlanWithClaims gives ComputePlanWithStorage a TApp the API would accept, with claim templates
// and spec.volumeClaimUpdateStrategy, arbitrary pods and claims, and storage classes that do or do not allow
// expansion. It must never panic, and every claim action must be one the controller may take
// (checkClaimActions), besides the pod actions of FuzzComputePlan.
func FuzzComputePlanWithClaims(f *testing.F) {
	tapp := newTApp(3)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claimTemplate("data", "4Gi")}
	tapp.Spec.VolumeClaimUpdateStrategy = &tkestackv1.TAppVolumeClaimUpdateStrategy{Type: tkestackv1.OnPodRollingUpdateVolumeClaimUpdateStrategyType}
	var pods []*corev1.Pod
	var claims []*corev1.PersistentVolumeClaim
	for _, id := range []string{"0", "1", "2"} {
		pods = append(pods, mustPod(f, tapp, id))
		c := NewPVCs(tapp, id)[0]
		c.UID = types.UID("claim-" + id)
		setStorage(c, "2Gi", "2Gi")
		c.Status.Phase = corev1.ClaimBound
		claims = append(claims, c)
	}
	claims[1].Spec.StorageClassName = ptr.To("other")                                             // incompatible
	claims[2].DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} // terminating
	marshal := func(v any) []byte {
		out, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		return out
	}
	f.Add(marshal(tapp), marshal(pods), marshal(claims), uint8(0))
	f.Add(marshal(tapp), marshal(pods[:1]), marshal(claims), uint8(1))
	recreate := tapp.DeepCopy()
	recreate.Spec.VolumeClaimUpdateStrategy = &tkestackv1.TAppVolumeClaimUpdateStrategy{Type: tkestackv1.OnDeleteVolumeClaimUpdateStrategyType,
		OnIncompatibleChange: tkestackv1.RecreateVolumeClaimIncompatibleChange}
	recreate.Spec.VolumeClaimTemplates = append(recreate.Spec.VolumeClaimTemplates, claimTemplate("logs", "1Gi"))
	f.Add(marshal(recreate), marshal(pods[1:]), marshal(claims), uint8(2))
	f.Add(marshal(recreate), []byte(`[]`), []byte(`[null,{},{"metadata":{"name":"data-app-0","namespace":"ns"},"spec":{"resources":{"requests":{"storage":"-1"}}},"status":{"phase":"Bound","conditions":[{"type":"NodeResizeError","status":"True"}]}}]`), uint8(3))

	scheme := runtime.NewScheme()
	install.Install(scheme)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// The seed TApp is one the API accepts, and its plan expands a claim, so the target does not test only
	// refusals.
	seed := &tkestack.TApp{}
	if err := scheme.Convert(recreate, seed, nil); err != nil {
		f.Fatal(err)
	}
	if errs := validation.ValidateTApp(seed); len(errs) > 0 {
		f.Fatalf("the seed TApp is invalid: %v", errs)
	}
	if plan := ComputePlanWithStorage(tapp, Revisions{}, Storage{Claims: claims}, pods, nil, now); len(plan.ClaimExpansions) == 0 {
		f.Fatalf("the seed's plan expands nothing: %+v", plan)
	}
	f.Fuzz(func(t *testing.T, tappJSON, podsJSON, claimsJSON []byte, classes uint8) {
		tapp := &tkestackv1.TApp{}
		if json.Unmarshal(tappJSON, tapp) != nil {
			return
		}
		tapp.Name, tapp.Namespace, tapp.UID = "app", "ns", "tapp-uid"
		scheme.Default(tapp)
		internal := &tkestack.TApp{}
		if scheme.Convert(tapp, internal, nil) != nil || len(validation.ValidateTApp(internal)) > 0 {
			return
		}
		var pods []*corev1.Pod
		var claims []*corev1.PersistentVolumeClaim
		if json.Unmarshal(podsJSON, &pods) != nil || json.Unmarshal(claimsJSON, &claims) != nil {
			return
		}
		storage := Storage{Claims: claims, Expansion: map[string]bool{"standard": classes&1 == 1, "other": classes&2 == 2}}
		plan := ComputePlanWithStorage(tapp, Revisions{}, storage, pods, func(string) NodeState { return NodeReady }, now)
		if err := checkPlanActions(tapp, pods, plan); err != nil {
			t.Fatal(err)
		}
		if err := checkClaimActions(tapp, storage, plan); err != nil {
			t.Fatal(err)
		}
	})
}

// checkClaimActions checks the claim actions and report of plan: none without a strategy type; each names a
// claim of storage with its UID that is an instance claim of the TApp not controlled by another object; an
// expansion only raises the request to the template's, never in a class that does not allow it; a claim is
// deleted only with onIncompatibleChange Recreate and only for an instance the plan does not create now; no
// pod is created while one of its claims is being deleted; the counts of status.volumeClaims are bounded.
func checkClaimActions(tapp *tkestackv1.TApp, storage Storage, plan *Plan) error {
	var deleted []ClaimRef
	for _, r := range plan.Recreates {
		deleted = append(deleted, r.DeleteClaims...)
	}
	for _, d := range plan.ClaimDeletes {
		deleted = append(deleted, d.ClaimRef)
	}
	if VolumeClaimUpdateType(tapp) == "" {
		if len(plan.ClaimExpansions)+len(deleted) > 0 || plan.Status.VolumeClaims != nil || plan.Status.VolumeClaimsCondition != nil {
			return fmt.Errorf("claim work without a strategy: %+v %+v", plan.ClaimExpansions, deleted)
		}
		return nil
	}
	byName := map[string]*corev1.PersistentVolumeClaim{}
	for _, c := range storage.Claims {
		if c != nil && c.Namespace == tapp.Namespace {
			byName[c.Name] = c
		}
	}
	claimOf := func(kind, name string, uid types.UID) (*corev1.PersistentVolumeClaim, error) {
		c, ok := byName[name]
		if !ok || c.UID != uid {
			return nil, fmt.Errorf("%s of claim %s (uid %q): no such claim", kind, name, uid)
		}
		if ref := metav1.GetControllerOfNoCopy(c); ref != nil && ref.UID != tapp.UID {
			return nil, fmt.Errorf("%s of claim %s, which %s controls", kind, name, ref.UID)
		}
		if instanceOfClaim(tapp, name) == "" {
			return nil, fmt.Errorf("%s of claim %s, not an instance claim", kind, name)
		}
		return c, nil
	}
	for _, e := range plan.ClaimExpansions {
		c, err := claimOf("expansion", e.Name, e.UID)
		if err != nil {
			return err
		}
		has := c.Spec.Resources.Requests[corev1.ResourceStorage]
		if e.Storage.Cmp(has) <= 0 {
			return fmt.Errorf("expansion of %s to %s, which it has (%s)", e.Name, e.Storage.String(), has.String())
		}
		if allowed, known := storage.Expansion[claimClass(c)]; known && !allowed {
			return fmt.Errorf("expansion of %s in class %q, which does not allow it", e.Name, claimClass(c))
		}
	}
	creating := map[string]bool{}
	for _, id := range plan.Creates {
		creating[id] = true
		for _, t := range tapp.Spec.VolumeClaimTemplates {
			if c, ok := byName[PVCName(t.Name, tapp, id)]; ok && c.DeletionTimestamp != nil {
				if n, _ := ParseID(id); !HoldsInstance(tapp, n) {
					return fmt.Errorf("create of %s while its claim %s is being deleted", id, c.Name)
				}
			}
		}
	}
	for _, d := range deleted {
		if !recreatesClaims(tapp) {
			return fmt.Errorf("claim %s deleted without onIncompatibleChange Recreate", d.Name)
		}
		if _, err := claimOf("delete", d.Name, d.UID); err != nil {
			return err
		}
		if creating[instanceOfClaim(tapp, d.Name)] {
			return fmt.Errorf("claim %s deleted while its instance is created", d.Name)
		}
	}
	if len(plan.Status.VolumeClaims) != len(tapp.Spec.VolumeClaimTemplates) || plan.Status.VolumeClaimsCondition == nil {
		return fmt.Errorf("status.volumeClaims %+v for %d templates, condition %v", plan.Status.VolumeClaims, len(tapp.Spec.VolumeClaimTemplates), plan.Status.VolumeClaimsCondition)
	}
	for _, s := range plan.Status.VolumeClaims {
		if s.CompatibleReadyReplicas > s.CompatibleReplicas || s.CompatibleReplicas > WantedInstances(tapp) {
			return fmt.Errorf("status.volumeClaims %+v out of bounds", s)
		}
	}
	return nil
}

// anyStateLabel reports whether a pod carries the lifecycle state label.
func anyStateLabel(pods []*corev1.Pod) bool {
	for _, pod := range pods {
		if pod != nil {
			if _, ok := pod.Labels[tkestack.LifecycleStateLabel]; ok {
				return true
			}
		}
	}
	return false
}

// checkLifecycle checks the hooks in plan: marks and waits are on pods of pods, and no pod that its hook holds
// (in the hook's preparing state and hooked) is deleted, recreated or updated in place.
func checkLifecycle(tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *Plan) error {
	byName := map[string]*corev1.Pod{}
	for _, pod := range pods {
		if pod != nil && pod.Namespace == tapp.Namespace {
			byName[pod.Name] = pod
		}
	}
	for _, m := range plan.LifecycleMarks {
		if pod, ok := byName[m.PodName]; !ok || pod.UID != m.UID {
			return fmt.Errorf("mark of %s (uid %q): no such pod", m.PodName, m.UID)
		}
	}
	held := func(name, state string) bool {
		pod := byName[name]
		if pod == nil || pod.Labels[tkestack.LifecycleStateLabel] != state {
			return false
		}
		hook, _ := hookFor(tapp, state)
		return hook != nil && len(HookHolds(hook, pod)) > 0
	}
	for _, d := range plan.Deletes {
		if (d.Reason == ReasonScaleDown || d.Reason == ReasonKilled || d.Reason == ReasonTAppDeleted) && held(d.PodName, tkestack.LifecycleStatePreparingDelete) {
			return fmt.Errorf("delete of %s, which its preDelete hook holds", d.PodName)
		}
	}
	for _, r := range plan.Recreates {
		if held(r.PodName, tkestack.LifecycleStatePreparingDelete) {
			return fmt.Errorf("recreate of %s, which its preDelete hook holds", r.PodName)
		}
	}
	for _, u := range plan.InPlaceUpdates {
		if held(u.PodName, tkestack.LifecycleStatePreparingUpdate) {
			return fmt.Errorf("in-place update of %s, which its inPlaceUpdate hook holds", u.PodName)
		}
	}
	return nil
}
