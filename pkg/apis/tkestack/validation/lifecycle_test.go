package validation

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func TestValidateLifecycle(t *testing.T) {
	hook := func(labels map[string]string, finalizers ...string) *tkestack.LifecycleHook {
		return &tkestack.LifecycleHook{LabelsHandler: labels, FinalizersHandler: finalizers}
	}
	many := func(n int) (map[string]string, []string) {
		labels := map[string]string{}
		var finalizers []string
		for i := 0; i < n; i++ {
			labels[fmt.Sprintf("drain-%d", i)] = "true"
			finalizers = append(finalizers, fmt.Sprintf("example.com/drain-%d", i))
		}
		return labels, finalizers
	}
	cases := []struct {
		name      string
		lifecycle *tkestack.TAppLifecycle
		want      []wantErr
	}{
		{name: "none"},
		{name: "empty lifecycle", lifecycle: &tkestack.TAppLifecycle{}},
		{name: "label and finalizer", lifecycle: &tkestack.TAppLifecycle{
			PreDelete:     hook(map[string]string{"example.com/drain": "true"}, "example.com/drain"),
			InPlaceUpdate: &tkestack.LifecycleHook{LabelsHandler: map[string]string{"lb": "attached"}, MarkPodNotReady: true},
		}},
		{name: "empty label value", lifecycle: &tkestack.TAppLifecycle{PreDelete: hook(map[string]string{"drain": ""})}},
		{name: "limits reached", lifecycle: &tkestack.TAppLifecycle{PreDelete: func() *tkestack.LifecycleHook {
			l, f := many(MaxLifecycleHandlers)
			return hook(l, f...)
		}()}},
		{
			name:      "hook without handler",
			lifecycle: &tkestack.TAppLifecycle{PreDelete: &tkestack.LifecycleHook{MarkPodNotReady: true}},
			want:      []wantErr{{field.ErrorTypeRequired, "spec.lifecycle.preDelete", "at least one"}},
		},
		{
			name:      "in-place hook without handler",
			lifecycle: &tkestack.TAppLifecycle{InPlaceUpdate: hook(map[string]string{}, []string{}...)},
			want:      []wantErr{{field.ErrorTypeRequired, "spec.lifecycle.inPlaceUpdate", "at least one"}},
		},
		{
			name:      "invalid label key",
			lifecycle: &tkestack.TAppLifecycle{PreDelete: hook(map[string]string{"bad key": "true"})},
			want:      []wantErr{{field.ErrorTypeInvalid, "spec.lifecycle.preDelete.labelsHandler", ""}},
		},
		{
			name:      "invalid label value",
			lifecycle: &tkestack.TAppLifecycle{InPlaceUpdate: hook(map[string]string{"drain": "not valid!"})},
			want:      []wantErr{{field.ErrorTypeInvalid, "spec.lifecycle.inPlaceUpdate.labelsHandler", ""}},
		},
		{
			name:      "controller's label",
			lifecycle: &tkestack.TAppLifecycle{PreDelete: hook(map[string]string{tkestack.LifecycleStateLabel: "Normal"})},
			want:      []wantErr{{field.ErrorTypeInvalid, "spec.lifecycle.preDelete.labelsHandler[tkestack.io/lifecycle-state]", "writes itself"}},
		},
		{
			name:      "label of the selector",
			lifecycle: &tkestack.TAppLifecycle{InPlaceUpdate: hook(map[string]string{"app": "web"})},
			want:      []wantErr{{field.ErrorTypeInvalid, "spec.lifecycle.inPlaceUpdate.labelsHandler[app]", "spec.selector"}},
		},
		{
			name:      "invalid finalizer",
			lifecycle: &tkestack.TAppLifecycle{PreDelete: hook(nil, "ok.example.com/drain", "Not A/Finalizer/x")},
			want:      []wantErr{{field.ErrorTypeInvalid, "spec.lifecycle.preDelete.finalizersHandler[1]", ""}},
		},
		{
			name:      "duplicate finalizer",
			lifecycle: &tkestack.TAppLifecycle{InPlaceUpdate: hook(nil, "example.com/drain", "example.com/drain")},
			want:      []wantErr{{field.ErrorTypeDuplicate, "spec.lifecycle.inPlaceUpdate.finalizersHandler[1]", ""}},
		},
		{
			name: "too many labels and finalizers",
			lifecycle: &tkestack.TAppLifecycle{PreDelete: func() *tkestack.LifecycleHook {
				l, f := many(MaxLifecycleHandlers + 1)
				return hook(l, f...)
			}()},
			want: []wantErr{
				{field.ErrorTypeTooMany, "spec.lifecycle.preDelete.labelsHandler", ""},
				{field.ErrorTypeTooMany, "spec.lifecycle.preDelete.finalizersHandler", ""},
			},
		},
		{
			name:      "long label key",
			lifecycle: &tkestack.TAppLifecycle{PreDelete: hook(map[string]string{strings.Repeat("a", 64): "x"})},
			want:      []wantErr{{field.ErrorTypeInvalid, "spec.lifecycle.preDelete.labelsHandler", ""}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tapp.Spec.Lifecycle = tc.lifecycle
			assertErrors(t, ValidateTApp(tapp), tc.want)
		})
	}
}
