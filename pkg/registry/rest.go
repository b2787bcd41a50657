package registry

import (
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// REST is a generic etcd-backed store that also tells discovery its short names and categories.
type REST struct {
	*genericregistry.Store
	shortNames []string
	categories []string
}

// NewREST wraps store with the given short names and categories.
func NewREST(store *genericregistry.Store, shortNames, categories []string) *REST {
	return &REST{Store: store, shortNames: shortNames, categories: categories}
}

var (
	_ rest.ShortNamesProvider = &REST{}
	_ rest.CategoriesProvider = &REST{}
)

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string { return r.categories }
