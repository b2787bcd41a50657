package policy

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

const drainLabel = "drain"

func drainHook(notReady bool) *tkestackv1.LifecycleHook {
	return &tkestackv1.LifecycleHook{LabelsHandler: map[string]string{drainLabel: "true"}, FinalizersHandler: []string{"example.com/drain"}, MarkPodNotReady: notReady}
}

// lifecyclePlan is the plan the controller executes: ComputePlan, OrderPlan, ApplyLifecycle.
func lifecyclePlan(tapp *tkestackv1.TApp, pods []*corev1.Pod) *Plan {
	plan := ComputePlan(tapp, pods, func(string) NodeState { return NodeReady }, testNow)
	return ApplyLifecycle(tapp, pods, OrderPlan(tapp, pods, plan))
}

func withState(pod *corev1.Pod, state string) *corev1.Pod {
	pod.Labels[tkestack.LifecycleStateLabel] = state
	return pod
}

func hookedByLabel(pod *corev1.Pod) *corev1.Pod {
	pod.Labels[drainLabel] = "true"
	return pod
}

type markWant struct {
	id, state, hook string
	notReady        bool
	heldBy          []string
}

func marksOf(plan *Plan) []markWant {
	var out []markWant
	for _, m := range plan.LifecycleMarks {
		out = append(out, markWant{m.ID, m.State, m.Hook, m.NotReady, m.HeldBy})
	}
	return out
}

func waitsOf(plan *Plan) []string {
	var out []string
	for _, w := range plan.LifecycleWaits {
		out = append(out, w.ID+":"+w.Hook)
	}
	return out
}

