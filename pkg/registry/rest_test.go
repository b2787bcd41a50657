package registry_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/nodepool"
)

func TestRESTShortNamesAndCategories(t *testing.T) {
	for _, tc := range []struct {
		name       string
		shortNames []string
		categories []string
	}{
		{name: "both", shortNames: []string{"tapp"}, categories: []string{"all"}},
		{name: "no categories", shortNames: []string{"np"}},
		{name: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &genericregistry.Store{}
			r := registry.NewREST(store, tc.shortNames, tc.categories)
			if r.Store != store {
				t.Errorf("REST does not embed the given store")
			}
			var sn rest.ShortNamesProvider = r
			var cp rest.CategoriesProvider = r
			if got := sn.ShortNames(); !reflect.DeepEqual(got, tc.shortNames) {
				t.Errorf("ShortNames = %v, want %v", got, tc.shortNames)
			}
			if got := cp.Categories(); !reflect.DeepEqual(got, tc.categories) {
				t.Errorf("Categories = %v, want %v", got, tc.categories)
			}
		})
	}
}

func TestNewStatusRESTUsesStatusStrategyOnACopy(t *testing.T) {
	scheme := runtime.NewScheme()
	mainStrategy := nodepool.NewStrategy(scheme)
	statusStrategy := nodepool.NewStatusStrategy(scheme)
	main := &genericregistry.Store{
		NewFunc:             func() runtime.Object { return &openyurt.NodePool{} },
		CreateStrategy:      mainStrategy,
		UpdateStrategy:      mainStrategy,
		ResetFieldsStrategy: mainStrategy,
	}
	status := registry.NewStatusREST(main, statusStrategy)

	// The main store keeps its own strategies.
	if !reflect.DeepEqual(main.GetResetFields(), mainStrategy.GetResetFields()) {
		t.Errorf("main store reset fields changed to %v", main.GetResetFields())
	}
	if !reflect.DeepEqual(main.UpdateStrategy, rest.RESTUpdateStrategy(mainStrategy)) {
		t.Errorf("main store update strategy changed to %T", main.UpdateStrategy)
	}
	// The status store resets spec and metadata, not status.
	if got, want := status.GetResetFields(), statusStrategy.GetResetFields(); !reflect.DeepEqual(got, want) {
		t.Errorf("status reset fields = %v, want %v", got, want)
	}
	if reflect.DeepEqual(status.GetResetFields(), main.GetResetFields()) {
		t.Errorf("status and main stores share reset fields %v", status.GetResetFields())
	}
	if _, ok := status.New().(*openyurt.NodePool); !ok {
		t.Errorf("New() = %T, want *openyurt.NodePool", status.New())
	}
	status.Destroy() // must not touch the main store's backend
}
