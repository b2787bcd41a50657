package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Client errors the generic store would answer with 500.
//
// k8s.io/apiserver's store reports some mistakes of the client as internal errors, because they surface
// below validation: a resourceVersion on create (storage.ErrResourceVersionSetOnCreate), a resourceVersion
// that is not a number on update or watch (strconv errors from the versioner), an object larger than etcd
// takes (an etcd or gRPC error), and a server-side apply whose body does not fit the schema ("failed to
// create typed patch object", from the managedFields type converter). The REST wrappers of this package
// check the same things before storage, or translate the one error that can only be seen afterwards, and
// answer 4xx with the field at fault.

// MaxStoredObjectBytes is the largest encoded object the server sends to etcd: etcd's default
// --max-request-bytes (1.5 MiB) less room for the key and the transaction around the value. Larger objects
// are refused with 413 before etcd sees them.
const MaxStoredObjectBytes = 1536*1024 - 16*1024

// typedPatchErrorPrefix starts the error the managedFields code returns for an apply body the schema
// refuses (k8s.io/apimachinery/pkg/util/managedfields/internal/structuredmerge.go).
const typedPatchErrorPrefix = "failed to create typed patch object"

// resourceVersionMsg explains what a resourceVersion must be.
const resourceVersionMsg = "must be a resourceVersion the server returned (a decimal integer), or empty"

// guard adds the checks to the generic store's Create, Update and Watch.
type guard struct {
	store *genericregistry.Store
}

func (g guard) kind(obj runtime.Object) schema.GroupKind {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return schema.GroupKind{Group: g.store.DefaultQualifiedResource.Group, Kind: t.Name()}
}

func (g guard) create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetResourceVersion() != "" {
		return nil, apierrors.NewInvalid(g.kind(obj), accessor.GetName(), field.ErrorList{
			field.Forbidden(field.NewPath("metadata", "resourceVersion"), "must not be set on create"),
		})
	}
	return g.store.Create(ctx, obj, g.createValidation(createValidation), options)
}

func (g guard) update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return g.store.Update(ctx, name, checkedObjectInfo{UpdatedObjectInfo: objInfo, guard: g, name: name}, g.createValidation(createValidation),
		g.updateValidation(updateValidation), forceAllowCreate, options)
}

// createValidation checks the size of the object to create, then runs next.
func (g guard) createValidation(next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		if err := g.checkSize(obj); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return next(ctx, obj)
	}
}

// updateValidation checks the size of the updated object, then runs next.
func (g guard) updateValidation(next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		if err := g.checkSize(obj); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return next(ctx, obj, old)
	}
}

// checkSize refuses an object whose encoding, managedFields aside, exceeds MaxStoredObjectBytes. With
// managedFields the upstream handlers retry without them when etcd refuses the object, so only what would
// still be too large then is refused here.
func (g guard) checkSize(obj runtime.Object) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	managed := accessor.GetManagedFields()
	accessor.SetManagedFields(nil)
	encoded, err := json.Marshal(obj)
	accessor.SetManagedFields(managed)
	if err != nil || len(encoded) <= MaxStoredObjectBytes {
		return nil
	}
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
		"the %s would be stored as %d bytes; the storage takes at most %d", g.kind(obj).Kind, len(encoded), MaxStoredObjectBytes))
}

func (g guard) watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options != nil && options.ResourceVersion != "" {
		if _, err := strconv.ParseUint(options.ResourceVersion, 10, 64); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("resourceVersion %q %s", options.ResourceVersion, resourceVersionMsg))
		}
	}
	return g.store.Watch(ctx, options)
}

// CheckedObjectInfo wraps the objInfo of an update of name in store with the checks of checkedObjectInfo,
// for storage that updates store itself (the scale subresource).
func CheckedObjectInfo(store *genericregistry.Store, name string, objInfo rest.UpdatedObjectInfo) rest.UpdatedObjectInfo {
	return checkedObjectInfo{UpdatedObjectInfo: objInfo, guard: guard{store}, name: name}
}

// checkedObjectInfo refuses an updated object whose resourceVersion is not a number (the versioner would
// fail on it with a 500), and turns the apply errors of the managedFields type converter into 422s.
type checkedObjectInfo struct {
	rest.UpdatedObjectInfo
	guard guard
	name  string
}

func (c checkedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj, err := c.UpdatedObjectInfo.UpdatedObject(ctx, oldObj)
	if err != nil {
		return obj, c.guard.applyError(oldObj, c.name, err)
	}
	accessor, aerr := meta.Accessor(obj)
	if aerr != nil {
		return obj, nil
	}
	if rv := accessor.GetResourceVersion(); rv != "" {
		if _, perr := strconv.ParseUint(rv, 10, 64); perr != nil {
			return nil, apierrors.NewInvalid(c.guard.kind(obj), accessor.GetName(), field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), rv, resourceVersionMsg),
			})
		}
	}
	return obj, nil
}

// applyError returns err, or a 422 naming the fields when err is the type converter's refusal of an apply
// body: a field the schema does not declare, or a value of the wrong type.
func (g guard) applyError(obj runtime.Object, name string, err error) error {
	if _, isStatus := err.(apierrors.APIStatus); isStatus || !strings.HasPrefix(err.Error(), typedPatchErrorPrefix) {
		return err
	}
	msg := err.Error()
	// "failed to create typed patch object (/name; group/version, Kind=K): .spec.x: detail\n.spec.y: detail"
	if i := strings.Index(msg, "): "); i >= 0 {
		msg = msg[i+len("): "):]
	}
	var errs field.ErrorList
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		path, detail, found := strings.Cut(line, ": ")
		if !found || !strings.HasPrefix(path, ".") {
			errs = append(errs, field.Invalid(field.NewPath("body"), field.OmitValueType{}, line))
			continue
		}
		errs = append(errs, field.Invalid(field.NewPath(strings.TrimPrefix(path, ".")), field.OmitValueType{}, detail))
	}
	return apierrors.NewInvalid(g.kind(obj), name, errs)
}
