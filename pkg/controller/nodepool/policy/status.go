package policy

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

// Status returns the status of the pool named pool given candidate nodes (any superset of its members,
// such as every node referring to it): the members are the nodes whose DesiredPool is pool, counted as
// ready when their Ready condition is True, and listed by name, sorted. nil entries are skipped.
func Status(pool string, nodes []*corev1.Node) v1beta2.NodePoolStatus {
	var s v1beta2.NodePoolStatus
	seen := map[string]bool{}
	for _, n := range nodes {
		if n == nil || seen[n.Name] || DesiredPool(n) != pool {
			continue
		}
		seen[n.Name] = true
		s.Nodes = append(s.Nodes, n.Name)
		if NodeReady(n) {
			s.ReadyNodeNum++
		} else {
			s.UnreadyNodeNum++
		}
	}
	sort.Strings(s.Nodes)
	return s
}

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// SameStatus reports whether two statuses say the same (a nil and an empty list are the same, times are
// compared to the second as the API keeps them).
func SameStatus(a, b v1beta2.NodePoolStatus) bool {
	if a.ReadyNodeNum != b.ReadyNodeNum || a.UnreadyNodeNum != b.UnreadyNodeNum || len(a.Nodes) != len(b.Nodes) {
		return false
	}
	if a.LeaderNum != b.LeaderNum || !sameLeaders(a.LeaderEndpoints, b.LeaderEndpoints) ||
		!sameTime(a.LeaderLastElectedTime, b.LeaderLastElectedTime) || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			!sameTime(&x.LastTransitionTime, &y.LastTransitionTime) {
			return false
		}
	}
	for i := range a.Nodes {
		if a.Nodes[i] != b.Nodes[i] {
			return false
		}
	}
	return true
}

func sameTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}

// LeaderSpecChanged reports whether a pool update changes how its leaders are elected.
func LeaderSpecChanged(old, cur *v1beta2.NodePool) bool {
	o, c := old.Spec, cur.Spec
	return o.EnableLeaderElection != c.EnableLeaderElection || o.LeaderElectionStrategy != c.LeaderElectionStrategy ||
		o.LeaderReplicas != c.LeaderReplicas || !equalMaps(o.LeaderNodeLabelSelector, c.LeaderNodeLabelSelector)
}

// AttributesChanged reports whether a pool update changes what its nodes carry (labels, annotations,
// taints): the NodePool controller ignores other updates, such as its own status writes.
func AttributesChanged(old, cur *v1beta2.NodePool) bool {
	return !equalMaps(old.Spec.Labels, cur.Spec.Labels) || !equalMaps(old.Spec.Annotations, cur.Spec.Annotations) ||
		!sameTaints(old.Spec.Taints, cur.Spec.Taints)
}

func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Value != b[i].Value || a[i].Effect != b[i].Effect {
			return false
		}
	}
	return true
}

// NodeChanged reports whether a node update matters to its pools: its membership labels, its record, the
// attributes a pool may have applied (labels, annotations, taints), its readiness or its InternalIP (a
// leader's address).
func NodeChanged(old, cur *corev1.Node) bool {
	return !equalMaps(old.Labels, cur.Labels) || !equalMaps(old.Annotations, cur.Annotations) ||
		!sameTaints(old.Spec.Taints, cur.Spec.Taints) || NodeReady(old) != NodeReady(cur) || InternalIP(old) != InternalIP(cur)
}