// TestApplyLifecycle is the table of the hook rules: for each snapshot, the actions, marks and waits.
func TestApplyLifecycle(t *testing.T) {
	type result struct {
		deletes, inplace, recreates []string
		marks                       []markWant
		waits                       []string
	}
	cases := []struct {
		name  string
		setup func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod)
		want  result
	}{
		{
			name: "no lifecycle: scale-down deletes at once",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(2)
				pods := []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1"), mustPod(t, tapp, "2")}
				return tapp, pods
			},
			want: result{deletes: []string{"2"}},
		},
		{
			name: "scale-down of a Normal pod: marked PreparingDelete, not deleted",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(3)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				pods := []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1"), hookedByLabel(mustPod(t, tapp, "2"))}
				tapp.Spec.Replicas = 2
				return tapp, pods
			},
			want: result{marks: []markWant{{"2", tkestack.LifecycleStatePreparingDelete, HookPreDelete, false, []string{"label drain=true"}}}},
		},
		{
			name: "scale-down with markPodNotReady: the mark turns the gate False",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(true)}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1")}
			},
			want: result{marks: []markWant{{"1", tkestack.LifecycleStatePreparingDelete, HookPreDelete, true, nil}}},
		},
		{
			name: "PreparingDelete and hooked by a label: waits",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), hookedByLabel(withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete))}
			},
			want: result{waits: []string{"1:preDelete"}},
		},
		{
			name: "PreparingDelete and hooked by a finalizer: waits",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				pod := withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete)
				pod.Finalizers = []string{"example.com/drain"}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), pod}
			},
			want: result{waits: []string{"1:preDelete"}},
		},
		{
			name: "label with another value does not hold",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				pod := withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete)
				pod.Labels[drainLabel] = "done"
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), pod}
			},
			want: result{deletes: []string{"1"}},
		},
		{
			name: "PreparingDelete, released: deleted",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete)}
			},
			want: result{deletes: []string{"1"}},
		},
		{
			name: "PreparingDelete with markPodNotReady but the gate still True: marked again",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(true)}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete)}
			},
			want: result{marks: []markWant{{"1", tkestack.LifecycleStatePreparingDelete, HookPreDelete, true, nil}}},
		},
		{
			name: "PreparingDelete with markPodNotReady, gate False, released: deleted",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(true)}
				pod := withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete)
				setCond(pod, InPlaceUpdateGate, corev1.ConditionFalse)
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), pod}
			},
			want: result{deletes: []string{"1"}},
		},
		{
			name: "kill goes through preDelete",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(2)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Killed"}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1")}
			},
			want: result{marks: []markWant{{"0", tkestack.LifecycleStatePreparingDelete, HookPreDelete, false, nil}}},
		},
		{
			name: "an inPlaceUpdate hook alone does not hold deletions",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), hookedByLabel(mustPod(t, tapp, "1"))}
			},
			want: result{deletes: []string{"1"}},
		},
		{
			name: "migration and stray pods go through no hook",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				done := hookedByLabel(mustPod(t, tapp, "0"))
				finish(done, corev1.PodFailed)
				stray := hookedByLabel(mustPod(t, tapp, "0"))
				stray.Name, stray.UID = "app-x", "uid-x"
				return tapp, []*corev1.Pod{done, stray}
			},
			want: result{deletes: []string{"0", ""}},
		},
		{
			name: "recreation goes through preDelete",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false), InPlaceUpdate: drainHook(false)}
				pods := []*corev1.Pod{mustPod(t, tapp, "0")}
				tapp.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}}
				return tapp, pods
			},
			want: result{marks: []markWant{{"0", tkestack.LifecycleStatePreparingDelete, HookPreDelete, false, nil}}},
		},
		{
			name: "recreation once released",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				pods := []*corev1.Pod{withState(mustPod(t, tapp, "0"), tkestack.LifecycleStatePreparingDelete)}
				tapp.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}}
				return tapp, pods
			},
			want: result{recreates: []string{"0"}},
		},
		{
			name: "in-place update of a Normal pod: marked PreparingUpdate with markPodNotReady",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(true)}
				pods := []*corev1.Pod{hookedByLabel(mustPod(t, tapp, "0"))}
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
				return tapp, pods
			},
			want: result{marks: []markWant{{"0", tkestack.LifecycleStatePreparingUpdate, HookInPlaceUpdate, true, []string{"label drain=true"}}}},
		},
		{
			name: "PreparingUpdate and hooked: waits",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				pods := []*corev1.Pod{hookedByLabel(withState(mustPod(t, tapp, "0"), tkestack.LifecycleStatePreparingUpdate))}
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
				return tapp, pods
			},
			want: result{waits: []string{"0:inPlaceUpdate"}},
		},
		{
			name: "PreparingUpdate, released: updated in place",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				pods := []*corev1.Pod{withState(mustPod(t, tapp, "0"), tkestack.LifecycleStatePreparingUpdate)}
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
				return tapp, pods
			},
			want: result{inplace: []string{"0"}},
		},
		{
			name: "a preDelete hook alone does not hold in-place updates",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				pods := []*corev1.Pod{hookedByLabel(mustPod(t, tapp, "0"))}
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
				return tapp, pods
			},
			want: result{inplace: []string{"0"}},
		},
		{
			name: "scaled back up while PreparingDelete: Normal again",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(2)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(true)}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), hookedByLabel(withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete))}
			},
			want: result{marks: []markWant{{"1", tkestack.LifecycleStateNormal, "", false, nil}}},
		},
		{
			name: "update no longer wanted while PreparingUpdate (paused): Normal again",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				pods := []*corev1.Pod{withState(mustPod(t, tapp, "0"), tkestack.LifecycleStatePreparingUpdate)}
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
				tapp.Spec.UpdateStrategy.Paused = true
				return tapp, pods
			},
			want: result{marks: []markWant{{"0", tkestack.LifecycleStateNormal, "", false, nil}}},
		},
		{
			name: "Updating and done: Updated",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				return tapp, []*corev1.Pod{withState(mustPod(t, tapp, "0"), tkestack.LifecycleStateUpdating)}
			},
			want: result{marks: []markWant{{"0", tkestack.LifecycleStateUpdated, "", false, nil}}},
		},
		{
			name: "Updating while the kubelet restarts the containers: unchanged",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				pod := withState(mustPod(t, tapp, "0"), tkestack.LifecycleStateUpdating)
				pod.Annotations[inplace.StateAnnotation] = `{"revision":"x","containers":{"main":{}}}`
				return tapp, []*corev1.Pod{pod}
			},
		},
		{
			name: "Updated, not hooked again: unchanged",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				return tapp, []*corev1.Pod{withState(mustPod(t, tapp, "0"), tkestack.LifecycleStateUpdated)}
			},
		},
		{
			name: "Updated and hooked again: Normal",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
				return tapp, []*corev1.Pod{hookedByLabel(withState(mustPod(t, tapp, "0"), tkestack.LifecycleStateUpdated))}
			},
			want: result{marks: []markWant{{"0", tkestack.LifecycleStateNormal, "", false, nil}}},
		},
		{
			name: "Updated without an inPlaceUpdate hook: Normal",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				return tapp, []*corev1.Pod{withState(mustPod(t, tapp, "0"), tkestack.LifecycleStateUpdated)}
			},
			want: result{marks: []markWant{{"0", tkestack.LifecycleStateNormal, "", false, nil}}},
		},
		{
			name: "OrderedReady: the instance a hook prepared (unready by markPodNotReady) goes before other updates",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(2)
				tapp.Spec.PodManagementPolicy = tkestackv1.OrderedReadyPodManagement
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(true)}
				tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"other": podTemplate("nginx:1", corev1.RestartPolicyOnFailure)}
				tapp.Spec.Templates = map[string]string{"1": "other"}
				two := intstr.FromInt32(2)
				tapp.Spec.UpdateStrategy.MaxUnavailable = &two
				prepared := withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingDelete)
				setCond(prepared, InPlaceUpdateGate, corev1.ConditionFalse)
				setCond(prepared, corev1.PodReady, corev1.ConditionFalse)
				pods := []*corev1.Pod{mustPod(t, tapp, "0"), prepared}
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2" // in place for 0
				other := tapp.Spec.TemplatePool["other"]
				other.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}} // recreation for 1
				tapp.Spec.TemplatePool["other"] = other
				return tapp, pods
			},
			want: result{recreates: []string{"1"}},
		},
		{
			name: "OrderedReady: only the highest pod is prepared",
			setup: func(t *testing.T) (*tkestackv1.TApp, []*corev1.Pod) {
				tapp := newTApp(1)
				tapp.Spec.PodManagementPolicy = tkestackv1.OrderedReadyPodManagement
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
				return tapp, []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1"), mustPod(t, tapp, "2")}
			},
			want: result{marks: []markWant{{"2", tkestack.LifecycleStatePreparingDelete, HookPreDelete, false, nil}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp, pods := tc.setup(t)
			plan := lifecyclePlan(tapp, pods)
			_, deletes, _, inplaceIDs, recreates := ids(plan)
			for _, x := range []struct {
				name      string
				got, want []string
			}{{"Deletes", deletes, tc.want.deletes}, {"InPlaceUpdates", inplaceIDs, tc.want.inplace}, {"Recreates", recreates, tc.want.recreates}, {"Waits", waitsOf(plan), tc.want.waits}} {
				if (len(x.got) > 0 || len(x.want) > 0) && !reflect.DeepEqual(x.got, x.want) {
					t.Errorf("%s = %q, want %q", x.name, x.got, x.want)
				}
			}
			if got := marksOf(plan); (len(got) > 0 || len(tc.want.marks) > 0) && !reflect.DeepEqual(got, tc.want.marks) {
				t.Errorf("marks = %+v, want %+v", got, tc.want.marks)
			}
		})
	}
}

