package manager

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestOverConnectionsSpreadsRequests: requests in flight at once are spread evenly over the connections, and
// sequential requests reuse them (no connection beyond n is dialled).
func TestOverConnectionsSpreadsRequests(t *testing.T) {
	const n, perConn = 3, 4
	var mu sync.Mutex
	remotes := map[string]int{}
	arrived := make(chan struct{}, n*perConn)
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			t.Errorf("request over %s, want HTTP/2", r.Proto)
		}
		mu.Lock()
		remotes[r.RemoteAddr]++
		mu.Unlock()
		if r.URL.Path == "/held" {
			arrived <- struct{}{}
			<-release
		}
		w.Write([]byte("{}"))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	base := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}}
	cfg, err := overConnections(base, n)
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}

	var wg sync.WaitGroup
	for range n * perConn {
		wg.Go(func() { get("/held") })
	}
	for range n * perConn {
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("requests did not arrive")
		}
	}
	mu.Lock()
	if len(remotes) != n {
		t.Errorf("%d requests in flight came over %d connections, want %d", n*perConn, len(remotes), n)
	}
	for remote, count := range remotes {
		if count != perConn {
			t.Errorf("connection %s carries %d requests, want %d (spread evenly)", remote, count, perConn)
		}
	}
	mu.Unlock()
	close(release)
	wg.Wait()

	for range 20 {
		get("/")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(remotes) != n {
		t.Errorf("after sequential requests: %d connections, want %d", len(remotes), n)
	}
}
