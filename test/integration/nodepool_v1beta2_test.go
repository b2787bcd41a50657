package integration

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	openyurtv1beta2 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	openyurtv1beta2ac "github.com/tapp-io/tapp-apiserver/pkg/generated/applyconfiguration/openyurt/v1beta2"
	"github.com/tapp-io/tapp-apiserver/pkg/storageversion"
)

// TestNodePoolV1beta2AcrossVersions: a pool created through v1alpha1 is read and watched through v1beta2
// (defaults of the leader fields), patched through v1beta2 (leader election, mark, replicas, interConnectivity
// cannot change), and read back through v1alpha1 with every v1beta2 field in its leader annotation; a PUT
// of that v1alpha1 object as read changes nothing, and v1beta2 reads the same fields again.
func TestNodePoolV1beta2AcrossVersions(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	alpha, beta2 := cs.OpenYurtAppsV1alpha1().NodePools(), cs.OpenYurtAppsV1beta2().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = beta2.Delete(ctx, name, metav1.DeleteOptions{}) })

	w, err := beta2.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("v1beta2 watch: %v", err)
	}
	defer w.Stop()

	created, err := alpha.Create(ctx, &openyurtv1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			openyurt.NodePoolHostNetworkAnnotation: "true", openyurt.InterConnectivityAnnotation: "true", "owner": "ops"}},
		Spec: openyurtv1alpha1.NodePoolSpec{Labels: map[string]string{"zone": "hz"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through v1alpha1: %v", err)
	}
	ev := nextEvent(t, w, 10*time.Second)
	p, ok := ev.Object.(*openyurtv1beta2.NodePool)
	if !ok || ev.Type != watch.Added || !p.Spec.HostNetwork || !p.Spec.InterConnectivity || p.Spec.EnableLeaderElection ||
		p.Spec.LeaderElectionStrategy != openyurtv1beta2.ElectionStrategyRandom || p.Spec.LeaderReplicas != 1 ||
		len(p.Spec.PoolScopeMetadata) != 2 || p.Spec.Labels["zone"] != "hz" || !reflect.DeepEqual(p.Annotations, map[string]string{"owner": "ops"}) {
		t.Fatalf("v1beta2 watch of a pool created through v1alpha1: %s %+v", ev.Type, ev.Object)
	}

	// Patch through v1beta2.
	patch := `{"spec":{"enableLeaderElection":true,"leaderElectionStrategy":"mark","leaderNodeLabelSelector":{"leader":"yes"},` +
		`"leaderReplicas":2,"poolScopeMetadata":[{"group":"apps","version":"v1","resource":"deployments"}]}}`
	patched, err := beta2.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch through v1beta2: %v", err)
	}
	wantMeta := []metav1.GroupVersionResource{{Group: "apps", Version: "v1", Resource: "deployments"},
		{Version: "v1", Resource: "services"}, {Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}}
	if !reflect.DeepEqual(patched.Spec.PoolScopeMetadata, wantMeta) || patched.Spec.LeaderReplicas != 2 {
		t.Errorf("patched v1beta2 spec = %+v, want poolScopeMetadata %v (defaults appended)", patched.Spec, wantMeta)
	}
	if ev := nextEvent(t, w, 10*time.Second); ev.Type != watch.Modified || !ev.Object.(*openyurtv1beta2.NodePool).Spec.EnableLeaderElection {
		t.Errorf("v1beta2 watch after the patch: %s %+v", ev.Type, ev.Object)
	}

	// Read back through v1alpha1: everything in annotations, nothing lost.
	old, err := alpha.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantAnnotations := map[string]string{
		"owner":                                    "ops",
		openyurt.NodePoolHostNetworkAnnotation:     "true",
		openyurt.InterConnectivityAnnotation:       "true",
		openyurt.EnableLeaderElectionAnnotation:    "true",
		openyurt.LeaderElectionStrategyAnnotation:  "mark",
		openyurt.LeaderNodeLabelSelectorAnnotation: `{"leader":"yes"}`,
		openyurt.LeaderReplicasAnnotation:          "2",
		openyurt.PoolScopeMetadataAnnotation: `[{"group":"apps","version":"v1","resource":"deployments"},` +
			`{"group":"","version":"v1","resource":"services"},{"group":"discovery.k8s.io","version":"v1","resource":"endpointslices"}]`,
	}
	if !reflect.DeepEqual(old.Annotations, wantAnnotations) || old.Spec.Labels["zone"] != "hz" || old.UID != created.UID {
		t.Errorf("v1alpha1 read after a v1beta2 patch: annotations %v, spec %+v; want annotations %v", old.Annotations, old.Spec, wantAnnotations)
	}
	rv := old.ResourceVersion
	same, err := alpha.Update(ctx, old, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("v1alpha1 PUT of the object as read: %v", err)
	}
	if same.ResourceVersion != rv || same.Generation != patched.Generation {
		t.Errorf("a v1alpha1 PUT of the object as read wrote it (rv %s -> %s, generation %d -> %d)", rv, same.ResourceVersion, patched.Generation, same.Generation)
	}
	again, err := beta2.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Spec, patched.Spec) || !reflect.DeepEqual(again.Annotations, patched.Annotations) {
		t.Errorf("v1beta2 after a v1alpha1 round trip: %+v %v, want %+v %v", again.Spec, again.Annotations, patched.Spec, patched.Annotations)
	}

	// interConnectivity cannot change, in v1beta2 on the field, in v1alpha1 on its annotation.
	_, err = beta2.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"interConnectivity":false}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "spec.interConnectivity", metav1.CauseTypeFieldValueInvalid) {
		t.Errorf("changing interConnectivity through v1beta2: %v, want 422 on spec.interConnectivity", err)
	}
	_, err = alpha.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"nodepool.tapp.io/interConnectivity":null}}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "metadata.annotations[nodepool.tapp.io/interConnectivity]", metav1.CauseTypeFieldValueInvalid) {
		t.Errorf("removing the interConnectivity annotation through v1alpha1: %v, want 422 on the annotation", err)
	}
}

