package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func testGuard() guard {
	return guard{&genericregistry.Store{DefaultQualifiedResource: tkestack.Resource("tapps")}}
}

// updatedTo is an UpdatedObjectInfo whose update gives obj, or err.
type updatedTo struct {
	rest.UpdatedObjectInfo
	obj runtime.Object
	err error
}

func (u updatedTo) UpdatedObject(context.Context, runtime.Object) (runtime.Object, error) {
	return u.obj, u.err
}

func TestCheckedObjectInfo(t *testing.T) {
	withRV := func(rv string) *tkestack.TApp {
		return &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: rv}}
	}
	cases := []struct {
		name      string
		obj       runtime.Object
		err       error
		wantCode  int32
		wantField []string
	}{
		{name: "numeric resourceVersion", obj: withRV("42")},
		{name: "no resourceVersion", obj: withRV("")},
		{name: "resourceVersion abc", obj: withRV("abc"), wantCode: 422, wantField: []string{"metadata.resourceVersion"}},
		{name: "negative resourceVersion", obj: withRV("-1"), wantCode: 422, wantField: []string{"metadata.resourceVersion"}},
		{name: "a status error passes", err: apierrors.NewConflict(tkestack.Resource("tapps"), "web", errors.New("x")), wantCode: 409},
		{name: "another plain error passes", err: errors.New("etcd is gone"), wantCode: 0},
		{
			name:     "typed patch errors",
			err:      errors.New("failed to create typed patch object (ns/web; apps.tkestack.io/v1, Kind=TApp): .spec.replicas: expected numeric (int or float), got bool\n.spec.bogus: field not declared in schema"),
			wantCode: 422, wantField: []string{"spec.replicas", "spec.bogus"},
		},
		{
			name:     "typed patch error without a path",
			err:      errors.New("failed to create typed patch object (ns/web; apps.tkestack.io/v1, Kind=TApp): something odd"),
			wantCode: 422, wantField: []string{"body"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info := checkedObjectInfo{UpdatedObjectInfo: updatedTo{obj: tc.obj, err: tc.err}, guard: testGuard(), name: "web"}
			_, err := info.UpdatedObject(context.Background(), &tkestack.TApp{})
			if tc.wantCode == 0 {
				if tc.err == nil && err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if tc.err != nil && err != tc.err {
					t.Fatalf("error %v, want it passed unchanged", err)
				}
				return
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != tc.wantCode {
				t.Fatalf("error %v, want a %d", err, tc.wantCode)
			}
			var fields []string
			if details := status.Status().Details; details != nil {
				for _, c := range details.Causes {
					fields = append(fields, c.Field)
				}
			}
			if len(tc.wantField) > 0 && strings.Join(fields, ",") != strings.Join(tc.wantField, ",") {
				t.Errorf("cause fields %v, want %v", fields, tc.wantField)
			}
		})
	}
}

func TestCheckSize(t *testing.T) {
	g := testGuard()
	small := &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	if err := g.checkSize(small); err != nil {
		t.Errorf("a small object: %v", err)
	}
	big := small.DeepCopy()
	big.Annotations = map[string]string{"a": strings.Repeat("x", MaxStoredObjectBytes)}
	if err := g.checkSize(big); !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("an object over the limit: %v, want 413", err)
	}
	// managedFields do not count (the handlers retry without them), and are kept.
	managed := small.DeepCopy()
	managed.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:x":"` + strings.Repeat("y", MaxStoredObjectBytes) + `"}`)}}}
	if err := g.checkSize(managed); err != nil {
		t.Errorf("large managedFields: %v", err)
	}
	if len(managed.ManagedFields) != 1 {
		t.Errorf("checkSize lost the managedFields")
	}
}

func TestGuardWatchResourceVersion(t *testing.T) {
	for _, rv := range []string{"abc", "-1", "1.5", " 1"} {
		if _, err := testGuard().watch(context.Background(), &metainternalversion.ListOptions{ResourceVersion: rv}); !apierrors.IsBadRequest(err) {
			t.Errorf("watch resourceVersion %q: %v, want 400", rv, err)
		}
	}
}

func TestGuardCreateResourceVersion(t *testing.T) {
	_, err := testGuard().create(context.Background(), &tkestack.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "12"}}, nil, &metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.resourceVersion") {
		t.Errorf("create with a resourceVersion: %v, want 422 on metadata.resourceVersion", err)
	}
}
