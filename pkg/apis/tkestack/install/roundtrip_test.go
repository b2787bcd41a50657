package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/fuzzer"
)

// TestRoundTripTypes fuzzes internal TApps and checks that they survive
// internal -> v1 -> JSON and protobuf -> v1 (defaulted) -> internal unchanged.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripProtobufTestForAPIGroup(t, Install, fuzzer.Funcs)
}
