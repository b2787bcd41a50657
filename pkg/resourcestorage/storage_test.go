package resourcestorage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/embeddedetcd"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/tkestack/tapp"
	"github.com/tapp-io/tapp-apiserver/pkg/resourcestorage"
)

// tappStorage returns the TApp storage on an embedded etcd made by the backend, behind the watch cache when
// cached. The storage configuration names an etcd endpoint nothing listens on: every call must go
// in-process.
func tappStorage(t *testing.T, cached bool) *tapp.Storage {
	t.Helper()
	etcd, config := startEtcd(t)
	config.Transport.ServerList = []string{"https://127.0.0.1:1"}
	getter := resourcestorage.New(etcd.InProcessClient).RESTOptionsGetter(tappOptions(config), onlyTApps(t, cached))
	return newTAppStorage(t, getter)
}

// networkTAppStorage returns the TApp storage of the library on an etcd reached over the network, behind
// the watch cache whose storage interns when cached.
func networkTAppStorage(t *testing.T, cached bool) *tapp.Storage {
	t.Helper()
	_, config := startEtcd(t)
	return newTAppStorage(t, resourcestorage.InterningWatchCache(tappOptions(config), onlyTApps(t, cached)))
}

func startEtcd(t *testing.T) (*embeddedetcd.Etcd, *storagebackend.Config) {
	etcd, err := embeddedetcd.Start(embeddedetcd.Options{DataDir: t.TempDir(), CertDir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	config := storagebackend.NewDefaultConfig("/registry", apiserver.Codecs.LegacyCodec(tkestackv1.SchemeGroupVersion))
	config.Transport.ServerList = []string{etcd.ClientURL}
	config.Transport.CertFile, config.Transport.KeyFile, config.Transport.TrustedCAFile = etcd.CertFile, etcd.KeyFile, etcd.CAFile
	return etcd, config
}

func tappOptions(config *storagebackend.Config) generic.RESTOptions {
	return generic.RESTOptions{
		StorageConfig:           config.ForResource(tkestack.Resource("tapps")),
		Decorator:               generic.UndecoratedStorage,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          "/tapps",
	}
}

func onlyTApps(t *testing.T, cached bool) func(schema.GroupResource) bool {
	return func(r schema.GroupResource) bool {
		if r != tkestack.Resource("tapps") {
			t.Errorf("asked about the watch cache of %s", r)
		}
		return cached
	}
}

func newTAppStorage(t *testing.T, getter generic.RESTOptionsGetter) *tapp.Storage {
	t.Helper()
	s, err := tapp.NewStorage(apiserver.Scheme, getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.TApp.Store.DestroyFunc() })
	return s
}

func webTApp() *tkestack.TApp { return namedTApp("web") }

func namedTApp(name string) *tkestack.TApp {
	return &tkestack.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: tkestack.TAppSpec{
			Replicas: 1,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}},
			},
			DefaultTemplateName: tkestack.DefaultTemplateName,
		},
	}
}

