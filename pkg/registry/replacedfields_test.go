package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func TestWithoutManagedFields(t *testing.T) {
	old := &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u", Labels: map[string]string{"app": "a"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	marked := func(method string) context.Context {
		var ctx context.Context
		handler := WithReplacedManagedFieldsUnread(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { ctx = req.Context() }),
			func() bool { return true })
		handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/", nil))
		return ctx
	}
	withInfo := func(ctx context.Context, verb, subresource string) context.Context {
		return request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Verb: verb, Subresource: subresource})
	}
	unmarked := func() context.Context {
		var ctx context.Context
		handler := WithReplacedManagedFieldsUnread(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { ctx = req.Context() }),
			func() bool { return false })
		handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/", nil))
		return ctx
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		old  runtime.Object
		lean bool
	}{
		{"a marked PUT of the object", withInfo(marked(http.MethodPut), "update", ""), old, true},
		{"a PUT while something reads them", withInfo(unmarked(), "update", ""), old, false},
		{"a PATCH", withInfo(marked(http.MethodPatch), "patch", ""), old, false},
		{"a PUT of the status", withInfo(marked(http.MethodPut), "update", "status"), old, false},
		{"a PUT of the scale", withInfo(marked(http.MethodPut), "update", "scale"), old, false},
		{"a replaced object without managedFields", withInfo(marked(http.MethodPut), "update", ""), &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, false},
		{"no request info", marked(http.MethodPut), old, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lean := withoutManagedFields(tc.ctx, tc.old)
			if (lean != nil) != tc.lean {
				t.Fatalf("withoutManagedFields = %v, want a lean copy: %v", lean, tc.lean)
			}
			if lean == nil {
				return
			}
			l, o := lean.(*tkestack.TApp), tc.old.(*tkestack.TApp)
			if l == o || len(l.ManagedFields) != 0 || l.Name != o.Name || l.UID != o.UID || l.Labels["app"] != "a" {
				t.Errorf("lean copy = %+v, want a copy of the replaced object without managedFields", l.ObjectMeta)
			}
			if len(o.ManagedFields) != 1 {
				t.Errorf("the replaced object lost its managedFields: %v", o.ManagedFields)
			}
		})
	}
}

func TestUpdatedObjectDoesItAgainWhenTheFieldManagerNeededTheReplacedFields(t *testing.T) {
	old := &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	ctx := request.WithRequestInfo(context.WithValue(context.Background(), replacedFieldsUnreadKey{}, true),
		&request.RequestInfo{IsResourceRequest: true, Verb: "update"})
	for _, tc := range []struct {
		name string
		// result is what the transformers make of the replaced object they get.
		result    func(old runtime.Object) runtime.Object
		wantCalls []int // managedFields entries of the replaced object each call got
	}{
		{"the result has managedFields", func(runtime.Object) runtime.Object {
			return &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
		}, []int{0}},
		{"the result has none", func(o runtime.Object) runtime.Object {
			return &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{ManagedFields: o.(*tkestack.TApp).ManagedFields}}
		}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []int
			next := func(_ context.Context, o runtime.Object) (runtime.Object, error) {
				calls = append(calls, len(o.(*tkestack.TApp).ManagedFields))
				return tc.result(o), nil
			}
			if _, err := updatedObject(ctx, next, old); err != nil {
				t.Fatal(err)
			}
			if len(calls) != len(tc.wantCalls) || calls[0] != tc.wantCalls[0] || (len(calls) > 1 && calls[1] != tc.wantCalls[1]) {
				t.Errorf("calls with replaced managedFields entries %v, want %v", calls, tc.wantCalls)
			}
		})
	}
}
