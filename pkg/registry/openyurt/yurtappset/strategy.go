// Package yurtappset is the REST storage of apps.openyurt.io YurtAppSets and their status: the strategies
// (strategy.go), the storage with its size guard, its request path (the strategic merge patch step, see
// package registry/requestpath) and its table printer (storage.go).
package yurtappset

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/validation"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

const resetFieldsVersion = fieldpath.APIVersion("apps.openyurt.io/v1beta1")

// GetAttrs returns the labels and selectable fields of a YurtAppSet.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	if _, ok := obj.(*openyurt.YurtAppSet); !ok {
		return nil, nil, fmt.Errorf("expected a YurtAppSet, got %T", obj)
	}
	return registry.ObjectMetaAttrs(obj, true)
}

// Match selects YurtAppSets by label and field selectors.
var Match = registry.Matcher(GetAttrs)

type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of the main YurtAppSet resource.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

func (strategy) NamespaceScoped() bool { return true }

// GetResetFields says that writes to the main resource never change status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.StatusResetFields(resetFieldsVersion)
}

// PrepareForCreate drops any client-sent status and starts the generation at 1.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	yas := obj.(*openyurt.YurtAppSet)
	yas.Status = openyurt.YurtAppSetStatus{}
	yas.Generation = 1
}

// PrepareForUpdate keeps the stored status and bumps the generation when the spec changes.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newYAS, oldYAS := obj.(*openyurt.YurtAppSet), old.(*openyurt.YurtAppSet)
	newYAS.Status = oldYAS.Status
	if !apiequality.Semantic.DeepEqual(newYAS.Spec, oldYAS.Spec) {
		newYAS.Generation = oldYAS.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateYurtAppSet(obj.(*openyurt.YurtAppSet))
}

func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*openyurt.YurtAppSet))
}

func (strategy) Canonicalize(runtime.Object) {}

func (strategy) AllowCreateOnUpdate() bool { return false }

func (strategy) AllowUnconditionalUpdate() bool { return true }

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateYurtAppSetUpdate(obj.(*openyurt.YurtAppSet), old.(*openyurt.YurtAppSet))
}

func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return warnings(obj.(*openyurt.YurtAppSet))
}

// warnings says when a YurtAppSet, or one of its tweaks, selects no pool at all: valid, but it does nothing.
func warnings(yas *openyurt.YurtAppSet) []string {
	var out []string
	if yas.Spec.NodePoolSelector == nil && len(yas.Spec.Pools) == 0 {
		out = append(out, "spec.nodepoolSelector and spec.pools are both empty: no workload is created "+
			"(use nodepoolSelector: {} to select every NodePool)")
	}
	for i, t := range yas.Spec.Workload.WorkloadTweaks {
		if t.NodePoolSelector == nil && len(t.Pools) == 0 {
			out = append(out, fmt.Sprintf("spec.workload.workloadTweaks[%d] has neither nodepoolSelector nor pools: it applies to no pool", i))
		}
	}
	return out
}

type statusStrategy struct {
	strategy
}

// NewStatusStrategy returns the strategy of the status subresource.
func NewStatusStrategy(typer runtime.ObjectTyper) statusStrategy {
	return statusStrategy{NewStrategy(typer)}
}

// GetResetFields says that writes to status never change spec or metadata.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.SpecResetFields(resetFieldsVersion)
}

// PrepareForUpdate keeps the stored spec and metadata; only status changes.
func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newYAS, oldYAS := obj.(*openyurt.YurtAppSet), old.(*openyurt.YurtAppSet)
	newYAS.Spec = oldYAS.Spec
	metav1.ResetObjectMetaForStatus(newYAS, oldYAS)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateYurtAppSetStatusUpdate(obj.(*openyurt.YurtAppSet), old.(*openyurt.YurtAppSet))
}

func (statusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

var (
	_ rest.RESTCreateUpdateStrategy  = strategy{}
	_ rest.RESTDeleteStrategy        = strategy{}
	_ rest.ResetFieldsStrategy       = strategy{}
	_ rest.UpdateResetFieldsStrategy = statusStrategy{}
)