// TestStorageInProcess creates, watches, updates, lists and deletes a TApp through storages made by the
// backend, with and without the watch cache.
func TestStorageInProcess(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "raw", true: "watch-cache"}[cached], func(t *testing.T) {
			s := tappStorage(t, cached)
			if _, isCache := s.TApp.Store.Storage.Storage.(interface{ Stop() }); isCache != cached {
				t.Fatalf("storage %T: behind the watch cache %v, want %v", s.TApp.Store.Storage.Storage, isCache, cached)
			}
			ctx, cancel := context.WithTimeout(genericapirequest.WithNamespace(context.Background(), "default"), 30*time.Second)
			defer cancel()
			obj, err := s.TApp.Create(ctx, webTApp(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			created := obj.(*tkestack.TApp)
			// The watch cache serves watches once it has read etcd.
			w, err := s.TApp.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: created.ResourceVersion})
			for tries := 0; err != nil && strings.Contains(err.Error(), "initializing") && tries < 100; tries++ {
				time.Sleep(100 * time.Millisecond)
				w, err = s.TApp.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: created.ResourceVersion})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			scaled := created.DeepCopy()
			scaled.Spec.Replicas = 3
			if _, _, err := s.TApp.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(scaled), rest.ValidateAllObjectFunc,
				rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-w.ResultChan():
				object := ev.Object
				if cached, ok := object.(runtime.CacheableObject); ok { // as the watch cache sends it
					object = cached.GetObject()
				}
				if tapp, ok := object.(*tkestack.TApp); ev.Type != watch.Modified || !ok || tapp.Spec.Replicas != 3 {
					t.Fatalf("watch event %s %+v, want the scale to 3", ev.Type, ev.Object)
				}
			case <-ctx.Done():
				t.Fatal("no watch event for the update")
			}
			// A list without a resource version is a consistent read: from the watch cache, it needs etcd's
			// progress notifications, which the library only uses once it knows the etcd serves them.
			list, err := s.TApp.List(ctx, &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if items := list.(*tkestack.TAppList).Items; len(items) != 1 || items[0].Spec.Replicas != 3 {
				t.Fatalf("list = %+v, want the one TApp at 3 replicas", items)
			}
			if _, _, err := s.TApp.Delete(ctx, "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.TApp.Get(ctx, "web", &metav1.GetOptions{}); err == nil {
				t.Fatal("the TApp is still there after its delete")
			}
		})
	}
}

// TestStorageTellsTheLibraryEtcdServesProgressRequests: without an endpoint to ask, the library would take
// the in-process etcd for one that does not serve watch progress requests, and read every consistent list
// from etcd instead of the watch cache.
func TestStorageTellsTheLibraryEtcdServesProgressRequests(t *testing.T) {
	tappStorage(t, true)
	deadline := time.Now().Add(20 * time.Second)
	for !etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress) {
		if time.Now().After(deadline) {
			t.Fatal("the library does not know that the embedded etcd serves watch progress requests")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatchCacheObjectsShareTheirParts lists two TApps made from one template from the watch cache, on the
// embedded etcd and on one reached over the network: they hold one copy of the template's containers. Read
// from etcd without the watch cache, each holds its own.
func TestWatchCacheObjectsShareTheirParts(t *testing.T) {
	for _, c := range []struct {
		name    string
		storage func(*testing.T, bool) *tapp.Storage
		cached  bool
	}{{"in-process", tappStorage, true}, {"network", networkTAppStorage, true}, {"in-process without a watch cache", tappStorage, false}} {
		t.Run(c.name, func(t *testing.T) {
			s := c.storage(t, c.cached)
			ctx, cancel := context.WithTimeout(genericapirequest.WithNamespace(context.Background(), "default"), 30*time.Second)
			defer cancel()
			var last string
			for _, name := range []string{"a", "b"} {
				obj, err := s.TApp.Create(ctx, namedTApp(name), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				last = obj.(*tkestack.TApp).ResourceVersion
			}
			// Not older than the last create: from the watch cache once it has seen it.
			var items []tkestack.TApp
			for tries := 0; len(items) < 2 && tries < 100; tries++ {
				list, err := s.TApp.List(ctx, &metainternalversion.ListOptions{ResourceVersion: last})
				if err != nil && !strings.Contains(err.Error(), "initializing") {
					t.Fatal(err)
				}
				if err == nil {
					items = list.(*tkestack.TAppList).Items
				}
				if len(items) < 2 {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if len(items) != 2 {
				t.Fatalf("listed %d TApps, want 2", len(items))
			}
			a, b := items[0].Spec.Template.Spec.Containers, items[1].Spec.Template.Spec.Containers
			if shared := &a[0] == &b[0]; shared != c.cached {
				t.Fatalf("the two TApps share their containers: %v, want %v", shared, c.cached)
			}
			// The internal TApp holds its template through a pointer so that the template itself is shared,
			// not only what it points to.
			if shared := items[0].Spec.Template == items[1].Spec.Template; shared != c.cached {
				t.Fatalf("the two TApps share their template: %v, want %v", shared, c.cached)
			}
			if a[0].Image != "nginx:1" || b[0].Image != "nginx:1" || items[0].Name == items[1].Name {
				t.Fatalf("listed %+v", items)
			}
		})
	}
}
