package policy

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

// Reasons of the LeaderReady condition.
const (
	ReasonLeadersElected         = "LeadersElected"
	ReasonFewerLeadersThanWanted = "FewerLeadersThanReplicas"
	ReasonNoNodes                = "NoNodes"
	ReasonNoReadyNodes           = "NoReadyNodes"
	ReasonNoMarkedReadyNodes     = "NoMarkedReadyNodes"
)

// Leaders returns the leader fields of the status of the pool named pool (leaderEndpoints, leaderNum,
// leaderLastElectedTime and the LeaderReady condition), given its spec, its current status and candidate
// nodes (any superset of its members, as for Status). now stamps what changes.
//
// Without leader election the fields are empty. With it, a leader is a member that is Ready, has an
// InternalIP and, under the mark strategy, carries every label of leaderNodeLabelSelector. The current
// leaders that still are stay (their address follows the node's InternalIP), so leaders never flap; the
// first leaderReplicas of them by name are kept when there are too many, and the missing ones are the
// eligible nodes that come first by name. leaderLastElectedTime moves to now only when the leaders change.
// LeaderReady is True when there is at least one leader (with a reason naming a shortfall), False with
// the reason when there is none; its transition time moves only when its status does.
func Leaders(pool string, spec v1beta2.NodePoolSpec, current v1beta2.NodePoolStatus, nodes []*corev1.Node, now metav1.Time) v1beta2.NodePoolStatus {
	var out v1beta2.NodePoolStatus
	if !spec.EnableLeaderElection {
		return out
	}
	replicas := int(spec.LeaderReplicas)
	if replicas < 1 {
		replicas = 1
	}
	members, ready := 0, 0
	eligible := map[string]string{} // node name -> InternalIP
	seen := map[string]bool{}
	for _, n := range nodes {
		if n == nil || seen[n.Name] || DesiredPool(n) != pool {
			continue
		}
		seen[n.Name] = true
		members++
		ip := InternalIP(n)
		if !NodeReady(n) || ip == "" {
			continue
		}
		ready++
		if spec.LeaderElectionStrategy == v1beta2.ElectionStrategyMark && !carries(n, spec.LeaderNodeLabelSelector) {
			continue
		}
		eligible[n.Name] = ip
	}

	var leaders []v1beta2.Leader
	chosen := map[string]bool{}
	for _, l := range current.LeaderEndpoints {
		if ip, ok := eligible[l.NodeName]; ok && !chosen[l.NodeName] {
			leaders = append(leaders, v1beta2.Leader{NodeName: l.NodeName, Address: ip})
			chosen[l.NodeName] = true
		}
	}
	sortLeaders(leaders)
	if len(leaders) > replicas {
		leaders = leaders[:replicas]
	}
	names := make([]string, 0, len(eligible))
	for name := range eligible {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if len(leaders) >= replicas {
			break
		}
		if !chosen[name] {
			leaders = append(leaders, v1beta2.Leader{NodeName: name, Address: eligible[name]})
			chosen[name] = true
		}
	}
	sortLeaders(leaders)

	out.LeaderEndpoints = leaders
	out.LeaderNum = int32(len(leaders))
	out.LeaderLastElectedTime = current.LeaderLastElectedTime.DeepCopy()
	if !sameLeaders(leaders, current.LeaderEndpoints) {
		t := now
		out.LeaderLastElectedTime = &t
	}

	cond := v1beta2.NodePoolCondition{Type: v1beta2.LeaderReady, Status: corev1.ConditionTrue}
	switch {
	case len(leaders) == replicas:
		cond.Reason = ReasonLeadersElected
		cond.Message = fmt.Sprintf("%d of %d leaders elected: %s", len(leaders), replicas, leaderNames(leaders))
	case len(leaders) > 0:
		cond.Reason = ReasonFewerLeadersThanWanted
		cond.Message = fmt.Sprintf("%d of %d leaders elected (%s): %s", len(leaders), replicas, leaderNames(leaders),
			whyNoMore(spec, members, ready, len(eligible)))
	default:
		cond.Status = corev1.ConditionFalse
		switch {
		case members == 0:
			cond.Reason = ReasonNoNodes
		case ready == 0:
			cond.Reason = ReasonNoReadyNodes
		default:
			cond.Reason = ReasonNoMarkedReadyNodes
		}
		cond.Message = "no leader can be elected: " + whyNoMore(spec, members, ready, len(eligible))
	}
	cond.LastTransitionTime = now
	for _, c := range current.Conditions {
		if c.Type == cond.Type && c.Status == cond.Status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
	}
	out.Conditions = []v1beta2.NodePoolCondition{cond}
	return out
}

// whyNoMore says why no more nodes can lead.
func whyNoMore(spec v1beta2.NodePoolSpec, members, ready, eligible int) string {
	mark := spec.LeaderElectionStrategy == v1beta2.ElectionStrategyMark
	switch {
	case members == 0:
		return "the pool has no nodes"
	case mark:
		return fmt.Sprintf("%d of the pool's %d nodes are Ready with an InternalIP, %d of them with the labels %s",
			ready, members, eligible, labelString(spec.LeaderNodeLabelSelector))
	default:
		return fmt.Sprintf("%d of the pool's %d nodes are Ready with an InternalIP", ready, members)
	}
}

// InternalIP returns the node's first InternalIP address, "" when it has none.
func InternalIP(node *corev1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			return a.Address
		}
	}
	return ""
}

// carries reports whether the node has every label of selector.
func carries(node *corev1.Node, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func sortLeaders(leaders []v1beta2.Leader) {
	sort.Slice(leaders, func(i, j int) bool { return leaders[i].NodeName < leaders[j].NodeName })
}

func sameLeaders(a, b []v1beta2.Leader) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func leaderNames(leaders []v1beta2.Leader) string {
	names := make([]string, len(leaders))
	for i, l := range leaders {
		names[i] = l.NodeName
	}
	return strings.Join(names, ", ")
}

func labelString(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}
