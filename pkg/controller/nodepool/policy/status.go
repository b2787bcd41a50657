package policy

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// Status returns the status of the pool named pool given candidate nodes (any superset of its members,
// such as every node referring to it): the members are the nodes whose DesiredPool is pool, counted as
// ready when their Ready condition is True, and listed by name, sorted. nil entries are skipped.
func Status(pool string, nodes []*corev1.Node) v1alpha1.NodePoolStatus {
	var s v1alpha1.NodePoolStatus
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

// SameStatus reports whether two statuses say the same (a nil and an empty node list are the same).
func SameStatus(a, b v1alpha1.NodePoolStatus) bool {
	if a.ReadyNodeNum != b.ReadyNodeNum || a.UnreadyNodeNum != b.UnreadyNodeNum || len(a.Nodes) != len(b.Nodes) {
		return false
	}
	for i := range a.Nodes {
		if a.Nodes[i] != b.Nodes[i] {
			return false
		}
	}
	return true
}

// AttributesChanged reports whether a pool update changes what its nodes carry (labels, annotations,
// taints): the NodePool controller ignores other updates, such as its own status writes.
func AttributesChanged(old, cur *v1alpha1.NodePool) bool {
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
// attributes a pool may have applied (labels, annotations, taints) or its readiness.
func NodeChanged(old, cur *corev1.Node) bool {
	return !equalMaps(old.Labels, cur.Labels) || !equalMaps(old.Annotations, cur.Annotations) ||
		!sameTaints(old.Spec.Taints, cur.Spec.Taints) || NodeReady(old) != NodeReady(cur)
}
