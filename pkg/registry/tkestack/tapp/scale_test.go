package tapp

import (
	"context"
	"reflect"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	scalescheme "k8s.io/client-go/scale/scheme"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func TestScaleFromTApp(t *testing.T) {
	tapp := validTApp()
	tapp.CreationTimestamp = metav1.Unix(1000, 0)
	tapp.Spec.Replicas = 4
	tapp.Status.Replicas = 3

	scale := scaleFromTApp(tapp)
	want := &scalescheme.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "5", CreationTimestamp: metav1.Unix(1000, 0),
		},
		Spec:   scalescheme.ScaleSpec{Replicas: 4},
		Status: scalescheme.ScaleStatus{Replicas: 3, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}},
	}
	if !apiequality.Semantic.DeepEqual(scale, want) {
		t.Errorf("scale = %+v, want %+v", scale, want)
	}
	// The scale's selector is a copy: changing it must not change the TApp.
	scale.Status.Selector.MatchLabels["app"] = "changed"
	if tapp.Spec.Selector.MatchLabels["app"] != "x" {
		t.Errorf("scale shares the TApp's selector")
	}
	// Labels, annotations and generation stay on the TApp.
	if len(scale.Labels) != 0 || len(scale.Annotations) != 0 || scale.Generation != 0 {
		t.Errorf("scale carries TApp metadata: %+v", scale.ObjectMeta)
	}

	tapp.Spec.Selector = nil
	if scale = scaleFromTApp(tapp); scale.Status.Selector != nil {
		t.Errorf("nil selector: scale selector = %v", scale.Status.Selector)
	}
}

func TestScaleRESTMeta(t *testing.T) {
	r := &ScaleREST{}
	if gvk := r.GroupVersionKind(schema.GroupVersion{Group: "apps.tkestack.io", Version: "v1"}); gvk != (schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}) {
		t.Errorf("GroupVersionKind = %v, want autoscaling/v1 Scale", gvk)
	}
	if _, ok := r.New().(*scalescheme.Scale); !ok {
		t.Errorf("New() = %T, want *scheme.Scale", r.New())
	}
	table, err := r.ConvertToTable(context.Background(), &scalescheme.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, nil)
	if err != nil || len(table.Rows) != 1 || table.Rows[0].Cells[0] != "web" {
		t.Errorf("ConvertToTable = %+v, %v; want one row named web", table, err)
	}
}

// newScale is the Scale a client would send back after reading the TApp's Scale and changing replicas.
func newScale(replicas int32, rv string, uid types.UID) *scalescheme.Scale {
	return &scalescheme.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: uid, ResourceVersion: rv},
		Spec:       scalescheme.ScaleSpec{Replicas: replicas},
	}
}

