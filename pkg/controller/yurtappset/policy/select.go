package policy

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
)

// SelectPools returns the pools a YurtAppSet selects, sorted by name: those named in spec.pools and those
// whose labels match spec.nodepoolSelector ({} matches every pool, nil none). missing are the names of
// spec.pools that no pool has, sorted. pools must be the complete list (never the result of a failed
// List). An invalid selector is an error.
func SelectPools(yas *v1beta1.YurtAppSet, pools []*v1alpha1.NodePool) (selected []*v1alpha1.NodePool, missing []string, err error) {
	return selectPools(yas.Spec.Pools, yas.Spec.NodePoolSelector, pools)
}

func selectPools(names []string, selector *metav1.LabelSelector, pools []*v1alpha1.NodePool) ([]*v1alpha1.NodePool, []string, error) {
	sel := labels.Nothing()
	if selector != nil {
		s, err := metav1.LabelSelectorAsSelector(selector)
		if err != nil {
			return nil, nil, fmt.Errorf("invalid nodepoolSelector: %w", err)
		}
		sel = s
	}
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	found := map[string]bool{}
	var out []*v1alpha1.NodePool
	for _, p := range pools {
		if p == nil || found[p.Name] {
			continue
		}
		if named[p.Name] || sel.Matches(labels.Set(p.Labels)) {
			found[p.Name] = true
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	var missing []string
	exists := map[string]bool{}
	for _, p := range pools {
		if p != nil {
			exists[p.Name] = true
		}
	}
	for n := range named {
		if !exists[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	return out, missing, nil
}

// Selects reports whether spec.pools (names) or spec.nodepoolSelector (selector) of a YurtAppSet select a
// pool of that name and labels; an invalid selector selects nothing. The controller uses it to map
// NodePool events to YurtAppSets.
func Selects(names []string, selector *metav1.LabelSelector, pool string, poolLabels map[string]string) bool {
	for _, n := range names {
		if n == pool {
			return true
		}
	}
	if selector == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	return err == nil && s.Matches(labels.Set(poolLabels))
}
