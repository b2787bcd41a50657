package integration

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestStrategicMergeTemplatePoolHTTP patches existing templatePool entries with strategic merge patches over
// HTTP, as kubectl patch does by default: entries merge as spec.template does, are removed and added, no
// concurrent patch is lost, dry-run stores nothing, status patches carrying a pool are accepted without
// touching spec, and the patch's manager owns what it changed.
func TestStrategicMergeTemplatePoolHTTP(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	tapp := newTApp(ns, "web", 2)
	tapp.Spec.Template.Spec.Containers = append(tapp.Spec.Template.Spec.Containers,
		corev1.Container{Name: "sidecar", Image: "busybox:1", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}})
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"test": *tapp.Spec.Template.DeepCopy(), "other": *tapp.Spec.Template.DeepCopy()}
	if _, err := tapps.Create(ctx, tapp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := func(body string, opts metav1.PatchOptions, sub ...string) (*tkestackv1.TApp, error) {
		if opts.FieldManager == "" {
			opts.FieldManager = "pool-patcher"
		}
		return tapps.Patch(ctx, "web", types.StrategicMergePatchType, []byte(body), opts, sub...)
	}
	container := func(tp corev1.PodTemplateSpec, name string) *corev1.Container {
		for i := range tp.Spec.Containers {
			if tp.Spec.Containers[i].Name == name {
				return &tp.Spec.Containers[i]
			}
		}
		return nil
	}

	// Merge by key: one image changes, the other container and its env stay.
	got, err := patch(`{"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"},{"name":"sidecar","env":[{"name":"B","value":"2"}]}]}}}}}`, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("strategic merge patch of a pool entry: %v", err)
	}
	entry := got.Spec.TemplatePool["test"]
	if c := container(entry, "nginx"); c == nil || c.Image != "nginx:2" {
		t.Errorf("templatePool[test] nginx = %+v, want image nginx:2", c)
	}
	if c := container(entry, "sidecar"); c == nil || c.Image != "busybox:1" || len(c.Env) != 2 {
		t.Errorf("templatePool[test] sidecar = %+v, want busybox:1 with env A and B", c)
	}
	if got.Spec.TemplatePool["other"].Spec.Containers[0].Image != "nginx:1.7.9" || got.Spec.Template.Spec.Containers[0].Image != "nginx:1.7.9" {
		t.Errorf("the patch changed another template: %+v", got.Spec)
	}
	owned := false
	for _, m := range got.ManagedFields {
		if m.Manager == "pool-patcher" && fieldsV1Has(t, m.FieldsV1, "f:spec", "f:templatePool", "f:test", "f:spec", "f:containers", `k:{"name":"nginx"}`, "f:image") {
			owned = true
		}
		if m.Manager == "pool-patcher" && fieldsV1Has(t, m.FieldsV1, "f:spec", "f:templatePool", "f:other") {
			t.Errorf("pool-patcher owns templatePool[other], which it did not change: %s", m.FieldsV1.Raw)
		}
	}
	if !owned {
		t.Errorf("pool-patcher does not own templatePool[test]...image: %+v", got.ManagedFields)
	}

	// A container removed with $patch: delete; $setElementOrder honoured.
	got, err = patch(`{"spec":{"templatePool":{"test":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"name":"sidecar","$patch":"delete"}]}}}}}`, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cs := got.Spec.TemplatePool["test"].Spec.Containers; len(cs) != 1 || cs[0].Name != "nginx" {
		t.Errorf("templatePool[test] containers = %+v, want nginx alone", cs)
	}

	// Dry run stores nothing.
	if _, err := patch(`{"spec":{"templatePool":{"test":{"$patch":"delete"}}}}`, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if cur, _ := tapps.Get(ctx, "web", metav1.GetOptions{}); len(cur.Spec.TemplatePool) != 2 {
		t.Errorf("a dry-run patch changed the pool: %v", cur.Spec.TemplatePool)
	}

	// An entry removed and one added in one patch.
	got, err = patch(`{"spec":{"templatePool":{"other":{"$patch":"delete"},"canary":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"redis"}]}}}}}`, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Spec.TemplatePool["other"]; ok || len(got.Spec.TemplatePool) != 2 || got.Spec.TemplatePool["canary"].Spec.Containers[0].Image != "redis" {
		t.Errorf("pool = %v, want test and canary", got.Spec.TemplatePool)
	}

	// A status patch carrying a pool: accepted, spec untouched.
	before, _ := tapps.Get(ctx, "web", metav1.GetOptions{})
	if _, err := patch(`{"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"nginx","image":"nginx:9"}]}}}},"status":{"appStatus":"Running"}}`, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("status patch with a pool entry: %v", err)
	}
	if after, _ := tapps.Get(ctx, "web", metav1.GetOptions{}); after.Spec.TemplatePool["test"].Spec.Containers[0].Image != before.Spec.TemplatePool["test"].Spec.Containers[0].Image ||
		after.Status.AppStatus != "Running" {
		t.Errorf("status patch: spec pool image %s, appStatus %q", after.Spec.TemplatePool["test"].Spec.Containers[0].Image, after.Status.AppStatus)
	}

	// Concurrent patches of the same entry, each adding its own env var: none is lost.
	const writers = 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := patch(fmt.Sprintf(`{"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"nginx","env":[{"name":"W%d","value":"x"}]}]}}}}}`, i), metav1.PatchOptions{})
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent pool patch: %v", err)
		}
	}
	cur, err := tapps.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if env := container(cur.Spec.TemplatePool["test"], "nginx").Env; len(env) != writers {
		t.Errorf("after %d concurrent patches templatePool[test] has %d env vars: %v", writers, len(env), env)
	}

	// A stale resourceVersion named by the client is a conflict, not a retry.
	_, err = patch(fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"templatePool":{"test":{"metadata":{"labels":{"x":"y"}}}}}}`, before.ResourceVersion), metav1.PatchOptions{})
	if se := statusError(t, err); se.ErrStatus.Code != 409 {
		t.Errorf("stale resourceVersion: %v, want 409", err)
	}
}

// TestStrategicMergeFirstTemplatePool adds the first pool entry, and an instance using it, to a TApp that has
// no pool, as the tutorial's "update specified pod" step does with kubectl apply: the entry is stored as sent
// and nothing else lands in the pool.
func TestStrategicMergeFirstTemplatePool(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)
	if _, err := tapps.Create(ctx, newTApp(ns, "first-pool", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	body := `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:latest","name":"nginx"}]}},` +
		`"templatePool":{"test2":{"metadata":{"labels":{"app":"first-pool"}},"spec":{"containers":[{"image":"nginx:1.7.9","name":"nginx"}]}}},"templates":{"1":"test2"}}}`
	got, err := tapps.Patch(ctx, "first-pool", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "kubectl-client-side-apply"})
	if err != nil {
		t.Fatalf("strategic merge patch adding the first pool entry: %v", err)
	}
	if len(got.Spec.TemplatePool) != 1 {
		t.Fatalf("templatePool = %v, want only test2", got.Spec.TemplatePool)
	}
	entry, ok := got.Spec.TemplatePool["test2"]
	if !ok || len(entry.Spec.Containers) != 1 || entry.Spec.Containers[0].Image != "nginx:1.7.9" || entry.Labels["app"] != "first-pool" {
		t.Errorf("templatePool[test2] = %+v, want the entry as sent", entry)
	}
	if got.Spec.Templates["1"] != "test2" || got.Spec.Template.Spec.Containers[0].Image != "nginx:latest" {
		t.Errorf("templates = %v, template image = %s; want 1 -> test2 and nginx:latest", got.Spec.Templates, got.Spec.Template.Spec.Containers[0].Image)
	}
}
