package tapp

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestCreatedPodsAreSpreadOverTheNodesTopology: the pods the controller creates carry the default spread
// over nodes, and over zones once its node cache shows a node with a zone; spreadPolicy None gives none.
func TestCreatedPodsAreSpreadOverTheNodesTopology(t *testing.T) {
	for _, c := range []struct {
		name   string
		zone   string
		policy tkestackv1.SpreadPolicyType
		want   []string
	}{
		{"nodes without zones", "", "", []string{corev1.LabelHostname}},
		{"a node with a zone", "z1", "", []string{corev1.LabelHostname, corev1.LabelTopologyZone}},
		{"None", "z1", tkestackv1.SpreadPolicyNone, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tapp := testTApp(1)
			tapp.Spec.SpreadPolicy = c.policy
			h := newHarness(t, tapp)
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0", Labels: map[string]string{corev1.LabelHostname: "node-0"}}}
			if c.zone != "" {
				node.Labels[corev1.LabelTopologyZone] = c.zone
			}
			if err := h.kubeInf.Core().V1().Nodes().Informer().GetIndexer().Add(node); err != nil {
				t.Fatal(err)
			}
			if err := h.sync(); err != nil {
				t.Fatal(err)
			}
			creates := h.actions("create", "pods")
			if len(creates) != 1 {
				t.Fatalf("%d pod creates, want 1", len(creates))
			}
			pod := creates[0].(clienttesting.CreateAction).GetObject().(*corev1.Pod)
			var keys []string
			for _, constraint := range pod.Spec.TopologySpreadConstraints {
				if constraint.WhenUnsatisfiable != corev1.ScheduleAnyway || constraint.MaxSkew != 1 ||
					constraint.LabelSelector == nil || constraint.LabelSelector.MatchLabels["app"] != "web" {
					t.Errorf("constraint %+v, want a soft one of maxSkew 1 over the TApp's selector", constraint)
				}
				keys = append(keys, constraint.TopologyKey)
			}
			if len(keys) != len(c.want) || (len(keys) > 0 && (keys[0] != c.want[0] || keys[len(keys)-1] != c.want[len(c.want)-1])) {
				t.Errorf("topology keys %v, want %v", keys, c.want)
			}
		})
	}
}
