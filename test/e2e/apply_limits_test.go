//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// poolManifest is a TApp with n templatePool entries, as JSON (kubectl reads it from stdin).
func poolManifest(t *testing.T, name string, n int) string {
	t.Helper()
	pool := make(map[string]any, n)
	for i := 0; i < n; i++ {
		pool[fmt.Sprintf("pool-%04d", i)] = map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name, "v": "1"}},
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": "nginx", "image": fmt.Sprintf("nginx:1.%d", i),
				"ports":     []any{map[string]any{"containerPort": 80}},
				"resources": map[string]any{"limits": map[string]any{"cpu": "1"}},
			}}},
		}
	}
	out, err := json.Marshal(map[string]any{
		"apiVersion": "apps.tkestack.io/v1", "kind": "TApp", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": 0,
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx"}}},
			},
			"templatePool": pool,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestServerSideApplyPastStorageLimit is the report through kube-apiserver's aggregator: kubectl
// apply --server-side of a TApp whose managedFields do not fit the storage is refused with 413 saying why
// (it was a 500 from etcd), with and without --force-conflicts, and the same manifest by kubectl create is
// stored.
func TestServerSideApplyPastStorageLimit(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "ssa-limit")
	for _, c := range []struct {
		n     int
		force bool
	}{{4000, false}, {5000, true}} {
		args := []string{"apply", "--server-side", "--field-manager=e2e-size", "-n", ns, "-f", "-"}
		if c.force {
			args = append(args, "--force-conflicts")
		}
		_, stderr, err := kubectlOutputs(t, []byte(poolManifest(t, "big", c.n)), args...)
		if err == nil {
			t.Fatalf("kubectl apply --server-side of %d pool entries succeeded, want a refusal", c.n)
		}
		for _, want := range []string{"(RequestEntityTooLarge)", "managedFields", "server-side apply"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%d pool entries: kubectl's error does not mention %q: %s", c.n, want, stderr)
			}
		}
		for _, bad := range []string{"InternalError", "etcdserver", "ResourceExhausted", "rpc error"} {
			if strings.Contains(stderr, bad) {
				t.Errorf("%d pool entries: kubectl's error is a server error (%s): %s", c.n, bad, stderr)
			}
		}
	}
	if out, err := kubectl(t, "get", "tapp", "big", "-n", ns); err == nil {
		t.Errorf("a refused apply stored the TApp: %s", out)
	}
	mustKubectlIn(t, poolManifest(t, "big", 4000), "create", "-n", ns, "-f", "-")
	if got := len(getTApp(t, ns, "big").Spec.TemplatePool); got != 4000 {
		t.Errorf("created TApp has %d pool entries, want 4000", got)
	}
}

// TestLegacyAliasApplyConflict applies the tutorial's capitalised DefaultTemplateName with kubectl: it
// conflicts with the manager that owns defaultTemplateName, as the lowercase key does.
func TestLegacyAliasApplyConflict(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "alias-ssa")
	manifest := func(key, value string) string {
		return `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: alias
spec:
  replicas: 0
  ` + key + `: ` + value + `
  template:
    metadata:
      labels:
        app: alias
    spec:
      containers:
      - name: nginx
        image: nginx
  templatePool:
    test:
      metadata:
        labels:
          app: alias
      spec:
        containers:
        - name: nginx
          image: nginx:test
`
	}
	mustKubectlIn(t, manifest("defaultTemplateName", "default"), "apply", "--server-side", "--field-manager=a", "-n", ns, "-f", "-")
	partial := "apiVersion: apps.tkestack.io/v1\nkind: TApp\nmetadata:\n  name: alias\nspec:\n  %s: test\n"
	for _, key := range []string{"defaultTemplateName", "DefaultTemplateName"} {
		_, stderr, err := kubectlOutputs(t, []byte(fmt.Sprintf(partial, key)), "apply", "--server-side", "--field-manager=b", "-n", ns, "-f", "-")
		if err == nil || !strings.Contains(stderr, "conflict") || !strings.Contains(stderr, ".spec.defaultTemplateName") {
			t.Errorf("b applying %s: err=%v stderr=%s, want a conflict on .spec.defaultTemplateName", key, err, stderr)
		}
	}
	if got := getTApp(t, ns, "alias").Spec.DefaultTemplateName; got != "default" {
		t.Errorf("defaultTemplateName = %q after the conflicts, want default", got)
	}
	_, stderr, err := kubectlOutputs(t, []byte(fmt.Sprintf(partial, "DefaultTemplateName")), "apply", "--server-side", "--force-conflicts", "--field-manager=b", "-n", ns, "-f", "-")
	if err != nil || !strings.Contains(stderr, "spec.DefaultTemplateName is a deprecated spelling") {
		t.Fatalf("forced apply of the alias: err=%v stderr=%s", err, stderr)
	}
	tapp := getTApp(t, ns, "alias")
	if tapp.Spec.DefaultTemplateName != "test" {
		t.Errorf("defaultTemplateName = %q, want test", tapp.Spec.DefaultTemplateName)
	}
	for _, m := range tapp.ManagedFields {
		if m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), "f:DefaultTemplateName") {
			t.Errorf("%s owns spec.DefaultTemplateName, never stored: %s", m.Manager, m.FieldsV1.Raw)
		}
	}
}
