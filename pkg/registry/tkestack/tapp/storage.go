package tapp

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

// Storage holds the REST storage of tapps and its subresources. Each is a requestpath.Provider: what their
// requests pass through before the generic handlers is declared in requestpath.go.
type Storage struct {
	TApp   *registry.REST
	Status *registry.StatusREST
	Scale  *ScaleREST
}

// NewStorage builds the etcd-backed storage of tapps, tapps/status and tapps/scale.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	strategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &tkestack.TApp{} },
		NewListFunc:               func() runtime.Object { return &tkestack.TAppList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  tkestack.Resource("tapps"),
		SingularQualifiedResource: tkestack.Resource("tapp"),

		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy.(rest.RESTDeleteStrategy),
		ResetFieldsStrategy: strategy,

		TableConvertor: tableConvertor,
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, err
	}

	return &Storage{
		TApp:   registry.NewREST(store, []string{"tapp"}, []string{"all"}, mainRequestPath(store)...),
		Status: registry.NewStatusREST(store, NewStatusStrategy(scheme), statusRequestPath(store)...),
		Scale:  &ScaleREST{store: store},
	}, nil
}
