package install

import (
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

// TestNodePoolHostNetworkStatesAcrossVersions: every valid internal combination of spec.hostNetwork and the
// hostnetwork annotation (the fuzzer never writes that key) passes through v1alpha1 and v1beta1, in both
// orders, unchanged, so that what a client wrote in one version is what either version reads back.
func TestNodePoolHostNetworkStatesAcrossVersions(t *testing.T) {
	scheme := newScheme(t)
	for _, tc := range []struct {
		value       string // "" for no annotation
		hostNetwork bool
	}{{"", false}, {"", true}, {"false", false}, {"False", false}, {"TRUE", true}, {"True", true}} {
		pool := &openyurt.NodePool{}
		pool.Name = "p"
		pool.Spec.Type = openyurt.Edge
		pool.Spec.HostNetwork = tc.hostNetwork
		openyurt.SetLeaderDefaults(&pool.Spec)
		pool.Annotations = map[string]string{"note": "x"}
		if tc.value != "" {
			pool.Annotations[openyurt.NodePoolHostNetworkAnnotation] = tc.value
		}
		if problem, _ := openyurt.HostNetworkAnnotationProblem(pool.Annotations, pool.Spec.HostNetwork); problem != "" {
			t.Fatalf("%q beside %t is not valid: %s", tc.value, tc.hostNetwork, problem)
		}
		for _, order := range [][]runtime.Object{
			{&v1alpha1.NodePool{}, &v1beta1.NodePool{}},
			{&v1beta1.NodePool{}, &v1alpha1.NodePool{}},
			{&v1alpha1.NodePool{}, &v1alpha1.NodePool{}},
			{&v1beta1.NodePool{}, &v1beta1.NodePool{}},
			{&v1beta2.NodePool{}, &v1alpha1.NodePool{}},
			{&v1alpha1.NodePool{}, &v1beta2.NodePool{}},
		} {
			current := runtime.Object(pool.DeepCopy())
			for _, versioned := range order {
				if err := scheme.Convert(current, versioned, nil); err != nil {
					t.Fatal(err)
				}
				internal := &openyurt.NodePool{}
				if err := scheme.Convert(versioned, internal, nil); err != nil {
					t.Fatal(err)
				}
				current = internal
			}
			if !apiequality.Semantic.DeepEqual(current, pool) {
				t.Errorf("%q beside %t through %T then %T (-want +got):\n%s", tc.value, tc.hostNetwork, order[0], order[1], diff.Diff(pool, current))
			}
		}
	}
}