// TestLifecycleInPlaceUpdateSetsUpdating: an in-place update that proceeds sets the state Updating (with the
// hook) or Normal (without, for a pod left in another state), next to the template's labels.
func TestLifecycleInPlaceUpdateSetsUpdating(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lifecycle *tkestackv1.TAppLifecycle
		state     string
		want      string
	}{
		{name: "hook", lifecycle: &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}, state: tkestack.LifecycleStatePreparingUpdate, want: tkestack.LifecycleStateUpdating},
		{name: "no hook, pod PreparingDelete", lifecycle: &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}, state: tkestack.LifecycleStatePreparingDelete, want: tkestack.LifecycleStateNormal},
		{name: "no lifecycle, no label", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(1)
			tapp.Spec.Lifecycle = tc.lifecycle
			pod := mustPod(t, tapp, "0")
			delete(pod.Labels, tkestack.LifecycleStateLabel)
			if tc.state != "" {
				withState(pod, tc.state)
			}
			tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			plan := lifecyclePlan(tapp, []*corev1.Pod{pod})
			if len(plan.InPlaceUpdates) != 1 {
				t.Fatalf("InPlaceUpdates = %+v, want one", plan.InPlaceUpdates)
			}
			u := plan.InPlaceUpdates[0]
			if got := u.Labels[tkestack.LifecycleStateLabel]; got != tc.want {
				t.Errorf("state label = %q, want %q", got, tc.want)
			}
			if u.Labels["app"] != "web" {
				t.Errorf("template labels lost: %v", u.Labels)
			}
		})
	}
}

