package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

const manifestDir = "../../artifacts/examples/tutorial"

// TestTutorialManifests creates every tutorial manifest through the REST API, as kubectl create would.
func TestTutorialManifests(t *testing.T) {
	s := sharedServer(t)
	warnings := &warningCollector{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = warnings
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := cs.TKEStackAppsV1().RESTClient()

	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d manifests in %s, want the tutorial set", len(files), manifestDir)
	}
	legacySeen := 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			legacy := strings.Contains(string(data), "\n  DefaultTemplateName:")
			js, err := yaml.YAMLToJSON(data)
			if err != nil {
				t.Fatalf("converting to JSON: %v", err)
			}
			var obj map[string]interface{}
			if err := json.Unmarshal(js, &obj); err != nil {
				t.Fatal(err)
			}
			meta := obj["metadata"].(map[string]interface{})
			name := meta["name"].(string)
			ns := newNamespace(t)
			meta["namespace"] = ns // some manifests name namespace "test"; every one gets its own
			body, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			path := fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)

			warnings.take()
			ctx := testContext(t)
			result := rc.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
			code := 0
			result.StatusCode(&code)
			raw, err := result.Raw()
			if err != nil || code != 201 {
				t.Fatalf("create: code=%d err=%v", code, err)
			}
			createWarnings := warnings.take()

			var created map[string]interface{}
			if err := json.Unmarshal(raw, &created); err != nil {
				t.Fatal(err)
			}
			// Fetch what was stored.
			raw, err = rc.Get().AbsPath(path, name).Do(ctx).Raw()
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			var stored map[string]interface{}
			if err := json.Unmarshal(raw, &stored); err != nil {
				t.Fatal(err)
			}
			spec := stored["spec"].(map[string]interface{})
			wantSpec := obj["spec"].(map[string]interface{})
			if spec["replicas"] != wantSpec["replicas"] {
				t.Errorf("stored replicas = %v, want %v", spec["replicas"], wantSpec["replicas"])
			}
			if _, ok := spec["DefaultTemplateName"]; ok {
				t.Errorf("stored spec has the legacy key DefaultTemplateName: %v", spec["DefaultTemplateName"])
			}
			if _, ok := created["spec"].(map[string]interface{})["DefaultTemplateName"]; ok {
				t.Errorf("create response spec has the legacy key DefaultTemplateName")
			}

			if legacy {
				legacySeen++
				if spec["defaultTemplateName"] != "test4" {
					t.Errorf("stored spec.defaultTemplateName = %v, want test4", spec["defaultTemplateName"])
				}
				if us, _ := spec["updateStrategy"].(map[string]interface{}); us["template"] != "test3" {
					t.Errorf("stored spec.updateStrategy.template = %v, want test3", us["template"])
				}
				if len(createWarnings) != 1 || !strings.Contains(createWarnings[0], "DefaultTemplateName") ||
					!strings.Contains(createWarnings[0], "test4") {
					t.Errorf("create warnings = %q, want one about the DefaultTemplateName spelling and test4", createWarnings)
				}
			} else {
				want := wantSpec["defaultTemplateName"]
				if want == nil {
					want = "default"
				}
				if spec["defaultTemplateName"] != want {
					t.Errorf("stored spec.defaultTemplateName = %v, want %v", spec["defaultTemplateName"], want)
				}
				if len(createWarnings) != 0 {
					t.Errorf("create warnings = %q, want none", createWarnings)
				}
			}

			// Updating the stored object (as kubectl replace would, from what GET returned) works and
			// does not warn again.
			stored["metadata"].(map[string]interface{})["labels"] = map[string]interface{}{"replaced": "yes"}
			body, err = json.Marshal(stored)
			if err != nil {
				t.Fatal(err)
			}
			if err := rc.Put().AbsPath(path, name).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error(); err != nil {
				t.Fatalf("replace: %v", err)
			}
			if w := warnings.take(); len(w) != 0 {
				t.Errorf("replace warnings = %q, want none", w)
			}
		})
	}
	if legacySeen != 2 {
		t.Errorf("saw %d manifests with the legacy DefaultTemplateName key, want 2", legacySeen)
	}
}

