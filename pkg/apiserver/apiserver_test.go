package apiserver

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/tools/cache"

	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// TestCompleteLeavesTheConfig checks that Complete changes nothing of the Config, so that calling it twice
// gives two completed configurations with one handler chain each.
func TestCompleteLeavesTheConfig(t *testing.T) {
	generic := genericapiserver.NewRecommendedConfig(Codecs)
	generic.ExternalAddress = "127.0.0.1:8443"
	generic.EffectiveVersion = utilcompatibility.DefaultBuildEffectiveVersion()
	chain := reflect.ValueOf(generic.BuildHandlerChainFunc).Pointer()
	readyz := slices.Clone(generic.ReadyzChecks)
	c := &Config{GenericConfig: generic}

	first, second := c.Complete(), c.Complete()
	if got := reflect.ValueOf(generic.BuildHandlerChainFunc).Pointer(); got != chain {
		t.Errorf("Complete replaced the handler chain of the Config")
	}
	if len(generic.ReadyzChecks) != len(readyz) {
		t.Errorf("Complete added readyz checks to the Config: %d, want %d", len(generic.ReadyzChecks), len(readyz))
	}
	if generic.RequestInfoResolver != nil {
		t.Errorf("Complete completed the Config itself, not a copy")
	}
	if first.generic.Config == second.generic.Config || first.generic.Config == &generic.Config {
		t.Errorf("completed configurations share their generic configuration")
	}
	for _, cc := range []CompletedConfig{first, second} {
		if reflect.ValueOf(cc.buildChain).Pointer() != chain {
			t.Errorf("the completed configuration does not start from the Config's handler chain")
		}
	}
}

// TestRequestPaths checks that the request-path table is built from the storage map: every served storage of
// the four resources declares its steps.
func TestRequestPaths(t *testing.T) {
	groups, err := apiGroups(fakeRESTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := requestPaths(requestpath.Env{Scheme: Scheme, Codecs: Codecs}, groups...).Paths()
	want := []string{
		"apps.openyurt.io/v1alpha1/nodepools",
		"apps.openyurt.io/v1alpha1/nodepools/status",
		"apps.openyurt.io/v1alpha1/yurtappdaemons",
		"apps.openyurt.io/v1alpha1/yurtappdaemons/status",
		"apps.openyurt.io/v1beta1/nodepools",
		"apps.openyurt.io/v1beta1/nodepools/status",
		"apps.openyurt.io/v1beta1/yurtappsets",
		"apps.openyurt.io/v1beta1/yurtappsets/status",
		"apps.openyurt.io/v1beta2/nodepools",
		"apps.openyurt.io/v1beta2/nodepools/status",
		"apps.tkestack.io/v1/tapps",
		"apps.tkestack.io/v1/tapps/scale",
		"apps.tkestack.io/v1/tapps/status",
	}
	if !slices.Equal(got, want) {
		t.Errorf("request paths %q, want %q", got, want)
	}
}

// fakeRESTOptions gives every resource a storage that is never called.
type fakeRESTOptions struct{}

func (fakeRESTOptions) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{GroupResource: resource},
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object,
			func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return unusedStorage{}, func() {}, nil
		},
		ResourcePrefix: resource.String(),
	}, nil
}

// unusedStorage is a storage.Interface whose only method used is ReadinessCheck.
type unusedStorage struct{ storage.Interface }

func (unusedStorage) ReadinessCheck() error { return nil }
