package integration

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestTAppCRUD(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	in := newTApp(ns, "web", 3)
	in.Status = tkestackv1.TAppStatus{
		Replicas: 7, ReadyReplicas: 5, AppStatus: "Running", ObservedGeneration: 4,
		Statuses: map[string]tkestackv1.InstanceStatus{"0": "Running"},
	}
	created, err := tapps.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Generation != 1 {
		t.Errorf("generation after create = %d, want 1", created.Generation)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Errorf("create did not fill uid/resourceVersion/creationTimestamp: %+v", created.ObjectMeta)
	}
	// Status sent on create is dropped; only the derived scale selector is recorded.
	wantStatus := tkestackv1.TAppStatus{ScaleLabelSelector: "app=web"}
	if created.Status.Replicas != 0 || created.Status.ReadyReplicas != 0 || created.Status.AppStatus != "" ||
		created.Status.ObservedGeneration != 0 || len(created.Status.Statuses) != 0 ||
		created.Status.ScaleLabelSelector != wantStatus.ScaleLabelSelector {
		t.Errorf("status after create = %+v, want %+v", created.Status, wantStatus)
	}
	// Defaults.
	if created.Spec.DefaultTemplateName != "default" {
		t.Errorf("spec.defaultTemplateName = %q, want default", created.Spec.DefaultTemplateName)
	}
	if created.Spec.UpdateStrategy.Template != "default" {
		t.Errorf("spec.updateStrategy.template = %q, want default", created.Spec.UpdateStrategy.Template)
	}
	if mu := created.Spec.UpdateStrategy.MaxUnavailable; mu == nil || mu.String() != "1" {
		t.Errorf("spec.updateStrategy.maxUnavailable = %v, want 1", mu)
	}
	if mu := created.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable; mu == nil || mu.String() != "100%" {
		t.Errorf("spec.updateStrategy.forceUpdate.maxUnavailable = %v, want 100%%", mu)
	}
	if sel := created.Spec.Selector; sel == nil || len(sel.MatchLabels) != 1 || sel.MatchLabels["app"] != "web" {
		t.Errorf("spec.selector = %v, want matchLabels app=web", sel)
	}

	// A second object, then get and list.
	if _, err := tapps.Create(ctx, newTApp(ns, "api", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create api: %v", err)
	}
	got, err := tapps.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.UID != created.UID || got.Spec.Replicas != 3 {
		t.Errorf("get returned uid %s replicas %d, want %s and 3", got.UID, got.Spec.Replicas, created.UID)
	}
	list, err := tapps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if names := tappNames(list.Items); len(names) != 2 || names[0] != "api" || names[1] != "web" {
		t.Errorf("list names = %v, want [api web]", names)
	}

	// Metadata-only change: generation stays.
	got.Labels = map[string]string{"tier": "frontend"}
	updated, err := tapps.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update labels: %v", err)
	}
	if updated.Generation != 1 {
		t.Errorf("generation after a label change = %d, want 1", updated.Generation)
	}
	if updated.Labels["tier"] != "frontend" {
		t.Errorf("labels after update = %v", updated.Labels)
	}

	// Spec change: generation bumps.
	updated.Spec.Replicas = 4
	updated, err = tapps.Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update replicas: %v", err)
	}
	if updated.Generation != 2 || updated.Spec.Replicas != 4 {
		t.Errorf("after spec change generation=%d replicas=%d, want 2 and 4", updated.Generation, updated.Spec.Replicas)
	}

	// An update that changes nothing keeps the generation.
	updated, err = tapps.Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("no-op update: %v", err)
	}
	if updated.Generation != 2 {
		t.Errorf("generation after a no-op update = %d, want 2", updated.Generation)
	}

	// The selector is immutable.
	changed := updated.DeepCopy()
	changed.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "x": "y"}}
	changed.Spec.Template.Labels = map[string]string{"app": "web", "x": "y"}
	_, err = tapps.Update(ctx, changed, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "spec.selector", "") {
		t.Errorf("changing spec.selector: got %v, want 422 on spec.selector", err)
	}

	// Delete.
	if err := tapps.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := tapps.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: got %v, want NotFound", err)
	}
	if err := tapps.Delete(ctx, "web", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: got %v, want NotFound", err)
	}
	list, err = tapps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list after delete: %v", err)
	}
	if names := tappNames(list.Items); len(names) != 1 || names[0] != "api" {
		t.Errorf("list after delete = %v, want [api]", names)
	}
	// DeleteCollection by label.
	for _, name := range []string{"batch-1", "batch-2"} {
		obj := newTApp(ns, name, 1)
		obj.Labels = map[string]string{"batch": "yes"}
		if _, err := tapps.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	if err := tapps.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=yes"}); err != nil {
		t.Fatalf("delete collection: %v", err)
	}
	list, err = tapps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list after delete collection: %v", err)
	}
	if names := tappNames(list.Items); len(names) != 1 || names[0] != "api" {
		t.Errorf("list after delete collection = %v, want [api]", names)
	}
	// Delete with a stale UID precondition fails.
	uid := types.UID("00000000-0000-0000-0000-000000000000")
	if err := tapps.Delete(ctx, "api", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with a wrong uid precondition: got %v, want 409 Conflict", err)
	}

	// Creating an existing name conflicts.
	if _, err := tapps.Create(ctx, newTApp(ns, "api", 1), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create of an existing name: got %v, want AlreadyExists", err)
	}
}

