package policy

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

func ready(n *corev1.Node, status corev1.ConditionStatus) *corev1.Node {
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: status}}
	return n
}

func TestStatus(t *testing.T) {
	nodes := []*corev1.Node{
		ready(node("n3", map[string]string{DesiredPoolLabel: "a"}), corev1.ConditionTrue),
		ready(node("n1", map[string]string{PoolLabel: "a"}), corev1.ConditionTrue),
		ready(node("n2", map[string]string{DesiredPoolLabel: "a", PoolLabel: "a"}), corev1.ConditionUnknown),
		node("n4", map[string]string{DesiredPoolLabel: "a"}), // no conditions yet: not ready
		ready(node("n5", map[string]string{DesiredPoolLabel: "b", PoolLabel: "a"}), corev1.ConditionTrue),
		ready(withApplied(node("n6", map[string]string{PoolLabel: "a"}), Applied{Pool: "a", PoolLabel: true}), corev1.ConditionTrue),
		nil,
	}
	nodes = append(nodes, nodes[0]) // a duplicate is counted once
	got := Status("a", nodes)
	want := v1beta2.NodePoolStatus{ReadyNodeNum: 2, UnreadyNodeNum: 2, Nodes: []string{"n1", "n2", "n3", "n4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Status = %+v, want %+v", got, want)
	}
	if got := Status("empty", nodes); !SameStatus(got, v1beta2.NodePoolStatus{}) {
		t.Errorf("Status of a pool without nodes = %+v, want zero", got)
	}
}

func TestSameStatus(t *testing.T) {
	a := v1beta2.NodePoolStatus{ReadyNodeNum: 1, Nodes: []string{"x"}}
	for _, tt := range []struct {
		b    v1beta2.NodePoolStatus
		want bool
	}{
		{v1beta2.NodePoolStatus{ReadyNodeNum: 1, Nodes: []string{"x"}}, true},
		{v1beta2.NodePoolStatus{ReadyNodeNum: 1, Nodes: []string{"y"}}, false},
		{v1beta2.NodePoolStatus{ReadyNodeNum: 1, UnreadyNodeNum: 1, Nodes: []string{"x"}}, false},
		{v1beta2.NodePoolStatus{ReadyNodeNum: 1}, false},
	} {
		if got := SameStatus(a, tt.b); got != tt.want {
			t.Errorf("SameStatus(%+v, %+v) = %v, want %v", a, tt.b, got, tt.want)
		}
	}
	if !SameStatus(v1beta2.NodePoolStatus{Nodes: []string{}}, v1beta2.NodePoolStatus{}) {
		t.Errorf("an empty and a nil node list differ")
	}
}

func TestChangeFilters(t *testing.T) {
	p := nodePool("a", map[string]string{"k": "v"}, nil, taint("t", "", corev1.TaintEffectNoSchedule))
	statusOnly := p.DeepCopy()
	statusOnly.Status.ReadyNodeNum = 3
	statusOnly.ResourceVersion = "9"
	if AttributesChanged(p, statusOnly) {
		t.Errorf("a status write counts as an attribute change")
	}
	relabelled := p.DeepCopy()
	relabelled.Spec.Labels["k"] = "w"
	retainted := p.DeepCopy()
	retainted.Spec.Taints[0].Effect = corev1.TaintEffectNoExecute
	if !AttributesChanged(p, relabelled) || !AttributesChanged(p, retainted) {
		t.Errorf("label or taint change not detected")
	}

	n := ready(node("n", map[string]string{"a": "b"}), corev1.ConditionTrue)
	heartbeat := n.DeepCopy()
	heartbeat.ResourceVersion = "2"
	heartbeat.Status.Conditions[0].Message = "x"
	if NodeChanged(n, heartbeat) {
		t.Errorf("a heartbeat counts as a node change")
	}
	notReady := ready(n.DeepCopy(), corev1.ConditionFalse)
	moved := n.DeepCopy()
	moved.Labels[DesiredPoolLabel] = "a"
	if !NodeChanged(n, notReady) || !NodeChanged(n, moved) {
		t.Errorf("readiness or label change not detected")
	}
}
