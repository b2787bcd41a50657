package inplace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func TestReadinessGateMatchesAPIConstant(t *testing.T) {
	if string(ReadinessGate) != tkestack.InPlaceUpdateReadinessGate {
		t.Errorf("ReadinessGate = %q, API says %q", ReadinessGate, tkestack.InPlaceUpdateReadinessGate)
	}
}

func TestAddReadinessGate(t *testing.T) {
	spec := &corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "other"}}}
	AddReadinessGate(spec)
	AddReadinessGate(spec)
	if len(spec.ReadinessGates) != 2 || spec.ReadinessGates[1].ConditionType != ReadinessGate {
		t.Errorf("readinessGates = %v", spec.ReadinessGates)
	}
	if !HasReadinessGate(&corev1.Pod{Spec: *spec}) || HasReadinessGate(&corev1.Pod{}) {
		t.Error("HasReadinessGate is wrong")
	}
}

func TestGateConditionDoesNotFlap(t *testing.T) {
	earlier := metav1.NewTime(t0.Add(-time.Hour))
	pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: ReadinessGate, Status: corev1.ConditionFalse, Reason: ReasonUpdating, LastTransitionTime: earlier},
	}}}

	// Same status and reason: nothing to write.
	if _, changed := gateCondition(pod, corev1.ConditionFalse, ReasonUpdating, "", t0); changed {
		t.Error("identical condition reported as changed")
	}
	// Same status, other reason: written, but the transition time is kept.
	c, changed := gateCondition(pod, corev1.ConditionFalse, "Other", "", t0)
	if !changed || !c.LastTransitionTime.Equal(&earlier) {
		t.Errorf("changed=%v, lastTransitionTime=%v; want changed and %v kept", changed, c.LastTransitionTime, earlier)
	}
	// Status flips: new transition time.
	c, changed = gateCondition(pod, corev1.ConditionTrue, ReasonUpdated, "", t0)
	if !changed || !c.LastTransitionTime.Time.Equal(t0) || c.Type != ReadinessGate {
		t.Errorf("flip: changed=%v, condition=%+v", changed, c)
	}
	// No condition yet.
	c, changed = gateCondition(&corev1.Pod{}, corev1.ConditionTrue, ReasonNotUpdating, "", t0)
	if !changed || !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("new: changed=%v, condition=%+v", changed, c)
	}
}

func TestTrafficDrained(t *testing.T) {
	pod := podFrom(template())
	if TrafficDrained(pod) {
		t.Error("Ready pod reported drained")
	}
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	if !TrafficDrained(pod) {
		t.Error("not-Ready pod reported not drained")
	}
	if GateStatus(pod) != corev1.ConditionTrue || GateStatus(&corev1.Pod{}) != "" {
		t.Error("GateStatus is wrong")
	}
}