func TestScaleUpdatedObject(t *testing.T) {
	for _, tc := range []struct {
		name         string
		old          runtime.Object
		objInfo      rest.UpdatedObjectInfo
		wantReplicas int32
		wantRV       string
		wantErr      func(error) bool
		wantCause    string
	}{
		{name: "replicas and resource version copied", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(7, "5", "uid-1")), wantReplicas: 7, wantRV: "5"},
		{name: "scale to zero", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(0, "5", "")), wantReplicas: 0, wantRV: "5"},
		{name: "unconditional update", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(3, "", "")), wantReplicas: 3, wantRV: ""},
		{name: "max replicas", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(tkestack.MaxReplicas, "5", "")), wantReplicas: tkestack.MaxReplicas, wantRV: "5"},
		{name: "stale resource version is passed on for the store to reject", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(3, "4", "")), wantReplicas: 3, wantRV: "4"},
		{name: "negative replicas", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(-1, "5", "")), wantErr: apierrors.IsInvalid, wantCause: "spec.replicas"},
		{name: "too many replicas", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(tkestack.MaxReplicas+1, "5", "")), wantErr: apierrors.IsInvalid, wantCause: "spec.replicas"},
		{name: "uid mismatch", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(3, "5", "other")), wantErr: apierrors.IsConflict},
		{name: "old object without resource version", old: func() runtime.Object { a := validTApp(); a.ResourceVersion = ""; return a }(),
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(3, "5", "")), wantErr: apierrors.IsNotFound},
		{name: "old object of another type", old: &tkestack.TAppList{},
			objInfo: rest.DefaultUpdatedObjectInfo(newScale(3, "5", "")), wantErr: apierrors.IsBadRequest},
		{name: "update is not a scale", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(validTApp()), wantErr: apierrors.IsBadRequest},
		{name: "nil update", old: validTApp(),
			objInfo: rest.DefaultUpdatedObjectInfo(nil), wantErr: apierrors.IsBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldCopy := tc.old.DeepCopyObject()
			info := &scaleUpdatedObjectInfo{name: "web", reqObjInfo: tc.objInfo}
			obj, err := info.UpdatedObject(context.Background(), tc.old)
			if !apiequality.Semantic.DeepEqual(oldCopy, tc.old) {
				t.Errorf("UpdatedObject modified the old object")
			}
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("err = %v, want a matching error", err)
				}
				if tc.wantCause != "" {
					status := err.(apierrors.APIStatus).Status()
					if status.Details == nil || len(status.Details.Causes) == 0 || status.Details.Causes[0].Field != tc.wantCause {
						t.Errorf("error details = %+v, want a cause on %s", status.Details, tc.wantCause)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tapp := obj.(*tkestack.TApp)
			if tapp.Spec.Replicas != tc.wantReplicas {
				t.Errorf("replicas = %d, want %d", tapp.Spec.Replicas, tc.wantReplicas)
			}
			if tapp.ResourceVersion != tc.wantRV {
				t.Errorf("resourceVersion = %q, want %q", tapp.ResourceVersion, tc.wantRV)
			}
			// Everything but replicas and resource version is the old TApp's.
			want := oldCopy.(*tkestack.TApp)
			want.Spec.Replicas, want.ResourceVersion = tc.wantReplicas, tc.wantRV
			if !apiequality.Semantic.DeepEqual(tapp, want) {
				t.Errorf("updated TApp = %+v, want %+v", tapp, want)
			}
		})
	}
}

func TestScaleUpdatedObjectPreconditions(t *testing.T) {
	pre := &metav1.Preconditions{UID: ptr.To[types.UID]("uid-1")}
	info := &scaleUpdatedObjectInfo{name: "web", reqObjInfo: rest.DefaultUpdatedObjectInfo(newScale(1, "", ""))}
	if info.Preconditions() != nil {
		t.Errorf("preconditions = %v, want nil from an object without UID", info.Preconditions())
	}
	info = &scaleUpdatedObjectInfo{name: "web", reqObjInfo: preconditionsInfo{UpdatedObjectInfo: info.reqObjInfo, pre: pre}}
	if info.Preconditions() != pre {
		t.Errorf("preconditions = %v, want the request's %v", info.Preconditions(), pre)
	}
}

type preconditionsInfo struct {
	rest.UpdatedObjectInfo
	pre *metav1.Preconditions
}

func (p preconditionsInfo) Preconditions() *metav1.Preconditions { return p.pre }

func managedEntry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, APIVersion: apiVersion,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields),
	}
}

// managedByManager indexes managed fields entries by manager, dropping times to keep comparisons simple.
func managedByManager(entries []metav1.ManagedFieldsEntry) map[string]metav1.ManagedFieldsEntry {
	out := map[string]metav1.ManagedFieldsEntry{}
	for _, e := range entries {
		e.Time = nil
		out[e.Manager] = e
	}
	return out
}

