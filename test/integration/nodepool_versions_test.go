package integration

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	openyurtv1beta1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	openyurtv1alpha1ac "github.com/tapp-io/tapp-apiserver/pkg/generated/applyconfiguration/openyurt/v1alpha1"
	openyurtv1beta1ac "github.com/tapp-io/tapp-apiserver/pkg/generated/applyconfiguration/openyurt/v1beta1"
)

// betaNodePool is a v1beta1 NodePool as users keep them: every spec field set, type left to defaulting.
func betaNodePool(name string) *openyurtv1beta1.NodePool {
	return &openyurtv1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"owner": "ops"}},
		Spec: openyurtv1beta1.NodePoolSpec{
			HostNetwork: true,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"apps.openyurt.io/nodepool": name}},
			Labels:      map[string]string{"zone": "hz"},
			Annotations: map[string]string{"note": "edge"},
			Taints:      []corev1.Taint{{Key: "example.com/edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

// TestNodePoolVersions creates a NodePool through v1beta1, reads and writes it through v1alpha1 and back:
// one object, every field kept, defaults and status shared.
func TestNodePoolVersions(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	beta, alpha := cs.OpenYurtAppsV1beta1().NodePools(), cs.OpenYurtAppsV1alpha1().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = beta.Delete(ctx, name, metav1.DeleteOptions{}) })

	created, err := beta.Create(ctx, betaNodePool(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through v1beta1: %v", err)
	}
	if created.Spec.Type != openyurtv1beta1.Edge || created.Labels[openyurt.NodePoolTypeLabel] != "edge" || !created.Spec.HostNetwork {
		t.Errorf("created through v1beta1: type=%q type label=%q hostNetwork=%v, want Edge, edge, true",
			created.Spec.Type, created.Labels[openyurt.NodePoolTypeLabel], created.Spec.HostNetwork)
	}
	if _, ok := created.Annotations[openyurt.NodePoolHostNetworkAnnotation]; ok {
		t.Errorf("v1beta1 object carries the hostnetwork annotation beside the field: %v", created.Annotations)
	}

	// Read through v1alpha1: the same object, hostNetwork as the annotation, spec.labels kept.
	old, err := alpha.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through v1alpha1: %v", err)
	}
	if old.UID != created.UID || old.ResourceVersion != created.ResourceVersion {
		t.Errorf("v1alpha1 uid/rv = %s/%s, want %s/%s", old.UID, old.ResourceVersion, created.UID, created.ResourceVersion)
	}
	wantAnnotations := map[string]string{"owner": "ops", openyurt.NodePoolHostNetworkAnnotation: "true"}
	if !reflect.DeepEqual(old.Annotations, wantAnnotations) {
		t.Errorf("v1alpha1 annotations = %v, want %v", old.Annotations, wantAnnotations)
	}
	if !reflect.DeepEqual(old.Spec.Labels, created.Spec.Labels) || !reflect.DeepEqual(old.Spec.Annotations, created.Spec.Annotations) ||
		!reflect.DeepEqual(old.Spec.Taints, created.Spec.Taints) || !reflect.DeepEqual(old.Spec.Selector, created.Spec.Selector) ||
		string(old.Spec.Type) != string(created.Spec.Type) {
		t.Errorf("v1alpha1 spec = %+v, want the fields of the v1beta1 spec %+v", old.Spec, created.Spec)
	}
	if old.APIVersion != "" && old.APIVersion != "apps.openyurt.io/v1alpha1" {
		t.Errorf("v1alpha1 get returned apiVersion %s", old.APIVersion)
	}

	// Update through v1alpha1, status through v1alpha1 too; v1beta1 sees both, hostNetwork unchanged.
	old.Spec.Labels["zone"] = "hz2"
	updated, err := alpha.Update(ctx, old, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update through v1alpha1: %v", err)
	}
	if updated.Generation != 2 {
		t.Errorf("generation after a spec change through v1alpha1 = %d, want 2", updated.Generation)
	}
	updated.Status = openyurtv1alpha1.NodePoolStatus{ReadyNodeNum: 1, UnreadyNodeNum: 1, Nodes: []string{"n1", "n2"}}
	if _, err := alpha.UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status through v1alpha1: %v", err)
	}
	got, err := beta.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through v1beta1: %v", err)
	}
	if got.Spec.Labels["zone"] != "hz2" || !got.Spec.HostNetwork || got.Status.ReadyNodeNum != 1 ||
		!reflect.DeepEqual(got.Status.Nodes, []string{"n1", "n2"}) || !reflect.DeepEqual(got.Annotations, map[string]string{"owner": "ops"}) {
		t.Errorf("v1beta1 after v1alpha1 writes: spec=%+v status=%+v annotations=%v", got.Spec, got.Status, got.Annotations)
	}

	// Status through v1beta1, read through v1alpha1.
	got.Status.ReadyNodeNum, got.Status.UnreadyNodeNum, got.Status.Nodes = 2, 0, []string{"n1", "n2"}
	if _, err := beta.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status through v1beta1: %v", err)
	}
	if a, err := alpha.Get(ctx, name, metav1.GetOptions{}); err != nil || a.Status.ReadyNodeNum != 2 || a.Status.UnreadyNodeNum != 0 {
		t.Errorf("v1alpha1 status after a v1beta1 status write = %+v (%v), want 2 ready, 0 unready", a.Status, err)
	}

	// A v1alpha1 client that leaves the annotation in place keeps hostNetwork; removing it is a change of
	// an immutable field, reported on the annotation.
	a, err := alpha.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(a.Annotations, openyurt.NodePoolHostNetworkAnnotation)
	_, err = alpha.Update(ctx, a, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "metadata.annotations[nodepool.openyurt.io/hostnetwork]", metav1.CauseTypeFieldValueInvalid) {
		t.Errorf("removing the hostnetwork annotation through v1alpha1: %v, want 422 on the annotation", err)
	}
	// The same change through v1beta1 names spec.hostNetwork.
	b, err := beta.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.HostNetwork = false
	_, err = beta.Update(ctx, b, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "spec.hostNetwork", metav1.CauseTypeFieldValueInvalid) {
		t.Errorf("changing spec.hostNetwork through v1beta1: %v, want 422 on spec.hostNetwork", err)
	}

	// Lists in both versions hold the pool.
	for version, names := range map[string]func() ([]string, error){
		"v1alpha1": func() ([]string, error) {
			l, err := alpha.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			if err != nil {
				return nil, err
			}
			var out []string
			for _, p := range l.Items {
				out = append(out, p.Name)
			}
			return out, nil
		},
		"v1beta1": func() ([]string, error) {
			l, err := beta.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			if err != nil {
				return nil, err
			}
			var out []string
			for _, p := range l.Items {
				if !p.Spec.HostNetwork {
					t.Errorf("v1beta1 list item %s has hostNetwork false", p.Name)
				}
				out = append(out, p.Name)
			}
			return out, nil
		},
	} {
		got, err := names()
		if err != nil || !reflect.DeepEqual(got, []string{name}) {
			t.Errorf("%s list = %v (%v), want [%s]", version, got, err, name)
		}
	}
}

