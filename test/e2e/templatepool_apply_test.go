//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// poolTutorials are the tutorial manifests with a spec.templatePool.
var poolTutorials = []string{
	"tutorial-auto-delete-unused-template.yaml",
	"tutorial-different-templates.yaml",
	"tutorial-kill-pod.yaml",
	"tutorial-rolling-update.yaml",
	"tutorial-update-specified-pod.yaml",
}

// withSidecar adds a second container "sidecar" to templatePool entry "test" of the different-templates
// tutorial manifest.
func withSidecar(manifest string) string {
	return strings.Replace(manifest, `  templatePool:
    "test":
      metadata:
        labels:
          app: example-tapp
      spec:
        containers:
        - name: nginx
          image: nginx:1.7.9
`, `  templatePool:
    "test":
      metadata:
        labels:
          app: example-tapp
      spec:
        containers:
        - name: nginx
          image: nginx:1.7.9
        - name: sidecar
          image: busybox:1.36
`, 1)
}

// withPoolImage changes the image of templatePool entry "test" (and only that one) to image.
func withPoolImage(manifest, image string) string {
	i := strings.Index(manifest, "templatePool:")
	return manifest[:i] + strings.Replace(manifest[i:], "image: nginx:1.7.9", "image: "+image, 1)
}

// requirePool checks the containers (name=image) of every templatePool entry of the stored TApp.
func requirePool(t *testing.T, ns, name string, want map[string][]string) *tkestackv1.TApp {
	t.Helper()
	tapp := getTApp(t, ns, name)
	if err := poolIs(tapp, want); err != nil {
		t.Error(err)
	}
	return tapp
}

// waitPool waits until the stored TApp's templatePool is want (a controller changes it: autoDeleteUnusedTemplate).
func waitPool(t *testing.T, ns, name string, want map[string][]string) {
	t.Helper()
	pollUntil(t, ctrlTimeout, "the stored templatePool", func() error { return poolIs(getTApp(t, ns, name), want) })
}

func poolIs(tapp *tkestackv1.TApp, want map[string][]string) error {
	got := map[string][]string{}
	for entry, tmpl := range tapp.Spec.TemplatePool {
		for _, c := range tmpl.Spec.Containers {
			got[entry] = append(got[entry], c.Name+"="+c.Image)
		}
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		return fmt.Errorf("stored templatePool containers %s, want %s", g, w)
	}
	return nil
}

// expectedPool is the pool a tutorial manifest leaves once the controller has acted: with
// autoDeleteUnusedTemplate, the entries no instance, default or update strategy names (test2) go.
func expectedPool(t *testing.T, manifest string) (pool map[string][]string, autoDelete bool) {
	pool = manifestPool(t, manifest)
	if strings.Contains(manifest, "autoDeleteUnusedTemplate: true") {
		delete(pool, "test2")
		return pool, true
	}
	return pool, false
}

// manifestPool is the templatePool of a manifest as name=image lists.
func manifestPool(t *testing.T, manifest string) map[string][]string {
	t.Helper()
	var tapp tkestackv1.TApp
	if err := yaml.Unmarshal([]byte(manifest), &tapp); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for entry, tmpl := range tapp.Spec.TemplatePool {
		for _, c := range tmpl.Spec.Containers {
			out[entry] = append(out[entry], c.Name+"="+c.Image)
		}
	}
	return out
}

