package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

// member is a node of pool "p" with an InternalIP, Ready or not, with extra labels.
func member(name, ip string, isReady bool, labels ...string) *corev1.Node {
	l := map[string]string{DesiredPoolLabel: "p"}
	for i := 0; i+1 < len(labels); i += 2 {
		l[labels[i]] = labels[i+1]
	}
	n := node(name, l)
	if ip != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
	}
	status := corev1.ConditionFalse
	if isReady {
		status = corev1.ConditionTrue
	}
	return ready(n, status)
}

func leaders(nameIPs ...string) []v1beta2.Leader {
	var out []v1beta2.Leader
	for i := 0; i+1 < len(nameIPs); i += 2 {
		out = append(out, v1beta2.Leader{NodeName: nameIPs[i], Address: nameIPs[i+1]})
	}
	return out
}

func TestLeaders(t *testing.T) {
	before := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	random := func(replicas int32) v1beta2.NodePoolSpec {
		return v1beta2.NodePoolSpec{EnableLeaderElection: true, LeaderElectionStrategy: v1beta2.ElectionStrategyRandom, LeaderReplicas: replicas}
	}
	mark := func(replicas int32) v1beta2.NodePoolSpec {
		s := random(replicas)
		s.LeaderElectionStrategy = v1beta2.ElectionStrategyMark
		s.LeaderNodeLabelSelector = map[string]string{"leader": "yes"}
		return s
	}
	elected := func(l ...v1beta2.Leader) v1beta2.NodePoolStatus {
		t := before
		return v1beta2.NodePoolStatus{LeaderEndpoints: l, LeaderNum: int32(len(l)), LeaderLastElectedTime: &t,
			Conditions: []v1beta2.NodePoolCondition{{Type: v1beta2.LeaderReady, Status: corev1.ConditionTrue, LastTransitionTime: before, Reason: ReasonLeadersElected}}}
	}
	three := []*corev1.Node{member("c", "10.0.0.3", true), member("a", "10.0.0.1", true), member("b", "10.0.0.2", true)}
	for _, tc := range []struct {
		name          string
		spec          v1beta2.NodePoolSpec
		current       v1beta2.NodePoolStatus
		nodes         []*corev1.Node
		want          []v1beta2.Leader
		wantElectedAt *metav1.Time
		wantStatus    corev1.ConditionStatus
		wantReason    string
		wantMessage   string // a part of it
	}{
		{name: "disabled: nothing", spec: v1beta2.NodePoolSpec{LeaderReplicas: 1}, current: elected(leaders("a", "10.0.0.1")...), nodes: three},
		{name: "random elects the first Ready node by name", spec: random(1), nodes: three,
			want: leaders("a", "10.0.0.1"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue, wantReason: ReasonLeadersElected, wantMessage: "1 of 1 leaders elected: a"},
		{name: "two replicas", spec: random(2), nodes: three,
			want: leaders("a", "10.0.0.1", "b", "10.0.0.2"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue, wantReason: ReasonLeadersElected},
		{name: "a Ready leader stays (no flapping), time unchanged", spec: random(1), current: elected(leaders("c", "10.0.0.3")...), nodes: three,
			want: leaders("c", "10.0.0.3"), wantElectedAt: &before, wantStatus: corev1.ConditionTrue, wantReason: ReasonLeadersElected},
		{name: "a leader turned NotReady is replaced",
			spec: random(1), current: elected(leaders("a", "10.0.0.1")...),
			nodes: []*corev1.Node{member("a", "10.0.0.1", false), member("b", "10.0.0.2", true), member("c", "10.0.0.3", true)},
			want:  leaders("b", "10.0.0.2"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue, wantReason: ReasonLeadersElected},
		{name: "a leader that left the pool is replaced, the other stays",
			spec: random(2), current: elected(leaders("a", "10.0.0.1", "c", "10.0.0.3")...),
			nodes: []*corev1.Node{ready(node("a", map[string]string{DesiredPoolLabel: "other"}), corev1.ConditionTrue), member("b", "10.0.0.2", true), member("c", "10.0.0.3", true)},
			want:  leaders("b", "10.0.0.2", "c", "10.0.0.3"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue},
		{name: "fewer replicas keeps the first current leaders by name", spec: random(1), current: elected(leaders("b", "10.0.0.2", "c", "10.0.0.3")...), nodes: three,
			want: leaders("b", "10.0.0.2"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue},
		{name: "a node without an InternalIP cannot lead", spec: random(1),
			nodes: []*corev1.Node{member("a", "", true), member("b", "10.0.0.2", true)},
			want:  leaders("b", "10.0.0.2"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue},
		{name: "a leader's address follows the node", spec: random(1), current: elected(leaders("a", "10.0.0.9")...), nodes: three,
			want: leaders("a", "10.0.0.1"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue},
		{name: "mark elects only marked nodes", spec: mark(2),
			nodes: []*corev1.Node{member("a", "10.0.0.1", true), member("b", "10.0.0.2", true, "leader", "yes"), member("c", "10.0.0.3", true, "leader", "no")},
			want:  leaders("b", "10.0.0.2"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue, wantReason: ReasonFewerLeadersThanWanted,
			wantMessage: "1 of 2 leaders elected (b): 3 of the pool's 3 nodes are Ready with an InternalIP, 1 of them with the labels leader=yes"},
		{name: "mark drops a leader that lost its label", spec: mark(1), current: elected(leaders("a", "10.0.0.1")...),
			nodes: []*corev1.Node{member("a", "10.0.0.1", true), member("b", "10.0.0.2", true, "leader", "yes")},
			want:  leaders("b", "10.0.0.2"), wantElectedAt: &now, wantStatus: corev1.ConditionTrue, wantReason: ReasonLeadersElected},
		{name: "mark with no marked Ready node", spec: mark(1), current: elected(leaders("b", "10.0.0.2")...),
			nodes:         []*corev1.Node{member("a", "10.0.0.1", true), member("b", "10.0.0.2", false, "leader", "yes")},
			wantElectedAt: &now, wantStatus: corev1.ConditionFalse, wantReason: ReasonNoMarkedReadyNodes,
			wantMessage: "no leader can be elected: 1 of the pool's 2 nodes are Ready with an InternalIP, 0 of them with the labels leader=yes"},
		{name: "no Ready node", spec: random(1), current: elected(leaders("a", "10.0.0.1")...),
			nodes:         []*corev1.Node{member("a", "10.0.0.1", false), member("b", "10.0.0.2", false)},
			wantElectedAt: &now, wantStatus: corev1.ConditionFalse, wantReason: ReasonNoReadyNodes,
			wantMessage: "no leader can be elected: 0 of the pool's 2 nodes are Ready with an InternalIP"},
		{name: "no nodes", spec: random(1), nodes: []*corev1.Node{node("x", map[string]string{DesiredPoolLabel: "other"})},
			wantStatus: corev1.ConditionFalse, wantReason: ReasonNoNodes, wantMessage: "the pool has no nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Leaders("p", tc.spec, tc.current, tc.nodes, now)
			if !reflect.DeepEqual(got.LeaderEndpoints, tc.want) || int(got.LeaderNum) != len(tc.want) {
				t.Errorf("leaders = %v (%d), want %v", got.LeaderEndpoints, got.LeaderNum, tc.want)
			}
			if !reflect.DeepEqual(got.LeaderLastElectedTime, tc.wantElectedAt) {
				t.Errorf("leaderLastElectedTime = %v, want %v", got.LeaderLastElectedTime, tc.wantElectedAt)
			}
			if tc.wantStatus == "" {
				if len(got.Conditions) != 0 {
					t.Errorf("conditions = %+v, want none", got.Conditions)
				}
				return
			}
			if len(got.Conditions) != 1 {
				t.Fatalf("conditions = %+v, want LeaderReady", got.Conditions)
			}
			c := got.Conditions[0]
			if c.Type != v1beta2.LeaderReady || c.Status != tc.wantStatus || (tc.wantReason != "" && c.Reason != tc.wantReason) ||
				!strings.Contains(c.Message, tc.wantMessage) {
				t.Errorf("condition = %+v, want %s %s %q", c, tc.wantStatus, tc.wantReason, tc.wantMessage)
			}
			wantTransition := now
			if tc.current.Conditions != nil && tc.current.Conditions[0].Status == c.Status {
				wantTransition = before
			}
			if !c.LastTransitionTime.Equal(&wantTransition) {
				t.Errorf("lastTransitionTime = %v, want %v", c.LastTransitionTime, wantTransition)
			}
			// A second pass over its own result changes nothing: the election is stable.
			if again := Leaders("p", tc.spec, got, tc.nodes, now); !SameStatus(again, got) {
				t.Errorf("second pass = %+v, want %+v", again, got)
			}
		})
	}
}
