package tapp

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	scalescheme "k8s.io/client-go/scale/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

// replicasPathInScale maps spec.replicas of a TApp to spec.replicas of its Scale, so field ownership
// taken through kubectl scale or an HPA shows up on the TApp and survives the next apply.
var replicasPathInScale = managedfields.ResourcePathMappings{
	schema.GroupVersion{Group: "apps.tkestack.io", Version: "v1"}.String(): fieldpath.MakePathOrDie("spec", "replicas"),
}

// ScaleREST serves tapps/scale as an autoscaling/v1 Scale.
type ScaleREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher                  = &ScaleREST{}
	_ rest.GroupVersionKindProvider = &ScaleREST{}
	_ rest.TableConvertor           = &ScaleREST{}
)

// GroupVersionKind says the subresource speaks autoscaling/v1 Scale whatever the parent's version.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
}

// New returns an empty internal Scale.
func (r *ScaleREST) New() runtime.Object { return &scalescheme.Scale{} }

// Destroy implements rest.Storage; the parent store owns the backend.
func (r *ScaleREST) Destroy() {}

// Get returns the Scale of a TApp.
func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return scaleFromTApp(obj.(*tkestack.TApp)), nil
}

// Update changes spec.replicas of a TApp through its Scale. The TApp is checked against the storage limit
// as writes to the main resource are (a scale write adds to its managedFields).
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, &scaleUpdatedObjectInfo{name: name, reqObjInfo: registry.CheckedObjectInfo(r.store, name, objInfo)},
		toScaleCreateValidation(createValidation), registry.SizeCheckedUpdateValidation(r.store, toScaleUpdateValidation(updateValidation)), false, options)
	if err != nil {
		return nil, false, err
	}
	return scaleFromTApp(obj.(*tkestack.TApp)), false, nil
}

// ConvertToTable prints a Scale with the default columns.
func (r *ScaleREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return rest.NewDefaultTableConvertor(tkestack.Resource("tapps/scale")).ConvertToTable(ctx, object, tableOptions)
}

// toScaleCreateValidation lets admission see the Scale, not the TApp, when it checks a scale write.
func toScaleCreateValidation(f rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		return f(ctx, scaleFromTApp(obj.(*tkestack.TApp)))
	}
}

func toScaleUpdateValidation(f rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		return f(ctx, scaleFromTApp(obj.(*tkestack.TApp)), scaleFromTApp(old.(*tkestack.TApp)))
	}
}

// scaleFromTApp renders the Scale of a TApp; status.selector is the TApp's selector.
func scaleFromTApp(tapp *tkestack.TApp) *scalescheme.Scale {
	return &scalescheme.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name:              tapp.Name,
			Namespace:         tapp.Namespace,
			UID:               tapp.UID,
			ResourceVersion:   tapp.ResourceVersion,
			CreationTimestamp: tapp.CreationTimestamp,
		},
		Spec:   scalescheme.ScaleSpec{Replicas: tapp.Spec.Replicas},
		Status: scalescheme.ScaleStatus{Replicas: tapp.Status.Replicas, Selector: tapp.Spec.Selector.DeepCopy()},
	}
}

// validateScale checks the replica count a Scale asks for.
func validateScale(scale *scalescheme.Scale) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "replicas")
	if scale.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(path, scale.Spec.Replicas, "must be greater than or equal to 0"))
	}
	if scale.Spec.Replicas > tkestack.MaxReplicas {
		errs = append(errs, field.Invalid(path, scale.Spec.Replicas, fmt.Sprintf("must be less than or equal to %d", tkestack.MaxReplicas)))
	}
	return errs
}

// scaleUpdatedObjectInfo turns a Scale write into a TApp write.
type scaleUpdatedObjectInfo struct {
	name       string
	reqObjInfo rest.UpdatedObjectInfo
}

func (i *scaleUpdatedObjectInfo) Preconditions() *metav1.Preconditions {
	return i.reqObjInfo.Preconditions()
}

func (i *scaleUpdatedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	tapp, ok := oldObj.DeepCopyObject().(*tkestack.TApp)
	if !ok {
		return nil, errors.NewBadRequest(fmt.Sprintf("expected an existing TApp, got %T", oldObj))
	}
	if len(tapp.ResourceVersion) == 0 {
		return nil, errors.NewNotFound(tkestack.Resource("tapps/scale"), i.name)
	}

	groupVersion := tkestackv1.SchemeGroupVersion
	if info, ok := requestGroupVersion(ctx); ok {
		groupVersion = info
	}
	handler := managedfields.NewScaleHandler(tapp.ManagedFields, groupVersion, replicasPathInScale)

	oldScale := scaleFromTApp(tapp)
	var err error
	if oldScale.ManagedFields, err = handler.ToSubresource(); err != nil {
		return nil, err
	}

	obj, err := i.reqObjInfo.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.NewBadRequest("nil update passed to Scale")
	}
	scale, ok := obj.(*scalescheme.Scale)
	if !ok {
		return nil, errors.NewBadRequest(fmt.Sprintf("expected a Scale, got %T", obj))
	}
	if errs := validateScale(scale); len(errs) > 0 {
		return nil, errors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, tapp.Name, errs)
	}
	if scale.UID != "" && scale.UID != tapp.UID {
		return nil, errors.NewConflict(tkestack.Resource("tapps/scale"), tapp.Name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", scale.UID, tapp.UID))
	}

	tapp.Spec.Replicas = scale.Spec.Replicas
	tapp.ResourceVersion = scale.ResourceVersion
	if tapp.ManagedFields, err = handler.ToParent(scale.ManagedFields); err != nil {
		return nil, err
	}
	return tapp, nil
}

// requestGroupVersion returns the group version the client addressed, if any.
func requestGroupVersion(ctx context.Context) (schema.GroupVersion, bool) {
	info, ok := genericapirequest.RequestInfoFrom(ctx)
	if !ok || info.APIGroup == "" || info.APIVersion == "" {
		return schema.GroupVersion{}, false
	}
	return schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}, true
}