// TestLegacyDefaultTemplateNameConflict checks that both spellings with different values are rejected.
func TestLegacyDefaultTemplateNameConflict(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ns := newNamespace(t)
	body := []byte(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"both"},
		"spec":{"replicas":1,"defaultTemplateName":"default","DefaultTemplateName":"canary",
		"template":{"metadata":{"labels":{"app":"both"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}},
		"templatePool":{"canary":{"metadata":{"labels":{"app":"both"}},"spec":{"containers":[{"name":"nginx","image":"nginx:canary"}]}}}}}`)
	code, err := postJSON(t, cs.TKEStackAppsV1().RESTClient(), fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns), body, nil)
	if code != 422 || err == nil || !hasCause(statusError(t, err), "spec.DefaultTemplateName", "") {
		t.Errorf("both spellings with different values: code=%d err=%v, want 422 on spec.DefaultTemplateName", code, err)
	}
}

// TestLegacyDefaultTemplateNameReapply applies the tutorial manifest that uses the capitalised key, edits
// only that key and applies it again, as a user following the tutorial with kubectl apply would. The user
// never sets both spellings: the lowercase one on the live object was filled in by the server.
func TestLegacyDefaultTemplateNameReapply(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	rc := cs.TKEStackAppsV1().RESTClient()
	data, err := os.ReadFile(filepath.Join(manifestDir, "tutorial-auto-delete-unused-template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := func(defaultTemplate string) []byte {
		edited := strings.Replace(string(data), `DefaultTemplateName: "test4"`, `DefaultTemplateName: "`+defaultTemplate+`"`, 1)
		js, err := yaml.YAMLToJSON([]byte(edited))
		if err != nil {
			t.Fatal(err)
		}
		return js
	}

	t.Run("server-side apply", func(t *testing.T) {
		ns := newNamespace(t)
		apply := func(body []byte) error {
			return rc.Patch(types.ApplyPatchType).Namespace(ns).Resource("tapps").Name("example-tapp").
				Param("fieldManager", "kubectl").Body(body).Do(ctx).Error()
		}
		if err := apply(manifest("test4")); err != nil {
			t.Fatalf("first apply: %v", err)
		}
		if err := apply(manifest("test4")); err != nil {
			t.Fatalf("re-apply of the unchanged manifest: %v", err)
		}
		if got := mustGetTApp(t, cs, ns, "example-tapp"); got.Generation != 1 || got.Spec.DefaultTemplateName != "test4" {
			t.Errorf("after re-applying the unchanged manifest generation=%d defaultTemplateName=%q, want 1 and test4",
				got.Generation, got.Spec.DefaultTemplateName)
		}
		if err := apply(manifest("test2")); err != nil {
			t.Fatalf("re-apply with DefaultTemplateName: test2: %v", err)
		}
		if got := mustGetTApp(t, cs, ns, "example-tapp"); got.Spec.DefaultTemplateName != "test2" {
			t.Errorf("spec.defaultTemplateName = %q, want test2", got.Spec.DefaultTemplateName)
		}
	})

	t.Run("client-side apply", func(t *testing.T) {
		ns := newNamespace(t)
		path := fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)
		if code, err := postJSON(t, rc, path, manifest("test4"), nil); code != 201 {
			t.Fatalf("create: code=%d err=%v", code, err)
		}
		// kubectl apply sends the difference to the last applied manifest as a strategic merge patch.
		patch := []byte(`{"spec":{"DefaultTemplateName":"test2"}}`)
		if err := rc.Patch(types.StrategicMergePatchType).Namespace(ns).Resource("tapps").Name("example-tapp").
			Body(patch).Do(ctx).Error(); err != nil {
			t.Fatalf("patch DefaultTemplateName to test2: %v", err)
		}
		if got := mustGetTApp(t, cs, ns, "example-tapp"); got.Spec.DefaultTemplateName != "test2" {
			t.Errorf("spec.defaultTemplateName = %q, want test2", got.Spec.DefaultTemplateName)
		}
	})
}