func TestYurtAppDaemonCRUD(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	yads := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns)

	in := newYurtAppDaemon(ns, "edge-app")
	in.Status = openyurtv1alpha1.YurtAppDaemonStatus{
		ObservedGeneration: 3, CurrentRevision: "rev-1", NodePools: []string{"pool-a"}, TemplateType: "StatefulSet",
	}
	created, err := yads.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Generation != 1 {
		t.Errorf("generation after create = %d, want 1", created.Generation)
	}
	if st := created.Status; st.ObservedGeneration != 0 || st.CurrentRevision != "" || len(st.NodePools) != 0 || st.TemplateType != "Deployment" {
		t.Errorf("status after create = %+v, want only templateType Deployment", st)
	}
	if l := created.Spec.RevisionHistoryLimit; l == nil || *l != 10 {
		t.Errorf("spec.revisionHistoryLimit = %v, want 10", l)
	}
	if sel := created.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Selector; sel == nil || sel.MatchLabels["app"] != "edge-app" {
		t.Errorf("spec.workloadTemplate.deploymentTemplate.spec.selector = %v, want a copy of spec.selector", sel)
	}

	if _, err := yads.Create(ctx, newYurtAppDaemon(ns, "other"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create other: %v", err)
	}
	list, err := yads.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 2 || list.Items[0].Name != "edge-app" || list.Items[1].Name != "other" {
		t.Errorf("list = %d items, want [edge-app other]", len(list.Items))
	}

	got, err := yads.Get(ctx, "edge-app", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	got.Annotations = map[string]string{"note": "x"}
	got, err = yads.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update annotations: %v", err)
	}
	if got.Generation != 1 {
		t.Errorf("generation after an annotation change = %d, want 1", got.Generation)
	}
	got.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "cloud"}}
	got, err = yads.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update nodepoolSelector: %v", err)
	}
	if got.Generation != 2 || got.Spec.NodePoolSelector.MatchLabels["pool"] != "cloud" {
		t.Errorf("after spec change generation=%d nodepoolSelector=%v, want 2 and pool=cloud", got.Generation, got.Spec.NodePoolSelector)
	}
	if got.Status.TemplateType != "Deployment" {
		t.Errorf("status.templateType after update = %q, want Deployment", got.Status.TemplateType)
	}

	if err := yads.Delete(ctx, "edge-app", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := yads.Get(ctx, "edge-app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: got %v, want NotFound", err)
	}
	list, err = yads.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list after delete: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "other" {
		t.Errorf("list after delete has %d items, want [other]", len(list.Items))
	}
}

