package statuswrite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	yurtfake "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
)

type counter map[string]int

func (c counter) CountAction(action string, err error) {
	if err != nil {
		action += "-error"
	}
	c[action]++
}

// withReady returns the write of a status of ready nodes that applies to any object.
func withReady(ready int32) func(*v1alpha1.NodePool) (*v1alpha1.NodePool, bool) {
	return func(p *v1alpha1.NodePool) (*v1alpha1.NodePool, bool) {
		if p.Status.ReadyNodeNum == ready {
			return p, false
		}
		p = p.DeepCopy()
		p.Status.ReadyNodeNum = ready
		return p, true
	}
}

func setup(t *testing.T) (*yurtfake.Clientset, *v1alpha1.NodePool) {
	cached := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"}}
	client := yurtfake.NewSimpleClientset(cached.DeepCopy()) //nolint:staticcheck // the fake's apply tracker has no NodePool schema
	return client, cached
}

func count(client *yurtfake.Clientset, verb string) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

func TestWriteOnlyWhenDifferent(t *testing.T) {
	client, cached := setup(t)
	c := counter{}
	if err := Write(context.Background(), client.OpenYurtAppsV1alpha1().NodePools(), "a", cached, withReady(0), "m", c); err != nil {
		t.Fatal(err)
	}
	if got := count(client, "update"); got != 0 {
		t.Errorf("%d writes of an unchanged status, want 0", got)
	}
	if err := Write(context.Background(), client.OpenYurtAppsV1alpha1().NodePools(), "a", cached, withReady(2), "m", c); err != nil {
		t.Fatal(err)
	}
	a := client.Actions()
	if len(a) != 1 || a[0].GetVerb() != "update" || a[0].GetSubresource() != "status" {
		t.Fatalf("actions = %v, want one status update", a)
	}
	if cached.Status.ReadyNodeNum != 0 {
		t.Error("the cached object was modified")
	}
	if c["update-status"] != 1 {
		t.Errorf("counted %v", c)
	}
}

// TestWriteConflictRereads: a conflict (the cache was behind) is retried on a fresh read, and the computed
// status is applied to that object.
func TestWriteConflictRereads(t *testing.T) {
	client, cached := setup(t)
	conflicts := 1
	client.PrependReactor("update", "nodepools", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(v1alpha1.Resource("nodepools"), "a", nil)
		}
		if rv := action.(clienttesting.UpdateAction).GetObject().(*v1alpha1.NodePool).ResourceVersion; rv != "2" {
			t.Errorf("retried on resourceVersion %q, want the fresh read's 2", rv)
		}
		return false, nil, nil
	})
	// Someone writes the pool after the cache saw it.
	fresh := cached.DeepCopy()
	fresh.ResourceVersion = "2"
	fresh.Labels = map[string]string{"x": "y"}
	if err := client.Tracker().Update(v1alpha1.SchemeGroupVersion.WithResource("nodepools"), fresh, ""); err != nil {
		t.Fatal(err)
	}
	c := counter{}
	if err := Write(context.Background(), client.OpenYurtAppsV1alpha1().NodePools(), "a", cached, withReady(3), "m", c); err != nil {
		t.Fatal(err)
	}
	if count(client, "get") != 1 || count(client, "update") != 2 {
		t.Errorf("actions = %v, want update, get, update", client.Actions())
	}
	got, err := client.OpenYurtAppsV1alpha1().NodePools().Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ReadyNodeNum != 3 || got.Labels["x"] != "y" {
		t.Errorf("pool = %+v, want the status written on the fresh object", got)
	}
	if c["update-status-error"] != 1 || c["update-status"] != 1 {
		t.Errorf("counted %v", c)
	}
}