// TestApplyTemplatePool applies the tutorial's pool manifests with client-side and server-side kubectl apply,
// re-applies one with a changed pool image and a removed container, and checks the stored object each time.
// Client-side apply warns (kubectl cannot build a strategic merge patch inside a map of pod templates and
// falls back to a JSON merge patch) and must still store the manifest; server-side apply warns nothing and
// records the applier as the owner of the pool's fields.
func TestApplyTemplatePool(t *testing.T) {
	t.Parallel()

	t.Run("client-side", func(t *testing.T) {
		for _, file := range poolTutorials {
			ns := newNamespace(t, "pool-csa")
			manifest := tutorialTApp(t, file)
			mustKubectlIn(t, manifest, "apply", "-n", ns, "-f", "-")
			want, autoDelete := expectedPool(t, manifest)
			waitPool(t, ns, "example-tapp", want)
			// Applying the same manifest again changes nothing (but what the controller removed, which it
			// removes again).
			generation := getTApp(t, ns, "example-tapp").Generation
			mustKubectlIn(t, manifest, "apply", "-n", ns, "-f", "-")
			waitPool(t, ns, "example-tapp", want)
			if got := getTApp(t, ns, "example-tapp").Generation; got != generation && !autoDelete {
				t.Errorf("%s: re-applying the same manifest moved the generation %d -> %d", file, generation, got)
			}
		}

		ns := newNamespace(t, "pool-csa")
		base := tutorialTApp(t, "tutorial-different-templates.yaml")
		mustKubectlIn(t, withSidecar(base), "apply", "-n", ns, "-f", "-")
		requirePool(t, ns, "example-tapp", map[string][]string{"test": {"nginx=nginx:1.7.9", "sidecar=busybox:1.36"}})
		// Re-applied with the pool image changed and the sidecar removed from the manifest.
		_, stderr, err := kubectlOutputs(t, []byte(withPoolImage(base, "nginx:1.25")), "apply", "-n", ns, "-f", "-")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kubectl apply warned: %s", stderr)
		tapp := requirePool(t, ns, "example-tapp", map[string][]string{"test": {"nginx=nginx:1.25"}})
		if tapp.Spec.Template.Spec.Containers[0].Image != "nginx:1.7.9" || tapp.Spec.Templates["1"] != "test" {
			t.Errorf("the re-apply changed more than the pool: %+v", tapp.Spec)
		}
	})

	t.Run("server-side", func(t *testing.T) {
		for _, file := range poolTutorials {
			ns := newNamespace(t, "pool-ssa")
			manifest := tutorialTApp(t, file)
			_, stderr, err := kubectlOutputs(t, []byte(manifest), "apply", "--server-side", "--field-manager=e2e-pool", "-n", ns, "-f", "-")
			if err != nil {
				t.Fatal(err)
			}
			if warned := unexpectedWarnings(stderr); warned != "" {
				t.Errorf("%s: kubectl apply --server-side warned: %s", file, warned)
			}
			want, _ := expectedPool(t, manifest)
			waitPool(t, ns, "example-tapp", want)
		}

		ns := newNamespace(t, "pool-ssa")
		base := tutorialTApp(t, "tutorial-different-templates.yaml")
		ssa := func(manifest string) {
			t.Helper()
			_, stderr, err := kubectlOutputs(t, []byte(manifest), "apply", "--server-side", "--field-manager=e2e-pool", "-n", ns, "-f", "-")
			if err != nil {
				t.Fatal(err)
			}
			if warned := unexpectedWarnings(stderr); warned != "" {
				t.Errorf("kubectl apply --server-side warned: %s", warned)
			}
		}
		ssa(withSidecar(base))
		requirePool(t, ns, "example-tapp", map[string][]string{"test": {"nginx=nginx:1.7.9", "sidecar=busybox:1.36"}})
		ssa(withPoolImage(base, "nginx:1.25"))
		tapp := requirePool(t, ns, "example-tapp", map[string][]string{"test": {"nginx=nginx:1.25"}})
		if !ownsPoolImage(t, tapp.ManagedFields, "e2e-pool", "test", "nginx") {
			t.Errorf("e2e-pool does not own spec.templatePool[test] nginx's image: %+v", tapp.ManagedFields)
		}
	})
}

// unexpectedWarnings is stderr without the server's documented warning for the legacy key
// "DefaultTemplateName" (one tutorial manifest uses it).
func unexpectedWarnings(stderr string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line != "" && !strings.Contains(line, "spec.DefaultTemplateName is a deprecated spelling") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// ownsPoolImage reports whether manager's Apply entry owns the image of container in templatePool[entry].
func ownsPoolImage(t *testing.T, entries []metav1.ManagedFieldsEntry, manager, entry, container string) bool {
	t.Helper()
	for _, m := range entries {
		if m.Manager != manager || m.Operation != metav1.ManagedFieldsOperationApply || m.FieldsV1 == nil {
			continue
		}
		var f map[string]any
		if err := json.Unmarshal(m.FieldsV1.Raw, &f); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"f:spec", "f:templatePool", "f:" + entry, "f:spec", "f:containers", `k:{"name":"` + container + `"}`, "f:image"} {
			next, ok := f[key].(map[string]any)
			if !ok {
				return false
			}
			f = next
		}
		return true
	}
	return false
}

// TestStrategicMergeTemplatePool patches pool entries with kubectl patch's default type (strategic merge):
// one image changes and the rest of the entry stays, a container is removed with $patch: delete, an entry is
// removed and another added.
func TestStrategicMergeTemplatePool(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "pool-smp")
	mustKubectlIn(t, withSidecar(tutorialTApp(t, "tutorial-different-templates.yaml")), "apply", "--server-side", "-n", ns, "-f", "-")

	out := mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "-p",
		`{"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}}}}}`)
	requireContains(t, "kubectl patch", out, "tapp.apps.tkestack.io/example-tapp patched")
	requirePool(t, ns, "example-tapp", map[string][]string{"test": {"nginx=nginx:1.25", "sidecar=busybox:1.36"}})

	mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "-p",
		`{"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}}`)
	requirePool(t, ns, "example-tapp", map[string][]string{"test": {"nginx=nginx:1.25"}})

	// A new entry, then the old one removed once nothing names it.
	mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "-p",
		`{"spec":{"templatePool":{"canary":{"metadata":{"labels":{"app":"example-tapp"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}}`)
	mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "-p",
		`{"spec":{"templates":{"1":"canary"},"defaultTemplateName":"canary","updateStrategy":{"template":"canary"},"templatePool":{"test":{"$patch":"delete"}}}}`)
	requirePool(t, ns, "example-tapp", map[string][]string{"canary": {"nginx=nginx:1.26"}})

	// A patch the merge code refuses is a 4xx, not a 500.
	_, err := kubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "-p", `{"spec":{"templatePool":{"canary":{"$patch":"frobnicate"}}}}`)
	if err == nil || !strings.Contains(err.Error(), "BadRequest") && !strings.Contains(err.Error(), "strategic merge patch") {
		t.Errorf("an unknown directive: %v, want a 400", err)
	}
}
