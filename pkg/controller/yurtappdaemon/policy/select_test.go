package policy

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

func TestSelectPools(t *testing.T) {
	pools := []*v1alpha1.NodePool{
		pool("shanghai", map[string]string{"role": "edge", "nodepool.openyurt.io/type": "edge"}),
		pool("cloud-1", map[string]string{"nodepool.openyurt.io/type": "cloud"}),
		nil,
		pool("beijing", map[string]string{"role": "edge", "nodepool.openyurt.io/type": "edge"}),
		pool("hangzhou", map[string]string{"role": "edge", "zone": "east"}),
		pool("unlabelled", nil),
		pool("beijing", map[string]string{"role": "edge"}), // listed twice
	}
	cases := []struct {
		name     string
		selector *metav1.LabelSelector
		want     []string
		wantErr  bool
	}{
		{"matchLabels, sorted by name", &metav1.LabelSelector{MatchLabels: map[string]string{"role": "edge"}}, []string{"beijing", "hangzhou", "shanghai"}, false},
		{"by type label", &metav1.LabelSelector{MatchLabels: map[string]string{"nodepool.openyurt.io/type": "edge"}}, []string{"beijing", "shanghai"}, false},
		{"empty selector selects all", &metav1.LabelSelector{}, []string{"beijing", "cloud-1", "hangzhou", "shanghai", "unlabelled"}, false},
		{"nil selector selects none", nil, []string{}, false},
		{"no match", &metav1.LabelSelector{MatchLabels: map[string]string{"role": "core"}}, []string{}, false},
		{"matchExpressions", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "role", Operator: metav1.LabelSelectorOpIn, Values: []string{"edge"}},
			{Key: "zone", Operator: metav1.LabelSelectorOpDoesNotExist},
		}}, []string{"beijing", "shanghai"}, false},
		{"invalid selector", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "role", Operator: "Near"},
		}}, []string{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yad := newYAD()
			yad.Spec.NodePoolSelector = tc.selector
			got, err := SelectPools(yad, pools)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if gotNames := names(got, func(p *v1alpha1.NodePool) string { return p.Name }); !reflect.DeepEqual(gotNames, tc.want) {
				t.Errorf("SelectPools = %v, want %v", gotNames, tc.want)
			}
		})
	}
	if pools[0].Name != "shanghai" || pools[3].Name != "beijing" {
		t.Errorf("SelectPools reordered its input")
	}
}