// TestNodePoolVersionValidation: defaulting and validation apply whatever the version, with field paths
// of the request's version.
func TestNodePoolVersionValidation(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)

	cloudBeta := betaNodePool(uniqueName(t, "pool"))
	cloudBeta.Spec.Type = openyurtv1beta1.Cloud
	_, err := cs.OpenYurtAppsV1beta1().NodePools().Create(ctx, cloudBeta, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "spec.hostNetwork", metav1.CauseTypeFieldValueInvalid) {
		t.Errorf("v1beta1 Cloud pool with hostNetwork: %v, want 422 on spec.hostNetwork", err)
	}

	cloudAlpha := &openyurtv1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{
		Name:        uniqueName(t, "pool"),
		Annotations: map[string]string{openyurt.NodePoolHostNetworkAnnotation: "true"},
	}, Spec: openyurtv1alpha1.NodePoolSpec{Type: "Cloud"}}
	_, err = cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, cloudAlpha, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "metadata.annotations[nodepool.openyurt.io/hostnetwork]", metav1.CauseTypeFieldValueInvalid) {
		t.Errorf("v1alpha1 Cloud pool with the hostnetwork annotation: %v, want 422 on the annotation", err)
	}

	// Other errors have the same path in both versions.
	bad := betaNodePool(uniqueName(t, "pool"))
	bad.Spec.Taints[0].Effect = "NoEntry"
	_, err = cs.OpenYurtAppsV1beta1().NodePools().Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "spec.taints[0].effect", metav1.CauseTypeFieldValueNotSupported) {
		t.Errorf("v1beta1 taint with an unknown effect: %v, want 422 on spec.taints[0].effect", err)
	}

	// Defaults through v1beta1: type Edge, the membership selector, the type label.
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = cs.OpenYurtAppsV1beta1().NodePools().Delete(ctx, name, metav1.DeleteOptions{}) })
	pool, err := cs.OpenYurtAppsV1beta1().NodePools().Create(ctx, &openyurtv1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a bare v1beta1 pool: %v", err)
	}
	if pool.Spec.Type != openyurtv1beta1.Edge || pool.Spec.Selector == nil || pool.Spec.Selector.MatchLabels[openyurt.NodePoolLabel] != name ||
		pool.Labels[openyurt.NodePoolTypeLabel] != "edge" || pool.Spec.HostNetwork {
		t.Errorf("defaulted v1beta1 pool = %+v labels %v", pool.Spec, pool.Labels)
	}
}

