package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/fuzzer"
)

// TestRoundTripTypes fuzzes internal YurtAppDaemons, YurtAppSets and NodePools and checks that they survive
// internal -> each version (v1alpha1, v1beta1) -> JSON and protobuf -> that version (defaulted) -> internal unchanged.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripProtobufTestForAPIGroup(t, Install, fuzzer.Funcs)
}
