package openyurt

// The NodePool controller puts a pool's spec.labels and spec.annotations on the pool's nodes, except for
// the node keys it owns itself: membership and its record of what it applied. A pool may not set those
// (validation refuses them, naming the key) and the controller never applies them from a pool (objects
// stored before the check keep working, the keys are skipped).

// ReservedNodePoolLabels are the node label keys a NodePool's spec.labels cannot set.
var ReservedNodePoolLabels = []string{NodePoolLabel, DesiredNodePoolLabel}

// ReservedNodePoolAnnotations are the node annotation keys a NodePool's spec.annotations cannot set.
var ReservedNodePoolAnnotations = []string{NodePoolAppliedAnnotation}

// IsReservedNodePoolLabel reports whether key is one of ReservedNodePoolLabels.
func IsReservedNodePoolLabel(key string) bool {
	return contains(ReservedNodePoolLabels, key)
}

// IsReservedNodePoolAnnotation reports whether key is one of ReservedNodePoolAnnotations.
func IsReservedNodePoolAnnotation(key string) bool {
	return contains(ReservedNodePoolAnnotations, key)
}

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}
