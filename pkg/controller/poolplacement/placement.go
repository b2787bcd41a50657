// Package poolplacement renders what a NodePool contributes to the pods of a workload made for it, for
// every controller that runs one workload per pool (YurtAppDaemon, YurtAppSet): the pods are pinned to
// the pool's nodes with the nodeSelector apps.openyurt.io/nodepool=<pool>, added to the template's own
// nodeSelector (the template's affinity is kept: the scheduler requires both), and they tolerate the
// pool's taints (a toleration is added for each taint the template does not tolerate yet). Hash records
// the pool's part so that a change of its taints re-renders the workload of that pool only.
package poolplacement

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// NodePoolLabel pins the pods of a pool's workload to the nodes of the pool (pod nodeSelector).
const NodePoolLabel = openyurt.NodePoolLabel

// Pin adds the placement of pool (its name and taints) to a pod template, keeping everything the template
// has:
//   - nodeSelector NodePoolLabel=<pool>, added to the template's nodeSelector (a template value for that
//     key is overwritten: the workload must run in its pool); affinity is kept as is;
//   - tolerations: the template's, then Tolerations(taints) for the taints the template does not tolerate.
func Pin(t *corev1.PodTemplateSpec, pool string, taints []corev1.Taint) {
	if t.Spec.NodeSelector == nil {
		t.Spec.NodeSelector = map[string]string{}
	}
	t.Spec.NodeSelector[NodePoolLabel] = pool
	for _, tol := range Tolerations(taints) {
		taint := corev1.Taint{Key: tol.Key, Value: tol.Value, Effect: tol.Effect}
		if !Tolerated(t.Spec.Tolerations, &taint) {
			t.Spec.Tolerations = append(t.Spec.Tolerations, tol)
		}
	}
}

// Placed reports whether a pod spec is pinned to pool and tolerates every one of its taints.
func Placed(spec *corev1.PodSpec, pool string, taints []corev1.Taint) bool {
	if spec.NodeSelector[NodePoolLabel] != pool {
		return false
	}
	for i := range taints {
		if !Tolerated(spec.Tolerations, &taints[i]) {
			return false
		}
	}
	return true
}

// Tolerations returns one toleration per taint, in (key, effect, value) order: operator Equal with the
// taint's value, or Exists when the value is empty; the effect is the taint's. A taint already tolerated by
// an earlier toleration of the list gets none (no duplicates).
func Tolerations(taints []corev1.Taint) []corev1.Toleration {
	var out []corev1.Toleration
	for _, taint := range sortedTaints(taints) {
		if Tolerated(out, &taint) {
			continue
		}
		tol := corev1.Toleration{Key: taint.Key, Effect: taint.Effect, Operator: corev1.TolerationOpExists}
		if taint.Value != "" {
			tol.Operator = corev1.TolerationOpEqual
			tol.Value = taint.Value
		}
		out = append(out, tol)
	}
	return out
}

// Hash is a hash of what a pool contributes to its workload: its name and its taints (key, value and
// effect, in any order; timeAdded is left out).
func Hash(pool string, taints []corev1.Taint) string {
	sorted := sortedTaints(taints)
	for i := range sorted {
		sorted[i].TimeAdded = nil
	}
	return stablehash.Object(struct {
		Pool   string         `json:"pool"`
		Taints []corev1.Taint `json:"taints"`
	}{pool, sorted})
}

func sortedTaints(in []corev1.Taint) []corev1.Taint {
	out := append([]corev1.Taint(nil), in...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.Effect != b.Effect {
			return a.Effect < b.Effect
		}
		return a.Value < b.Value
	})
	return out
}

// Tolerated reports whether one of tols tolerates taint.
func Tolerated(tols []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tols {
		if tolerates(&tols[i], taint) {
			return true
		}
	}
	return false
}

// tolerates is the Kubernetes rule for Exists and Equal; numeric operators are not evaluated (a toleration
// using them does not count, and the pool's own toleration is added).
func tolerates(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	default:
		return false
	}
}
