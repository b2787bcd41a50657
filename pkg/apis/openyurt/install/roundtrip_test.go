package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/fuzzer"
)

// TestRoundTripTypes fuzzes internal YurtAppDaemons and NodePools and checks that they survive
// internal -> v1alpha1 -> JSON -> v1alpha1 (defaulted) -> internal unchanged.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripTestForAPIGroup(t, Install, fuzzer.Funcs)
}
