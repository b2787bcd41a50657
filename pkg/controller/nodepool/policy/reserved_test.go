package policy

import (
	"testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// TestSyncNodeSkipsReservedKeys: a pool stored before validation refused the reserved keys never sets them
// on a node; the controller's keys are the API's reserved keys.
func TestSyncNodeSkipsReservedKeys(t *testing.T) {
	for _, k := range openyurt.ReservedNodePoolLabels {
		if !membershipKey(k) {
			t.Errorf("reserved label %s is not a membership key", k)
		}
	}
	if !openyurt.IsReservedNodePoolAnnotation(AppliedAnnotation) {
		t.Errorf("the applied record annotation %s is not reserved", AppliedAnnotation)
	}
	forged := `{"pool":"other","poolLabel":true,"labels":{"own":"x"}}`
	n := node("n", map[string]string{DesiredPoolLabel: "a", "own": "x"})
	p := nodePool("a", map[string]string{PoolLabel: "evil", DesiredPoolLabel: "evil", "zone": "z"},
		map[string]string{AppliedAnnotation: forged, "note": "hi"})
	got, _ := SyncNode(n, p)
	if got.Labels[PoolLabel] != "a" || got.Labels[DesiredPoolLabel] != "a" || got.Labels["zone"] != "z" {
		t.Errorf("labels = %v", got.Labels)
	}
	applied := mustApplied(t, got)
	if applied.Pool != "a" || applied.Annotations[AppliedAnnotation] != "" || applied.Labels[PoolLabel] != "" {
		t.Errorf("record = %+v: a reserved key of the pool was applied", applied)
	}
	if got.Annotations["note"] != "hi" {
		t.Errorf("annotations = %v", got.Annotations)
	}
}
