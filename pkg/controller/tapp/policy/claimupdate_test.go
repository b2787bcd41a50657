package policy

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// claimTemplate is a claim template name of size in class "standard", ReadWriteOnce.
func claimTemplate(name, size string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("standard"),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

// claimFixture is a TApp of 3 with claim template data (2Gi), its running pods and bound claims of 2Gi.
type claimFixture struct {
	tapp    *tkestackv1.TApp
	pods    map[string]*corev1.Pod // by id
	claims  map[string]*corev1.PersistentVolumeClaim
	storage Storage
}

func newClaimFixture(t *testing.T, strategy tkestackv1.VolumeClaimUpdateStrategyType) *claimFixture {
	tapp := newTApp(3)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claimTemplate("data", "2Gi")}
	if strategy != "" {
		tapp.Spec.VolumeClaimUpdateStrategy = &tkestackv1.TAppVolumeClaimUpdateStrategy{Type: strategy}
	}
	f := &claimFixture{tapp: tapp, pods: map[string]*corev1.Pod{}, claims: map[string]*corev1.PersistentVolumeClaim{},
		storage: Storage{Expansion: map[string]bool{"standard": true, "fixed": false}}}
	for _, id := range []string{"0", "1", "2"} {
		f.pods[id] = mustPod(t, tapp, id)
		for _, c := range NewPVCs(tapp, id) {
			c.UID = types.UID("claim-uid-" + c.Name)
			bind(c)
			f.claims[c.Name] = c
		}
	}
	return f
}

// bind makes c bound with a capacity equal to its request.
func bind(c *corev1.PersistentVolumeClaim) {
	c.Status.Phase = corev1.ClaimBound
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage]}
}

func setStorage(c *corev1.PersistentVolumeClaim, request, capacity string) {
	c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(request)
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
}

func (f *claimFixture) plan() *Plan {
	var pods []*corev1.Pod
	for _, id := range []string{"0", "1", "2"} {
		if p, ok := f.pods[id]; ok {
			pods = append(pods, p)
		}
	}
	storage := f.storage
	for _, name := range []string{"data-app-0", "data-app-1", "data-app-2", "logs-app-0", "logs-app-1", "logs-app-2"} {
		if c, ok := f.claims[name]; ok {
			storage.Claims = append(storage.Claims, c)
		}
	}
	return ComputePlanWithStorage(f.tapp, Revisions{}, storage, pods, func(string) NodeState { return NodeReady }, testNow)
}

func expansions(plan *Plan) []string {
	var out []string
	for _, e := range plan.ClaimExpansions {
		out = append(out, e.Name+"="+e.Storage.String())
	}
	return out
}

func claimDeletes(plan *Plan) []string {
	var out []string
	for _, d := range plan.ClaimDeletes {
		out = append(out, d.Name)
	}
	return out
}

