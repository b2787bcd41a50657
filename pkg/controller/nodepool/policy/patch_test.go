package policy

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

// applyPatch applies patch to n as the API server does and returns the result, or the patch's error.
func applyPatch(t *testing.T, n *corev1.Node, patch []byte) (*corev1.Node, error) {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("decoding %s: %v", patch, err)
	}
	raw, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(raw)
	if err != nil {
		return nil, err
	}
	got := &corev1.Node{}
	if err := json.Unmarshal(out, got); err != nil {
		t.Fatal(err)
	}
	return got, nil
}

func TestNodePatch(t *testing.T) {
	rv := func(n *corev1.Node) *corev1.Node {
		n.ResourceVersion = "7"
		n.Status.Phase = corev1.NodeRunning
		return n
	}
	edge := taint("edge", "a", corev1.TaintEffectNoSchedule)
	notReady := taint("node.kubernetes.io/not-ready", "", corev1.TaintEffectNoExecute)
	tests := []struct {
		name string
		node *corev1.Node
		pool *v1beta2.NodePool
		want string // the exact patch, "" for none
	}{
		{
			name: "in line: no patch",
			node: rv(node("n", map[string]string{"kubernetes.io/hostname": "n"})),
		},
		{
			name: "joins: labels set key by key, annotations added whole and taints replaced after a resourceVersion test",
			node: rv(node("n", map[string]string{"kubernetes.io/hostname": "n", DesiredPoolLabel: "a"}, notReady)),
			pool: nodePool("a", map[string]string{"zone": "east"}, nil, edge),
			want: `[{"op":"test","path":"/metadata/resourceVersion","value":"7"},` +
				`{"op":"add","path":"/metadata/labels/apps.openyurt.io~1nodepool","value":"a"},` +
				`{"op":"add","path":"/metadata/labels/zone","value":"east"},` +
				`{"op":"add","path":"/metadata/annotations","value":{"nodepool.openyurt.io/previous-attributes":"{\"pool\":\"a\",\"poolLabel\":true,\"labels\":{\"zone\":\"east\"},\"taints\":[{\"key\":\"edge\",\"value\":\"a\",\"effect\":\"NoSchedule\"}]}"}},` +
				`{"op":"add","path":"/spec/taints","value":[{"key":"node.kubernetes.io/not-ready","effect":"NoExecute"},{"key":"edge","value":"a","effect":"NoSchedule"}]}]`,
		},
		{
			name: "a label removed from the pool: tested then removed, no resourceVersion test",
			node: rv(withApplied(node("n", map[string]string{PoolLabel: "a", "zone": "east", "tier": ""}), Applied{Pool: "a", Labels: map[string]string{"zone": "east", "tier": ""}})),
			pool: nodePool("a", map[string]string{"zone": "east"}, nil),
			want: `[{"op":"test","path":"/metadata/labels/tier","value":""},` +
				`{"op":"remove","path":"/metadata/labels/tier"},` +
				`{"op":"add","path":"/metadata/annotations/nodepool.openyurt.io~1previous-attributes","value":"{\"pool\":\"a\",\"labels\":{\"zone\":\"east\"}}"}]`,
		},
		{
			name: "leaves: every applied key and the taint removed",
			node: rv(withApplied(node("n", map[string]string{PoolLabel: "a", "zone": "east"}, edge), Applied{Pool: "a", PoolLabel: true, Labels: map[string]string{"zone": "east"}, Taints: []corev1.Taint{edge}})),
			want: `[{"op":"test","path":"/metadata/resourceVersion","value":"7"},` +
				`{"op":"test","path":"/metadata/labels/apps.openyurt.io~1nodepool","value":"a"},` +
				`{"op":"remove","path":"/metadata/labels/apps.openyurt.io~1nodepool"},` +
				`{"op":"test","path":"/metadata/labels/zone","value":"east"},` +
				`{"op":"remove","path":"/metadata/labels/zone"},` +
				`{"op":"test","path":"/metadata/annotations/nodepool.openyurt.io~1previous-attributes","value":"{\"pool\":\"a\",\"poolLabel\":true,\"labels\":{\"zone\":\"east\"},\"taints\":[{\"key\":\"edge\",\"value\":\"a\",\"effect\":\"NoSchedule\"}]}"},` +
				`{"op":"remove","path":"/metadata/annotations/nodepool.openyurt.io~1previous-attributes"},` +
				`{"op":"remove","path":"/spec/taints"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			updated, _ := SyncNode(tt.node, tt.pool)
			patch, err := NodePatch(tt.node, updated)
			if err != nil {
				t.Fatal(err)
			}
			if string(patch) != tt.want {
				t.Fatalf("patch =\n%s\nwant\n%s", patch, tt.want)
			}
			if patch == nil {
				return
			}
			got, err := applyPatch(t, tt.node, patch)
			if err != nil {
				t.Fatalf("applying the patch to the node it was computed from: %v", err)
			}
			if !sameNode(got, updated) || !apiequality.Semantic.DeepEqual(got.Status, tt.node.Status) {
				t.Errorf("patched node = %+v, want %+v", got, updated)
			}
		})
	}
}

// TestNodePatchPreconditions: a patch computed from a node read before someone else wrote it fails
// instead of overwriting their write, but only where the write matters.
func TestNodePatchPreconditions(t *testing.T) {
	edge := taint("edge", "a", corev1.TaintEffectNoSchedule)
	read := withApplied(node("n", map[string]string{PoolLabel: "a", "zone": "east"}), Applied{Pool: "a", Labels: map[string]string{"zone": "east"}})
	read.ResourceVersion = "7"

	// The pool drops zone while someone sets zone=west on the node: the patch must not delete their value.
	updated, _ := SyncNode(read, nodePool("a", nil, nil))
	patch, err := NodePatch(read, updated)
	if err != nil {
		t.Fatal(err)
	}
	written := read.DeepCopy()
	written.Labels["zone"] = "west"
	written.ResourceVersion = "8"
	if _, err := applyPatch(t, written, patch); err == nil || !strings.Contains(err.Error(), "test") {
		t.Errorf("patch %s over a changed label: error %v, want a failed test", patch, err)
	}
	// A kubelet's write elsewhere (a new resourceVersion, a new label) does not stop it.
	written = read.DeepCopy()
	written.Labels["kubelet"] = "x"
	written.ResourceVersion = "8"
	got, err := applyPatch(t, written, patch)
	if err != nil {
		t.Fatalf("patch %s after an unrelated write: %v", patch, err)
	}
	if got.Labels["kubelet"] != "x" || got.Labels["zone"] != "" {
		t.Errorf("labels = %v, want kubelet kept and zone removed", got.Labels)
	}

	// The pool adds a taint while the node lifecycle controller taints the node: the patch fails.
	updated, _ = SyncNode(read, nodePool("a", map[string]string{"zone": "east"}, nil, edge))
	patch, err = NodePatch(read, updated)
	if err != nil {
		t.Fatal(err)
	}
	written = read.DeepCopy()
	written.Spec.Taints = []corev1.Taint{taint("node.kubernetes.io/unreachable", "", corev1.TaintEffectNoExecute)}
	written.ResourceVersion = "8"
	if _, err := applyPatch(t, written, patch); err == nil {
		t.Errorf("patch %s replaced taints written since the node was read", patch)
	}
}
