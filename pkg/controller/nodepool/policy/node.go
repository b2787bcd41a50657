package policy

import (
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

// Node keys read and written by the NodePool controller.
const (
	// DesiredPoolLabel on a node is the user's request that the node belong to the named pool.
	DesiredPoolLabel = openyurt.DesiredNodePoolLabel
	// PoolLabel on a node names the pool it belongs to; workloads pin their pods with it.
	PoolLabel = openyurt.NodePoolLabel
	// AppliedAnnotation on a node records, as JSON (see Applied), what the controller applied from its pool.
	AppliedAnnotation = openyurt.NodePoolAppliedAnnotation
)

// Applied is the content of AppliedAnnotation: the pool a node was synced with and what was applied.
type Applied struct {
	// Pool is the name of the pool.
	Pool string `json:"pool"`
	// PoolLabel is true when the controller set PoolLabel (the node joined through DesiredPoolLabel); it is
	// then removed when the node leaves.
	PoolLabel bool `json:"poolLabel,omitempty"`
	// Labels, Annotations and Taints are the pool's attributes as they were applied.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Taints      []corev1.Taint    `json:"taints,omitempty"`
}

// Action says what SyncNode did to a node.
type Action string

// Actions of SyncNode.
const (
	// ActionNone: the node is already as it should be.
	ActionNone Action = ""
	// ActionJoined: the node joined a pool (it had no record, or the record named another pool).
	ActionJoined Action = "Joined"
	// ActionLeft: the node left its pool; what was applied is stripped.
	ActionLeft Action = "Left"
	// ActionUpdated: the node stays in its pool and its attributes are brought up to date.
	ActionUpdated Action = "Updated"
)

// ReadApplied returns the record of node, nil when it has none. A record that cannot be decoded is
// reported as an error; the caller treats the node as having none (nothing can be stripped) and the next
// sync overwrites it.
func ReadApplied(node *corev1.Node) (*Applied, error) {
	raw, ok := node.Annotations[AppliedAnnotation]
	if !ok {
		return nil, nil
	}
	a := &Applied{}
	if err := json.Unmarshal([]byte(raw), a); err != nil {
		return nil, err
	}
	return a, nil
}

// DesiredPool returns the name of the pool node should belong to, "" for none (see the package doc).
func DesiredPool(node *corev1.Node) string {
	if p := node.Labels[DesiredPoolLabel]; p != "" {
		return p
	}
	if prev, err := ReadApplied(node); err == nil && prev != nil && prev.PoolLabel {
		return ""
	}
	return node.Labels[PoolLabel]
}

// PoolsOf returns every pool node refers to, sorted and without duplicates: the desired pool, the pool of
// its PoolLabel and the pool of its record. A change of the node matters to each of them.
func PoolsOf(node *corev1.Node) []string {
	set := map[string]bool{}
	for _, p := range []string{node.Labels[DesiredPoolLabel], node.Labels[PoolLabel]} {
		if p != "" {
			set[p] = true
		}
	}
	if prev, err := ReadApplied(node); err == nil && prev != nil && prev.Pool != "" {
		set[prev.Pool] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// SyncNode returns node as it should be when it belongs to pool (nil: it belongs to no existing pool), and
// what changed. node is not modified; the result is a copy, or node itself when nothing changes. pool must
// be the NodePool named DesiredPool(node), or nil when that is "" or does not exist.
func SyncNode(node *corev1.Node, pool *v1beta2.NodePool) (*corev1.Node, Action) {
	prev, err := ReadApplied(node)
	if err != nil {
		prev = nil
	}
	out := node.DeepCopy()

	// Strip what was applied before.
	if prev != nil {
		for k, v := range prev.Labels {
			if val, ok := out.Labels[k]; ok && val == v && !membershipKey(k) {
				delete(out.Labels, k)
			}
		}
		for k, v := range prev.Annotations {
			if val, ok := out.Annotations[k]; ok && val == v && !openyurt.IsReservedNodePoolAnnotation(k) {
				delete(out.Annotations, k)
			}
		}
		// A taint the pool still has stays where it is (re-applied below), so the node's taint order is stable.
		var stale []corev1.Taint
		for _, t := range prev.Taints {
			if pool == nil || !hasTaint(pool.Spec.Taints, t) {
				stale = append(stale, t)
			}
		}
		out.Spec.Taints = removeTaints(out.Spec.Taints, stale)
		if prev.PoolLabel && out.Labels[PoolLabel] == prev.Pool {
			delete(out.Labels, PoolLabel)
		}
	}
	delete(out.Annotations, AppliedAnnotation)

	if pool != nil {
		rec := Applied{Pool: pool.Name}
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		for k, v := range pool.Spec.Labels {
			// Validation refuses reserved keys; a pool stored before it did still never sets them.
			if membershipKey(k) {
				continue
			}
			out.Labels[k] = v
			if rec.Labels == nil {
				rec.Labels = map[string]string{}
			}
			rec.Labels[k] = v
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		for k, v := range pool.Spec.Annotations {
			// Validation refuses reserved keys; a pool stored before it did still never sets them.
			if openyurt.IsReservedNodePoolAnnotation(k) {
				continue
			}
			out.Annotations[k] = v
			if rec.Annotations == nil {
				rec.Annotations = map[string]string{}
			}
			rec.Annotations[k] = v
		}
		for _, t := range pool.Spec.Taints {
			t.TimeAdded = nil
			out.Spec.Taints = setTaint(out.Spec.Taints, node.Spec.Taints, t)
			rec.Taints = append(rec.Taints, t)
		}
		if node.Labels[DesiredPoolLabel] == pool.Name {
			out.Labels[PoolLabel] = pool.Name
			rec.PoolLabel = true
		}
		raw, _ := json.Marshal(rec) // a struct of strings and taints always encodes
		out.Annotations[AppliedAnnotation] = string(raw)
	}
	if len(out.Labels) == 0 {
		out.Labels = nil
	}
	if len(out.Annotations) == 0 {
		out.Annotations = nil
	}
	if len(out.Spec.Taints) == 0 {
		out.Spec.Taints = nil
	}

	if sameNode(node, out) {
		return node, ActionNone
	}
	switch {
	case pool != nil && (prev == nil || prev.Pool != pool.Name):
		return out, ActionJoined
	case pool == nil:
		return out, ActionLeft
	default:
		return out, ActionUpdated
	}
}

// membershipKey reports whether k is a node label the controller owns (openyurt.ReservedNodePoolLabels).
func membershipKey(k string) bool {
	return openyurt.IsReservedNodePoolLabel(k)
}

// hasTaint reports whether taints holds t (same key, value and effect).
func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for _, o := range taints {
		if o.Key == t.Key && o.Effect == t.Effect && o.Value == t.Value {
			return true
		}
	}
	return false
}

// removeTaints drops from taints every taint equal (key, value, effect) to one of remove.
func removeTaints(taints, remove []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if !hasTaint(remove, t) {
			out = append(out, t)
		}
	}
	return out
}

// setTaint puts t into taints, replacing a taint with the same key and effect. When orig (the node's
// taints before the sync) holds exactly that taint, its timeAdded is kept, so re-applying an unchanged
// taint never changes the node.
func setTaint(taints, orig []corev1.Taint, t corev1.Taint) []corev1.Taint {
	for _, o := range orig {
		if o.Key == t.Key && o.Effect == t.Effect && o.Value == t.Value {
			t.TimeAdded = o.TimeAdded
			break
		}
	}
	for i := range taints {
		if taints[i].Key == t.Key && taints[i].Effect == t.Effect {
			taints[i] = t
			return taints
		}
	}
	return append(taints, t)
}

// sameNode compares the parts SyncNode writes.
func sameNode(a, b *corev1.Node) bool {
	return equalMaps(a.Labels, b.Labels) && equalMaps(a.Annotations, b.Annotations) &&
		apiequality.Semantic.DeepEqual(nilIfEmpty(a.Spec.Taints), nilIfEmpty(b.Spec.Taints))
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func nilIfEmpty(t []corev1.Taint) []corev1.Taint {
	if len(t) == 0 {
		return nil
	}
	return t
}
