package tapp_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	scalescheme "k8s.io/client-go/scale/scheme"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/embeddedetcd"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/tkestack/tapp"
)

// newEtcdStorage starts an embedded etcd and returns the TApp storage on top of it.
func newEtcdStorage(t *testing.T) *tapp.Storage {
	t.Helper()
	// k8s.io/apiserver/pkg/storage/etcd3/testserver would need testify in go.mod; the server's own
	// embedded etcd needs nothing new.
	etcd, err := embeddedetcd.Start(embeddedetcd.Options{DataDir: t.TempDir(), CertDir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)

	storageConfig := storagebackend.NewDefaultConfig("/registry", apiserver.Codecs.LegacyCodec(tkestackv1.SchemeGroupVersion))
	storageConfig.Transport.ServerList = []string{etcd.ClientURL}
	storageConfig.Transport.CertFile, storageConfig.Transport.KeyFile, storageConfig.Transport.TrustedCAFile = etcd.CertFile, etcd.KeyFile, etcd.CAFile
	opts := generic.RESTOptions{
		StorageConfig:           storageConfig.ForResource(tkestack.Resource("tapps")),
		Decorator:               generic.UndecoratedStorage,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          "tapps",
	}
	s, err := tapp.NewStorage(apiserver.Scheme, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.TApp.Store.DestroyFunc() })
	return s
}

func storageTApp() *tkestack.TApp {
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}},
	}
	return &tkestack.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"team": "a"}},
		Spec: tkestack.TAppSpec{
			Replicas:            2,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template:            ptr.To(template),
			DefaultTemplateName: tkestack.DefaultTemplateName,
		},
		Status: tkestack.TAppStatus{Replicas: 99, AppStatus: tkestack.AppFailed},
	}
}

