package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	tkestackv1ac "github.com/tapp-io/tapp-apiserver/pkg/generated/applyconfiguration/tkestack/v1"
)

func fullTAppApply(ns, name string, replicas int32) *tkestackv1ac.TAppApplyConfiguration {
	return tkestackv1ac.TApp(name, ns).WithSpec(tkestackv1ac.TAppSpec().
		WithReplicas(replicas).
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(map[string]string{"app": name}).
			WithSpec(corev1ac.PodSpec().WithContainers(
				corev1ac.Container().WithName("nginx").WithImage("nginx:1.7.9")))))
}

func managerEntry(entries []metav1.ManagedFieldsEntry, manager string) *metav1.ManagedFieldsEntry {
	for i := range entries {
		if entries[i].Manager == manager {
			return &entries[i]
		}
	}
	return nil
}

func TestServerSideApply(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	created, err := tapps.Apply(ctx, fullTAppApply(ns, "ssa", 2), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply by alice: %v", err)
	}
	if created.Spec.Replicas != 2 || created.Generation != 1 || created.Spec.DefaultTemplateName != "default" {
		t.Errorf("after alice's apply replicas=%d generation=%d defaultTemplateName=%q, want 2, 1, default",
			created.Spec.Replicas, created.Generation, created.Spec.DefaultTemplateName)
	}
	alice := managerEntry(created.ManagedFields, "alice")
	if alice == nil || alice.Operation != metav1.ManagedFieldsOperationApply || !fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:replicas") {
		t.Fatalf("managedFields after alice's apply = %+v, want alice (Apply) owning f:spec/f:replicas", created.ManagedFields)
	}
	if !fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"nginx"}`, "f:image") {
		t.Errorf("alice's fieldsV1 = %s, want the nginx container's image keyed by name", alice.FieldsV1.Raw)
	}

	// Applying the same configuration again is a no-op.
	again, err := tapps.Apply(ctx, fullTAppApply(ns, "ssa", 2), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("re-apply by alice: %v", err)
	}
	if again.ResourceVersion != created.ResourceVersion {
		t.Errorf("re-applying the same configuration changed resourceVersion %s -> %s", created.ResourceVersion, again.ResourceVersion)
	}

	// Bob wants other replicas: conflict without force.
	bobCfg := tkestackv1ac.TApp("ssa", ns).WithSpec(tkestackv1ac.TAppSpec().WithReplicas(5))
	_, err = tapps.Apply(ctx, bobCfg, metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply by bob without force: got %v, want 409 Conflict", err)
	}
	se := statusError(t, err)
	if !strings.Contains(se.Error(), "alice") || !hasCause(se, ".spec.replicas", metav1.CauseTypeFieldManagerConflict) {
		t.Errorf("conflict = %q causes=%v, want one naming alice on .spec.replicas", se.Error(), causeFields(se))
	}
	if got := mustGetTApp(t, cs, ns, "ssa"); got.Spec.Replicas != 2 {
		t.Errorf("replicas after the conflicting apply = %d, want 2", got.Spec.Replicas)
	}

	// With force bob takes spec.replicas over.
	forced, err := tapps.Apply(ctx, bobCfg, metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil {
		t.Fatalf("forced apply by bob: %v", err)
	}
	if forced.Spec.Replicas != 5 || forced.Generation != 2 {
		t.Errorf("after bob's forced apply replicas=%d generation=%d, want 5 and 2", forced.Spec.Replicas, forced.Generation)
	}
	if img := forced.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.7.9" {
		t.Errorf("bob's apply changed the image to %q; fields bob did not apply must stay", img)
	}
	bob := managerEntry(forced.ManagedFields, "bob")
	if bob == nil || bob.Operation != metav1.ManagedFieldsOperationApply || !fieldsV1Has(t, bob.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("managedFields after forced apply = %+v, want bob (Apply) owning f:spec/f:replicas", forced.ManagedFields)
	}
	alice = managerEntry(forced.ManagedFields, "alice")
	if alice == nil {
		t.Fatalf("alice lost all her fields after bob's forced apply: %+v", forced.ManagedFields)
	}
	if fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("alice still owns f:spec/f:replicas after bob forced it: %s", alice.FieldsV1.Raw)
	}
	if !fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:template") {
		t.Errorf("alice no longer owns f:spec/f:template: %s", alice.FieldsV1.Raw)
	}

	// Status is not settable through apply to the main resource.
	withStatus := fullTAppApply(ns, "ssa", 5).WithStatus(tkestackv1ac.TAppStatus().WithReplicas(3).WithAppStatus("Running"))
	applied, err := tapps.Apply(ctx, withStatus, metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil {
		t.Fatalf("apply with status: %v", err)
	}
	if applied.Status.Replicas != 0 || applied.Status.AppStatus != "" {
		t.Errorf("status after applying it to the main resource = %+v, want it unchanged", applied.Status)
	}
	// Status is a reset field of the main resource: applying it there must not record ownership.
	for _, e := range applied.ManagedFields {
		if e.Subresource == "" && fieldsV1Has(t, e.FieldsV1, "f:status") {
			t.Errorf("manager %s owns status fields through the main resource: %s", e.Manager, e.FieldsV1.Raw)
		}
	}
	// ApplyStatus sets it.
	statusCfg := tkestackv1ac.TApp("ssa", ns).WithStatus(tkestackv1ac.TAppStatus().WithReplicas(3).WithAppStatus("Running"))
	applied, err = tapps.ApplyStatus(ctx, statusCfg, metav1.ApplyOptions{FieldManager: "controller", Force: true})
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	if applied.Status.Replicas != 3 || applied.Status.AppStatus != "Running" || applied.Spec.Replicas != 5 {
		t.Errorf("after ApplyStatus status=%+v spec.replicas=%d, want replicas 3 Running and spec.replicas 5", applied.Status, applied.Spec.Replicas)
	}
	ctrl := managerEntry(applied.ManagedFields, "controller")
	if ctrl == nil || ctrl.Subresource != "status" || !fieldsV1Has(t, ctrl.FieldsV1, "f:status", "f:appStatus") {
		t.Errorf("managedFields after ApplyStatus = %+v, want controller owning f:status/f:appStatus on subresource status", applied.ManagedFields)
	}
}

func TestStrategicMergePatch(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	in := newTApp(ns, "smp", 1)
	in.Spec.Template.Spec.Containers = []corev1.Container{
		{Name: "nginx", Image: "nginx:1"},
		{Name: "sidecar", Image: "busybox:1"},
	}
	if _, err := tapps.Create(ctx, in, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}

	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}`)
	out, err := tapps.Patch(ctx, "smp", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("strategic merge patch: %v", err)
	}
	containers := out.Spec.Template.Spec.Containers
	if len(containers) != 2 {
		t.Fatalf("containers after strategic merge patch = %+v, want nginx and sidecar", containers)
	}
	images := map[string]string{}
	for _, c := range containers {
		images[c.Name] = c.Image
	}
	if images["nginx"] != "nginx:2" || images["sidecar"] != "busybox:1" {
		t.Errorf("images after strategic merge patch = %v, want nginx=nginx:2 sidecar=busybox:1", images)
	}
	if out.Generation != 2 {
		t.Errorf("generation after patching the template = %d, want 2", out.Generation)
	}

	// A JSON merge patch replaces the list instead.
	out, err = tapps.Patch(ctx, "smp", types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:3"}]}}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if c := out.Spec.Template.Spec.Containers; len(c) != 1 || c[0].Image != "nginx:3" {
		t.Errorf("containers after merge patch = %+v, want only nginx:3", c)
	}

	// Patching status through the main resource is ignored; through /status it lands.
	out, err = tapps.Patch(ctx, "smp", types.MergePatchType, []byte(`{"status":{"replicas":1,"appStatus":"Running"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("status patch on main resource: %v", err)
	}
	if out.Status.Replicas != 0 || out.Status.AppStatus != "" {
		t.Errorf("status after patching the main resource = %+v, want unchanged", out.Status)
	}
	out, err = tapps.Patch(ctx, "smp", types.MergePatchType, []byte(`{"status":{"replicas":1,"appStatus":"Running"},"spec":{"replicas":9}}`),
		metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("status patch: %v", err)
	}
	if out.Status.Replicas != 1 || out.Status.AppStatus != "Running" || out.Spec.Replicas != 1 {
		t.Errorf("after /status patch status=%+v spec.replicas=%d, want replicas 1 Running and spec.replicas 1", out.Status, out.Spec.Replicas)
	}
}

// TestApplyAndScaleOwnership checks that spec.replicas written through /scale is owned on the TApp, so a
// later apply that still sets replicas conflicts, and an apply that drops replicas leaves the scaled value.
func TestApplyAndScaleOwnership(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	if _, err := tapps.Apply(ctx, fullTAppApply(ns, "owned", 2), metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	sc, err := tapps.GetScale(ctx, "owned", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc.Spec.Replicas = 4
	if _, err := tapps.UpdateScale(ctx, "owned", sc, metav1.UpdateOptions{FieldManager: "scaler"}); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	got := mustGetTApp(t, cs, ns, "owned")
	if alice := managerEntry(got.ManagedFields, "alice"); alice == nil || fieldsV1Has(t, alice.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("alice still owns f:spec/f:replicas after the scaler changed it: %+v", got.ManagedFields)
	}

	// Re-applying the old replica count conflicts with the scaler.
	_, err = tapps.Apply(ctx, fullTAppApply(ns, "owned", 2), metav1.ApplyOptions{FieldManager: "alice"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "scaler") {
		t.Fatalf("re-apply of replicas 2 after scaling: got %v, want a conflict with manager scaler", err)
	}

	// An apply that leaves replicas out keeps the scaled value.
	noReplicas := tkestackv1ac.TApp("owned", ns).WithSpec(tkestackv1ac.TAppSpec().
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(map[string]string{"app": "owned"}).
			WithSpec(corev1ac.PodSpec().WithContainers(
				corev1ac.Container().WithName("nginx").WithImage("nginx:1.8")))))
	out, err := tapps.Apply(ctx, noReplicas, metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply without replicas: %v", err)
	}
	if out.Spec.Replicas != 4 || out.Spec.Template.Spec.Containers[0].Image != "nginx:1.8" {
		t.Errorf("after applying without replicas: replicas=%d image=%s, want 4 and nginx:1.8",
			out.Spec.Replicas, out.Spec.Template.Spec.Containers[0].Image)
	}

	// Server-side apply to the scale subresource.
	rc := cs.TKEStackAppsV1().RESTClient()
	body := []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"owned","namespace":"` + ns + `"},"spec":{"replicas":6}}`)
	err = rc.Patch(types.ApplyPatchType).Namespace(ns).Resource("tapps").Name("owned").SubResource("scale").
		Param("fieldManager", "hpa").Param("force", "true").Body(body).Do(ctx).Error()
	if err != nil {
		t.Fatalf("apply to tapps/scale: %v", err)
	}
	got = mustGetTApp(t, cs, ns, "owned")
	if got.Spec.Replicas != 6 {
		t.Errorf("replicas after apply to /scale = %d, want 6", got.Spec.Replicas)
	}
	hpa := managerEntry(got.ManagedFields, "hpa")
	if hpa == nil || hpa.Operation != metav1.ManagedFieldsOperationApply || hpa.Subresource != "scale" ||
		!fieldsV1Has(t, hpa.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("managedFields after apply to /scale = %+v, want hpa (Apply, scale) owning f:spec/f:replicas", got.ManagedFields)
	}
	if scaler := managerEntry(got.ManagedFields, "scaler"); scaler != nil && fieldsV1Has(t, scaler.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("scaler still owns f:spec/f:replicas after the forced apply to /scale")
	}
}