func TestClaimUpdatePlan(t *testing.T) {
	rolling, onDelete := tkestackv1.OnPodRollingUpdateVolumeClaimUpdateStrategyType, tkestackv1.OnDeleteVolumeClaimUpdateStrategyType
	grow := func(f *claimFixture) { f.tapp.Spec.VolumeClaimTemplates[0] = claimTemplate("data", "4Gi") }
	recreate := func(f *claimFixture) {
		f.tapp.Spec.VolumeClaimUpdateStrategy.OnIncompatibleChange = tkestackv1.RecreateVolumeClaimIncompatibleChange
	}
	classChanged := func(f *claimFixture) { f.tapp.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("fast") }
	cases := []struct {
		name      string
		strategy  tkestackv1.VolumeClaimUpdateStrategyType
		setup     func(*claimFixture)
		expand    []string
		deletes   []string // ClaimDeletes
		creates   []string
		inPlace   []string
		recreates []string
		// deleteClaims are the claims deleted with the recreated pods.
		deleteClaims []string
		reason       string // the VolumeClaimsUpdated reason, "" for no condition
		message      string // a substring of its message
		compatible   [2]int32
	}{
		{name: "no strategy: nothing follows, nothing is reported", setup: grow},
		{name: "in line: Updated", strategy: rolling, reason: ReasonClaimsUpdated, compatible: [2]int32{3, 3}},
		{name: "storage increase: one claim expanded within maxUnavailable 1, no pod touched", strategy: rolling, setup: grow,
			expand: []string{"data-app-0=4Gi"}, reason: ReasonClaimsUpdating, message: "0 of 3"},
		{name: "storage increase within maxUnavailable 2", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			two := intstr.FromInt32(2)
			f.tapp.Spec.UpdateStrategy.MaxUnavailable = &two
		}, expand: []string{"data-app-0=4Gi", "data-app-1=4Gi"}, reason: ReasonClaimsUpdating},
		{name: "a claim being resized takes the budget", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			setStorage(f.claims["data-app-0"], "4Gi", "2Gi")
		}, reason: ReasonClaimsUpdating, compatible: [2]int32{1, 0}},
		{name: "a claim resized: the next one", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			setStorage(f.claims["data-app-0"], "4Gi", "4Gi")
		}, expand: []string{"data-app-1=4Gi"}, reason: ReasonClaimsUpdating, message: "1 of 3", compatible: [2]int32{1, 1}},
		{name: "a Resizing condition holds the budget too", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			setStorage(f.claims["data-app-0"], "4Gi", "4Gi")
			f.claims["data-app-0"].Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue}}
		}, reason: ReasonClaimsUpdating, compatible: [2]int32{1, 0}},
		{name: "all resized", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			for _, c := range f.claims {
				setStorage(c, "4Gi", "4Gi")
			}
		}, reason: ReasonClaimsUpdated, compatible: [2]int32{3, 3}},
		{name: "a class without expansion: nothing patched nor deleted", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			for _, c := range f.claims {
				c.Spec.StorageClassName = ptr.To("fixed")
			}
			f.tapp.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("fixed")
		}, reason: ReasonExpansionNotAllowed, message: `storage class "fixed" does not allow volume expansion`},
		{name: "an unknown class is expanded (admission decides)", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			f.storage.Expansion = nil
		}, expand: []string{"data-app-0=4Gi"}, reason: ReasonClaimsUpdating},
		{name: "a resize error: reported, nothing deleted, the budget held", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			setStorage(f.claims["data-app-1"], "4Gi", "2Gi")
			f.claims["data-app-1"].Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimControllerResizeError, Status: corev1.ConditionTrue, Message: "disk full"}}
		}, reason: ReasonResizeFailed, message: "claim data-app-1: ControllerResizeError: disk full", compatible: [2]int32{1, 0}},
		{name: "an infeasible resize status", strategy: rolling, setup: func(f *claimFixture) {
			f.claims["data-app-2"].Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
				corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizeInfeasible}
		}, reason: ReasonResizeFailed, message: "NodeResizeInfeasible", compatible: [2]int32{3, 2}},
		{name: "a new claim template: one pod recreated to mount it", strategy: rolling, setup: func(f *claimFixture) {
			f.tapp.Spec.VolumeClaimTemplates = append(f.tapp.Spec.VolumeClaimTemplates, claimTemplate("logs", "1Gi"))
		}, recreates: []string{"0"}, reason: ReasonClaimsUpdating, compatible: [2]int32{3, 3}},
		{name: "a template update and an expansion together", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			f.tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		}, inPlace: []string{"0"}, expand: []string{"data-app-0=4Gi"}, reason: ReasonClaimsUpdating},
		{name: "paused: nothing follows", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			f.tapp.Spec.UpdateStrategy.Paused = true
		}, reason: ReasonClaimsUpdating},
		{name: "partition: only the instances at or above it", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			f.tapp.Spec.UpdateStrategy.Partition = 2
		}, expand: []string{"data-app-2=4Gi"}, reason: ReasonClaimsUpdating},
		{name: "a claim another object controls is not touched", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			f.claims["data-app-0"].OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Thing", Name: "x", UID: "other", Controller: ptr.To(true)}}
		}, expand: []string{"data-app-1=4Gi"}, reason: ReasonClaimsUpdating},
		{name: "an incompatible change refused: reported, nothing deleted", strategy: rolling, setup: classChanged,
			reason: ReasonClaimsIncompatible, message: "spec.storageClassName differs"},
		{name: "an incompatible change with Recreate: the pod and its claim, within the budget", strategy: rolling, setup: func(f *claimFixture) {
			classChanged(f)
			recreate(f)
		}, recreates: []string{"0"}, deleteClaims: []string{"data-app-0"}, reason: ReasonClaimsUpdating},
		{name: "access modes differ with Recreate", strategy: rolling, setup: func(f *claimFixture) {
			f.tapp.Spec.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
			recreate(f)
		}, recreates: []string{"0"}, deleteClaims: []string{"data-app-0"}, reason: ReasonClaimsUpdating},
		{name: "OnDelete: live pods keep their claims", strategy: onDelete, setup: grow,
			reason: ReasonClaimsUpdating, message: "with OnDelete"},
		{name: "OnDelete: a pod recreated gets its claim expanded first", strategy: onDelete, setup: func(f *claimFixture) {
			grow(f)
			delete(f.pods, "1")
		}, creates: []string{"1"}, expand: []string{"data-app-1=4Gi"}, reason: ReasonClaimsUpdating},
		{name: "OnPodRollingUpdate: a missing pod's claim is expanded before it is created, outside the budget", strategy: rolling, setup: func(f *claimFixture) {
			grow(f)
			delete(f.pods, "2")
		}, creates: []string{"2"}, expand: []string{"data-app-2=4Gi"}, reason: ReasonClaimsUpdating},
		{name: "OnDelete with Recreate: the claim of a pod to create is deleted first", strategy: onDelete, setup: func(f *claimFixture) {
			classChanged(f)
			recreate(f)
			delete(f.pods, "1")
		}, deletes: []string{"data-app-1"}, reason: ReasonClaimsUpdating},
		{name: "OnDelete with Refuse: a pod is created on its incompatible claim", strategy: onDelete, setup: func(f *claimFixture) {
			classChanged(f)
			delete(f.pods, "1")
		}, creates: []string{"1"}, reason: ReasonClaimsIncompatible},
		{name: "a claim being deleted: the pod waits", strategy: onDelete, setup: func(f *claimFixture) {
			delete(f.pods, "1")
			f.claims["data-app-1"].DeletionTimestamp = &metav1.Time{Time: testNow}
		}, reason: ReasonClaimsUpdating, compatible: [2]int32{2, 2}},
		{name: "a claim gone: the pod is created (with the claim)", strategy: onDelete, setup: func(f *claimFixture) {
			delete(f.pods, "1")
			delete(f.claims, "data-app-1")
		}, creates: []string{"1"}, reason: ReasonClaimsUpdating, compatible: [2]int32{2, 2}},
		{name: "an unbound claim is compatible, not ready", strategy: rolling, setup: func(f *claimFixture) {
			f.claims["data-app-0"].Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
		}, reason: ReasonClaimsUpdating, compatible: [2]int32{3, 2}},
		{name: "a claim template without class matches the class admission wrote", strategy: rolling, setup: func(f *claimFixture) {
			f.tapp.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = nil
		}, reason: ReasonClaimsUpdated, compatible: [2]int32{3, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newClaimFixture(t, tc.strategy)
			if tc.setup != nil {
				tc.setup(f)
			}
			plan := f.plan()
			expectPlan(t, plan, tc.creates, nil, nil, tc.inPlace, tc.recreates)
			if got := expansions(plan); !reflect.DeepEqual(got, tc.expand) {
				t.Errorf("ClaimExpansions = %v, want %v", got, tc.expand)
			}
			if got := claimDeletes(plan); !reflect.DeepEqual(got, tc.deletes) {
				t.Errorf("ClaimDeletes = %v, want %v", got, tc.deletes)
			}
			var deleteClaims []string
			for _, r := range plan.Recreates {
				for _, c := range r.DeleteClaims {
					deleteClaims = append(deleteClaims, c.Name)
				}
				if r.ClaimReason == "" {
					t.Errorf("recreate %s without a claim reason", r.ID)
				}
			}
			if !reflect.DeepEqual(deleteClaims, tc.deleteClaims) {
				t.Errorf("Recreates' DeleteClaims = %v, want %v", deleteClaims, tc.deleteClaims)
			}
			cond := plan.Status.VolumeClaimsCondition
			switch {
			case tc.reason == "" && (cond != nil || plan.Status.VolumeClaims != nil):
				t.Errorf("claims reported without a strategy: %+v %+v", cond, plan.Status.VolumeClaims)
			case tc.reason == "":
			case cond == nil:
				t.Fatalf("no VolumeClaimsUpdated condition, want %s", tc.reason)
			case cond.Reason != tc.reason || !strings.Contains(cond.Message, tc.message):
				t.Errorf("condition = %s %q, want %s containing %q", cond.Reason, cond.Message, tc.reason, tc.message)
			case (cond.Status == metav1.ConditionTrue) != (tc.reason == ReasonClaimsUpdated):
				t.Errorf("condition status %s with reason %s", cond.Status, cond.Reason)
			}
			if tc.reason != "" {
				if len(plan.Status.VolumeClaims) == 0 || plan.Status.VolumeClaims[0].VolumeClaimName != "data" {
					t.Fatalf("status.volumeClaims = %+v", plan.Status.VolumeClaims)
				}
				got := plan.Status.VolumeClaims[0]
				if [2]int32{got.CompatibleReplicas, got.CompatibleReadyReplicas} != tc.compatible {
					t.Errorf("data compatible/ready = %d/%d, want %v", got.CompatibleReplicas, got.CompatibleReadyReplicas, tc.compatible)
				}
			}
		})
	}
}

