// Package tapp is the REST storage of apps.tkestack.io TApps: the main resource, its status and its
// scale subresource. Every piece of a TApp request's handling is here: the strategies (strategy.go,
// legacyownership.go), the storage with its size guard (storage.go, scale.go), the table printer (table.go),
// and the request path, the steps before the generic handlers, declared in requestpath.go: the
// DefaultTemplateName alias folding (legacyalias.go), the instance-key checks (instancekeys.go) and the
// strategic merge of template pools (patch.go, strategicmerge.go).
package tapp

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/validation"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

// resetFieldsVersion is the API version the reset field sets are expressed in.
const resetFieldsVersion = fieldpath.APIVersion("apps.tkestack.io/v1")

// GetAttrs returns the labels and selectable fields of a TApp.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	if _, ok := obj.(*tkestack.TApp); !ok {
		return nil, nil, fmt.Errorf("expected a TApp, got %T", obj)
	}
	return registry.ObjectMetaAttrs(obj, true)
}

// Match selects TApps by label and field selectors.
var Match = registry.Matcher(GetAttrs)

// strategy implements create, update and delete of the main resource.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of the main TApp resource.
func NewStrategy(typer runtime.ObjectTyper) rest.CreateUpdateResetFieldsStrategy {
	return strategy{typer, names.SimpleNameGenerator}
}

var _ rest.RESTDeleteStrategy = strategy{}

func (strategy) NamespaceScoped() bool { return true }

// GetResetFields says that writes to the main resource never change status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.StatusResetFields(resetFieldsVersion)
}

// PrepareForCreate drops any status the client sent, starts the generation at 1 and records the scale
// selector, which is derived from the spec.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	tapp := obj.(*tkestack.TApp)
	tapp.Status = tkestack.TAppStatus{ScaleLabelSelector: scaleSelector(tapp)}
	tapp.Generation = 1
	syncPreDeleteFinalizer(tapp)
}

// PrepareForUpdate keeps the stored status and bumps the generation when the spec changes. A value
// written under the legacy key "DefaultTemplateName" wins over the stored defaultTemplateName when the
// request left that one unchanged, so editing an old manifest and applying it again works. Ownership of the
// legacy key recorded before the API folded it into defaultTemplateName is dropped (dropLegacyOwnership).
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newTApp, oldTApp := obj.(*tkestack.TApp), old.(*tkestack.TApp)
	dropLegacyOwnership(newTApp)
	if legacy := newTApp.Spec.LegacyDefaultTemplateName; legacy != "" &&
		newTApp.Spec.DefaultTemplateName == oldTApp.Spec.DefaultTemplateName {
		newTApp.Spec.DefaultTemplateName = legacy
	}
	newTApp.Status = oldTApp.Status
	newTApp.Status.ScaleLabelSelector = scaleSelector(newTApp)
	if specChanged(&newTApp.Spec, &oldTApp.Spec) {
		newTApp.Generation = oldTApp.Generation + 1
	}
	syncPreDeleteFinalizer(newTApp)
}

// syncPreDeleteFinalizer gives a TApp with spec.lifecycle.preDelete the finalizer tkestack.PreDeleteFinalizer,
// and takes it from one without, so that deleting the TApp waits for its pods' preDelete hooks. A TApp being
// deleted is left as the request has it: finalizers cannot be added then, and the controller removes its
// own once the pods are done with.
func syncPreDeleteFinalizer(tapp *tkestack.TApp) {
	if tapp.DeletionTimestamp != nil {
		return
	}
	want := tapp.Spec.Lifecycle != nil && tapp.Spec.Lifecycle.PreDelete != nil
	has := slices.Contains(tapp.Finalizers, tkestack.PreDeleteFinalizer)
	switch {
	case want && !has:
		tapp.Finalizers = append(tapp.Finalizers, tkestack.PreDeleteFinalizer)
	case !want && has:
		tapp.Finalizers = slices.DeleteFunc(tapp.Finalizers, func(f string) bool { return f == tkestack.PreDeleteFinalizer })
		if len(tapp.Finalizers) == 0 {
			tapp.Finalizers = nil
		}
	}
}

// specChanged compares two specs as they will be stored: the legacy spelling of defaultTemplateName is
// dropped by Canonicalize, so re-sending it is no change.
func specChanged(newSpec, oldSpec *tkestack.TAppSpec) bool {
	n, o := *newSpec, *oldSpec
	n.LegacyDefaultTemplateName, o.LegacyDefaultTemplateName = "", ""
	return !apiequality.Semantic.DeepEqual(n, o)
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateTApp(obj.(*tkestack.TApp))
}

func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*tkestack.TApp))
}

// Canonicalize drops the legacy spelling of defaultTemplateName once validation has accepted it.
func (strategy) Canonicalize(obj runtime.Object) {
	obj.(*tkestack.TApp).Spec.LegacyDefaultTemplateName = ""
}

func (strategy) AllowCreateOnUpdate() bool { return false }

func (strategy) AllowUnconditionalUpdate() bool { return true }

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateTAppUpdate(obj.(*tkestack.TApp), old.(*tkestack.TApp))
}

func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return warnings(obj.(*tkestack.TApp))
}

// warnings explains accepted input that is stored differently from how it was written.
func warnings(tapp *tkestack.TApp) []string {
	var out []string
	if tapp.Spec.LegacyDefaultTemplateName != "" {
		out = append(out, fmt.Sprintf(
			"spec.DefaultTemplateName is a deprecated spelling; stored as spec.defaultTemplateName=%q",
			tapp.Spec.LegacyDefaultTemplateName))
	}
	return out
}

// scaleSelector renders spec.selector as a label selector string, or "" when it is missing or invalid.
func scaleSelector(tapp *tkestack.TApp) string {
	if tapp.Spec.Selector == nil {
		return ""
	}
	selector, err := metav1.LabelSelectorAsSelector(tapp.Spec.Selector)
	if err != nil {
		return ""
	}
	return selector.String()
}

// statusStrategy implements updates of the status subresource.
type statusStrategy struct {
	strategy
}

// NewStatusStrategy returns the strategy of the status subresource.
func NewStatusStrategy(typer runtime.ObjectTyper) rest.UpdateResetFieldsStrategy {
	return statusStrategy{strategy{typer, names.SimpleNameGenerator}}
}

// GetResetFields says that writes to status never change spec or metadata.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.SpecResetFields(resetFieldsVersion)
}

// PrepareForUpdate keeps the stored spec and metadata; only status changes (and stale ownership of the
// legacy key is dropped, as on the main resource).
func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newTApp, oldTApp := obj.(*tkestack.TApp), old.(*tkestack.TApp)
	newTApp.Spec = oldTApp.Spec
	metav1.ResetObjectMetaForStatus(newTApp, oldTApp)
	dropLegacyOwnership(newTApp)
	// The scale selector is derived from the spec; a status write cannot change it.
	newTApp.Status.ScaleLabelSelector = scaleSelector(newTApp)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateTAppStatusUpdate(obj.(*tkestack.TApp), old.(*tkestack.TApp))
}

func (statusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// Canonicalize leaves a status update untouched.
func (statusStrategy) Canonicalize(runtime.Object) {}