func TestNodePoolCRUD(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	pools := cs.OpenYurtAppsV1alpha1().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = pools.Delete(ctx, name, metav1.DeleteOptions{}) })

	in := newNodePool(name)
	in.Status = openyurtv1alpha1.NodePoolStatus{ReadyNodeNum: 4, UnreadyNodeNum: 1, Nodes: []string{"n1"}}
	created, err := pools.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Namespace != "" {
		t.Errorf("namespace of a cluster-scoped NodePool = %q, want empty", created.Namespace)
	}
	if created.Generation != 1 {
		t.Errorf("generation after create = %d, want 1", created.Generation)
	}
	if st := created.Status; st.ReadyNodeNum != 0 || st.UnreadyNodeNum != 0 || len(st.Nodes) != 0 {
		t.Errorf("status after create = %+v, want empty", st)
	}
	if created.Spec.Type != "Edge" {
		t.Errorf("spec.type = %q, want Edge", created.Spec.Type)
	}
	if v := created.Labels["nodepool.openyurt.io/type"]; v != "edge" {
		t.Errorf("label nodepool.openyurt.io/type = %q, want edge", v)
	}
	if sel := created.Spec.Selector; sel == nil || len(sel.MatchLabels) != 1 || sel.MatchLabels["apps.openyurt.io/nodepool"] != name {
		t.Errorf("spec.selector = %v, want matchLabels apps.openyurt.io/nodepool=%s", sel, name)
	}

	// generateName: the selector defaults to the generated name.
	gen, err := pools.Create(ctx, &openyurtv1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create with generateName: %v", err)
	}
	t.Cleanup(func() { _ = pools.Delete(ctx, gen.Name, metav1.DeleteOptions{}) })
	if sel := gen.Spec.Selector; len(gen.Name) <= len("gen-") || sel == nil || sel.MatchLabels["apps.openyurt.io/nodepool"] != gen.Name {
		t.Errorf("generated pool %q has selector %v, want apps.openyurt.io/nodepool=<generated name>", gen.Name, sel)
	}

	got, err := pools.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.UID != created.UID {
		t.Errorf("get uid = %s, want %s", got.UID, created.UID)
	}
	list, err := pools.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != name {
		t.Errorf("list by name returned %d items, want 1", len(list.Items))
	}
	list, err = pools.List(ctx, metav1.ListOptions{LabelSelector: "nodepool.openyurt.io/type=edge"})
	if err != nil {
		t.Fatalf("list by type label: %v", err)
	}
	found := false
	for _, p := range list.Items {
		found = found || p.Name == name
	}
	if !found {
		t.Errorf("list by label nodepool.openyurt.io/type=edge does not include %s", name)
	}

	got.Labels["team"] = "a"
	got, err = pools.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update labels: %v", err)
	}
	if got.Generation != 1 {
		t.Errorf("generation after a label change = %d, want 1", got.Generation)
	}
	got.Spec.Labels = map[string]string{"zone": "z1"}
	got, err = pools.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update spec.labels: %v", err)
	}
	if got.Generation != 2 || got.Spec.Labels["zone"] != "z1" {
		t.Errorf("after spec change generation=%d spec.labels=%v, want 2 and zone=z1", got.Generation, got.Spec.Labels)
	}
	// The type is immutable.
	got.Spec.Type = "Cloud"
	_, err = pools.Update(ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "spec.type", "") {
		t.Errorf("changing spec.type: got %v, want 422 on spec.type", err)
	}

	if err := pools.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := pools.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: got %v, want NotFound", err)
	}
}