// nodePoolEvent returns the name, type and hostNetwork (field or annotation) of a NodePool watch event in
// either version.
func nodePoolEvent(t testing.TB, ev watch.Event) (string, bool) {
	t.Helper()
	switch p := ev.Object.(type) {
	case *openyurtv1alpha1.NodePool:
		return p.Name, p.Annotations[openyurt.NodePoolHostNetworkAnnotation] == "true"
	case *openyurtv1beta1.NodePool:
		return p.Name, p.Spec.HostNetwork
	}
	t.Fatalf("watch event %s carries %T, want a NodePool", ev.Type, ev.Object)
	return "", false
}

// TestNodePoolWatchAcrossVersions: watches in each version see writes made through the other.
func TestNodePoolWatchAcrossVersions(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	beta, alpha := cs.OpenYurtAppsV1beta1().NodePools(), cs.OpenYurtAppsV1alpha1().NodePools()
	name := uniqueName(t, "pool")
	selector := metav1.ListOptions{FieldSelector: "metadata.name=" + name}

	alphaWatch, err := alpha.Watch(ctx, selector)
	if err != nil {
		t.Fatalf("v1alpha1 watch: %v", err)
	}
	defer alphaWatch.Stop()
	betaWatch, err := beta.Watch(ctx, selector)
	if err != nil {
		t.Fatalf("v1beta1 watch: %v", err)
	}
	defer betaWatch.Stop()

	// Created through v1beta1.
	if _, err := beta.Create(ctx, betaNodePool(name), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create through v1beta1: %v", err)
	}
	t.Cleanup(func() { _ = beta.Delete(ctx, name, metav1.DeleteOptions{}) })
	for version, w := range map[string]watch.Interface{"v1alpha1": alphaWatch, "v1beta1": betaWatch} {
		ev := nextEvent(t, w, 10*time.Second)
		if got, hostNetwork := nodePoolEvent(t, ev); ev.Type != watch.Added || got != name || !hostNetwork {
			t.Errorf("%s watch: %s %s hostNetwork=%v, want ADDED %s with hostNetwork", version, ev.Type, got, hostNetwork, name)
		}
	}

	// Patched through v1alpha1.
	patch := []byte(`{"spec":{"labels":{"zone":"patched"}}}`)
	if _, err := alpha.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch through v1alpha1: %v", err)
	}
	ev := nextEvent(t, betaWatch, 10*time.Second)
	if p, ok := ev.Object.(*openyurtv1beta1.NodePool); !ok || ev.Type != watch.Modified || p.Spec.Labels["zone"] != "patched" || !p.Spec.HostNetwork {
		t.Errorf("v1beta1 watch after a v1alpha1 patch: %s %+v", ev.Type, ev.Object)
	}
	ev = nextEvent(t, alphaWatch, 10*time.Second)
	if p, ok := ev.Object.(*openyurtv1alpha1.NodePool); !ok || ev.Type != watch.Modified || p.Spec.Labels["zone"] != "patched" {
		t.Errorf("v1alpha1 watch after a v1alpha1 patch: %s %+v", ev.Type, ev.Object)
	}

	// Deleted through v1alpha1.
	if err := alpha.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete through v1alpha1: %v", err)
	}
	for version, w := range map[string]watch.Interface{"v1alpha1": alphaWatch, "v1beta1": betaWatch} {
		ev := nextEvent(t, w, 10*time.Second)
		if got, _ := nodePoolEvent(t, ev); ev.Type != watch.Deleted || got != name {
			t.Errorf("%s watch: %s %s, want DELETED %s", version, ev.Type, got, name)
		}
	}
}