func TestScaleManagedFields(t *testing.T) {
	const (
		tappVersion  = "apps.tkestack.io/v1"
		scaleVersion = "autoscaling/v1"
		replicas     = `{"f:spec":{"f:replicas":{}}}`
	)
	for _, tc := range []struct {
		name        string
		ctx         context.Context
		parent      []metav1.ManagedFieldsEntry
		scaleFields []metav1.ManagedFieldsEntry
		wantOld     map[string]metav1.ManagedFieldsEntry
		wantParent  map[string]metav1.ManagedFieldsEntry
	}{
		{
			name: "scaler takes replicas from apply, which keeps its other fields",
			ctx:  context.Background(),
			parent: []metav1.ManagedFieldsEntry{
				managedEntry("apply", metav1.ManagedFieldsOperationApply, tappVersion, `{"f:spec":{"f:replicas":{},"f:serviceName":{}}}`),
			},
			scaleFields: []metav1.ManagedFieldsEntry{
				managedEntry("scaler", metav1.ManagedFieldsOperationUpdate, scaleVersion, replicas),
			},
			wantOld: map[string]metav1.ManagedFieldsEntry{
				"apply": managedEntry("apply", metav1.ManagedFieldsOperationApply, scaleVersion, replicas),
			},
			wantParent: map[string]metav1.ManagedFieldsEntry{
				"apply":  managedEntry("apply", metav1.ManagedFieldsOperationApply, tappVersion, `{"f:spec":{"f:serviceName":{}}}`),
				"scaler": managedEntry("scaler", metav1.ManagedFieldsOperationUpdate, tappVersion, replicas),
			},
		},
		{
			name: "apply owning only replicas loses its entry; request group version from the context",
			ctx: genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{
				APIGroup: "apps.tkestack.io", APIVersion: "v1", Resource: "tapps", Subresource: "scale",
			}),
			parent: []metav1.ManagedFieldsEntry{
				managedEntry("apply", metav1.ManagedFieldsOperationApply, tappVersion, replicas),
				managedEntry("other", metav1.ManagedFieldsOperationUpdate, tappVersion, `{"f:metadata":{"f:labels":{"f:team":{}}}}`),
			},
			scaleFields: []metav1.ManagedFieldsEntry{
				managedEntry("scaler", metav1.ManagedFieldsOperationUpdate, scaleVersion, replicas),
			},
			wantOld: map[string]metav1.ManagedFieldsEntry{
				"apply": managedEntry("apply", metav1.ManagedFieldsOperationApply, scaleVersion, replicas),
			},
			wantParent: map[string]metav1.ManagedFieldsEntry{
				"other":  managedEntry("other", metav1.ManagedFieldsOperationUpdate, tappVersion, `{"f:metadata":{"f:labels":{"f:team":{}}}}`),
				"scaler": managedEntry("scaler", metav1.ManagedFieldsOperationUpdate, tappVersion, replicas),
			},
		},
		{
			name: "owner kept when it stays in the scale's managed fields",
			ctx:  context.Background(),
			parent: []metav1.ManagedFieldsEntry{
				managedEntry("apply", metav1.ManagedFieldsOperationApply, tappVersion, `{"f:spec":{"f:replicas":{},"f:serviceName":{}}}`),
			},
			scaleFields: []metav1.ManagedFieldsEntry{
				managedEntry("apply", metav1.ManagedFieldsOperationApply, scaleVersion, replicas),
			},
			wantOld: map[string]metav1.ManagedFieldsEntry{
				"apply": managedEntry("apply", metav1.ManagedFieldsOperationApply, scaleVersion, replicas),
			},
			wantParent: map[string]metav1.ManagedFieldsEntry{
				"apply": managedEntry("apply", metav1.ManagedFieldsOperationApply, tappVersion, `{"f:spec":{"f:replicas":{},"f:serviceName":{}}}`),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := validTApp()
			old.ManagedFields = tc.parent
			var seenOld *scalescheme.Scale
			objInfo := rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, oldObj runtime.Object) (runtime.Object, error) {
				seenOld = oldObj.(*scalescheme.Scale)
				s := seenOld.DeepCopy()
				s.Spec.Replicas = 9
				s.ManagedFields = tc.scaleFields
				return s, nil
			})
			obj, err := (&scaleUpdatedObjectInfo{name: "web", reqObjInfo: objInfo}).UpdatedObject(tc.ctx, old)
			if err != nil {
				t.Fatal(err)
			}
			if got := managedByManager(seenOld.ManagedFields); !reflect.DeepEqual(got, tc.wantOld) {
				t.Errorf("old scale managed fields = %v, want %v", got, tc.wantOld)
			}
			tapp := obj.(*tkestack.TApp)
			if tapp.Spec.Replicas != 9 {
				t.Errorf("replicas = %d, want 9", tapp.Spec.Replicas)
			}
			if got := managedByManager(tapp.ManagedFields); !reflect.DeepEqual(got, tc.wantParent) {
				t.Errorf("parent managed fields = %v, want %v", got, tc.wantParent)
			}
		})
	}
}