// TestWriteConflictFreshStatusSame: when the fresh object already carries the status, nothing more is written.
func TestWriteConflictFreshStatusSame(t *testing.T) {
	client, cached := setup(t)
	client.PrependReactor("update", "nodepools", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1alpha1.Resource("nodepools"), "a", nil)
	})
	fresh := cached.DeepCopy()
	fresh.Status.ReadyNodeNum = 3
	if err := client.Tracker().Update(v1alpha1.SchemeGroupVersion.WithResource("nodepools"), fresh, ""); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), client.OpenYurtAppsV1alpha1().NodePools(), "a", cached, withReady(3), "m", counter{}); err != nil {
		t.Fatal(err)
	}
	if got := count(client, "update"); got != 1 {
		t.Errorf("%d writes, want 1 (the fresh object needs none)", got)
	}
}

// TestWriteConflictGivesUp: conflicts that persist end in the conflict, for the work loop to requeue.
func TestWriteConflictGivesUp(t *testing.T) {
	client, cached := setup(t)
	client.PrependReactor("update", "nodepools", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1alpha1.Resource("nodepools"), "a", nil)
	})
	err := Write(context.Background(), client.OpenYurtAppsV1alpha1().NodePools(), "a", cached, withReady(3), "m", counter{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("error = %v, want a conflict", err)
	}
	if got := count(client, "update"); got != 5 {
		t.Errorf("%d writes, want 5 (retry.DefaultRetry)", got)
	}
}

// TestWriteOtherErrorNotRetried: an error other than a conflict is returned at once.
func TestWriteOtherErrorNotRetried(t *testing.T) {
	client, cached := setup(t)
	client.PrependReactor("update", "nodepools", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1alpha1.Resource("nodepools"), "a", nil)
	})
	err := Write(context.Background(), client.OpenYurtAppsV1alpha1().NodePools(), "a", cached, withReady(3), "m", counter{})
	if !apierrors.IsForbidden(err) || count(client, "update") != 1 || count(client, "get") != 0 {
		t.Errorf("error = %v, actions %v: want one forbidden write", err, client.Actions())
	}
}

