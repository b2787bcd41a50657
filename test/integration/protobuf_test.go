package integration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// The namespace controller and the garbage collector use the metadata client, which prefers protobuf and
// also accepts JSON. Our types have no protobuf encoding, so the server must answer in JSON; an encoding
// error here leaves namespaces stuck in Terminating.
func TestProtobufPreferringClients(t *testing.T) {
	s := sharedServer(t)
	ctx := testContext(t)
	ns := newNamespace(t)
	cs := clientset(t, s)
	for _, name := range []string{"a", "b"} {
		if _, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, newTApp(ns, name, 1), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating TApp %s: %v", name, err)
		}
	}
	if _, err := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(ctx, newYurtAppDaemon(ns, "yad"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating YurtAppDaemon: %v", err)
	}

	cfg := rest.CopyConfig(s.Config)
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tapps := schema.GroupVersionResource{Group: "apps.tkestack.io", Version: "v1", Resource: "tapps"}
	yads := schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "yurtappdaemons"}

	list, err := client.Resource(tapps).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("metadata list of tapps: %v", err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("metadata list returned %d tapps, want 2", len(list.Items))
	}
	for _, gvr := range []schema.GroupVersionResource{tapps, yads} {
		if err := client.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatalf("metadata delete collection of %s: %v", gvr.Resource, err)
		}
		left, err := client.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("metadata list of %s: %v", gvr.Resource, err)
		}
		if len(left.Items) != 0 {
			t.Errorf("%d %s left after delete collection", len(left.Items), gvr.Resource)
		}
	}
}
