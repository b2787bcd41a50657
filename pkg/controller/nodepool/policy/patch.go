package policy

import (
	"encoding/json"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// NodePatch returns the JSON patch (RFC 6902) that turns node into updated, the result of SyncNode, by
// touching only what the controller manages: labels, annotations and taints. The node is also written by
// its kubelet and other controllers, so the patch carries its own preconditions instead of the whole
// object:
//   - a label or annotation that is removed is first tested to still hold the value it had in node (a value
//     someone else changed in the meantime fails the patch instead of being deleted); one that is set is set
//     whatever it holds, as a pool's attributes overwrite other values;
//   - when node has no labels (or no annotations) the map is added whole, after a test of node's
//     resourceVersion, since adding it would replace a map written in the meantime;
//   - taints are a list without merge keys (a strategic merge patch replaces it whole, as a JSON merge patch
//     does), and the node lifecycle controller taints nodes concurrently, so a change of taints replaces the
//     list after a test of node's resourceVersion: a node written since it was read fails the patch.
//
// A patch whose test fails is refused by the API server (422 Invalid); a resourceVersion that changed can
// also be reported as a conflict. Either way the caller reads the node again and recomputes. nil means
// nothing changes.
func NodePatch(node, updated *corev1.Node) ([]byte, error) {
	var ops []patchOp
	whole := false
	ops, w := mapOps(ops, "/metadata/labels", node.Labels, updated.Labels)
	whole = whole || w
	ops, w = mapOps(ops, "/metadata/annotations", node.Annotations, updated.Annotations)
	whole = whole || w
	if !apiequality.Semantic.DeepEqual(nilIfEmpty(node.Spec.Taints), nilIfEmpty(updated.Spec.Taints)) {
		whole = true
		if len(updated.Spec.Taints) == 0 {
			ops = append(ops, patchOp{Op: "remove", Path: "/spec/taints"})
		} else {
			ops = append(ops, patchOp{Op: "add", Path: "/spec/taints", Value: updated.Spec.Taints})
		}
	}
	if len(ops) == 0 {
		return nil, nil
	}
	if whole {
		ops = append([]patchOp{{Op: "test", Path: "/metadata/resourceVersion", Value: node.ResourceVersion}}, ops...)
	}
	return json.Marshal(ops)
}

// patchOp is one operation of a JSON patch.
type patchOp struct {
	Op    string
	Path  string
	Value any
}

// MarshalJSON writes the value of every operation but remove (a test of "" must carry it).
func (o patchOp) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// mapOps appends the operations that turn the string map at path from old into cur, in key order, and
// reports whether they need the object's resourceVersion tested (the map is added whole).
func mapOps(ops []patchOp, path string, old, cur map[string]string) ([]patchOp, bool) {
	if equalMaps(old, cur) {
		return ops, false
	}
	if len(old) == 0 {
		return append(ops, patchOp{Op: "add", Path: path, Value: cur}), true
	}
	keys := make([]string, 0, len(old)+len(cur))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range cur {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := path + "/" + escapePointer(k)
		v, keep := cur[k]
		switch {
		case !keep:
			ops = append(ops, patchOp{Op: "test", Path: p, Value: old[k]}, patchOp{Op: "remove", Path: p})
		case v != old[k] || !has(old, k):
			ops = append(ops, patchOp{Op: "add", Path: p, Value: v})
		}
	}
	return ops, false
}

func has(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// escapePointer escapes a key for a JSON pointer (RFC 6901): "~" as "~0", "/" as "~1".
func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
