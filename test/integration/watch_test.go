package integration

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// nextEvent returns the next non-bookmark event of w, failing the test after timeout.
func nextEvent(t testing.TB, w watch.Interface, timeout time.Duration) watch.Event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed while waiting for an event")
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error event: %v", ev.Object)
			}
			return ev
		case <-deadline:
			t.Fatalf("no watch event within %v", timeout)
		}
	}
}

// expectNoEvent fails if w delivers a non-bookmark event within d.
func expectNoEvent(t testing.TB, w watch.Interface, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			name := ""
			if obj, ok := ev.Object.(*tkestackv1.TApp); ok {
				name = obj.Name
			}
			t.Errorf("unexpected watch event %s for %q", ev.Type, name)
			return
		case <-deadline:
			return
		}
	}
}

func eventTApp(t testing.TB, ev watch.Event) *tkestackv1.TApp {
	t.Helper()
	obj, ok := ev.Object.(*tkestackv1.TApp)
	if !ok {
		t.Fatalf("watch event %s carries %T, want *v1.TApp", ev.Type, ev.Object)
	}
	return obj
}

func TestTAppWatch(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	list, err := tapps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	w, err := tapps.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	created, err := tapps.Create(ctx, newTApp(ns, "watched", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	ev := nextEvent(t, w, 10*time.Second)
	if obj := eventTApp(t, ev); ev.Type != watch.Added || obj.Name != "watched" || obj.UID != created.UID {
		t.Fatalf("first event = %s %s, want ADDED watched", ev.Type, obj.Name)
	}

	created.Spec.Replicas = 6
	updated, err := tapps.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	ev = nextEvent(t, w, 10*time.Second)
	if obj := eventTApp(t, ev); ev.Type != watch.Modified || obj.Spec.Replicas != 6 || obj.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("second event = %s replicas=%d rv=%s, want MODIFIED replicas=6 rv=%s",
			ev.Type, obj.Spec.Replicas, obj.ResourceVersion, updated.ResourceVersion)
	}

	if err := tapps.Delete(ctx, "watched", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	ev = nextEvent(t, w, 10*time.Second)
	if obj := eventTApp(t, ev); ev.Type != watch.Deleted || obj.Name != "watched" {
		t.Fatalf("third event = %s %s, want DELETED watched", ev.Type, obj.Name)
	}
}

func TestFieldSelectors(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	otherNS := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	for _, name := range []string{"alpha", "beta"} {
		if _, err := tapps.Create(ctx, newTApp(ns, name, 1), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	if _, err := cs.TKEStackAppsV1().TApps(otherNS).Create(ctx, newTApp(otherNS, "alpha", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create alpha in %s: %v", otherNS, err)
	}

	// metadata.name on list.
	list, err := tapps.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=alpha"})
	if err != nil {
		t.Fatalf("list by name: %v", err)
	}
	if names := tappNames(list.Items); len(names) != 1 || names[0] != "alpha" || list.Items[0].Namespace != ns {
		t.Errorf("list metadata.name=alpha in %s = %v, want [alpha]", ns, names)
	}
	list, err = tapps.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=alpha"})
	if err != nil {
		t.Fatalf("list by name!=: %v", err)
	}
	if names := tappNames(list.Items); len(names) != 1 || names[0] != "beta" {
		t.Errorf("list metadata.name!=alpha = %v, want [beta]", names)
	}

	// metadata.namespace across all namespaces.
	all := cs.TKEStackAppsV1().TApps(metav1.NamespaceAll)
	list, err = all.List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + ns})
	if err != nil {
		t.Fatalf("list by namespace: %v", err)
	}
	if names := tappNames(list.Items); len(names) != 2 || names[0] != "alpha" || names[1] != "beta" {
		t.Errorf("list metadata.namespace=%s = %v, want [alpha beta]", ns, names)
	}
	for _, item := range list.Items {
		if item.Namespace != ns {
			t.Errorf("list metadata.namespace=%s returned an object of namespace %s", ns, item.Namespace)
		}
	}
	list, err = all.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=alpha,metadata.namespace=" + otherNS})
	if err != nil {
		t.Fatalf("list by name and namespace: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Namespace != otherNS {
		t.Errorf("list metadata.name=alpha,metadata.namespace=%s returned %d items, want the one in %s", otherNS, len(list.Items), otherNS)
	}

	// An unsupported field is rejected.
	if _, err := tapps.List(ctx, metav1.ListOptions{FieldSelector: "spec.replicas=1"}); err == nil {
		t.Errorf("list with field selector spec.replicas=1 succeeded, want an error for an unsupported field")
	}

	// metadata.name on watch.
	w, err := tapps.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=alpha", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch by name: %v", err)
	}
	defer w.Stop()
	for _, name := range []string{"beta", "alpha"} {
		obj := mustGetTApp(t, cs, ns, name)
		obj.Spec.Replicas = 2
		if _, err := tapps.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update %s: %v", name, err)
		}
	}
	ev := nextEvent(t, w, 10*time.Second)
	if obj := eventTApp(t, ev); ev.Type != watch.Modified || obj.Name != "alpha" || obj.Namespace != ns {
		t.Fatalf("first event of watch metadata.name=alpha = %s %s/%s, want MODIFIED %s/alpha", ev.Type, obj.Namespace, obj.Name, ns)
	}
	// Events of beta and of alpha in the other namespace never show up.
	other := mustGetTApp(t, cs, otherNS, "alpha")
	other.Spec.Replicas = 3
	if _, err := cs.TKEStackAppsV1().TApps(otherNS).Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update alpha in %s: %v", otherNS, err)
	}
	if err := tapps.Delete(ctx, "beta", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete beta: %v", err)
	}
	expectNoEvent(t, w, time.Second)

	// metadata.namespace on an all-namespaces watch.
	wns, err := all.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + otherNS})
	if err != nil {
		t.Fatalf("watch by namespace: %v", err)
	}
	defer wns.Stop()
	// Without a resourceVersion the watch starts with ADDED for the existing object in otherNS only.
	ev = nextEvent(t, wns, 10*time.Second)
	if obj := eventTApp(t, ev); ev.Type != watch.Added || obj.Namespace != otherNS || obj.Name != "alpha" {
		t.Fatalf("first event of watch metadata.namespace=%s = %s %s/%s, want ADDED %s/alpha", otherNS, ev.Type, obj.Namespace, obj.Name, otherNS)
	}
	if _, err := tapps.Create(ctx, newTApp(ns, "gamma", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create gamma: %v", err)
	}
	if _, err := cs.TKEStackAppsV1().TApps(otherNS).Create(ctx, newTApp(otherNS, "delta", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create delta: %v", err)
	}
	ev = nextEvent(t, wns, 10*time.Second)
	if obj := eventTApp(t, ev); ev.Type != watch.Added || obj.Namespace != otherNS || obj.Name != "delta" {
		t.Fatalf("second event of watch metadata.namespace=%s = %s %s/%s, want ADDED %s/delta (gamma is in %s)",
			otherNS, ev.Type, obj.Namespace, obj.Name, otherNS, ns)
	}
}

// TestTAppWatchList streams the initial state as a watch (sendInitialEvents), as informers with the
// WatchList feature do: ADDED for every existing object, then a BOOKMARK marking the end of the initial events.
func TestTAppWatchList(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)
	for _, name := range []string{"one", "two"} {
		if _, err := tapps.Create(ctx, newTApp(ns, name, 1), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	sendInitialEvents := true
	w, err := tapps.Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    &sendInitialEvents,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		t.Fatalf("watch with sendInitialEvents: %v", err)
	}
	defer w.Stop()

	var added []string
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed before the initial-events-end bookmark; added %v", added)
			}
			obj := eventTApp(t, ev)
			switch ev.Type {
			case watch.Added:
				added = append(added, obj.Name)
			case watch.Bookmark:
				if obj.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
				if obj.ResourceVersion == "" {
					t.Errorf("initial-events-end bookmark has no resourceVersion")
				}
				done = true
			default:
				t.Fatalf("unexpected %s event during the initial events", ev.Type)
			}
		case <-deadline:
			t.Fatalf("no initial-events-end bookmark within 10s; added %v", added)
		}
	}
	if len(added) != 2 || added[0] != "one" || added[1] != "two" {
		t.Errorf("initial ADDED events = %v, want [one two]", added)
	}

	// The stream continues with live events.
	if err := tapps.Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	ev := nextEvent(t, w, 10*time.Second)
	if obj := eventTApp(t, ev); ev.Type != watch.Deleted || obj.Name != "one" {
		t.Errorf("event after the initial events = %s %s, want DELETED one", ev.Type, obj.Name)
	}
}
