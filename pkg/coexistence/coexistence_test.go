package coexistence

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var served = []schema.GroupVersionResource{
	{Group: "apps.tkestack.io", Version: "v1", Resource: "tapps"},
	{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "yurtappdaemons"},
	{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "nodepools"},
	{Group: "apps.openyurt.io", Version: "v1beta1", Resource: "nodepools"},
}

var own = types.NamespacedName{Namespace: "tapp-system", Name: "tapp-apiserver"}

func ours(name, group, version string) APIService {
	return APIService{Name: name, Group: group, Version: version, Service: &own}
}

func TestCheck(t *testing.T) {
	other := types.NamespacedName{Namespace: "kube-system", Name: "yurt-manager"}
	for _, tc := range []struct {
		name        string
		apiServices []APIService
		crds        []CRD
		// want are "Kind/Name" of the findings, in order, each with a word its message must contain.
		want [][2]string
	}{
		{name: "only our APIServices", apiServices: []APIService{
			ours("v1.apps.tkestack.io", "apps.tkestack.io", "v1"),
			ours("v1beta1.apps.openyurt.io", "apps.openyurt.io", "v1beta1"),
			ours("v1alpha1.apps.openyurt.io", "apps.openyurt.io", "v1alpha1"),
			{Name: "v1.apps", Group: "apps", Version: "v1"},
			{Name: "v1beta1.metrics.k8s.io", Group: "metrics.k8s.io", Version: "v1beta1", Service: &other},
		}},
		{name: "nothing registered yet"},
		{name: "a group-version served by kube-apiserver itself", apiServices: []APIService{
			ours("v1alpha1.apps.openyurt.io", "apps.openyurt.io", "v1alpha1"),
			{Name: "v1beta1.apps.openyurt.io", Group: "apps.openyurt.io", Version: "v1beta1"},
		}, want: [][2]string{{"APIService/v1beta1.apps.openyurt.io", "[nodepools]"}}},
		{name: "a group-version routed to another service", apiServices: []APIService{
			{Name: "v1.apps.tkestack.io", Group: "apps.tkestack.io", Version: "v1", Service: &other},
		}, want: [][2]string{{"APIService/v1.apps.tkestack.io", "kube-system/yurt-manager"}}},
		{name: "OpenYurt's NodePool CRD, in versions we serve and one we do not", crds: []CRD{
			{Name: "nodepools.apps.openyurt.io", Group: "apps.openyurt.io", Plural: "nodepools", Versions: []string{"v1alpha1", "v1beta1", "v1beta2"}},
		}, want: [][2]string{{"CustomResourceDefinition/nodepools.apps.openyurt.io", "migrate"}}},
		{name: "a CRD of our resource in another version only", crds: []CRD{
			{Name: "nodepools.apps.openyurt.io", Group: "apps.openyurt.io", Plural: "nodepools", Versions: []string{"v1beta2"}},
		}, want: [][2]string{{"CustomResourceDefinition/nodepools.apps.openyurt.io", "v1beta2"}}},
		{name: "another kind in a group-version we serve", crds: []CRD{
			{Name: "yurtappsets.apps.openyurt.io", Group: "apps.openyurt.io", Plural: "yurtappsets", Versions: []string{"v1alpha1", "v1beta1"}},
		}, want: [][2]string{{"CustomResourceDefinition/yurtappsets.apps.openyurt.io", "hides"}}},
		{name: "another kind of our group in a version we do not serve", crds: []CRD{
			{Name: "yurtappsets.apps.openyurt.io", Group: "apps.openyurt.io", Plural: "yurtappsets", Versions: []string{"v1beta2"}},
			{Name: "gateways.raven.openyurt.io", Group: "raven.openyurt.io", Plural: "gateways", Versions: []string{"v1beta1"}},
		}},
		{name: "findings sorted by kind and name", apiServices: []APIService{
			{Name: "v1alpha1.apps.openyurt.io", Group: "apps.openyurt.io", Version: "v1alpha1"},
			{Name: "v1.apps.tkestack.io", Group: "apps.tkestack.io", Version: "v1"},
		}, crds: []CRD{
			{Name: "tapps.apps.tkestack.io", Group: "apps.tkestack.io", Plural: "tapps", Versions: []string{"v1"}},
		}, want: [][2]string{
			{"APIService/v1.apps.tkestack.io", "[tapps]"},
			{"APIService/v1alpha1.apps.openyurt.io", "[nodepools yurtappdaemons]"},
			{"CustomResourceDefinition/tapps.apps.tkestack.io", "tapps.apps.tkestack.io"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(served, own, tc.apiServices, tc.crds)
			if len(got) != len(tc.want) {
				t.Fatalf("findings = %+v, want %v", got, tc.want)
			}
			for i, f := range got {
				if f.Kind+"/"+f.Name != tc.want[i][0] || !strings.Contains(f.Message, tc.want[i][1]) {
					t.Errorf("finding %d = %s/%s %q, want %s mentioning %q", i, f.Kind, f.Name, f.Message, tc.want[i][0], tc.want[i][1])
				}
			}
		})
	}
}
