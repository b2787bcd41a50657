package policy

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// SelectPools returns the pools whose labels match spec.nodepoolSelector, sorted by name. An empty
// selector ({}) selects every pool; a nil selector selects none. nil entries are skipped and a name that
// appears twice is returned once. An invalid selector is an error (no pool is selected: the caller must not
// act on it as if nothing matched).
//
// pools must be the complete list: the controller must not call this (nor ComputePlan) with the result
// of a failed or partial List.
func SelectPools(yad *v1alpha1.YurtAppDaemon, pools []*v1alpha1.NodePool) ([]*v1alpha1.NodePool, error) {
	if yad.Spec.NodePoolSelector == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(yad.Spec.NodePoolSelector)
	if err != nil {
		return nil, fmt.Errorf("invalid nodepoolSelector: %w", err)
	}
	var out []*v1alpha1.NodePool
	seen := map[string]bool{}
	for _, p := range pools {
		if p == nil || seen[p.Name] || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
