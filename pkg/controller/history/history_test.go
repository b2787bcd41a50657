package history

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
)

const (
	ns    = "ns"
	owner = types.UID("owner-uid")
)

// rev returns a revision of ns named name, controlled by ctrl (none when empty).
func rev(name string, ctrl types.UID, number int64, data string) *appsv1.ControllerRevision {
	r := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Data:       runtime.RawExtension{Raw: []byte(data)},
		Revision:   number,
	}
	if ctrl != "" {
		yes := true
		r.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Owner", Name: "o", UID: ctrl, Controller: &yes}}
	}
	return r
}

func deleting(r *appsv1.ControllerRevision) *appsv1.ControllerRevision {
	now := metav1.Now()
	r.DeletionTimestamp = &now
	return r
}

// newStore returns a Store whose cache holds cached and whose cluster holds cached and stored.
func newStore(t *testing.T, cached, stored []*appsv1.ControllerRevision) (Store, *fake.Clientset, map[string]int) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	var objs []runtime.Object
	for _, r := range cached {
		if err := indexer.Add(r); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, r.DeepCopy())
	}
	for _, r := range stored {
		objs = append(objs, r.DeepCopy())
	}
	client := fake.NewSimpleClientset(objs...)
	counts := map[string]int{}
	return Store{
		Lister:       appslisters.NewControllerRevisionLister(indexer),
		Client:       client,
		FieldManager: "test",
		CountAction:  func(action string, _ error) { counts[action]++ },
	}, client, counts
}