// TestClaimStatusMessageIsBounded: however many claims fail, the condition names at most maxNamedClaims.
func TestClaimStatusMessageIsBounded(t *testing.T) {
	tapp := newTApp(50)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claimTemplate("data", "4Gi")}
	tapp.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("fixed")
	tapp.Spec.VolumeClaimUpdateStrategy = &tkestackv1.TAppVolumeClaimUpdateStrategy{Type: tkestackv1.OnDeleteVolumeClaimUpdateStrategyType}
	var claims []*corev1.PersistentVolumeClaim
	for n := 0; n < 50; n++ {
		c := NewPVCs(tapp, idString(n))[0]
		c.Spec.StorageClassName = ptr.To("fixed")
		setStorage(c, "2Gi", "2Gi")
		c.Status.Phase = corev1.ClaimBound
		claims = append(claims, c)
	}
	plan := ComputePlanWithStorage(tapp, Revisions{}, Storage{Claims: claims, Expansion: map[string]bool{"fixed": false}}, nil, nil, testNow)
	cond := plan.Status.VolumeClaimsCondition
	if cond == nil || cond.Reason != ReasonExpansionNotAllowed || !strings.Contains(cond.Message, "and 47 more") || len(cond.Message) > 600 {
		t.Fatalf("condition = %+v", cond)
	}
	// No pod: every instance is created, none of the claims patched.
	if len(plan.Creates) != 50 || len(plan.ClaimExpansions) != 0 {
		t.Errorf("creates %d, expansions %d", len(plan.Creates), len(plan.ClaimExpansions))
	}
}

