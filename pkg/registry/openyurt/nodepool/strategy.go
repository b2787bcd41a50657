// Package nodepool is the REST storage of the cluster-scoped apps.openyurt.io NodePools and their status,
// served in v1beta1 and v1alpha1 from one store: the strategies (strategy.go), the storage with its size guard,
// its request path (the strategic merge patch step, see package registry/requestpath) and its table printer
// (storage.go).
package nodepool

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/validation"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

// servedVersions are the versions the store is served in; reset fields are declared for each.
var servedVersions = []fieldpath.APIVersion{
	fieldpath.APIVersion(v1beta2.SchemeGroupVersion.String()),
	fieldpath.APIVersion(v1beta1.SchemeGroupVersion.String()),
	fieldpath.APIVersion(v1alpha1.SchemeGroupVersion.String()),
}

// resetFields declares the same reset fields in every served version.
func resetFields(perVersion func(fieldpath.APIVersion) map[fieldpath.APIVersion]*fieldpath.Set) map[fieldpath.APIVersion]*fieldpath.Set {
	out := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, v := range servedVersions {
		for version, set := range perVersion(v) {
			out[version] = set
		}
	}
	return out
}

// hostNetworkAlphaPath is where v1alpha1 keeps spec.hostNetwork.
var hostNetworkAlphaPath = field.NewPath("metadata", "annotations").Key(openyurt.NodePoolHostNetworkAnnotation)

// inRequestVersion rewrites validation errors into the field paths of the request's version: a v1alpha1
// request sees errors of spec.hostNetwork on its annotation nodepool.openyurt.io/hostnetwork, and v1alpha1
// and v1beta1 requests see errors of the v1beta2 fields (and anything under them) on their leader
// annotations (openyurt/leaderannotations.go). Every other field has the same path in every version.
func inRequestVersion(ctx context.Context, errs field.ErrorList) field.ErrorList {
	info, ok := genericapirequest.RequestInfoFrom(ctx)
	if !ok || info.APIVersion == v1beta2.SchemeGroupVersion.Version {
		return errs
	}
	for _, e := range errs {
		for _, a := range openyurt.LeaderAnnotations {
			path := a.Field.String()
			if e.Field == path || strings.HasPrefix(e.Field, path+".") || strings.HasPrefix(e.Field, path+"[") {
				e.Detail = strings.TrimSpace(e.Field + ": " + e.Detail)
				e.Field = field.NewPath("metadata", "annotations").Key(a.Key).String()
				break
			}
		}
	}
	if info.APIVersion != v1alpha1.SchemeGroupVersion.Version {
		return errs
	}
	hostNetworkPath := field.NewPath("spec", "hostNetwork").String()
	for _, e := range errs {
		if e.Field != hostNetworkPath {
			continue
		}
		e.Field = hostNetworkAlphaPath.String()
		if b, ok := e.BadValue.(bool); ok {
			e.BadValue = strconv.FormatBool(b)
		}
	}
	return errs
}

// GetAttrs returns the labels and selectable fields of a NodePool.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	if _, ok := obj.(*openyurt.NodePool); !ok {
		return nil, nil, fmt.Errorf("expected a NodePool, got %T", obj)
	}
	return registry.ObjectMetaAttrs(obj, false)
}

// Match selects NodePools by label and field selectors.
var Match = registry.Matcher(GetAttrs)

type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy of the main NodePool resource.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

func (strategy) NamespaceScoped() bool { return false }

// GetResetFields says that writes to the main resource never change status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return resetFields(registry.StatusResetFields)
}

// PrepareForCreate drops any client-sent status, defaults the node selector to the pool's membership
// label and labels the pool with its type.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pool := obj.(*openyurt.NodePool)
	pool.Status = openyurt.NodePoolStatus{}
	pool.Generation = 1
	defaultSelector(pool)
	openyurt.SetLeaderDefaults(&pool.Spec)
	labelWithType(pool)
}

// PrepareForUpdate keeps the stored status, defaults the selector as on create, keeps the type label in
// step and bumps the generation when the spec changes.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newPool, oldPool := obj.(*openyurt.NodePool), old.(*openyurt.NodePool)
	newPool.Status = oldPool.Status
	defaultSelector(newPool)
	openyurt.SetLeaderDefaults(&newPool.Spec)
	labelWithType(newPool)
	if !apiequality.Semantic.DeepEqual(newPool.Spec, oldPool.Spec) {
		newPool.Generation = oldPool.Generation + 1
	}
}

// defaultSelector sets a missing spec.selector to the pool's membership label, apps.openyurt.io/nodepool=
// <name>. spec.selector is optional in both versions with that default, and it may change, so an update
// without it (a PUT that leaves it out, a merge patch setting it to null, an apply that drops a selector
// it owned) means the default, exactly as on create: it is never the previous selector kept silently.
func defaultSelector(pool *openyurt.NodePool) {
	if pool.Spec.Selector == nil && pool.Name != "" {
		pool.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{openyurt.NodePoolLabel: pool.Name}}
	}
}

// labelWithType puts nodepool.openyurt.io/type=<edge|cloud> on the pool, so pools can be selected by type.
func labelWithType(pool *openyurt.NodePool) {
	if pool.Spec.Type == "" {
		return
	}
	if pool.Labels == nil {
		pool.Labels = map[string]string{}
	}
	pool.Labels[openyurt.NodePoolTypeLabel] = strings.ToLower(string(pool.Spec.Type))
}

func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return inRequestVersion(ctx, validation.ValidateNodePool(obj.(*openyurt.NodePool)))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (strategy) Canonicalize(runtime.Object) {}

func (strategy) AllowCreateOnUpdate() bool { return false }

func (strategy) AllowUnconditionalUpdate() bool { return true }

func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return inRequestVersion(ctx, validation.ValidateNodePoolUpdate(obj.(*openyurt.NodePool), old.(*openyurt.NodePool)))
}

func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
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
	return resetFields(registry.SpecResetFields)
}

// PrepareForUpdate keeps the stored spec and metadata; only status changes.
func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newPool, oldPool := obj.(*openyurt.NodePool), old.(*openyurt.NodePool)
	newPool.Spec = oldPool.Spec
	metav1.ResetObjectMetaForStatus(newPool, oldPool)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNodePoolStatusUpdate(obj.(*openyurt.NodePool), old.(*openyurt.NodePool))
}

var (
	_ rest.RESTCreateUpdateStrategy  = strategy{}
	_ rest.RESTDeleteStrategy        = strategy{}
	_ rest.ResetFieldsStrategy       = strategy{}
	_ rest.UpdateResetFieldsStrategy = statusStrategy{}
)
