package tapppod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Spread is the default spreading of a TApp's pods over nodes and zones (spec.spreadPolicy Spread): the
// scheduler's own default spreading applies only to pods of Services, ReplicaSets and StatefulSets it knows,
// not to a TApp's.
type Spread struct {
	// Selector is spec.selector: the pods counted in each node and zone. Topology spread counts pods of the
	// pod's namespace only, so these are the TApp's own pods unless another workload's pods carry the same
	// labels, as with a StatefulSet's spreading. matchLabelKeys is not used: on controller-revision-hash it
	// would count only the pods of one revision, and a rollout that recreates pods would lose the spread.
	Selector *metav1.LabelSelector
	// Zones adds the constraint over topology.kubernetes.io/zone. With explicit constraints the scheduler
	// scores a node that lacks one of their topology keys as the worst, so the zone constraint is only
	// added when nodes carry the label (on a cluster without zones it would disable the spread over nodes).
	Zones bool
}

// SpreadConstraints returns the constraints of s: maxSkew 1, whenUnsatisfiable ScheduleAnyway (a
// preference, never a reason to leave a pod pending), over kubernetes.io/hostname and, with s.Zones,
// topology.kubernetes.io/zone, counting the pods s.Selector matches.
func SpreadConstraints(s Spread) []corev1.TopologySpreadConstraint {
	keys := []string{corev1.LabelHostname}
	if s.Zones {
		keys = append(keys, corev1.LabelTopologyZone)
	}
	out := make([]corev1.TopologySpreadConstraint, 0, len(keys))
	for _, key := range keys {
		out = append(out, corev1.TopologySpreadConstraint{
			MaxSkew:           1,
			TopologyKey:       key,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     s.Selector.DeepCopy(),
		})
	}
	return out
}

// addSpread gives spec the constraints of s when its template set no topologySpreadConstraints: a template
// that sets its own keeps exactly those.
func addSpread(spec *corev1.PodSpec, s *Spread) {
	if s == nil || s.Selector == nil || len(spec.TopologySpreadConstraints) > 0 {
		return
	}
	spec.TopologySpreadConstraints = SpreadConstraints(*s)
}
