package manager

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// The controllers' clients of this server's own objects send and ask for protobuf, as kube-controller-manager's
// clients of built-in objects do: the shared client (informers) and each controller's client.
func TestClientsOfOwnObjectsSpeakProtobuf(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer server.Close()
	config := &rest.Config{Host: server.URL}

	m, err := newManager(t.Context(), NewOptions(), config, config)
	if err != nil {
		t.Fatal(err)
	}
	defer m.broadcaster.Shutdown()
	_, _, perController, err := m.newClients()
	if err != nil {
		t.Fatal(err)
	}
	tapp := &tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	_, _ = m.client.TKEStackAppsV1().TApps("ns").Create(t.Context(), tapp, metav1.CreateOptions{})
	_, _ = perController.TKEStackAppsV1().TApps("ns").Update(t.Context(), tapp, metav1.UpdateOptions{})
	_, _ = perController.OpenYurtAppsV1alpha1().NodePools().List(t.Context(), metav1.ListOptions{})

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("the server saw %d requests, want 3", len(seen))
	}
	for i, h := range seen {
		if got, want := h.Get("Accept"), "application/vnd.kubernetes.protobuf,application/json"; got != want {
			t.Errorf("request %d: Accept %q, want %q", i, got, want)
		}
		if i < 2 {
			if got, want := h.Get("Content-Type"), "application/vnd.kubernetes.protobuf"; got != want {
				t.Errorf("request %d: Content-Type %q, want %q", i, got, want)
			}
		}
	}
}