func TestSameData(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a":1,"b":2}`, `{"b":2, "a":1}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":1.0}`, false},
		{`{"a":12345678901234567890}`, `{"a":12345678901234567891}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`not json`, `{"a":1}`, false},
		{`not json`, `not json`, true},
	} {
		if got := SameData([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("SameData(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNewest(t *testing.T) {
	for _, tc := range []struct {
		numbers []int64
		want    int64
	}{
		{nil, 0},
		{[]int64{3}, 3},
		{[]int64{2, 7, 5}, 7},
	} {
		var revs []*appsv1.ControllerRevision
		for i, n := range tc.numbers {
			revs = append(revs, rev(fmt.Sprint("r", i), owner, n, "{}"))
		}
		if got := Newest(revs); got != tc.want {
			t.Errorf("Newest(%v) = %d, want %d", tc.numbers, got, tc.want)
		}
	}
}

func TestOwned(t *testing.T) {
	other := rev("other", "other-uid", 1, "{}")
	orphan := rev("orphan", "", 1, "{}")
	notController := rev("ref", "", 1, "{}")
	notController.OwnerReferences = []metav1.OwnerReference{{Kind: "Owner", Name: "o", UID: owner}}
	elsewhere := rev("elsewhere", owner, 1, "{}")
	elsewhere.Namespace = "other-ns"
	store, _, _ := newStore(t, []*appsv1.ControllerRevision{rev("a", owner, 1, "{}"), rev("b", owner, 2, "{}"), other, orphan, notController, elsewhere}, nil)
	owned, err := store.Owned(ns, owner)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range owned {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	if want := []string{"a", "b"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Owned = %v, want %v", names, want)
	}
}

func TestEnsure(t *testing.T) {
	const data = `{"spec":1}`
	for _, tc := range []struct {
		name           string
		cached, stored []*appsv1.ControllerRevision
		collisions     int32
		newest         int64
		wantName       string
		wantRenumbered bool
		wantErr        bool
		wantCollisions int32
		// wantNumbers are the revision numbers stored afterwards, by name.
		wantNumbers map[string]int64
		wantWrites  map[string]int
	}{
		{
			name:        "creates the first revision",
			wantName:    "r-0",
			wantNumbers: map[string]int64{"r-0": 1},
			wantWrites:  map[string]int{"create-revision": 1},
		},
		{
			name:        "creates a revision above the newest",
			cached:      []*appsv1.ControllerRevision{rev("old", owner, 4, `{"spec":0}`)},
			newest:      4,
			wantName:    "r-0",
			wantNumbers: map[string]int64{"old": 4, "r-0": 5},
			wantWrites:  map[string]int{"create-revision": 1},
		},
		{
			name:        "reuses the newest equal revision without a write",
			cached:      []*appsv1.ControllerRevision{rev("r-0", owner, 3, `{ "spec": 1 }`)},
			newest:      3,
			wantName:    "r-0",
			wantNumbers: map[string]int64{"r-0": 3},
			wantWrites:  map[string]int{},
		},
		{
			name:           "renumbers an older equal revision (rollback)",
			cached:         []*appsv1.ControllerRevision{rev("r-0", owner, 1, data), rev("b", owner, 2, `{"spec":2}`)},
			newest:         2,
			wantName:       "r-0",
			wantRenumbered: true,
			wantNumbers:    map[string]int64{"r-0": 3, "b": 2},
			wantWrites:     map[string]int{"update-revision": 1},
		},
		{
			name:           "other data under the name is a collision",
			cached:         []*appsv1.ControllerRevision{rev("r-0", owner, 1, `{"spec":2}`)},
			newest:         1,
			wantName:       "r-1",
			wantCollisions: 1,
			wantNumbers:    map[string]int64{"r-0": 1, "r-1": 2},
			wantWrites:     map[string]int{"create-revision": 1},
		},
		{
			name:           "a revision not controlled by the owner is a collision",
			cached:         []*appsv1.ControllerRevision{rev("r-2", "other-uid", 1, data)},
			collisions:     2,
			wantName:       "r-3",
			wantCollisions: 3,
			wantNumbers:    map[string]int64{"r-2": 1, "r-3": 1},
			wantWrites:     map[string]int{"create-revision": 1},
		},
		{
			name:       "an own revision being deleted is waited for",
			cached:     []*appsv1.ControllerRevision{deleting(rev("r-0", owner, 1, data))},
			newest:     1,
			wantErr:    true,
			wantWrites: map[string]int{},
		},
		{
			name:        "a cache behind the cluster: the stored equal revision is reused",
			stored:      []*appsv1.ControllerRevision{rev("r-0", owner, 1, data)},
			wantName:    "r-0",
			wantNumbers: map[string]int64{"r-0": 1},
			wantWrites:  map[string]int{"create-revision": 1},
		},
		{
			name:           "a cache behind the cluster: a stored collision moves on",
			stored:         []*appsv1.ControllerRevision{rev("r-0", "other-uid", 1, data)},
			wantName:       "r-1",
			wantCollisions: 1,
			wantNumbers:    map[string]int64{"r-0": 1, "r-1": 1},
			wantWrites:     map[string]int{"create-revision": 2},
		},
		{
			name: "gives up after MaxCollisions",
			cached: func() []*appsv1.ControllerRevision {
				var out []*appsv1.ControllerRevision
				for i := 0; i <= MaxCollisions; i++ {
					out = append(out, rev(fmt.Sprint("r-", i), "other-uid", 1, data))
				}
				return out
			}(),
			wantErr:        true,
			wantCollisions: MaxCollisions + 1,
			wantWrites:     map[string]int{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, client, writes := newStore(t, tc.cached, tc.stored)
			var count *int32
			if tc.collisions > 0 {
				c := tc.collisions
				count = &c
			}
			want := Revision{
				Namespace: ns,
				Owner:     owner,
				Data:      []byte(data),
				Name: func() string {
					if count == nil {
						return "r-0"
					}
					return fmt.Sprint("r-", *count)
				},
				New: func(name string, number int64) *appsv1.ControllerRevision {
					return rev(name, owner, number, data)
				},
				CollisionCount: &count,
			}
			name, renumbered, err := store.Ensure(context.Background(), want, tc.newest)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Ensure error = %v, want error %v", err, tc.wantErr)
			}
			if name != tc.wantName || renumbered != tc.wantRenumbered {
				t.Errorf("Ensure = %q, %v; want %q, %v", name, renumbered, tc.wantName, tc.wantRenumbered)
			}
			gotCollisions := int32(0)
			if count != nil {
				gotCollisions = *count
			}
			if gotCollisions != tc.wantCollisions {
				t.Errorf("collisionCount = %d, want %d", gotCollisions, tc.wantCollisions)
			}
			if !reflect.DeepEqual(writes, tc.wantWrites) {
				t.Errorf("writes = %v, want %v", writes, tc.wantWrites)
			}
			if tc.wantNumbers == nil {
				return
			}
			list, err := client.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			numbers := map[string]int64{}
			for _, r := range list.Items {
				numbers[r.Name] = r.Revision
			}
			if !reflect.DeepEqual(numbers, tc.wantNumbers) {
				t.Errorf("stored revisions = %v, want %v", numbers, tc.wantNumbers)
			}
		})
	}
}

func TestPrune(t *testing.T) {
	five := func() []*appsv1.ControllerRevision {
		return []*appsv1.ControllerRevision{
			rev("e", owner, 5, "{}"), rev("a", owner, 1, "{}"), rev("c", owner, 3, "{}"),
			rev("b2", owner, 2, "{}"), rev("b1", owner, 2, "{}"),
		}
	}
	for _, tc := range []struct {
		name        string
		owned       []*appsv1.ControllerRevision
		limit       int
		keep        []string
		wantDeleted []string
	}{
		{name: "within the limit", owned: five(), limit: 5},
		{name: "oldest first, ties by name", owned: five(), limit: 2, wantDeleted: []string{"a", "b1", "b2"}},
		{name: "a negative limit keeps none", owned: five(), limit: -1, wantDeleted: []string{"a", "b1", "b2", "c", "e"}},
		{name: "kept revisions are neither deleted nor counted", owned: five(), limit: 1, keep: []string{"a", "e"}, wantDeleted: []string{"b1", "b2"}},
		{
			name:        "revisions being deleted are neither deleted nor counted",
			owned:       append(five(), deleting(rev("z", owner, 0, "{}"))),
			limit:       4,
			wantDeleted: []string{"a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, client, writes := newStore(t, tc.owned, nil)
			keep := map[string]bool{}
			for _, k := range tc.keep {
				keep[k] = true
			}
			if err := store.Prune(context.Background(), tc.owned, tc.limit, func(name string) bool { return keep[name] }); err != nil {
				t.Fatal(err)
			}
			var deleted []string
			for _, a := range client.Actions() {
				if d, ok := a.(interface{ GetName() string }); ok && a.GetVerb() == "delete" {
					deleted = append(deleted, d.GetName())
				}
			}
			if !reflect.DeepEqual(deleted, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", deleted, tc.wantDeleted)
			}
			if writes["delete-revision"] != len(tc.wantDeleted) {
				t.Errorf("counted %d deletions, want %d", writes["delete-revision"], len(tc.wantDeleted))
			}
		})
	}
}

func TestPruneToleratesGoneRevisions(t *testing.T) {
	// "a" is in the cache but already gone from the cluster: no error, the next one is still deleted.
	store, client, _ := newStore(t, nil, []*appsv1.ControllerRevision{rev("b", owner, 2, "{}")})
	owned := []*appsv1.ControllerRevision{rev("a", owner, 1, "{}"), rev("b", owner, 2, "{}"), rev("c", owner, 3, "{}")}
	if err := store.Prune(context.Background(), owned, 1, func(string) bool { return false }); err != nil {
		t.Fatalf("Prune = %v, want no error", err)
	}
	if _, err := client.AppsV1().ControllerRevisions(ns).Get(context.Background(), "b", metav1.GetOptions{}); err == nil {
		t.Error("revision b was not deleted")
	}
}

// indexedStore is a Store over an informer's indexer with ControllerUIDIndex, holding revs.
func indexedStore(t testing.TB, revs []*appsv1.ControllerRevision) Store {
	t.Helper()
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &appsv1.ControllerRevision{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}) // as an informer factory's
	if err := AddControllerUIDIndex(informer); err != nil {
		t.Fatal(err)
	}
	for _, r := range revs {
		if err := informer.GetIndexer().Add(r); err != nil {
			t.Fatal(err)
		}
	}
	return Store{Lister: appslisters.NewControllerRevisionLister(informer.GetIndexer()), Index: informer.GetIndexer()}
}

// TestOwnedThroughTheIndex: through ControllerUIDIndex, Owned returns what the namespace's list returns:
// the revisions of this namespace whose controller reference has the UID, not another owner's, not an
// orphan's, not one merely referring to the owner, not one of another namespace.
func TestOwnedThroughTheIndex(t *testing.T) {
	other := rev("other", "other-uid", 1, "{}")
	orphan := rev("orphan", "", 1, "{}")
	notController := rev("ref", "", 1, "{}")
	notController.OwnerReferences = []metav1.OwnerReference{{Kind: "Owner", Name: "o", UID: owner}}
	elsewhere := rev("elsewhere", owner, 1, "{}")
	elsewhere.Namespace = "other-ns"
	store := indexedStore(t, []*appsv1.ControllerRevision{rev("a", owner, 1, "{}"), rev("b", owner, 2, "{}"), other, orphan, notController, elsewhere})
	owned, err := store.Owned(ns, owner)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range owned {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	if want := []string{"a", "b"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Owned = %v, want %v", names, want)
	}
	// Without the index (an indexer that lacks it), Owned falls back to the namespace's list.
	plain := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, r := range []*appsv1.ControllerRevision{rev("a", owner, 1, "{}"), other} {
		if err := plain.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	fallback := Store{Lister: appslisters.NewControllerRevisionLister(plain), Index: plain}
	if owned, err := fallback.Owned(ns, owner); err != nil || len(owned) != 1 || owned[0].Name != "a" {
		t.Errorf("Owned without the index = %v, %v; want [a]", owned, err)
	}
}

// TestAddControllerUIDIndexTwice: the controllers sharing one informer each add the index; the second call
// is a no-op, not an indexer conflict.
func TestAddControllerUIDIndexTwice(t *testing.T) {
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &appsv1.ControllerRevision{}, 0, cache.Indexers{})
	for i := 0; i < 2; i++ {
		if err := AddControllerUIDIndex(informer); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if _, ok := informer.GetIndexer().GetIndexers()[ControllerUIDIndex]; !ok {
		t.Errorf("no %s index", ControllerUIDIndex)
	}
}

// BenchmarkOwned reads one owner's revisions in a namespace of 1000 and of 10,000 owners (one revision
// each, as 10,000 TApps in one namespace have): through the lister every read goes over the namespace, so
// a resync of all owners costs N²; through ControllerUIDIndex a read does not depend on N.
func BenchmarkOwned(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		revs := make([]*appsv1.ControllerRevision, 0, n)
		for i := 0; i < n; i++ {
			revs = append(revs, rev(fmt.Sprint("r", i), types.UID(fmt.Sprint("owner-", i)), 1, "{}"))
		}
		store := indexedStore(b, revs)
		for _, bc := range []struct {
			name  string
			store Store
		}{{"lister", Store{Lister: store.Lister}}, {"index", store}} {
			b.Run(fmt.Sprintf("%s-%d", bc.name, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					owned, err := bc.store.Owned(ns, types.UID(fmt.Sprint("owner-", i%n)))
					if err != nil || len(owned) != 1 {
						b.Fatalf("Owned: %d revisions, %v", len(owned), err)
					}
				}
			})
		}
	}
}
