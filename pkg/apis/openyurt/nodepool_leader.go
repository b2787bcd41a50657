package openyurt

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeaderElectionStrategy is how a NodePool's leaders are chosen.
type LeaderElectionStrategy string

// Leader election strategies, as OpenYurt names them.
const (
	// ElectionStrategyRandom elects any Ready node of the pool (this server: the first by name).
	ElectionStrategyRandom LeaderElectionStrategy = "random"
	// ElectionStrategyMark elects Ready nodes of the pool carrying every label of leaderNodeLabelSelector.
	ElectionStrategyMark LeaderElectionStrategy = "mark"
)

// Defaults of the leader fields.
const (
	DefaultLeaderElectionStrategy = ElectionStrategyRandom
	DefaultLeaderReplicas         = int32(1)
)

// DefaultPoolScopeMetadata are the resources every pool shares through its leaders, as in OpenYurt:
// services and discovery.k8s.io endpointslices. Defaulting appends the ones a pool's list lacks.
func DefaultPoolScopeMetadata() []metav1.GroupVersionResource {
	return []metav1.GroupVersionResource{
		{Group: "", Version: "v1", Resource: "services"},
		{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"},
	}
}

// WithDefaultPoolScopeMetadata returns list with the entries of DefaultPoolScopeMetadata it lacks
// appended (all of them for an empty list). list is not modified.
func WithDefaultPoolScopeMetadata(list []metav1.GroupVersionResource) []metav1.GroupVersionResource {
	out := list
	copied := false
	for _, d := range DefaultPoolScopeMetadata() {
		found := false
		for _, m := range list {
			if m == d {
				found = true
				break
			}
		}
		if !found {
			if !copied {
				out = append([]metav1.GroupVersionResource(nil), list...)
				copied = true
			}
			out = append(out, d)
		}
	}
	return out
}

// IsDefaultPoolScopeMetadata reports whether list is exactly DefaultPoolScopeMetadata, in its order.
func IsDefaultPoolScopeMetadata(list []metav1.GroupVersionResource) bool {
	d := DefaultPoolScopeMetadata()
	if len(list) != len(d) {
		return false
	}
	for i := range d {
		if list[i] != d[i] {
			return false
		}
	}
	return true
}

// Leader is one elected leader of a pool.
type Leader struct {
	NodeName string
	Address  string
}

// NodePoolConditionType is the type of a NodePool condition.
type NodePoolConditionType string

// LeaderReady is True when the pool has all the leaders it asks for (or elects none), False with the
// reason otherwise.
const LeaderReady NodePoolConditionType = "LeaderReady"

// NodePoolCondition is one observation of a NodePool's state.
type NodePoolCondition struct {
	Type               NodePoolConditionType
	Status             corev1.ConditionStatus
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}
