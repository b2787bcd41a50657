package inplace

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HasReadinessGate reports whether the pod lists ReadinessGate in spec.readinessGates. Readiness gates cannot be
// added to an existing pod; without the gate the engine cannot take the pod out of endpoints during an update.
func HasReadinessGate(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == ReadinessGate {
			return true
		}
	}
	return false
}

// AddReadinessGate adds ReadinessGate to spec.readinessGates if it is missing. It modifies spec, which must be
// the spec of a pod being built for creation, not a cached object. Such a pod stays not Ready until the
// controller calls Updater.InitReadinessGate or Updater.EnsureReadinessGateTrue on it.
func AddReadinessGate(spec *corev1.PodSpec) {
	for _, g := range spec.ReadinessGates {
		if g.ConditionType == ReadinessGate {
			return
		}
	}
	spec.ReadinessGates = append(spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: ReadinessGate})
}

// GateCondition returns a copy of the pod's ReadinessGate condition, or nil.
func GateCondition(pod *corev1.Pod) *corev1.PodCondition {
	if i := gateConditionIndex(pod); i >= 0 {
		return pod.Status.Conditions[i].DeepCopy()
	}
	return nil
}

// gateConditionIndex is the index of the ReadinessGate condition in the pod's conditions, or -1.
func gateConditionIndex(pod *corev1.Pod) int {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == ReadinessGate {
			return i
		}
	}
	return -1
}

// GateStatus returns the status of the pod's ReadinessGate condition, or "" if it has none.
func GateStatus(pod *corev1.Pod) corev1.ConditionStatus {
	if i := gateConditionIndex(pod); i >= 0 {
		return pod.Status.Conditions[i].Status
	}
	return ""
}

// TrafficDrained reports whether the pod's Ready condition, which the kubelet derives from the readiness gate
// among others, is not True. A controller that wants endpoints to drop the pod before its containers restart
// can wait for it between Begin and Apply.
func TrafficDrained(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}

// gateCondition returns the ReadinessGate condition the pod should have, and whether it differs from the one it
// has. lastTransitionTime changes only when the status changes, so repeated calls never make it flap.
func gateCondition(pod *corev1.Pod, status corev1.ConditionStatus, reason, message string, now time.Time) (corev1.PodCondition, bool) {
	want := corev1.PodCondition{
		Type:               ReadinessGate,
		Status:             status,
		Reason:             reason,
		Message:            message,
		LastTransitionTime: metav1.NewTime(now),
	}
	i := gateConditionIndex(pod)
	if i < 0 {
		return want, true
	}
	cur := &pod.Status.Conditions[i]
	if cur.Status == status {
		want.LastTransitionTime = cur.LastTransitionTime
		if cur.Reason == reason && cur.Message == message {
			return want, false
		}
	}
	return want, true
}

// conditionPatch is a strategic merge patch of pods/status that sets only the given condition (conditions
// merge by type, so the kubelet's conditions, Ready included, are not written) with the precondition given
// as metadata fields (resourceVersion, or uid). reason and message are always sent, even empty: a strategic
// merge would otherwise keep the previous values of omitted fields.
func conditionPatch(precondition map[string]any, c corev1.PodCondition) ([]byte, error) {
	cond := map[string]any{
		"type":               c.Type,
		"status":             c.Status,
		"reason":             c.Reason,
		"message":            c.Message,
		"lastTransitionTime": c.LastTransitionTime,
	}
	return json.Marshal(map[string]any{
		"metadata": precondition,
		"status":   map[string]any{"conditions": []any{cond}},
	})
}
