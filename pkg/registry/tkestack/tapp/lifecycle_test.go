package tapp

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// TestPreDeleteFinalizer: the strategy keeps tkestack.PreDeleteFinalizer on exactly the TApps with
// spec.lifecycle.preDelete, leaves other finalizers alone, and changes nothing on a TApp being deleted.
func TestPreDeleteFinalizer(t *testing.T) {
	preDelete := &tkestack.TAppLifecycle{PreDelete: &tkestack.LifecycleHook{LabelsHandler: map[string]string{"drain": "true"}}}
	inPlaceOnly := &tkestack.TAppLifecycle{InPlaceUpdate: &tkestack.LifecycleHook{LabelsHandler: map[string]string{"drain": "true"}}}
	now := metav1.Now()
	for _, tc := range []struct {
		name       string
		lifecycle  *tkestack.TAppLifecycle
		finalizers []string
		deleting   bool
		want       []string
	}{
		{name: "no lifecycle", want: nil},
		{name: "in-place hook only", lifecycle: inPlaceOnly, want: nil},
		{name: "preDelete adds it", lifecycle: preDelete, want: []string{tkestack.PreDeleteFinalizer}},
		{name: "preDelete keeps others", lifecycle: preDelete, finalizers: []string{"example.com/x"},
			want: []string{"example.com/x", tkestack.PreDeleteFinalizer}},
		{name: "present once", lifecycle: preDelete, finalizers: []string{tkestack.PreDeleteFinalizer},
			want: []string{tkestack.PreDeleteFinalizer}},
		{name: "hook removed removes it", lifecycle: inPlaceOnly, finalizers: []string{"example.com/x", tkestack.PreDeleteFinalizer},
			want: []string{"example.com/x"}},
		{name: "hook removed, last finalizer", finalizers: []string{tkestack.PreDeleteFinalizer}, want: nil},
		{name: "deleting: not added", lifecycle: preDelete, deleting: true, want: nil},
		{name: "deleting: not removed", finalizers: []string{tkestack.PreDeleteFinalizer}, deleting: true,
			want: []string{tkestack.PreDeleteFinalizer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func() *tkestack.TApp {
				tapp := validTApp()
				tapp.Spec.Lifecycle = tc.lifecycle
				tapp.Finalizers = append([]string(nil), tc.finalizers...)
				if tc.deleting {
					tapp.DeletionTimestamp = &now
				}
				return tapp
			}
			if !tc.deleting {
				created := build()
				NewStrategy(testScheme).PrepareForCreate(context.Background(), created)
				if !reflect.DeepEqual(created.Finalizers, tc.want) {
					t.Errorf("create: finalizers %q, want %q", created.Finalizers, tc.want)
				}
			}
			updated, old := build(), validTApp()
			NewStrategy(testScheme).PrepareForUpdate(context.Background(), updated, old)
			if !reflect.DeepEqual(updated.Finalizers, tc.want) {
				t.Errorf("update: finalizers %q, want %q", updated.Finalizers, tc.want)
			}
		})
	}
}
