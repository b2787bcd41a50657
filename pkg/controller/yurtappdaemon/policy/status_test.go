package policy

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

func TestStatus(t *testing.T) {
	yad := newYAD()
	old := withImage(newYAD(), "nginx:1.0")
	pools := []*v1alpha1.NodePool{edge("d"), edge("c"), edge("b"), edge("a"), edge("e")}
	ready := liveDeployment(t, yad, pools[3], 0)    // a: ready and updated
	rolling := liveDeployment(t, yad, pools[2], 0)  // b: current revision, rollout in progress
	rolling.Generation = 2                          // not yet observed
	outdated := liveDeployment(t, old, pools[1], 0) // c: old revision, ready
	notReady := liveDeployment(t, yad, pools[0], 0) // d: updated, one pod not ready
	notReady.Status.ReadyReplicas = 1
	// e: no child

	plan, err := ComputePlan(yad, pools, []*appsv1.Deployment{notReady, outdated, rolling, ready}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rev := RevisionName(yad)
	want := Status{
		NodePools:       []string{"a", "b", "c", "d", "e"},
		TemplateType:    "Deployment",
		CurrentRevision: rev,
		Conditions: []v1alpha1.YurtAppDaemonCondition{
			{Type: "WorkLoadProvisioned", Status: corev1.ConditionFalse, Reason: "WorkloadsMissing",
				Message: "1 of 5 selected pools have no Deployment: e"},
			{Type: "WorkLoadUpdated", Status: corev1.ConditionFalse, Reason: "WorkloadsOutdated",
				Message: "1 of 4 Deployment workloads are not at revision " + rev + " or drifted: web-c"},
		},
		Workloads:        4,
		ReadyWorkloads:   2, // a, c
		UpdatedWorkloads: 2, // a, d
	}
	if !reflect.DeepEqual(plan.Status, want) {
		t.Errorf("status =\n  %+v\nwant\n  %+v", plan.Status, want)
	}
}

func TestStatusAllGood(t *testing.T) {
	yad := toStatefulSet(newYAD())
	pools := []*v1alpha1.NodePool{edge("b"), edge("a")}
	plan, err := ComputePlan(yad, pools, nil, []*appsv1.StatefulSet{liveStatefulSet(t, yad, pools[0], 0), liveStatefulSet(t, yad, pools[1], 0)})
	if err != nil {
		t.Fatal(err)
	}
	rev := RevisionName(yad)
	want := []v1alpha1.YurtAppDaemonCondition{
		{Type: "WorkLoadProvisioned", Status: corev1.ConditionTrue, Reason: "AllPoolsProvisioned", Message: "every selected pool (2) has a StatefulSet"},
		{Type: "WorkLoadUpdated", Status: corev1.ConditionTrue, Reason: "AllWorkloadsUpdated", Message: "all 2 StatefulSet workloads are at revision " + rev},
	}
	if !reflect.DeepEqual(plan.Status.Conditions, want) {
		t.Errorf("conditions = %+v, want %+v", plan.Status.Conditions, want)
	}
	if plan.Status.TemplateType != "StatefulSet" || plan.Status.Workloads != 2 || plan.Status.ReadyWorkloads != 2 || plan.Status.UpdatedWorkloads != 2 {
		t.Errorf("status = %+v", plan.Status)
	}
}

func TestStatusConflictMessage(t *testing.T) {
	yad := newYAD()
	foreign := orphan(liveDeployment(t, yad, edge("a"), 0))
	foreign.Spec.Template.Labels = map[string]string{"app": "manual"} // not selected: not adoptable
	plan, err := ComputePlan(yad, []*v1alpha1.NodePool{edge("a")}, []*appsv1.Deployment{foreign}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Status.Conditions[0]
	if want := "1 of 1 selected pools have no Deployment: a; Deployment web-a of pool a is held by no controller"; c.Message != want || c.Reason != "WorkloadConflict" {
		t.Errorf("condition = %+v, want message %q", c, want)
	}
}

func TestListNames(t *testing.T) {
	var many []string
	for _, c := range "abcdefghijkl" {
		many = append(many, string(c))
	}
	if got, want := listNames(many), "a, b, c, d, e, f, g, h, i, j and 2 more"; got != want {
		t.Errorf("listNames = %q, want %q", got, want)
	}
	if got, want := listNames(many[:2]), "a, b"; got != want {
		t.Errorf("listNames = %q, want %q", got, want)
	}
}

func TestSetCondition(t *testing.T) {
	t0 := metav1.NewTime(testNow.Add(-time.Hour))
	conds := []v1alpha1.YurtAppDaemonCondition{
		{Type: ConditionFailure, Status: corev1.ConditionTrue, LastTransitionTime: t0, Reason: "ListFailed"},
		{Type: ConditionProvisioned, Status: corev1.ConditionTrue, LastTransitionTime: t0, Reason: "AllPoolsProvisioned", Message: "old"},
	}
	// Same status: transition time kept, reason and message refreshed, position kept.
	got := SetCondition(conds, v1alpha1.YurtAppDaemonCondition{Type: ConditionProvisioned, Status: corev1.ConditionTrue, Reason: "NoPoolSelected", Message: "new"}, testNow)
	want := []v1alpha1.YurtAppDaemonCondition{conds[0],
		{Type: ConditionProvisioned, Status: corev1.ConditionTrue, LastTransitionTime: t0, Reason: "NoPoolSelected", Message: "new"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("same status: %+v, want %+v", got, want)
	}
	if conds[1].Message != "old" {
		t.Errorf("SetCondition mutated its input")
	}
	// Status change: now.
	got = SetCondition(conds, v1alpha1.YurtAppDaemonCondition{Type: ConditionProvisioned, Status: corev1.ConditionFalse, Reason: "WorkloadsMissing"}, testNow)
	if got[1].LastTransitionTime != testNow || got[1].Status != corev1.ConditionFalse {
		t.Errorf("status change: %+v", got[1])
	}
	// New type: appended.
	got = SetCondition(conds, v1alpha1.YurtAppDaemonCondition{Type: ConditionUpdated, Status: corev1.ConditionTrue, Reason: "AllWorkloadsUpdated"}, testNow)
	if len(got) != 3 || got[2].Type != ConditionUpdated || got[2].LastTransitionTime != testNow {
		t.Errorf("new condition: %+v", got)
	}
	if got := RemoveCondition(conds, ConditionFailure); len(got) != 1 || got[0].Type != ConditionProvisioned {
		t.Errorf("RemoveCondition = %+v", got)
	}
}

func TestApplyStatus(t *testing.T) {
	t0 := metav1.NewTime(testNow.Add(-time.Hour))
	status := v1alpha1.YurtAppDaemonStatus{
		ObservedGeneration: 3,
		CurrentRevision:    "web-old",
		NodePools:          []string{"z", "a"},
		Conditions: []v1alpha1.YurtAppDaemonCondition{
			{Type: ConditionUpdated, Status: corev1.ConditionTrue, LastTransitionTime: t0, Reason: ReasonAllWorkloadsUpdated},
			{Type: ConditionFailure, Status: corev1.ConditionTrue, LastTransitionTime: t0, Reason: "ListFailed"},
		},
	}
	s := Status{NodePools: []string{"a", "b"}, TemplateType: "Deployment", CurrentRevision: "web-new",
		Conditions: []v1alpha1.YurtAppDaemonCondition{
			{Type: ConditionProvisioned, Status: corev1.ConditionTrue, Reason: ReasonAllPoolsProvisioned},
			{Type: ConditionUpdated, Status: corev1.ConditionFalse, Reason: ReasonWorkloadsOutdated},
		}}
	ApplyStatus(&status, s, testNow)
	want := v1alpha1.YurtAppDaemonStatus{
		ObservedGeneration: 3,
		CurrentRevision:    "web-new",
		TemplateType:       "Deployment",
		NodePools:          []string{"a", "b"},
		Conditions: []v1alpha1.YurtAppDaemonCondition{
			{Type: ConditionUpdated, Status: corev1.ConditionFalse, LastTransitionTime: testNow, Reason: ReasonWorkloadsOutdated},
			{Type: ConditionFailure, Status: corev1.ConditionTrue, LastTransitionTime: t0, Reason: "ListFailed"},
			{Type: ConditionProvisioned, Status: corev1.ConditionTrue, LastTransitionTime: testNow, Reason: ReasonAllPoolsProvisioned},
		},
	}
	if !reflect.DeepEqual(status, want) {
		t.Errorf("status =\n  %+v\nwant\n  %+v", status, want)
	}
	ApplyStatus(&status, Status{}, testNow)
	if status.NodePools != nil {
		t.Errorf("nodepools = %#v, want nil when no pool is selected", status.NodePools)
	}
}