// TestLifecycleHoldsBudget: a pod waiting for its inPlaceUpdate hook holds a slot of maxUnavailable; the other
// instances wait for the budget, not for the hook.
func TestLifecycleHoldsBudget(t *testing.T) {
	tapp := newTApp(3)
	tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{InPlaceUpdate: drainHook(false)}
	pods := []*corev1.Pod{mustPod(t, tapp, "0"), hookedByLabel(withState(mustPod(t, tapp, "1"), tkestack.LifecycleStatePreparingUpdate)), mustPod(t, tapp, "2")}
	tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	plan := lifecyclePlan(tapp, pods)
	if got := waitsOf(plan); !reflect.DeepEqual(got, []string{"1:inPlaceUpdate"}) {
		t.Errorf("waits = %v, want [1:inPlaceUpdate]", got)
	}
	if len(plan.LifecycleMarks)+len(plan.InPlaceUpdates) != 0 {
		t.Errorf("marks %+v, updates %+v: the budget of 1 is held by instance 1", plan.LifecycleMarks, plan.InPlaceUpdates)
	}
	// With a budget of 2, one more instance is prepared (the lowest).
	two := intstr.FromInt32(2)
	tapp.Spec.UpdateStrategy.MaxUnavailable = &two
	plan = lifecyclePlan(tapp, pods)
	if got := marksOf(plan); len(got) != 1 || got[0].id != "0" || got[0].state != tkestack.LifecycleStatePreparingUpdate {
		t.Errorf("marks = %+v, want instance 0 PreparingUpdate", got)
	}
}

// TestLifecycleGates: ComputeGates leaves the gate False on a pod prepared by a markPodNotReady hook, and sets
// it True on one whose hook does not ask it, or that is Normal again.
func TestLifecycleGates(t *testing.T) {
	for _, tc := range []struct {
		name     string
		notReady bool
		state    string
		want     bool
	}{
		{name: "PreparingDelete, markPodNotReady", notReady: true, state: tkestack.LifecycleStatePreparingDelete, want: false},
		{name: "PreparingDelete, no markPodNotReady", state: tkestack.LifecycleStatePreparingDelete, want: true},
		{name: "Normal again", notReady: true, state: tkestack.LifecycleStateNormal, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(1)
			tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(tc.notReady)}
			pod := withState(mustPod(t, tapp, "0"), tc.state)
			setCond(pod, InPlaceUpdateGate, corev1.ConditionFalse)
			gates := ComputeGates(tapp, []*corev1.Pod{pod}, &Plan{})
			if got := len(gates) == 1 && gates[0].Action == GateTrue; got != tc.want {
				t.Errorf("gates = %+v, want GateTrue %v", gates, tc.want)
			}
		})
	}
}

