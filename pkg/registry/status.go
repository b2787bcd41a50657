package registry

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// StatusREST serves the status subresource of a resource through a copy of its main store whose update
// strategy only lets status change.
type StatusREST struct {
	store *genericregistry.Store
	steps []requestpath.Step
}

var (
	_ rest.Patcher             = &StatusREST{}
	_ rest.ResetFieldsStrategy = &StatusREST{}
	_ requestpath.Provider     = &StatusREST{}
)

// NewStatusREST returns the status storage for main, updating through strategy, with the size guard of
// clienterrors.go. Its requests pass through ApplyMark, then through steps, before the generic handler.
func NewStatusREST(main *genericregistry.Store, strategy rest.UpdateResetFieldsStrategy, steps ...requestpath.Step) *StatusREST {
	store := *main
	store.UpdateStrategy = strategy
	store.ResetFieldsStrategy = strategy
	return &StatusREST{store: &store, steps: steps}
}

// RequestPath implements requestpath.Provider: ApplyMark, then the steps given to NewStatusREST.
func (r *StatusREST) RequestPath() []requestpath.Step {
	return append([]requestpath.Step{ApplyMark}, r.steps...)
}

// New returns an empty object of the resource.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy implements rest.Storage; the main store owns the backend.
func (r *StatusREST) Destroy() {}

// Get returns the whole object.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes the status of an object; it never creates one.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return guard{r.store}.update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints the object like the main resource does.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
