package tapp

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

func gatePod(uid types.UID, rv string, gate corev1.ConditionStatus) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", UID: uid, ResourceVersion: rv}}
	if gate != "" {
		pod.Status.Conditions = []corev1.PodCondition{{Type: inplace.ReadinessGate, Status: gate}}
	}
	return pod
}

// TestGateWritesPending: a gate write is pending while the cache's copy of the pod is older than what the
// write returned, and forgotten once the cache shows it.
func TestGateWritesPending(t *testing.T) {
	cases := []struct {
		name string
		// record is what is remembered of the pod; nil for nothing.
		record func(*gateWrites)
		cached *corev1.Pod
		want   bool
	}{
		{"nothing written", nil, gatePod("a", "10", corev1.ConditionFalse), false},
		{"another pod of the name", func(g *gateWrites) { g.done(gatePod("a", "10", ""), gatePod("a", "12", "")) },
			gatePod("b", "10", corev1.ConditionFalse), false},
		{"cache older than the write", func(g *gateWrites) { g.done(gatePod("a", "10", ""), gatePod("a", "12", "")) },
			gatePod("a", "11", corev1.ConditionFalse), true},
		{"cache at the write", func(g *gateWrites) { g.done(gatePod("a", "10", ""), gatePod("a", "12", "")) },
			gatePod("a", "12", corev1.ConditionTrue), false},
		{"cache newer than the write", func(g *gateWrites) { g.done(gatePod("a", "9", ""), gatePod("a", "99", "")) },
			gatePod("a", "100", corev1.ConditionFalse), false},
		{"write under way, gate not True in the cache", func(g *gateWrites) { g.started(gatePod("a", "10", "")) },
			gatePod("a", "11", corev1.ConditionFalse), true},
		{"write under way, gate True in the cache", func(g *gateWrites) { g.started(gatePod("a", "10", "")) },
			gatePod("a", "11", corev1.ConditionTrue), false},
		{"versions not numbers, cache at the version written from", func(g *gateWrites) { g.done(gatePod("a", "x1", ""), gatePod("a", "x2", "")) },
			gatePod("a", "x1", corev1.ConditionFalse), true},
		{"versions not numbers, cache at another version", func(g *gateWrites) { g.done(gatePod("a", "x1", ""), gatePod("a", "x2", "")) },
			gatePod("a", "x3", corev1.ConditionFalse), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var g gateWrites
			if tc.record != nil {
				tc.record(&g)
			}
			if got := g.pending(tc.cached); got != tc.want {
				t.Fatalf("pending = %v, want %v", got, tc.want)
			}
			_, remembered := g.byUID.Load(tc.cached.UID)
			if remembered != tc.want {
				t.Errorf("remembered after the check = %v, want %v (what the cache shows is forgotten)", remembered, tc.want)
			}
		})
	}
}

// TestGateWritesForget: a failed write, or a deleted pod, leaves nothing pending.
func TestGateWritesForget(t *testing.T) {
	var g gateWrites
	g.started(gatePod("a", "10", ""))
	g.forget("a")
	if g.pending(gatePod("a", "10", corev1.ConditionFalse)) {
		t.Error("pending after forget")
	}
}
