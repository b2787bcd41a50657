package registry

import (
	"context"
	"net/http"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// An update (PUT) hands the object it replaces to the field manager, which turns that object into a typed
// value, its metadata.managedFields included (each entry's fieldsV1 by way of JSON), and back again once per
// manager. Yet the field manager reads the replaced object's managedFields only when the request carries none
// it can read: a client that read the object before writing it sends them back. Those conversions were about
// a third of the server's CPU for an update of a small TApp. So while nothing else in the update reads the
// replaced object's managedFields (no mutating webhook and no mutating admission policy could be handed it),
// a PUT of the object itself gives the field manager the replaced object without them, and does the update
// again with them when the result shows the field manager needed them (see updatedObject).

type replacedFieldsUnreadKey struct{}

// WithReplacedManagedFieldsUnread marks the PUT requests it passes to handler while unread reports that no
// admission plugin of the server reads the managedFields of the object an update replaces.
func WithReplacedManagedFieldsUnread(handler http.Handler, unread func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPut && unread() {
			req = req.WithContext(context.WithValue(req.Context(), replacedFieldsUnreadKey{}, true))
		}
		handler.ServeHTTP(w, req)
	})
}

// updatedObject is next's updated object for the replaced object old. For a PUT of the object itself (not
// a subresource) marked by WithReplacedManagedFieldsUnread, next first gets old without its managedFields.
// The field manager falls back to the replaced object's managedFields only when the request's are empty or
// unreadable, and an update from no managedFields at all keeps none (the field manager does not start
// tracking an existing object's fields on an update): so a result with managedFields is the one next gives
// for old itself, and a result without them is done again from old.
func updatedObject(ctx context.Context, next func(context.Context, runtime.Object) (runtime.Object, error), old runtime.Object) (runtime.Object, error) {
	if lean := withoutManagedFields(ctx, old); lean != nil {
		obj, err := next(ctx, lean)
		if err != nil || hasManagedFields(obj) {
			return obj, err
		}
	}
	return next(ctx, old)
}

// withoutManagedFields is a shallow copy of old without managedFields, or nil when the request of ctx is
// not a marked PUT of the object itself or old has no managedFields. The copy shares everything else with
// old, which the updated object's transformers only read.
func withoutManagedFields(ctx context.Context, old runtime.Object) runtime.Object {
	if ctx.Value(replacedFieldsUnreadKey{}) == nil {
		return nil
	}
	if info, ok := request.RequestInfoFrom(ctx); !ok || info.Verb != "update" || info.Subresource != "" {
		return nil
	}
	if !hasManagedFields(old) {
		return nil
	}
	v := reflect.ValueOf(old)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	lean, ok := c.Interface().(runtime.Object)
	if !ok {
		return nil
	}
	accessor, err := meta.Accessor(lean)
	if err != nil {
		return nil
	}
	accessor.SetManagedFields(nil)
	return lean
}

func hasManagedFields(obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	accessor, err := meta.Accessor(obj)
	return err == nil && len(accessor.GetManagedFields()) > 0
}