// TestNodePoolApplyAcrossVersions: server-side apply in both versions; a field applied through v1beta1 is
// owned when it is applied through v1alpha1, and the other way round.
func TestNodePoolApplyAcrossVersions(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	beta, alpha := cs.OpenYurtAppsV1beta1().NodePools(), cs.OpenYurtAppsV1alpha1().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = beta.Delete(ctx, name, metav1.DeleteOptions{}) })

	betaCfg := openyurtv1beta1ac.NodePool(name).WithSpec(openyurtv1beta1ac.NodePoolSpec().
		WithHostNetwork(true).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"apps.openyurt.io/nodepool": name})).
		WithLabels(map[string]string{"zone": "hz"}).
		WithTaints(corev1ac.Taint().WithKey("example.com/edge").WithValue("true").WithEffect(corev1.TaintEffectNoSchedule)))
	created, err := beta.Apply(ctx, betaCfg, metav1.ApplyOptions{FieldManager: "beta-user"})
	if err != nil {
		t.Fatalf("apply through v1beta1: %v", err)
	}
	if !created.Spec.HostNetwork || created.Spec.Type != openyurtv1beta1.Edge {
		t.Errorf("applied through v1beta1: %+v", created.Spec)
	}

	// Read through v1alpha1: the v1beta1 manager's entry, in its own version, owns spec.labels.
	a, err := alpha.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entry := managerEntry(a.ManagedFields, "beta-user")
	if entry == nil || entry.APIVersion != "apps.openyurt.io/v1beta1" || entry.Operation != metav1.ManagedFieldsOperationApply ||
		!fieldsV1Has(t, entry.FieldsV1, "f:spec", "f:labels", "f:zone") || !fieldsV1Has(t, entry.FieldsV1, "f:spec", "f:hostNetwork") {
		t.Fatalf("managedFields read through v1alpha1 = %+v, want beta-user (Apply, v1beta1) owning spec.labels.zone and spec.hostNetwork", a.ManagedFields)
	}

	// A v1alpha1 apply of the same label by another manager conflicts with the v1beta1 owner.
	alphaCfg := openyurtv1alpha1ac.NodePool(name).WithSpec(openyurtv1alpha1ac.NodePoolSpec().
		WithLabels(map[string]string{"zone": "other"}))
	_, err = alpha.Apply(ctx, alphaCfg, metav1.ApplyOptions{FieldManager: "alpha-user"})
	if !apierrors.IsConflict(err) || !hasCause(statusError(t, err), ".spec.labels.zone", metav1.CauseTypeFieldManagerConflict) {
		t.Fatalf("v1alpha1 apply of a label owned through v1beta1: %v, want 409 on .spec.labels.zone", err)
	}
	// Forced, it takes the label over; the v1beta1 manager keeps the rest.
	forced, err := alpha.Apply(ctx, alphaCfg, metav1.ApplyOptions{FieldManager: "alpha-user", Force: true})
	if err != nil {
		t.Fatalf("forced v1alpha1 apply: %v", err)
	}
	if forced.Spec.Labels["zone"] != "other" || forced.Annotations[openyurt.NodePoolHostNetworkAnnotation] != "true" || len(forced.Spec.Taints) != 1 {
		t.Errorf("after the forced v1alpha1 apply: spec=%+v annotations=%v", forced.Spec, forced.Annotations)
	}
	alphaEntry, betaEntry := managerEntry(forced.ManagedFields, "alpha-user"), managerEntry(forced.ManagedFields, "beta-user")
	if alphaEntry == nil || alphaEntry.APIVersion != "apps.openyurt.io/v1alpha1" || !fieldsV1Has(t, alphaEntry.FieldsV1, "f:spec", "f:labels", "f:zone") {
		t.Errorf("alpha-user entry = %+v, want v1alpha1 owning spec.labels.zone", alphaEntry)
	}
	if betaEntry == nil || fieldsV1Has(t, betaEntry.FieldsV1, "f:spec", "f:labels", "f:zone") || !fieldsV1Has(t, betaEntry.FieldsV1, "f:spec", "f:taints") {
		t.Errorf("beta-user entry = %+v, want it to keep spec.taints and lose spec.labels.zone", betaEntry)
	}

	// The v1beta1 manager re-applies without the label's old value: its config now conflicts, the other way.
	_, err = beta.Apply(ctx, betaCfg, metav1.ApplyOptions{FieldManager: "beta-user"})
	if !apierrors.IsConflict(err) {
		t.Errorf("v1beta1 re-apply of a label owned through v1alpha1: %v, want 409", err)
	}

	// Applying the same configuration again through v1alpha1 is a no-op.
	again, err := alpha.Apply(ctx, alphaCfg, metav1.ApplyOptions{FieldManager: "alpha-user"})
	if err != nil || again.ResourceVersion != forced.ResourceVersion {
		t.Errorf("re-apply through v1alpha1: rv %s -> %s (%v), want unchanged", forced.ResourceVersion, again.ResourceVersion, err)
	}

	// Status is applied through either version's status subresource and never owned through the main one.
	st, err := beta.ApplyStatus(ctx, openyurtv1beta1ac.NodePool(name).WithStatus(openyurtv1beta1ac.NodePoolStatus().
		WithReadyNodeNum(3).WithNodes("n1", "n2", "n3")), metav1.ApplyOptions{FieldManager: "pool-controller", Force: true})
	if err != nil {
		t.Fatalf("apply status through v1beta1: %v", err)
	}
	if st.Status.ReadyNodeNum != 3 || !st.Spec.HostNetwork {
		t.Errorf("after status apply: status=%+v hostNetwork=%v", st.Status, st.Spec.HostNetwork)
	}
	ctrl := managerEntry(st.ManagedFields, "pool-controller")
	if ctrl == nil || ctrl.Subresource != "status" || !fieldsV1Has(t, ctrl.FieldsV1, "f:status", "f:readyNodeNum") {
		t.Errorf("pool-controller entry = %+v, want status subresource owning status.readyNodeNum", ctrl)
	}
}

