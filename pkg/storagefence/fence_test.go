package storagefence

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newTestFence() *Fence {
	return New(&Store{Where: "etcd test"}, &Cluster{Name: types.NamespacedName{Namespace: "ns", Name: "record"}}, nil, time.Minute)
}

var refused = Verdict{Action: Refuse, Reason: ReasonEmptyStore, Message: "the store is empty"}

func TestWithFence(t *testing.T) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	codecs := serializer.NewCodecFactory(scheme)
	f := newTestFence()
	handler := f.WithFence(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }),
		[]string{"apps.tkestack.io"}, codecs)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	fencedPaths := []string{"/apis/apps.tkestack.io/v1", "/apis/apps.tkestack.io/v1/", "/apis/apps.tkestack.io/v1/namespaces/a/tapps/b"}
	openPaths := []string{"/apis", "/apis/apps.tkestack.io", "/apis/apps.tkestack.io/", "/apis/apps/v1/deployments", "/readyz", "/openapi/v2"}

	check := func(state string, wantFenced int) {
		t.Helper()
		for _, p := range fencedPaths {
			if code, body := get(p); code != wantFenced {
				t.Errorf("%s: GET %s = %d %s, want %d", state, p, code, body, wantFenced)
			}
		}
		for _, p := range openPaths {
			if code, _ := get(p); code != http.StatusOK {
				t.Errorf("%s: GET %s = %d, want 200", state, p, code)
			}
		}
	}
	check("before the first check", http.StatusServiceUnavailable)
	if err := f.HealthChecker().Check(nil); err == nil || !strings.Contains(err.Error(), ReasonNotChecked) {
		t.Errorf("readiness before the first check: %v", err)
	}

	f.set(refused)
	check("refused", http.StatusServiceUnavailable)
	if _, body := get(fencedPaths[2]); !strings.Contains(body, ReasonEmptyStore) || !strings.Contains(body, `"code":503`) {
		t.Errorf("the 503 does not say why: %s", body)
	}
	if err := f.HealthChecker().Check(nil); err == nil || !strings.Contains(err.Error(), ReasonEmptyStore) {
		t.Errorf("readiness while refused: %v", err)
	}

	f.set(Verdict{Action: Serve})
	check("serving", http.StatusOK)
	if err := f.HealthChecker().Check(nil); err != nil {
		t.Errorf("readiness while serving: %v", err)
	}

	// Waiting decides nothing: a serving server keeps serving, a refusing one keeps refusing.
	f.set(Verdict{Action: Wait, Reason: ReasonClusterUnreadable, Message: "unreachable"})
	check("serving, then waiting", http.StatusOK)
	f.set(refused)
	f.set(Verdict{Action: Wait, Reason: ReasonClusterUnreadable, Message: "unreachable"})
	check("refused, then waiting", http.StatusServiceUnavailable)
	if err := f.HealthChecker().Check(nil); err == nil || !strings.Contains(err.Error(), ReasonEmptyStore) {
		t.Errorf("readiness while refused and waiting: %v", err)
	}
}

func TestRunWhileServing(t *testing.T) {
	f := newTestFence()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 10)
	stopped := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		done <- f.RunWhileServing(ctx, func(ctx context.Context) error {
			started <- struct{}{}
			<-ctx.Done()
			stopped <- struct{}{}
			return nil
		})
	}()
	expect := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("not %s", what)
		}
	}
	expectNot := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
			t.Fatalf("%s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
	expectNot(started, "started before the store was checked")
	f.set(refused)
	expectNot(started, "started while refused")
	f.set(Verdict{Action: Serve})
	expect(started, "started once serving")
	f.set(refused)
	expect(stopped, "stopped once refused")
	expectNot(started, "started again while refused")
	f.set(Verdict{Action: Serve})
	expect(started, "started again once serving")
	// A store that cannot be read stops the controllers until a check reads it again; a Wait verdict alone
	// (one check that could not read it) does not.
	f.set(Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: "etcd down"})
	expectNot(stopped, "stopped by one unreadable check")
	f.pause(Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: "the store cannot be read"})
	expect(stopped, "stopped while the store cannot be read")
	if serving, v := f.State(); serving || v.Reason != ReasonStoreUnreadable {
		t.Errorf("state after the pause = %v, %+v; want not serving, %s", serving, v, ReasonStoreUnreadable)
	}
	f.set(Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: "etcd down"})
	expectNot(started, "started while the store cannot be read")
	f.set(Verdict{Action: Serve})
	expect(started, "started again once the store is read")
	cancel()
	expect(stopped, "stopped with its context")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A serving replica whose store stops answering stops serving within a few probes, whatever its checks do.
func TestProbeStorePausesAnUnreadableStore(t *testing.T) {
	// Nothing listens on a port the test has just closed: every read fails.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	f := New(&Store{client: client, prefix: "/registry", Where: "etcd " + addr}, &Cluster{Name: types.NamespacedName{Namespace: "ns", Name: "record"}}, nil, time.Hour)
	f.set(Verdict{Action: Serve})
	_, changed := f.watch()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.probeStore(ctx)
	select {
	case <-changed:
	case <-time.After(time.Duration(unreadableProbes+3) * 2 * storeProbePeriod):
		t.Fatal("still serving with a store that cannot be read")
	}
	if serving, v := f.State(); serving || v.Reason != ReasonStoreUnreadable {
		t.Errorf("state = %v, %+v; want not serving, %s", serving, v, ReasonStoreUnreadable)
	}
}

// A check that began before the probe paused the server does not serve again; one that began after does.
func TestACheckFromBeforeAPauseDoesNotServe(t *testing.T) {
	f := newTestFence()
	f.set(Verdict{Action: Serve})
	before := f.pauses
	f.pause(Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: "the store cannot be read"})
	if f.setUnlessPausedSince(Verdict{Action: Serve}, before) {
		t.Error("a check that began before the pause was applied")
	}
	if serving, v := f.State(); serving || v.Reason != ReasonStoreUnreadable {
		t.Errorf("state = %v, %+v; want not serving, %s", serving, v, ReasonStoreUnreadable)
	}
	if !f.setUnlessPausedSince(Verdict{Action: Serve}, f.pauses) {
		t.Error("a check that began after the pause was not applied")
	}
	if serving, _ := f.State(); !serving {
		t.Error("not serving after a check that began after the pause")
	}
}
