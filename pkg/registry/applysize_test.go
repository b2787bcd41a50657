package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// TestCheckWriteSizeApply checks that a server-side apply counts managedFields (the apply handler never
// retries without them) and other writes do not.
func TestCheckWriteSizeApply(t *testing.T) {
	g := testGuard()
	applyCtx := WithServerSideApply(context.Background())
	if IsServerSideApply(context.Background()) || !IsServerSideApply(applyCtx) {
		t.Fatalf("IsServerSideApply does not follow WithServerSideApply")
	}
	small := &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	managed := small.DeepCopy()
	managed.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:x":"` + strings.Repeat("y", MaxStoredObjectBytes) + `"}`)}}}
	bigBare := small.DeepCopy()
	bigBare.Annotations = map[string]string{"a": strings.Repeat("x", MaxStoredObjectBytes)}

	for _, c := range []struct {
		name        string
		ctx         context.Context
		obj         *tkestack.TApp
		want        int // 0, or the status code
		wantManaged bool
	}{
		{name: "small apply", ctx: applyCtx, obj: small},
		{name: "large managedFields, update", ctx: context.Background(), obj: managed},
		{name: "large managedFields, apply", ctx: applyCtx, obj: managed, want: 413, wantManaged: true},
		{name: "large object, update", ctx: context.Background(), obj: bigBare, want: 413},
		{name: "large object, apply", ctx: applyCtx, obj: bigBare, want: 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(c.obj.ManagedFields)
			err := g.checkWriteSize(c.ctx, c.obj)
			if len(c.obj.ManagedFields) != before {
				t.Errorf("checkWriteSize changed the managedFields")
			}
			if c.want == 0 {
				if err != nil {
					t.Errorf("err = %v, want none", err)
				}
				return
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != int32(c.want) || !apierrors.IsRequestEntityTooLargeError(err) {
				t.Fatalf("err = %v, want %d", err, c.want)
			}
			details := status.Status().Details
			named := details != nil && len(details.Causes) == 1 && details.Causes[0].Field == "metadata.managedFields"
			if named != c.wantManaged {
				t.Errorf("cause on metadata.managedFields = %v, want %v (status %+v)", named, c.wantManaged, status.Status())
			}
			if c.wantManaged && (!strings.Contains(err.Error(), "server-side apply") || details.Name != "web" || details.Kind != "TApp") {
				t.Errorf("refusal does not say why or whom: %+v", status.Status())
			}
		})
	}
}

// TestSizeCheckedUpdateValidation checks the wrapper the scale subresource uses: the size check, then next.
func TestSizeCheckedUpdateValidation(t *testing.T) {
	g := testGuard()
	called := 0
	validate := SizeCheckedUpdateValidation(g.store, func(context.Context, runtime.Object, runtime.Object) error {
		called++
		return nil
	})
	small := &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	if err := validate(context.Background(), small, small); err != nil || called != 1 {
		t.Errorf("small object: err=%v next called %d times, want nil and 1", err, called)
	}
	big := small.DeepCopy()
	big.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:x":"` + strings.Repeat("y", MaxStoredObjectBytes) + `"}`)}}}
	if err := validate(WithServerSideApply(context.Background()), big, small); !apierrors.IsRequestEntityTooLargeError(err) || called != 1 {
		t.Errorf("scale apply past the limit: err=%v next called %d times, want 413 and 1", err, called)
	}
	if err := SizeCheckedUpdateValidation(g.store, nil)(context.Background(), small, small); err != nil {
		t.Errorf("nil next: %v", err)
	}
}