func TestStorageCreateScaleStatus(t *testing.T) {
	s := newEtcdStorage(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")

	// Create: status from the client is dropped, generation and scale selector are set.
	obj, err := s.TApp.Create(ctx, storageTApp(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := obj.(*tkestack.TApp)
	if created.Generation != 1 || created.Status.Replicas != 0 || created.Status.AppStatus != "" ||
		created.Status.ScaleLabelSelector != "app=x" || created.UID == "" || created.ResourceVersion == "" {
		t.Fatalf("created TApp = %+v / %+v", created.ObjectMeta, created.Status)
	}

	// Scale get.
	obj, err = s.Scale.Get(ctx, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale := obj.(*scalescheme.Scale)
	if scale.Spec.Replicas != 2 || scale.ResourceVersion != created.ResourceVersion || scale.UID != created.UID ||
		scale.Status.Selector == nil || scale.Status.Selector.MatchLabels["app"] != "x" {
		t.Fatalf("scale = %+v", scale)
	}

	// Scale update.
	scale.Spec.Replicas = 5
	obj, _, err = s.Scale.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scaled := obj.(*scalescheme.Scale)
	if scaled.Spec.Replicas != 5 || scaled.ResourceVersion == created.ResourceVersion {
		t.Errorf("updated scale = %+v, want 5 replicas and a new resource version", scaled)
	}
	obj, err = s.TApp.Get(ctx, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*tkestack.TApp)
	if got.Spec.Replicas != 5 || got.Generation != 2 {
		t.Errorf("TApp after scale: replicas %d generation %d, want 5 and 2", got.Spec.Replicas, got.Generation)
	}

	// A stale resource version conflicts; a bad replica count is invalid; a missing TApp is not found.
	for _, tc := range []struct {
		name    string
		target  string
		scale   *scalescheme.Scale
		wantErr func(error) bool
	}{
		{name: "stale", target: "web", scale: scale, wantErr: apierrors.IsConflict},
		{name: "negative", target: "web", scale: func() *scalescheme.Scale {
			s := scaled.DeepCopy()
			s.Spec.Replicas = -1
			return s
		}(), wantErr: apierrors.IsInvalid},
		{name: "missing", target: "nope", scale: func() *scalescheme.Scale {
			s := scaled.DeepCopy()
			s.Name = "nope"
			return s
		}(), wantErr: apierrors.IsNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.Scale.Update(ctx, tc.target, rest.DefaultUpdatedObjectInfo(tc.scale), rest.ValidateAllObjectFunc,
				rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err == nil || !tc.wantErr(err) {
				t.Errorf("err = %v, want a matching error", err)
			}
		})
	}

	// Status update: status changes, spec and labels do not, generation stays.
	update := got.DeepCopy()
	update.Status.Replicas = 5
	update.Status.ReadyReplicas = 4
	update.Status.AppStatus = tkestack.AppRunning
	update.Status.ObservedGeneration = 2
	update.Spec.Replicas = 1
	update.Labels["team"] = "b"
	obj, _, err = s.Status.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	statusUpdated := obj.(*tkestack.TApp)
	if statusUpdated.Status.Replicas != 5 || statusUpdated.Status.ReadyReplicas != 4 || statusUpdated.Status.AppStatus != tkestack.AppRunning {
		t.Errorf("status = %+v, want the new status", statusUpdated.Status)
	}
	if statusUpdated.Spec.Replicas != 5 || statusUpdated.Labels["team"] != "a" || statusUpdated.Generation != 2 {
		t.Errorf("status update changed spec/labels/generation: replicas %d labels %v generation %d",
			statusUpdated.Spec.Replicas, statusUpdated.Labels, statusUpdated.Generation)
	}

	// A main-resource update keeps the status just written.
	obj, err = s.TApp.Get(ctx, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	main := obj.(*tkestack.TApp).DeepCopy()
	main.Status = tkestack.TAppStatus{}
	main.Labels["team"] = "c"
	obj, _, err = s.TApp.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(main), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := obj.(*tkestack.TApp); u.Status.Replicas != 5 || u.Labels["team"] != "c" || u.Generation != 2 {
		t.Errorf("main update: status %+v labels %v generation %d", u.Status, u.Labels, u.Generation)
	}

	// The REST wrapper and the status subresource print the TApp table.
	if sn := s.TApp.ShortNames(); len(sn) != 1 || sn[0] != "tapp" {
		t.Errorf("short names = %v, want [tapp]", sn)
	}
	if c := s.TApp.Categories(); len(c) != 1 || c[0] != "all" {
		t.Errorf("categories = %v, want [all]", c)
	}
	for name, convertor := range map[string]rest.TableConvertor{"main": s.TApp, "status": s.Status} {
		table, err := convertor.ConvertToTable(ctx, obj, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(table.ColumnDefinitions) != 10 || table.ColumnDefinitions[1].Name != "Desired" || table.Rows[0].Cells[1] != int64(5) {
			t.Errorf("%s table = %+v, want the TApp columns", name, table)
		}
	}

	// Status update of a missing TApp does not create it.
	missing := storageTApp()
	missing.Name = "missing"
	if _, _, err := s.Status.Update(ctx, "missing", rest.DefaultUpdatedObjectInfo(missing), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, true, &metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("status update of a missing TApp: err = %v, want NotFound", err)
	}
}

// TestStorageLegacyDefaultTemplateNameUpdate resends an unchanged TApp that uses the legacy
// "DefaultTemplateName" key, as kubectl apply of an old manifest does: nothing is stored differently, so the
// generation must not move.
func TestStorageLegacyDefaultTemplateNameUpdate(t *testing.T) {
	s := newEtcdStorage(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	legacy := storageTApp()
	legacy.Spec.LegacyDefaultTemplateName = tkestack.DefaultTemplateName
	obj, err := s.TApp.Create(ctx, legacy, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := obj.(*tkestack.TApp)
	if created.Spec.LegacyDefaultTemplateName != "" || created.Generation != 1 {
		t.Fatalf("created: legacy %q generation %d, want it cleared and 1", created.Spec.LegacyDefaultTemplateName, created.Generation)
	}

	for i := 0; i < 2; i++ {
		resend := created.DeepCopy()
		resend.ResourceVersion = ""
		resend.Spec.LegacyDefaultTemplateName = tkestack.DefaultTemplateName
		obj, _, err = s.TApp.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(resend), rest.ValidateAllObjectFunc,
			rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if u := obj.(*tkestack.TApp); u.Generation != 1 || u.Spec.LegacyDefaultTemplateName != "" {
			t.Errorf("resend %d: generation %d legacy %q, want generation 1 and nothing stored", i, u.Generation, u.Spec.LegacyDefaultTemplateName)
		}
	}
}
