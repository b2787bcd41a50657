package policy

import corev1 "k8s.io/api/core/v1"

// NodeState is what the plan needs to know about the node of a terminating pod.
type NodeState string

// Node states. Pods on NotReady, Unknown and Missing nodes are "lost".
const (
	// NodeReady: the Ready condition is True.
	NodeReady NodeState = "Ready"
	// NodeNotReady: the Ready condition is False.
	NodeNotReady NodeState = "NotReady"
	// NodeUnknown: the Ready condition is Unknown (the node stopped reporting).
	NodeUnknown NodeState = "Unknown"
	// NodeMissing: the node does not exist.
	NodeMissing NodeState = "Missing"
	// NodeNoCondition: the node exists but reports no Ready condition yet; not treated as lost.
	NodeNoCondition NodeState = "NoCondition"
)

// NodeLookup returns the state of a node by name. The controller builds it from its node lister, e.g.
// func(name string) NodeState { n, err := lister.Get(name); if err != nil { return NodeStateOf(nil) }; return NodeStateOf(n) }.
type NodeLookup func(nodeName string) NodeState

// NodeStateOf returns the state of node; nil means the node is missing.
func NodeStateOf(node *corev1.Node) NodeState {
	if node == nil {
		return NodeMissing
	}
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		switch c.Status {
		case corev1.ConditionTrue:
			return NodeReady
		case corev1.ConditionFalse:
			return NodeNotReady
		default:
			return NodeUnknown
		}
	}
	return NodeNoCondition
}

func (s NodeState) lost() bool {
	return s == NodeNotReady || s == NodeUnknown || s == NodeMissing
}
