package policy

import (
	corev1 "k8s.io/api/core/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// Topology is what the cluster's nodes offer for spreading a TApp's instances (spec.spreadPolicy).
type Topology struct {
	// Zones: nodes carry topology.kubernetes.io/zone, so instances are spread over zones as well as nodes.
	Zones bool
}

// TopologyOf returns the Topology of a cluster with nodes: Zones when at least one node has a non-empty
// topology.kubernetes.io/zone label.
func TopologyOf(nodes []*corev1.Node) Topology {
	for _, node := range nodes {
		if node != nil && node.Labels[corev1.LabelTopologyZone] != "" {
			return Topology{Zones: true}
		}
	}
	return Topology{}
}

// SpreadFor returns the default spreading of tapp's pods in a cluster of topology topo (tapppod.Spread), or
// nil when spec.spreadPolicy is None (or there is no selector to count pods with). An unset policy is
// Spread: the API does not default the field, so TApps stored before it keep their stored form.
//
// The constraints are added to the pods the controller creates whose template has no
// topologySpreadConstraints (NewPod). They are never part of what a pod is compared with: not of the
// template hashes (computed from the template), nor of the in-place update (images, resources and
// metadata), nor of the content comparison of pods with foreign hashes (PodOwner builds the pod without
// them). So a pod created before them, or before spreadPolicy changed, is neither updated nor recreated for
// them: they apply to pods created from then on.
func SpreadFor(tapp *tkestackv1.TApp, topo Topology) *tapppod.Spread {
	if tapp.Spec.SpreadPolicy == tkestackv1.SpreadPolicyNone || tapp.Spec.Selector == nil {
		return nil
	}
	return &tapppod.Spread{Selector: tapp.Spec.Selector, Zones: topo.Zones}
}