// TestWriteCanceled: a write that fails because the context was cancelled (the server stopping) is an error,
// never nil (retry.OnError swallows errors that wait.Interrupted matches), after a conflict or without one.
func TestWriteCanceled(t *testing.T) {
	for _, conflictFirst := range []bool{false, true} {
		client, cached := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		writes := 0
		client.PrependReactor("update", "nodepools", func(clienttesting.Action) (bool, runtime.Object, error) {
			writes++
			if conflictFirst && writes == 1 {
				return true, nil, apierrors.NewConflict(v1alpha1.Resource("nodepools"), "a", nil)
			}
			cancel()
			return true, nil, fmt.Errorf("client rate limiter Wait returned an error: %w", context.Canceled)
		})
		err := Write(ctx, client.OpenYurtAppsV1alpha1().NodePools(), "a", cached, withReady(3), "m", counter{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("conflict first %v: error = %v, want the cancellation", conflictFirst, err)
		}
	}
}

// versionedPools is a NodePool store that behaves as an API server does for status writes: an update must
// carry the stored resourceVersion (otherwise Conflict) and raises it.
type versionedPools struct {
	stored       v1alpha1.NodePool
	gets, writes int
}

func (p *versionedPools) Get(_ context.Context, name string, _ metav1.GetOptions) (*v1alpha1.NodePool, error) {
	p.gets++
	return p.stored.DeepCopy(), nil
}

func (p *versionedPools) UpdateStatus(_ context.Context, obj *v1alpha1.NodePool, _ metav1.UpdateOptions) (*v1alpha1.NodePool, error) {
	p.writes++
	if obj.ResourceVersion != p.stored.ResourceVersion {
		return nil, apierrors.NewConflict(v1alpha1.Resource("nodepools"), obj.Name, errors.New("the object has been modified"))
	}
	rv, _ := strconv.Atoi(obj.ResourceVersion)
	p.stored.Status = obj.Status
	p.stored.ResourceVersion = strconv.Itoa(rv + 1)
	return p.stored.DeepCopy(), nil
}

// TestWrittenWritesFromItsLastWrite: syncs that follow one another with the cache still at the version
// before the first write make no conflicting write and no read; a newer cache, another object of the name,
// or Forget end the memory.
func TestWrittenWritesFromItsLastWrite(t *testing.T) {
	cached := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u1", ResourceVersion: "7"}}
	pools := &versionedPools{stored: *cached.DeepCopy()}
	var w Written[*v1alpha1.NodePool]
	ctx := context.Background()
	for ready := int32(1); ready <= 3; ready++ {
		if err := w.Write(ctx, pools, "a", cached, withReady(ready), "m", counter{}); err != nil {
			t.Fatal(err)
		}
	}
	if pools.writes != 3 || pools.gets != 0 || pools.stored.Status.ReadyNodeNum != 3 {
		t.Errorf("%d writes, %d reads, status %+v: want 3 writes from the last written version, no read", pools.writes, pools.gets, pools.stored.Status)
	}
	// Nothing changes: nothing is written, although the cache still shows readiness 0.
	if err := w.Write(ctx, pools, "a", cached, withReady(3), "m", counter{}); err != nil || pools.writes != 3 {
		t.Errorf("error %v, %d writes: want no write of a status the last write already made", err, pools.writes)
	}

	// The cache caught up: it is used (and the memory dropped).
	caughtUp := pools.stored.DeepCopy()
	if got := w.latest("a", caughtUp); got != caughtUp {
		t.Errorf("latest = %v, want the cache's copy once it is as new", got.ResourceVersion)
	}
	if _, ok := w.objs["a"]; ok {
		t.Error("the memory was kept once the cache showed the write")
	}

	// Another object of the name, or a remembered version that is not newer: the cache's copy.
	w.objs = map[string]*v1alpha1.NodePool{"a": pools.stored.DeepCopy()}
	other := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u2", ResourceVersion: "3"}}
	if got := w.latest("a", other); got != other {
		t.Error("latest took the memory of another object of the name")
	}
	w.objs = map[string]*v1alpha1.NodePool{"a": pools.stored.DeepCopy()}
	w.Forget("a")
	if got := w.latest("a", cached); got != cached {
		t.Error("latest used a memory Forget dropped")
	}
}

// TestWrittenSeen: what is remembered is dropped once the cache shows that version or a newer one, or
// another object of the name, and kept while the cache is behind.
func TestWrittenSeen(t *testing.T) {
	written := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u1", ResourceVersion: "8"}}
	for _, tc := range []struct {
		name string
		seen metav1.ObjectMeta
		kept bool
	}{
		{"cache behind", metav1.ObjectMeta{Name: "a", UID: "u1", ResourceVersion: "7"}, true},
		{"cache shows the write", metav1.ObjectMeta{Name: "a", UID: "u1", ResourceVersion: "8"}, false},
		{"cache newer", metav1.ObjectMeta{Name: "a", UID: "u1", ResourceVersion: "12"}, false},
		{"another object of the name", metav1.ObjectMeta{Name: "a", UID: "u2", ResourceVersion: "3"}, false},
		{"resourceVersion not a number", metav1.ObjectMeta{Name: "a", UID: "u1", ResourceVersion: "x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w Written[*v1alpha1.NodePool]
			w.objs = map[string]*v1alpha1.NodePool{"a": written.DeepCopy(), "b": written.DeepCopy()}
			w.Seen("a", &v1alpha1.NodePool{ObjectMeta: tc.seen})
			if _, kept := w.objs["a"]; kept != tc.kept {
				t.Errorf("kept %v, want %v", kept, tc.kept)
			}
			if _, kept := w.objs["b"]; !kept {
				t.Error("Seen of a dropped b")
			}
		})
	}
	var empty Written[*v1alpha1.NodePool]
	empty.Seen("a", written) // nothing remembered: no panic, nothing added
	if len(empty.objs) != 0 {
		t.Errorf("Seen added %v", empty.objs)
	}
}