// TestLifecycleTAppDeletion: the plan of a TApp being deleted, by propagation policy.
func TestLifecycleTAppDeletion(t *testing.T) {
	now := metav1.NewTime(testNow)
	for _, tc := range []struct {
		name       string
		finalizers []string
		noHook     bool
		gone       bool
		want       FinalizerRemoval
		marks      []string
		deletes    []string
	}{
		{name: "no finalizer: nothing (the garbage collector acts)", finalizers: nil},
		{name: "background: every pod prepared", finalizers: []string{tkestack.PreDeleteFinalizer}, marks: []string{"0", "1"}},
		{name: "background, released: deleted", finalizers: []string{tkestack.PreDeleteFinalizer}, gone: false, deletes: []string{"1", "0"}},
		{name: "background, pods gone: finalizer removed", finalizers: []string{tkestack.PreDeleteFinalizer}, gone: true, want: FinalizerPodsGone},
		{name: "orphan: finalizer removed, no pod touched", finalizers: []string{orphanFinalizer, tkestack.PreDeleteFinalizer}, want: FinalizerOrphan},
		{name: "foreground: finalizer removed", finalizers: []string{foregroundFinalizer, tkestack.PreDeleteFinalizer}, want: FinalizerForeground},
		{name: "hook removed: finalizer removed", finalizers: []string{tkestack.PreDeleteFinalizer}, noHook: true, want: FinalizerNoHook},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(2)
			tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
			var pods []*corev1.Pod
			if !tc.gone {
				pods = []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1")}
			}
			if tc.deletes != nil {
				for _, pod := range pods {
					withState(pod, tkestack.LifecycleStatePreparingDelete)
				}
			}
			if tc.noHook {
				tapp.Spec.Lifecycle = nil
			}
			tapp.Finalizers = tc.finalizers
			tapp.DeletionTimestamp = &now
			plan := lifecyclePlan(tapp, pods)
			if plan.RemoveFinalizer != tc.want {
				t.Errorf("RemoveFinalizer = %q, want %q", plan.RemoveFinalizer, tc.want)
			}
			var marks []string
			for _, m := range plan.LifecycleMarks {
				marks = append(marks, m.ID)
			}
			_, deletes, _, _, _ := ids(plan)
			if !reflect.DeepEqual(marks, tc.marks) || !reflect.DeepEqual(deletes, tc.deletes) {
				t.Errorf("marks %v deletes %v, want %v %v", marks, deletes, tc.marks, tc.deletes)
			}
			if len(plan.Creates)+len(plan.InPlaceUpdates)+len(plan.Recreates)+len(plan.Adoptions)+len(plan.Gates) != 0 {
				t.Errorf("a TApp being deleted gets only deletions: %+v", plan)
			}
		})
	}
}

// TestLifecycleNewPodState: pods of a TApp with spec.lifecycle start Normal; others get no state label.
func TestLifecycleNewPodState(t *testing.T) {
	tapp := newTApp(1)
	pod := mustPod(t, tapp, "0")
	if _, ok := pod.Labels[tkestack.LifecycleStateLabel]; ok {
		t.Errorf("a TApp without lifecycle labels its pods %v", pod.Labels)
	}
	tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: drainHook(false)}
	if pod = mustPod(t, tapp, "0"); pod.Labels[tkestack.LifecycleStateLabel] != tkestack.LifecycleStateNormal {
		t.Errorf("labels %v, want %s=Normal", pod.Labels, tkestack.LifecycleStateLabel)
	}
	state, hook, held := LifecycleState(tapp, withState(hookedByLabel(pod), tkestack.LifecycleStatePreparingDelete))
	if state != tkestack.LifecycleStatePreparingDelete || hook != HookPreDelete || !reflect.DeepEqual(held, []string{"label drain=true"}) {
		t.Errorf("LifecycleState = %q %q %q", state, hook, held)
	}
}
