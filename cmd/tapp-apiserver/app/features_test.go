package app

import (
	"testing"

	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The watch cache keeps no snapshots unless --feature-gates asks for them.
func TestListFromCacheSnapshotIsOffUnlessAskedFor(t *testing.T) {
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.ListFromCacheSnapshot) {
		t.Fatal("ListFromCacheSnapshot is on by default")
	}
	gate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := gate.Set("ListFromCacheSnapshot=true"); err != nil {
		t.Fatal(err)
	}
	if !gate.Enabled(genericfeatures.ListFromCacheSnapshot) {
		t.Fatal("--feature-gates=ListFromCacheSnapshot=true leaves it off")
	}
}