// TestNodePoolV1beta2Apply: server-side apply of OpenYurt's sample v1beta2 pool, twice (the second changes
// nothing), and a second manager's conflicting leaderReplicas is a conflict.
func TestNodePoolV1beta2Apply(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	beta2 := cs.OpenYurtAppsV1beta2().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = beta2.Delete(ctx, name, metav1.DeleteOptions{}) })
	cfg := openyurtv1beta2ac.NodePool(name).WithSpec(openyurtv1beta2ac.NodePoolSpec().
		WithType(openyurtv1beta2.Edge).WithEnableLeaderElection(true).WithInterConnectivity(true).
		WithLeaderElectionStrategy(openyurtv1beta2.ElectionStrategyRandom).WithLeaderReplicas(2).
		WithPoolScopeMetadata(metav1.GroupVersionResource{Version: "v1", Resource: "services"},
			metav1.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}))
	first, err := beta2.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !first.Spec.EnableLeaderElection || first.Spec.LeaderReplicas != 2 || !first.Spec.InterConnectivity {
		t.Errorf("applied spec = %+v", first.Spec)
	}
	second, err := beta2.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if second.ResourceVersion != first.ResourceVersion {
		t.Errorf("applying the same configuration again wrote the pool (rv %s -> %s)", first.ResourceVersion, second.ResourceVersion)
	}
	bob := openyurtv1beta2ac.NodePool(name).WithSpec(openyurtv1beta2ac.NodePoolSpec().WithLeaderReplicas(3))
	if _, err := beta2.Apply(ctx, bob, metav1.ApplyOptions{FieldManager: "bob"}); !apierrors.IsConflict(err) {
		t.Errorf("another manager applying leaderReplicas: %v, want a conflict", err)
	}
}

