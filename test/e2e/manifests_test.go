//go:build e2e

package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var (
	// namespaceLineRE is the metadata.namespace of a tutorial manifest, replaced by the test's namespace.
	namespaceLineRE = regexp.MustCompile(`(?m)^  namespace: \S+\n`)
	// nameLineRE is the metadata.name of a tutorial manifest.
	nameLineRE = regexp.MustCompile(`(?m)^  name: (\S+)$`)
)

// TestTutorialManifests applies every tutorial manifest with kubectl (strict field validation, its
// default) in a namespace of its own, twice.
func TestTutorialManifests(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(repoPath("artifacts", "examples", "tutorial", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no tutorial manifests in artifacts/examples/tutorial")
	}
	for _, file := range files {
		file := file
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m := nameLineRE.FindSubmatch(raw)
			if m == nil {
				t.Fatalf("no metadata.name in %s", file)
			}
			name := string(m[1])
			manifest := namespaceLineRE.ReplaceAll(raw, nil)
			ns := newNamespace(t, "tutorial")

			out, stderr, err := kubectlOutputs(t, manifest, "apply", "-n", ns, "-f", "-")
			if err != nil {
				t.Fatal(err)
			}
			requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/"+name+" created")
			legacy := bytes.Contains(raw, []byte("\n  DefaultTemplateName:"))
			if legacy {
				// The capitalised legacy key is accepted, moved into defaultTemplateName, with a warning.
				requireContains(t, "kubectl apply's warnings", stderr, "Warning", "DefaultTemplateName")
				if got := mustKubectl(t, "get", "-n", ns, "tapp", name, "-o", "jsonpath={.spec.defaultTemplateName}"); got != "test4" {
					t.Errorf("defaultTemplateName = %q, want test4", got)
				}
			} else if strings.Contains(stderr, "Warning") {
				t.Errorf("kubectl apply warned: %s", stderr)
			}
			// A second apply of the same manifest is accepted and changes nothing. With
			// autoDeleteUnusedTemplate the controller removes templates the manifest lists, so a re-apply
			// brings them back and changes the spec by design (TestTAppAutoDeleteUnusedTemplate covers it).
			prunes := bytes.Contains(raw, []byte("\n  autoDeleteUnusedTemplate: true"))
			generation := mustKubectl(t, "get", "-n", ns, "tapp", name, "-o", "jsonpath={.metadata.generation}")
			out = mustKubectlIn(t, string(manifest), "apply", "-n", ns, "-f", "-")
			requireContains(t, "second kubectl apply", out, "tapp.apps.tkestack.io/"+name)
			if got := mustKubectl(t, "get", "-n", ns, "tapp", name, "-o", "jsonpath={.metadata.generation}"); got != generation && !prunes {
				t.Errorf("generation after re-applying = %s, want %s", got, generation)
			}
		})
	}
}

// deployDir is artifacts/deploy; the test fails without it.
func deployDir(t *testing.T) string {
	t.Helper()
	dir := repoPath("artifacts", "deploy")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the deployment manifests: %v", err)
	}
	return dir
}

// TestDeployManifests checks the deployment manifests against the cluster with a server-side dry run.
func TestDeployManifests(t *testing.T) {
	t.Parallel()
	dir := deployDir(t)
	// A dry run creates nothing, so objects in a namespace the manifests create would fail with NotFound:
	// create such namespaces for real first.
	for _, ns := range declaredNamespaces(t, dir) {
		ctx := testContext(t, 30*time.Second)
		_, err := kubeClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		switch {
		case err == nil:
			t.Logf("created the namespace %s of the manifests", ns)
			name := ns
			t.Cleanup(func() { _, _ = kubectl(t, "delete", "namespace", name, "--wait=false") })
		case !apierrors.IsAlreadyExists(err):
			t.Fatal(err)
		}
	}
	out := mustKubectl(t, "apply", "--dry-run=server", "-R", "-f", dir)
	t.Logf("kubectl apply --dry-run=server -R -f artifacts/deploy:\n%s", out)
	if !strings.Contains(out, "(server dry run)") {
		t.Errorf("kubectl apply --dry-run=server printed no object:\n%s", out)
	}
}

// TestDeployUserRoles applies the ClusterRoles of artifacts/deploy that aggregate into the built-in view,
// edit and admin roles, and checks that the built-in roles then grant access to TApps.
func TestDeployUserRoles(t *testing.T) {
	t.Parallel()
	dir := deployDir(t)
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// Only files holding nothing but ClusterRoles are applied for real.
		if bytes.Contains(raw, []byte("aggregate-to-edit")) && onlyKind(raw, "ClusterRole") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no file of artifacts/deploy holds only ClusterRoles aggregated into edit")
	}
	for _, f := range files {
		mustKubectl(t, "apply", "-f", f)
	}

	ns := newNamespace(t, "roles")
	mustKubectlIn(t, webTApp, "apply", "-n", ns, "-f", "-")
	mustKubectl(t, "create", "rolebinding", "viewer", "-n", ns, "--clusterrole=view", "--user=e2e-viewer")
	mustKubectl(t, "create", "rolebinding", "editor", "-n", ns, "--clusterrole=edit", "--user=e2e-editor")

	// The clusterrole aggregation controller fills in view and edit within seconds.
	eventually(t, 60*time.Second, "view lets e2e-viewer list tapps and yurtappdaemons", func() error {
		_, err := kubectlAs(t, "e2e-viewer", "get", "tapps,yurtappdaemons", "-n", ns)
		return err
	})
	if _, err := kubectlAs(t, "e2e-viewer", "scale", "tapp", "web", "-n", ns, "--replicas=3"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a viewer scaling a TApp: err = %v, want Forbidden", err)
	}
	eventually(t, 60*time.Second, "edit lets e2e-editor scale a TApp", func() error {
		_, err := kubectlAs(t, "e2e-editor", "scale", "tapp", "web", "-n", ns, "--replicas=3")
		return err
	})
	out, err := kubectlIn(t, []byte(tappManifest("by-editor", 1)), "--as=e2e-editor", "create", "-n", ns, "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	requireContains(t, "an editor creating a TApp", out, "tapp.apps.tkestack.io/by-editor created")
	if _, err := kubectlAs(t, "e2e-editor", "delete", "tapp", "by-editor", "-n", ns); err != nil {
		t.Errorf("an editor deleting a TApp: %v", err)
	}
}

// onlyKind reports whether every YAML document of raw with a kind is of kind.
func onlyKind(raw []byte, kind string) bool {
	for _, doc := range regexp.MustCompile(`(?m)^---.*$`).Split(string(raw), -1) {
		var obj struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return false
		}
		if obj.Kind != "" && obj.Kind != kind {
			return false
		}
	}
	return true
}

// declaredNamespaces returns the names of the Namespace objects in the YAML and JSON files under dir.
func declaredNamespaces(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, doc := range regexp.MustCompile(`(?m)^---.*$`).Split(string(raw), -1) {
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				continue // kubectl reports it
			}
			if obj.Kind == "Namespace" && obj.Metadata.Name != "" {
				names = append(names, obj.Metadata.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
