package storagefence

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestClusterRecord(t *testing.T) {
	ctx := context.Background()
	c := &Cluster{Client: fake.NewClientset(), Name: DefaultRecord}
	if rec, _ := c.Read(ctx); rec.State != ClusterAbsent {
		t.Fatalf("no ConfigMap: %s, want Absent", rec.State)
	}
	ours := Identity{ID: "ours", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := c.Create(ctx, ours, 10); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, Identity{ID: "late", Created: ours.Created}, 1); err == nil {
		t.Fatal("a second replica's create overwrote the record")
	}
	read := func() ClusterRecord {
		t.Helper()
		rec, _ := c.Read(ctx)
		if rec.State != ClusterPresent {
			t.Fatalf("record: %s (%v)", rec.State, rec.Err)
		}
		return rec
	}
	if rec := read(); rec.Identity != ours || rec.HighWater != 10 {
		t.Fatalf("record %+v, want %v at 10", rec, ours)
	}

	// The mark only moves forward, and only for the identity it names.
	for _, step := range []struct {
		id   string
		rev  int64
		want int64
	}{{"ours", 15, 15}, {"ours", 12, 15}, {"other", 40, 15}, {"ours", 16, 16}} {
		if err := c.AdvanceMark(ctx, Identity{ID: step.id}, step.rev); err != nil {
			t.Fatal(err)
		}
		if got := read().HighWater; got != step.want {
			t.Fatalf("after AdvanceMark(%s, %d): mark %d, want %d", step.id, step.rev, got, step.want)
		}
	}

	// A malformed record is unreadable: the server waits instead of guessing.
	cm, err := c.Client.CoreV1().ConfigMaps(DefaultRecord.Namespace).Get(ctx, DefaultRecord.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, broken := range []func(*corev1.ConfigMap){
		func(cm *corev1.ConfigMap) { delete(cm.Data, dataID) },
		func(cm *corev1.ConfigMap) { cm.Data[dataHighWater] = "many" },
		func(cm *corev1.ConfigMap) { cm.Data[dataCreated] = "yesterday" },
	} {
		bad := cm.DeepCopy()
		broken(bad)
		if _, err := parseRecord(bad); err == nil {
			t.Errorf("malformed record %v parsed", bad.Data)
		}
	}
}

// TestAdvanceMarkCanceled: a mark write that fails because the context was cancelled is an error, never nil
// (retry.OnError swallows errors that wait.Interrupted matches).
func TestAdvanceMarkCanceled(t *testing.T) {
	client := fake.NewClientset()
	c := &Cluster{Client: client, Name: DefaultRecord}
	ctx, cancel := context.WithCancel(context.Background())
	ours := Identity{ID: "ours", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := c.Create(ctx, ours, 10); err != nil {
		t.Fatal(err)
	}
	client.PrependReactor("update", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		cancel()
		return true, nil, fmt.Errorf("client rate limiter Wait returned an error: %w", context.Canceled)
	})
	if err := c.AdvanceMark(ctx, ours, 20); !errors.Is(err, context.Canceled) {
		t.Errorf("AdvanceMark with a cancelled write = %v, want the cancellation", err)
	}
}
