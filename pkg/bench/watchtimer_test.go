package bench

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
)

// A watch the server ends in the middle of a cell is re-opened at the last resource version seen: the events
// after it are timed, and the re-opening is counted.
func TestWatchTimerReopensAWatchTheServerEnded(t *testing.T) {
	client := fake.NewSimpleClientset()
	var mu sync.Mutex
	var watchers []*watch.FakeWatcher
	var resourceVersions []string
	client.PrependWatchReactor("tapps", func(action clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		w := watch.NewFakeWithChanSize(10, false)
		watchers = append(watchers, w)
		resourceVersions = append(resourceVersions, action.(clienttesting.WatchActionImpl).WatchRestrictions.ResourceVersion)
		return true, w, nil
	})
	watcher := func(i int) *watch.FakeWatcher {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := len(watchers)
			mu.Unlock()
			if n > i {
				mu.Lock()
				defer mu.Unlock()
				return watchers[i]
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("watch %d was not opened", i)
		return nil
	}
	updated := func(name, rv string) runtime.Object {
		return &tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv,
			Annotations: map[string]string{sentAnnotation: strconv.FormatInt(time.Now().UnixNano(), 10)}}}
	}

	timer, err := startWatchTimer(context.Background(), client.TKEStackAppsV1())
	if err != nil {
		t.Fatal(err)
	}
	first := watcher(0)
	first.Modify(updated("a", "7"))
	first.Stop() // the server ends the watch
	watcher(1).Modify(updated("b", "8"))

	samples, missing, reopened := timer.wait(2, 10*time.Second)
	if len(samples) != 2 || missing != 0 {
		t.Errorf("samples %d, missing %d; want 2 and 0", len(samples), missing)
	}
	if reopened != 1 {
		t.Errorf("re-opened %d times, want 1", reopened)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(resourceVersions) != 2 || resourceVersions[1] != "7" {
		t.Errorf("watches opened at %q, want the second at the last resource version seen, 7", resourceVersions)
	}
}

// Events that never come are counted as missing, and a watch the benchmark stops is not re-opened.
func TestWatchTimerCountsMissingEvents(t *testing.T) {
	client := fake.NewSimpleClientset()
	opened := 0
	var mu sync.Mutex
	client.PrependWatchReactor("tapps", func(clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		opened++
		mu.Unlock()
		return true, watch.NewFake(), nil
	})
	timer, err := startWatchTimer(context.Background(), client.TKEStackAppsV1())
	if err != nil {
		t.Fatal(err)
	}
	samples, missing, reopened := timer.wait(3, 100*time.Millisecond)
	if len(samples) != 0 || missing != 3 || reopened != 0 {
		t.Errorf("samples %d, missing %d, re-opened %d; want 0, 3, 0", len(samples), missing, reopened)
	}
	mu.Lock()
	defer mu.Unlock()
	if opened != 1 {
		t.Errorf("opened %d watches, want 1", opened)
	}
}