// TestNodePoolV1beta2Validation: bad v1beta2 fields are 422 with their path in v1beta2, and on their leader
// annotation in v1alpha1 and v1beta1; none is stored.
func TestNodePoolV1beta2Validation(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	beta2 := func(mutate func(*openyurtv1beta2.NodePool)) *openyurtv1beta2.NodePool {
		p := &openyurtv1beta2.NodePool{ObjectMeta: metav1.ObjectMeta{Name: uniqueName(t, "pool")},
			Spec: openyurtv1beta2.NodePoolSpec{EnableLeaderElection: true}}
		mutate(p)
		return p
	}
	for _, tc := range []struct {
		name  string
		pool  *openyurtv1beta2.NodePool
		field string
		cause metav1.CauseType
	}{
		{"unknown strategy", beta2(func(p *openyurtv1beta2.NodePool) { p.Spec.LeaderElectionStrategy = "Random" }),
			"spec.leaderElectionStrategy", metav1.CauseTypeFieldValueNotSupported},
		{"mark without a selector", beta2(func(p *openyurtv1beta2.NodePool) { p.Spec.LeaderElectionStrategy = "mark" }),
			"spec.leaderNodeLabelSelector", metav1.CauseTypeFieldValueRequired},
		{"selector not a label set", beta2(func(p *openyurtv1beta2.NodePool) {
			p.Spec.LeaderElectionStrategy = "mark"
			p.Spec.LeaderNodeLabelSelector = map[string]string{"bad key": "x"}
		}), "spec.leaderNodeLabelSelector", metav1.CauseTypeFieldValueInvalid},
		{"negative replicas", beta2(func(p *openyurtv1beta2.NodePool) { p.Spec.LeaderReplicas = -1 }),
			"spec.leaderReplicas", metav1.CauseTypeFieldValueInvalid},
		{"pool scope resource without a version", beta2(func(p *openyurtv1beta2.NodePool) {
			p.Spec.PoolScopeMetadata = []metav1.GroupVersionResource{{Group: "apps", Resource: "deployments"}}
		}), "spec.poolScopeMetadata[0].version", metav1.CauseTypeFieldValueRequired},
		{"a leader annotation in v1beta2", beta2(func(p *openyurtv1beta2.NodePool) {
			p.Annotations = map[string]string{openyurt.LeaderReplicasAnnotation: "2"}
		}), "metadata.annotations[nodepool.tapp.io/leaderReplicas]", metav1.CauseTypeFieldValueInvalid},
	} {
		_, err := cs.OpenYurtAppsV1beta2().NodePools().Create(ctx, tc.pool, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), tc.field, tc.cause) {
			t.Errorf("%s: %v, want 422 %s on %s", tc.name, err, tc.cause, tc.field)
		}
		if _, err := cs.OpenYurtAppsV1beta2().NodePools().Get(ctx, tc.pool.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the refused pool was stored (%v)", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name, key, value string
		cause            metav1.CauseType
	}{
		{"strategy", openyurt.LeaderElectionStrategyAnnotation, "Random", metav1.CauseTypeFieldValueNotSupported},
		{"replicas not canonical", openyurt.LeaderReplicasAnnotation, "02", metav1.CauseTypeFieldValueInvalid},
		{"replicas the default", openyurt.LeaderReplicasAnnotation, "1", metav1.CauseTypeFieldValueInvalid},
		{"replicas negative", openyurt.LeaderReplicasAnnotation, "-1", metav1.CauseTypeFieldValueInvalid},
		{"selector not JSON", openyurt.LeaderNodeLabelSelectorAnnotation, "leader=yes", metav1.CauseTypeFieldValueInvalid},
		{"bool not canonical", openyurt.EnableLeaderElectionAnnotation, "True", metav1.CauseTypeFieldValueInvalid},
	} {
		alpha := &openyurtv1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: uniqueName(t, "pool"), Annotations: map[string]string{tc.key: tc.value}}}
		_, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, alpha, metav1.CreateOptions{})
		path := "metadata.annotations[" + tc.key + "]"
		if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), path, tc.cause) {
			t.Errorf("v1alpha1 %s: %v, want 422 %s on %s", tc.name, err, tc.cause, path)
		}
	}
}