// TestDesiredStatusReportsClaimsOnlyWithAStrategy: status.volumeClaims and the condition are written while
// the type is set, and removed once it is unset.
func TestDesiredStatusReportsClaimsOnlyWithAStrategy(t *testing.T) {
	f := newClaimFixture(t, tkestackv1.OnPodRollingUpdateVolumeClaimUpdateStrategyType)
	status := DesiredStatus(f.tapp, f.plan().Status, Revisions{}, nil, Failure{}, testNow)
	if len(status.VolumeClaims) != 1 || status.VolumeClaims[0].CompatibleReadyReplicas != 3 {
		t.Fatalf("volumeClaims = %+v", status.VolumeClaims)
	}
	if c := findCondition(status.Conditions, tkestackv1.TAppVolumeClaimsUpdated); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("condition = %+v", c)
	}
	f.tapp.Status = status
	f.tapp.Spec.VolumeClaimUpdateStrategy = nil
	status = DesiredStatus(f.tapp, f.plan().Status, Revisions{}, nil, Failure{}, testNow)
	if status.VolumeClaims != nil || findCondition(status.Conditions, tkestackv1.TAppVolumeClaimsUpdated) != nil {
		t.Errorf("claims still reported without a strategy: %+v %+v", status.VolumeClaims, status.Conditions)
	}
}

func findCondition(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// TestClaimWorkIsDeterministic: the plan's claim actions do not depend on the order of the claims.
func TestClaimWorkIsDeterministic(t *testing.T) {
	f := newClaimFixture(t, tkestackv1.OnDeleteVolumeClaimUpdateStrategyType)
	f.tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claimTemplate("data", "4Gi"), claimTemplate("logs", "2Gi")}
	f.pods = map[string]*corev1.Pod{}
	var claims []*corev1.PersistentVolumeClaim
	for _, id := range []string{"2", "0", "1"} {
		for _, c := range NewPVCs(f.tapp, id) {
			setStorage(c, "1Gi", "1Gi")
			c.Status.Phase = corev1.ClaimBound
			claims = append(claims, c)
		}
	}
	plan := ComputePlanWithStorage(f.tapp, Revisions{}, Storage{Claims: claims}, nil, nil, testNow)
	want := []string{"data-app-0=4Gi", "logs-app-0=2Gi", "data-app-1=4Gi", "logs-app-1=2Gi", "data-app-2=4Gi", "logs-app-2=2Gi"}
	if got := expansions(plan); !reflect.DeepEqual(got, want) {
		t.Errorf("expansions = %v, want %v", got, want)
	}
}