// TestNodePoolRawVersions: the wire form of each version, as kubectl sees it.
func TestNodePoolRawVersions(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = cs.OpenYurtAppsV1beta1().NodePools().Delete(ctx, name, metav1.DeleteOptions{}) })
	if _, err := cs.OpenYurtAppsV1beta1().NodePools().Create(ctx, betaNodePool(name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := cs.OpenYurtAppsV1beta1().RESTClient()
	for _, tc := range []struct{ version, want, absent string }{
		{"v1beta1", `"hostNetwork":true`, `nodepool.openyurt.io/hostnetwork`},
		{"v1alpha1", `"nodepool.openyurt.io/hostnetwork":"true"`, `"hostNetwork":true`}, // managedFields of v1beta1 managers name f:hostNetwork
	} {
		body, err := rc.Get().AbsPath("/apis/apps.openyurt.io/" + tc.version + "/nodepools/" + name).DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %s: %v", tc.version, err)
		}
		for _, want := range []string{`"apiVersion":"apps.openyurt.io/` + tc.version + `"`, tc.want, `"labels":{"zone":"hz"}`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("%s body lacks %s: %s", tc.version, want, body)
			}
		}
		if strings.Contains(string(body), tc.absent) {
			t.Errorf("%s body has %s: %s", tc.version, tc.absent, body)
		}
	}
	// YurtAppDaemons are not served in v1beta1.
	code, _ := httpGet(t, s.URL+"/apis/apps.openyurt.io/v1beta1/namespaces/default/yurtappdaemons", "application/json")
	if code != http.StatusNotFound {
		t.Errorf("GET v1beta1 yurtappdaemons = %d, want 404", code)
	}
}