// TestNodePoolStoredAsV1alpha1: a store written while NodePools were stored as v1alpha1 (as every release
// before v1beta2 did: the hostnetwork annotation, no leader fields) is served unchanged in every version
// once NodePools are stored as v1beta2; a write stores the pool as v1beta2, and migrate-storage rewrites the
// rest, with nothing lost.
func TestNodePoolStoredAsV1alpha1(t *testing.T) {
	dataDir := t.TempDir()
	start := func() *testServer {
		s, err := launchWith(dataDir, t.TempDir(), nil)
		if err != nil {
			t.Fatalf("starting tapp-apiserver: %v", err)
		}
		t.Cleanup(func() { _ = s.stop() })
		return s
	}
	stop := func(s *testServer) {
		if err := s.stop(); err != nil {
			t.Fatalf("stopping tapp-apiserver: %v", err)
		}
	}
	storedVersions := func() map[string]string {
		out := map[string]string{}
		for key, value := range storedValues(t, dataDir) {
			if !strings.Contains(key, "/nodepools/") {
				continue
			}
			for _, v := range []string{"v1alpha1", "v1beta2"} {
				if bytes.Contains(value, []byte("apps.openyurt.io/"+v)) {
					out[key[strings.LastIndex(key, "/")+1:]] = v
				}
			}
		}
		return out
	}
	ctx := testContext(t)

	// The previous release: NodePools stored as v1alpha1.
	current := apiserver.StorageVersions
	previous := apiserver.KindStorageVersions{Kinds: map[schema.GroupKind]string{}, Groups: current.Groups}
	for gk, v := range current.Kinds {
		previous.Kinds[gk] = v
	}
	previous.Kinds[openyurt.Kind("NodePool")] = "v1alpha1"
	apiserver.StorageVersions = previous
	old := start()
	cs := clientset(t, old)
	written := map[string]*openyurtv1alpha1.NodePool{
		"plain": {ObjectMeta: metav1.ObjectMeta{Name: "plain"}},
		"host": {ObjectMeta: metav1.ObjectMeta{Name: "host", Annotations: map[string]string{openyurt.NodePoolHostNetworkAnnotation: "true", "owner": "ops"}},
			Spec: openyurtv1alpha1.NodePoolSpec{Labels: map[string]string{"zone": "hz"}}},
		"cloud": {ObjectMeta: metav1.ObjectMeta{Name: "cloud"}, Spec: openyurtv1alpha1.NodePoolSpec{Type: "Cloud",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"own": "selector"}}}},
	}
	for name, p := range written {
		got, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		written[name] = got
	}
	stop(old)
	apiserver.StorageVersions = current
	if got, want := storedVersions(), map[string]string{"plain": "v1alpha1", "host": "v1alpha1", "cloud": "v1alpha1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the previous release stored %v, want %v", got, want)
	}

	// This release reads them as written, in v1alpha1, and with the v1beta2 defaults in v1beta2.
	check := func(s *testServer, when string) {
		t.Helper()
		cs := clientset(t, s)
		for name, want := range written {
			got, err := cs.OpenYurtAppsV1alpha1().NodePools().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s: reading %s: %v", when, name, err)
			}
			if !reflect.DeepEqual(got.Annotations, want.Annotations) || !reflect.DeepEqual(got.Labels, want.Labels) ||
				!reflect.DeepEqual(got.Spec, want.Spec) || got.UID != want.UID {
				t.Errorf("%s: %s reads as %+v %v, want %+v %v", when, name, got.Spec, got.Annotations, want.Spec, want.Annotations)
			}
			b2, err := cs.OpenYurtAppsV1beta2().NodePools().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if b2.Spec.LeaderElectionStrategy != openyurtv1beta2.ElectionStrategyRandom || b2.Spec.LeaderReplicas != 1 || len(b2.Spec.PoolScopeMetadata) != 2 ||
				b2.Spec.HostNetwork != (name == "host") || !reflect.DeepEqual(b2.Spec.Selector, want.Spec.Selector) {
				t.Errorf("%s: %s reads in v1beta2 as %+v", when, name, b2.Spec)
			}
		}
	}
	s := start()
	check(s, "served as stored")
	cs = clientset(t, s)
	touched, err := cs.OpenYurtAppsV1alpha1().NodePools().Get(ctx, "host", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	touched.Labels["touched"] = "yes"
	if written["host"], err = cs.OpenYurtAppsV1alpha1().NodePools().Update(ctx, touched, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating a pool stored as v1alpha1: %v", err)
	}
	stop(s)
	if got, want := storedVersions(), map[string]string{"plain": "v1alpha1", "host": "v1beta2", "cloud": "v1alpha1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after one update the store holds %v, want %v", got, want)
	}

	s = start()
	var out bytes.Buffer
	m := &storageversion.Migrator{
		Dynamic:      dynamic.NewForConfigOrDie(s.Config),
		Discovery:    discovery.NewDiscoveryClientForConfigOrDie(s.Config),
		ProgressFile: filepath.Join(t.TempDir(), "progress.json"),
		Out:          &out,
	}
	if err := m.Run(ctx); err != nil {
		t.Fatalf("migrate-storage: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "nodepools.apps.openyurt.io: 2 rewritten, 1 already current, 0 failed") {
		t.Errorf("migrate-storage output:\n%s", out.String())
	}
	check(s, "after migrate-storage")
	stop(s)
	if got, want := storedVersions(), map[string]string{"plain": "v1beta2", "host": "v1beta2", "cloud": "v1beta2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after migrate-storage the store holds %v, want %v", got, want)
	}
}
