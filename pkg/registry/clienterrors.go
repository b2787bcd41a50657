package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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
// takes (an etcd or gRPC error; for a server-side apply, counting its managedFields, which the apply handler
// never retries without), and a server-side apply whose body does not fit the schema ("failed to
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
		if err := g.checkWriteSize(ctx, obj); err != nil {
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
		if err := g.checkWriteSize(ctx, obj); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return next(ctx, obj, old)
	}
}

// checkWriteSize is checkSize for the write of ctx. The upstream create, update and patch handlers retry
// without managedFields when etcd refuses an object, so for them only what would still be too large then is
// refused. Server-side apply makes no such retry (field ownership is what it records), so an applied object is
// measured with its managedFields, and the refusal says how much of it they are.
func (g guard) checkWriteSize(ctx context.Context, obj runtime.Object) error {
	if err := g.checkSize(obj); err != nil || !IsServerSideApply(ctx) {
		return err
	}
	accessor, err := meta.Accessor(obj)
	if err != nil || len(accessor.GetManagedFields()) == 0 {
		return nil
	}
	whole, err := json.Marshal(obj)
	if err != nil || len(whole) <= MaxStoredObjectBytes {
		return nil
	}
	managed, err := json.Marshal(accessor.GetManagedFields())
	if err != nil {
		return nil
	}
	return applyTooLarge(g.kind(obj), accessor.GetName(), len(whole), len(managed))
}

// checkSize refuses an object whose encoding, managedFields aside, exceeds MaxStoredObjectBytes.
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

// applyTooLarge is the 413 for an applied object that fits the storage only without its managedFields.
func applyTooLarge(kind schema.GroupKind, name string, size, managedSize int) error {
	msg := fmt.Sprintf("the %s would be stored as %d bytes, %d of them metadata.managedFields, the field ownership "+
		"server-side apply must record (an object stored without them gets them for all its fields on its first apply); "+
		"the storage takes at most %d. Server-side apply cannot write an object this large: make it smaller, or write it "+
		"with create, update or a patch of another type, which store it without managedFields when they do not fit",
		kind.Kind, size, managedSize, MaxStoredObjectBytes)
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusRequestEntityTooLarge,
		Reason:  metav1.StatusReasonRequestEntityTooLarge,
		Message: "Request entity too large: " + msg,
		Details: &metav1.StatusDetails{
			Name:  name,
			Group: kind.Group,
			Kind:  kind.Kind,
			Causes: []metav1.StatusCause{{
				Type:    metav1.CauseTypeTooLong,
				Message: msg,
				Field:   "metadata.managedFields",
			}},
		},
	}}
}

type serverSideApplyKey struct{}

// WithServerSideApply marks ctx as the context of a server-side apply request (an apply-patch body), whose
// objects checkWriteSize measures with their managedFields.
func WithServerSideApply(ctx context.Context) context.Context {
	return context.WithValue(ctx, serverSideApplyKey{}, true)
}

// IsServerSideApply reports whether ctx was marked by WithServerSideApply.
func IsServerSideApply(ctx context.Context) bool {
	applied, _ := ctx.Value(serverSideApplyKey{}).(bool)
	return applied
}

// SizeCheckedUpdateValidation runs the size check of the REST wrappers of this package on the updated object,
// then next; for storage that updates store itself (the scale subresource).
func SizeCheckedUpdateValidation(store *genericregistry.Store, next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return guard{store}.updateValidation(next)
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
// fail on it with a 500), and turns the apply errors of the managedFields type converter into 422s. It
// hands the replaced object to the update's transformers as updatedObject (replacedfields.go) says.
type checkedObjectInfo struct {
	rest.UpdatedObjectInfo
	guard guard
	name  string
}

func (c checkedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj, err := updatedObject(ctx, c.UpdatedObjectInfo.UpdatedObject, oldObj)
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
