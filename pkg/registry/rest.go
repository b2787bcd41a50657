package registry

import (
	"context"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// REST is a generic etcd-backed store that also tells discovery its short names and categories, and answers
// the client errors the generic store reports as 500 with 4xx (see clienterrors.go).
type REST struct {
	*genericregistry.Store
	shortNames []string
	categories []string
	steps      []requestpath.Step
}

// NewREST wraps store with the given short names and categories, and with the size guard of clienterrors.go.
// Its requests pass through ApplyMark (the guard's request-path half), then through steps, before the generic
// handler (see package requestpath).
func NewREST(store *genericregistry.Store, shortNames, categories []string, steps ...requestpath.Step) *REST {
	return &REST{Store: store, shortNames: shortNames, categories: categories, steps: steps}
}

var (
	_ rest.ShortNamesProvider = &REST{}
	_ rest.CategoriesProvider = &REST{}
	_ requestpath.Provider    = &REST{}
)

// RequestPath implements requestpath.Provider: ApplyMark, then the steps given to NewREST.
func (r *REST) RequestPath() []requestpath.Step {
	return append([]requestpath.Step{ApplyMark}, r.steps...)
}

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string { return r.categories }

// Create refuses a resourceVersion and an object too large to store, then creates.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return guard{r.Store}.create(ctx, obj, createValidation, options)
}

// Update refuses a resourceVersion that is not a number, an object too large to store and an apply body the
// schema refuses, then updates.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return guard{r.Store}.update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// Watch refuses a resourceVersion that is not a number, then watches.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return guard{r.Store}.watch(ctx, options)
}