func TestOptimisticConcurrency(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	created, err := tapps.Create(ctx, newTApp(ns, "occ", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	first := created.DeepCopy()
	first.Spec.Replicas = 2
	if _, err := tapps.Update(ctx, first, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("first update: %v", err)
	}
	stale := created.DeepCopy()
	stale.Spec.Replicas = 5
	_, err = tapps.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update with stale resourceVersion %s: got %v, want 409 Conflict", created.ResourceVersion, err)
	}
	if code := statusError(t, err).ErrStatus.Code; code != 409 {
		t.Errorf("status code = %d, want 409", code)
	}
	// A stale status update conflicts too.
	staleStatus := created.DeepCopy()
	staleStatus.Status.Replicas = 1
	if _, err := tapps.UpdateStatus(ctx, staleStatus, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("status update with stale resourceVersion: got %v, want 409 Conflict", err)
	}
	got, err := tapps.Get(ctx, "occ", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2 (the stale write must not land)", got.Spec.Replicas)
	}

	// Same for a NodePool.
	pools := cs.OpenYurtAppsV1alpha1().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = pools.Delete(ctx, name, metav1.DeleteOptions{}) })
	pool, err := pools.Create(ctx, newNodePool(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pool: %v", err)
	}
	p1 := pool.DeepCopy()
	p1.Spec.Labels = map[string]string{"a": "1"}
	if _, err := pools.Update(ctx, p1, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pool update: %v", err)
	}
	p2 := pool.DeepCopy()
	p2.Spec.Labels = map[string]string{"a": "2"}
	if _, err := pools.Update(ctx, p2, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale pool update: got %v, want 409 Conflict", err)
	}
}

func tappNames(items []tkestackv1.TApp) []string {
	out := make([]string, 0, len(items))
	for _, i := range items {
		out = append(out, i.Name)
	}
	return out
}

func TestTAppLifecycle(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	// Dry run: validated and defaulted, not stored.
	dry, err := tapps.Create(ctx, newTApp(ns, "dry", 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if dry.Generation != 1 || dry.Spec.DefaultTemplateName != "default" || dry.ResourceVersion != "" {
		t.Errorf("dry-run create returned generation=%d defaultTemplateName=%q rv=%q, want 1, default and no resourceVersion",
			dry.Generation, dry.Spec.DefaultTemplateName, dry.ResourceVersion)
	}
	if _, err := tapps.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after dry-run create: got %v, want NotFound", err)
	}
	bad := newTApp(ns, "dry-bad", 1)
	bad.Spec.DefaultTemplateName = "nope"
	if _, err := tapps.Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsInvalid(err) {
		t.Errorf("dry-run create of an invalid TApp: got %v, want 422", err)
	}

	// Conditions in status merge by type under a strategic merge patch.
	if _, err := tapps.Create(ctx, newTApp(ns, "life", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	for _, cond := range []string{"Available", "Progressing"} {
		patch := `{"status":{"conditions":[{"type":"` + cond + `","status":"True","reason":"R","message":"",` +
			`"lastTransitionTime":"2024-01-01T00:00:00Z"}]}}`
		if _, err := tapps.Patch(ctx, "life", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("patch condition %s: %v", cond, err)
		}
	}
	got := mustGetTApp(t, cs, ns, "life")
	if len(got.Status.Conditions) != 2 {
		t.Errorf("conditions after two strategic merge patches = %+v, want Available and Progressing", got.Status.Conditions)
	}
	badCond := `{"status":{"conditions":[{"type":"Available","status":"Maybe","reason":"R","message":"","lastTransitionTime":"2024-01-01T00:00:00Z"}]}}`
	if _, err := tapps.Patch(ctx, "life", types.StrategicMergePatchType, []byte(badCond), metav1.PatchOptions{}, "status"); !apierrors.IsInvalid(err) {
		t.Errorf("condition with status Maybe: got %v, want 422", err)
	}

	// Finalizers hold deletion until removed.
	got.Finalizers = []string{"example.com/hold"}
	got, err = tapps.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("add finalizer: %v", err)
	}
	if err := tapps.Delete(ctx, "life", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	got = mustGetTApp(t, cs, ns, "life")
	if got.DeletionTimestamp == nil {
		t.Fatalf("a TApp with a finalizer was not marked for deletion")
	}
	// Status still updates while the object is terminating.
	got.Status.AppStatus = "Killed"
	if got, err = tapps.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("status update while terminating: %v", err)
	}
	got.Finalizers = nil
	if _, err := tapps.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("remove finalizer: %v", err)
	}
	if _, err := tapps.Get(ctx, "life", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after the finalizer was removed: got %v, want NotFound", err)
	}
}
