// Package yurtappdaemon is the REST storage of apps.openyurt.io YurtAppDaemons and their status: the
// strategies (strategy.go), the storage with its size guard, its request path (the strategic merge patch step,
// see package registry/requestpath) and its table printer (storage.go).
package yurtappdaemon

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

const resetFieldsVersion = fieldpath.APIVersion("apps.openyurt.io/v1alpha1")

// GetAttrs returns the labels and selectable fields of a YurtAppDaemon.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	if _, ok := obj.(*openyurt.YurtAppDaemon); !ok {
		return nil, nil, fmt.Errorf("expected a YurtAppDaemon, got %T", obj)
	}
	return registry.ObjectMetaAttrs(obj, true)
}

// Match selects YurtAppDaemons by label and field selectors.
var Match = registry.Matcher(GetAttrs)

type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of the main YurtAppDaemon resource.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

func (strategy) NamespaceScoped() bool { return true }

// GetResetFields says that writes to the main resource never change status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.StatusResetFields(resetFieldsVersion)
}

// PrepareForCreate drops any client-sent status, records the template kind and starts the generation at 1.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	yad := obj.(*openyurt.YurtAppDaemon)
	yad.Status = openyurt.YurtAppDaemonStatus{TemplateType: templateType(yad)}
	yad.Generation = 1
}

// PrepareForUpdate keeps the stored status and bumps the generation when the spec changes.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newYAD, oldYAD := obj.(*openyurt.YurtAppDaemon), old.(*openyurt.YurtAppDaemon)
	newYAD.Status = oldYAD.Status
	if !apiequality.Semantic.DeepEqual(newYAD.Spec, oldYAD.Spec) {
		newYAD.Generation = oldYAD.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateYurtAppDaemon(obj.(*openyurt.YurtAppDaemon))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (strategy) Canonicalize(runtime.Object) {}

func (strategy) AllowCreateOnUpdate() bool { return false }

func (strategy) AllowUnconditionalUpdate() bool { return true }

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateYurtAppDaemonUpdate(obj.(*openyurt.YurtAppDaemon), old.(*openyurt.YurtAppDaemon))
}

func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// templateType is the kind of workload the spec asks for; "" when it holds none or both templates, which
// validation refuses.
func templateType(yad *openyurt.YurtAppDaemon) openyurt.TemplateType {
	t := &yad.Spec.WorkloadTemplate
	return openyurt.WorkloadTemplateType(t.DeploymentTemplate != nil, t.StatefulSetTemplate != nil)
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
	newYAD, oldYAD := obj.(*openyurt.YurtAppDaemon), old.(*openyurt.YurtAppDaemon)
	newYAD.Spec = oldYAD.Spec
	metav1.ResetObjectMetaForStatus(newYAD, oldYAD)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateYurtAppDaemonStatusUpdate(obj.(*openyurt.YurtAppDaemon), old.(*openyurt.YurtAppDaemon))
}

var (
	_ rest.RESTCreateUpdateStrategy  = strategy{}
	_ rest.RESTDeleteStrategy        = strategy{}
	_ rest.ResetFieldsStrategy       = strategy{}
	_ rest.UpdateResetFieldsStrategy = statusStrategy{}
)
