package policy

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

func node(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func withApplied(n *corev1.Node, a Applied) *corev1.Node {
	raw, err := json.Marshal(a)
	if err != nil {
		panic(err)
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[AppliedAnnotation] = string(raw)
	return n
}

func nodePool(name string, labels, annotations map[string]string, taints ...corev1.Taint) *v1beta2.NodePool {
	return &v1beta2.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1beta2.NodePoolSpec{Type: "Edge", Labels: labels, Annotations: annotations, Taints: taints},
	}
}

func taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

func mustApplied(t *testing.T, n *corev1.Node) *Applied {
	t.Helper()
	a, err := ReadApplied(n)
	if err != nil {
		t.Fatalf("ReadApplied: %v", err)
	}
	return a
}

func TestDesiredPool(t *testing.T) {
	tests := []struct {
		name string
		node *corev1.Node
		want string
	}{
		{"no labels", node("n", nil), ""},
		{"desired label", node("n", map[string]string{DesiredPoolLabel: "a"}), "a"},
		{"desired label wins over pool label", node("n", map[string]string{DesiredPoolLabel: "a", PoolLabel: "b"}), "a"},
		{"pool label set by someone else", node("n", map[string]string{PoolLabel: "b"}), "b"},
		{"pool label set by someone else, synced", withApplied(node("n", map[string]string{PoolLabel: "b"}), Applied{Pool: "b"}), "b"},
		{"joined through desired label, label removed: leaves", withApplied(node("n", map[string]string{PoolLabel: "a"}), Applied{Pool: "a", PoolLabel: true}), ""},
		{"empty desired label is no request", node("n", map[string]string{DesiredPoolLabel: "", PoolLabel: "b"}), "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DesiredPool(tt.node); got != tt.want {
				t.Errorf("DesiredPool = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPoolsOf(t *testing.T) {
	n := withApplied(node("n", map[string]string{DesiredPoolLabel: "c", PoolLabel: "b"}), Applied{Pool: "a"})
	if got, want := PoolsOf(n), []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("PoolsOf = %v, want %v", got, want)
	}
	if got := PoolsOf(node("n", map[string]string{DesiredPoolLabel: "a", PoolLabel: "a"})); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("PoolsOf = %v, want [a]", got)
	}
	if got := PoolsOf(node("n", nil)); len(got) != 0 {
		t.Errorf("PoolsOf = %v, want none", got)
	}
}

func TestSyncNodeJoin(t *testing.T) {
	n := node("n", map[string]string{DesiredPoolLabel: "a", "own": "x"}, taint("own", "", corev1.TaintEffectNoSchedule))
	p := nodePool("a", map[string]string{"zone": "east", PoolLabel: "evil", DesiredPoolLabel: "evil"},
		map[string]string{"note": "hi"}, taint("dedicated", "edge", corev1.TaintEffectNoSchedule))
	orig := n.DeepCopy()

	got, action := SyncNode(n, p)
	if action != ActionJoined {
		t.Fatalf("action = %q, want Joined", action)
	}
	if !reflect.DeepEqual(n, orig) {
		t.Fatalf("SyncNode modified its argument")
	}
	wantLabels := map[string]string{DesiredPoolLabel: "a", PoolLabel: "a", "own": "x", "zone": "east"}
	if !reflect.DeepEqual(got.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", got.Labels, wantLabels)
	}
	if got.Annotations["note"] != "hi" {
		t.Errorf("annotation note = %q, want hi", got.Annotations["note"])
	}
	wantTaints := []corev1.Taint{taint("own", "", corev1.TaintEffectNoSchedule), taint("dedicated", "edge", corev1.TaintEffectNoSchedule)}
	if !reflect.DeepEqual(got.Spec.Taints, wantTaints) {
		t.Errorf("taints = %v, want %v", got.Spec.Taints, wantTaints)
	}
	rec := mustApplied(t, got)
	wantRec := &Applied{Pool: "a", PoolLabel: true, Labels: map[string]string{"zone": "east"},
		Annotations: map[string]string{"note": "hi"}, Taints: []corev1.Taint{taint("dedicated", "edge", corev1.TaintEffectNoSchedule)}}
	if !reflect.DeepEqual(rec, wantRec) {
		t.Errorf("record = %+v, want %+v", rec, wantRec)
	}

	// Syncing again changes nothing and returns the node itself.
	again, action := SyncNode(got, p)
	if action != ActionNone || again != got {
		t.Errorf("second sync: action %q, same object %v; want no change", action, again == got)
	}
}

func TestSyncNodeJoinByPoolLabel(t *testing.T) {
	n := node("n", map[string]string{PoolLabel: "a"})
	got, action := SyncNode(n, nodePool("a", map[string]string{"zone": "east"}, nil))
	if action != ActionJoined {
		t.Fatalf("action = %q, want Joined", action)
	}
	if rec := mustApplied(t, got); rec.PoolLabel {
		t.Errorf("record claims the pool label, which someone else set")
	}
	if got.Labels["zone"] != "east" || got.Labels[PoolLabel] != "a" {
		t.Errorf("labels = %v", got.Labels)
	}
	// The pool is deleted: attributes are stripped, the pool label (not ours) is kept.
	left, action := SyncNode(got, nil)
	if action != ActionLeft {
		t.Fatalf("action = %q, want Left", action)
	}
	if want := map[string]string{PoolLabel: "a"}; !reflect.DeepEqual(left.Labels, want) {
		t.Errorf("labels after leaving = %v, want %v", left.Labels, want)
	}
	if _, ok := left.Annotations[AppliedAnnotation]; ok {
		t.Errorf("record kept after leaving")
	}
}

func TestSyncNodeUpdate(t *testing.T) {
	p := nodePool("a", map[string]string{"zone": "east", "tier": "1"}, map[string]string{"note": "hi", "old": "x"},
		taint("t1", "", corev1.TaintEffectNoSchedule), taint("t2", "v", corev1.TaintEffectNoExecute))
	joined, _ := SyncNode(node("n", map[string]string{DesiredPoolLabel: "a"}, taint("own", "", corev1.TaintEffectPreferNoSchedule)), p)
	// Someone sets a timeAdded on the NoExecute taint; it must be kept.
	added := metav1.Now()
	for i := range joined.Spec.Taints {
		if joined.Spec.Taints[i].Key == "t2" {
			joined.Spec.Taints[i].TimeAdded = &added
		}
	}

	// The pool drops label tier, annotation old and taint t1, changes zone and t2's value, adds label new.
	p2 := nodePool("a", map[string]string{"zone": "west", "new": "y"}, map[string]string{"note": "hi"},
		taint("t2", "w", corev1.TaintEffectNoExecute))
	got, action := SyncNode(joined, p2)
	if action != ActionUpdated {
		t.Fatalf("action = %q, want Updated", action)
	}
	wantLabels := map[string]string{DesiredPoolLabel: "a", PoolLabel: "a", "zone": "west", "new": "y"}
	if !reflect.DeepEqual(got.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", got.Labels, wantLabels)
	}
	if _, ok := got.Annotations["old"]; ok || got.Annotations["note"] != "hi" {
		t.Errorf("annotations = %v, want note kept and old removed", got.Annotations)
	}
	wantTaints := []corev1.Taint{taint("own", "", corev1.TaintEffectPreferNoSchedule), taint("t2", "w", corev1.TaintEffectNoExecute)}
	if !reflect.DeepEqual(got.Spec.Taints, wantTaints) {
		t.Errorf("taints = %v, want %v", got.Spec.Taints, wantTaints)
	}

	// Unchanged pool: the timeAdded of an unchanged taint is kept and the taint order is stable.
	same, action := SyncNode(joined, p)
	if action != ActionNone || same != joined {
		t.Errorf("unchanged pool: action %q; want no change", action)
	}
}

func TestSyncNodeLeave(t *testing.T) {
	p := nodePool("a", map[string]string{"zone": "east", "tier": "1"}, map[string]string{"note": "hi"},
		taint("t1", "", corev1.TaintEffectNoSchedule))
	joined, _ := SyncNode(node("n", map[string]string{DesiredPoolLabel: "a", "own": "x"}), p)
	// The user changes tier on the node and removes the desired label.
	joined.Labels["tier"] = "2"
	delete(joined.Labels, DesiredPoolLabel)
	if DesiredPool(joined) != "" {
		t.Fatalf("DesiredPool after removing the desired label = %q, want none", DesiredPool(joined))
	}
	got, action := SyncNode(joined, nil)
	if action != ActionLeft {
		t.Fatalf("action = %q, want Left", action)
	}
	if want := map[string]string{"own": "x", "tier": "2"}; !reflect.DeepEqual(got.Labels, want) {
		t.Errorf("labels = %v, want %v (pool label and zone stripped, changed tier kept)", got.Labels, want)
	}
	if len(got.Annotations) != 0 || len(got.Spec.Taints) != 0 {
		t.Errorf("annotations %v, taints %v; want none", got.Annotations, got.Spec.Taints)
	}
}

func TestSyncNodeMove(t *testing.T) {
	a := nodePool("a", map[string]string{"zone": "east"}, nil, taint("ta", "", corev1.TaintEffectNoSchedule))
	b := nodePool("b", map[string]string{"rack": "2"}, nil, taint("tb", "", corev1.TaintEffectNoSchedule))
	inA, _ := SyncNode(node("n", map[string]string{DesiredPoolLabel: "a"}), a)
	inA.Labels[DesiredPoolLabel] = "b"
	got, action := SyncNode(inA, b)
	if action != ActionJoined {
		t.Fatalf("action = %q, want Joined", action)
	}
	wantLabels := map[string]string{DesiredPoolLabel: "b", PoolLabel: "b", "rack": "2"}
	if !reflect.DeepEqual(got.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", got.Labels, wantLabels)
	}
	if want := []corev1.Taint{taint("tb", "", corev1.TaintEffectNoSchedule)}; !reflect.DeepEqual(got.Spec.Taints, want) {
		t.Errorf("taints = %v, want %v", got.Spec.Taints, want)
	}
	if rec := mustApplied(t, got); rec.Pool != "b" {
		t.Errorf("record pool = %q, want b", rec.Pool)
	}
}

func TestSyncNodeDesiredPoolMissing(t *testing.T) {
	// The node asks for pool c, which does not exist: what pool a applied is stripped, and the node carries
	// no pool label until c is created.
	a := nodePool("a", map[string]string{"zone": "east"}, nil)
	inA, _ := SyncNode(node("n", map[string]string{DesiredPoolLabel: "a"}), a)
	inA.Labels[DesiredPoolLabel] = "c"
	got, action := SyncNode(inA, nil)
	if action != ActionLeft {
		t.Fatalf("action = %q, want Left", action)
	}
	if want := map[string]string{DesiredPoolLabel: "c"}; !reflect.DeepEqual(got.Labels, want) {
		t.Errorf("labels = %v, want %v", got.Labels, want)
	}
	// A node that was never synced and asks for a missing pool is left alone.
	n := node("m", map[string]string{DesiredPoolLabel: "c"})
	if got, action := SyncNode(n, nil); action != ActionNone || got != n {
		t.Errorf("unsynced node, missing pool: action %q; want none", action)
	}
}

func TestSyncNodeTaintReplacedByKeyAndEffect(t *testing.T) {
	n := node("n", map[string]string{DesiredPoolLabel: "a"}, taint("k", "mine", corev1.TaintEffectNoSchedule), taint("k", "", corev1.TaintEffectNoExecute))
	got, _ := SyncNode(n, nodePool("a", nil, nil, taint("k", "pool", corev1.TaintEffectNoSchedule)))
	want := []corev1.Taint{taint("k", "pool", corev1.TaintEffectNoSchedule), taint("k", "", corev1.TaintEffectNoExecute)}
	if !reflect.DeepEqual(got.Spec.Taints, want) {
		t.Errorf("taints = %v, want %v", got.Spec.Taints, want)
	}
}

func TestSyncNodeBadRecord(t *testing.T) {
	n := node("n", map[string]string{DesiredPoolLabel: "a"})
	n.Annotations = map[string]string{AppliedAnnotation: "{not json"}
	if _, err := ReadApplied(n); err == nil {
		t.Fatalf("ReadApplied accepted a broken record")
	}
	got, action := SyncNode(n, nodePool("a", map[string]string{"zone": "east"}, nil))
	if action != ActionJoined {
		t.Fatalf("action = %q, want Joined", action)
	}
	if rec := mustApplied(t, got); rec == nil || rec.Pool != "a" {
		t.Errorf("record = %+v, want a fresh record of pool a", rec)
	}
}
