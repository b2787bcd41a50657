package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

// The capitalised alias "DefaultTemplateName" is folded into defaultTemplateName before field management sees
// a request, so that ownership, conflicts and managedFields are exactly those of defaultTemplateName, for every
// way of writing a TApp.

// aliasTApp is a full TApp to apply, with templates "test" and "test2" in its pool and extra spec keys.
func aliasTApp(name string, spec string) []byte {
	body := `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"` + name + `"},"spec":{"replicas":1,` +
		`"template":{"metadata":{"labels":{"app":"alias"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}},` +
		`"templatePool":{"test":{"metadata":{"labels":{"app":"alias"}},"spec":{"containers":[{"name":"nginx","image":"nginx:test"}]}},` +
		`"test2":{"metadata":{"labels":{"app":"alias"}},"spec":{"containers":[{"name":"nginx","image":"nginx:test2"}]}}}`
	if spec != "" {
		body += "," + spec
	}
	return []byte(body + "}}")
}

// aliasPartial is an apply body that only sets spec keys.
func aliasPartial(name, spec string) []byte {
	return []byte(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"` + name + `"},"spec":{` + spec + `}}`)
}

// requireNoAliasOwnership fails when any managedFields entry names the alias.
func requireNoAliasOwnership(t *testing.T, tapp *tkestackv1.TApp) {
	t.Helper()
	for _, m := range tapp.ManagedFields {
		if m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), `"f:DefaultTemplateName"`) {
			t.Errorf("manager %s (%s) owns spec.DefaultTemplateName, a field never stored: %s", m.Manager, m.Operation, m.FieldsV1.Raw)
		}
	}
}

// ownsDefaultTemplateName reports whether manager has an entry of op owning spec.defaultTemplateName.
func ownsDefaultTemplateName(t *testing.T, tapp *tkestackv1.TApp, manager string, op metav1.ManagedFieldsOperationType) bool {
	t.Helper()
	for _, m := range tapp.ManagedFields {
		if m.Manager == manager && m.Operation == op && m.Subresource == "" && fieldsV1Has(t, m.FieldsV1, "f:spec", "f:defaultTemplateName") {
			return true
		}
	}
	return false
}

// requireConflict checks a 409 apply conflict on spec.defaultTemplateName.
func requireConflict(t *testing.T, what string, r szResult) {
	t.Helper()
	if r.code != http.StatusConflict || !apierrors.IsConflict(r.err) {
		t.Fatalf("%s: code=%d err=%v, want 409", what, r.code, r.err)
	}
	if se := statusError(t, r.err); !hasCause(se, ".spec.defaultTemplateName", metav1.CauseTypeFieldManagerConflict) {
		t.Errorf("%s: conflict causes %v, want .spec.defaultTemplateName", what, causeFields(se))
	}
}

func TestLegacyAliasFieldOwnership(t *testing.T) {
	s := sharedServer(t)
	warnings := &warningCollector{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = warnings
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := cs.TKEStackAppsV1().RESTClient()
	ns := newNamespace(t)
	tapps := fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)
	applyType := string(types.ApplyPatchType)
	as := func(manager string) map[string]string { return map[string]string{"fieldManager": manager} }
	forced := func(manager string) map[string]string {
		return map[string]string{"fieldManager": manager, "force": "true"}
	}
	get := func(t *testing.T, name string) *tkestackv1.TApp {
		t.Helper()
		tapp, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tapp
	}
	// owned makes a TApp whose defaultTemplateName manager "a" applied as "test".
	owned := func(t *testing.T) string {
		t.Helper()
		name := uniqueName(t, "alias")
		szRequireCode(t, "apply by a", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasTApp(name, `"defaultTemplateName":"test"`), as("a")), http.StatusCreated)
		return name
	}

	t.Run("apply of the alias conflicts with the owner", func(t *testing.T) {
		name := owned(t)
		requireConflict(t, "b applies defaultTemplateName", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasPartial(name, `"defaultTemplateName":"test2"`), as("b")))
		requireConflict(t, "b applies DefaultTemplateName", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasPartial(name, `"DefaultTemplateName":"test2"`), as("b")))
		requireConflict(t, "b applies DefaultTemplateName as YAML", szDo(t, rc, "PATCH", tapps+"/"+name, applyType,
			[]byte("apiVersion: apps.tkestack.io/v1\nkind: TApp\nmetadata:\n  name: "+name+"\nspec:\n  DefaultTemplateName: test2\n"), as("b")))
		requireConflict(t, "b applies an escaped DefaultTemplateName", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasPartial(name, `"\u0044efaultTemplateName":"test2"`), as("b")))
		if got := get(t, name); got.Spec.DefaultTemplateName != "test" {
			t.Fatalf("after the conflicts defaultTemplateName = %q, want test", got.Spec.DefaultTemplateName)
		}
		// Forced, b takes the field over, as it would with the lowercase key.
		warnings.take()
		szRequireCode(t, "b forces DefaultTemplateName", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasPartial(name, `"DefaultTemplateName":"test2"`), forced("b")), http.StatusOK)
		if w := warnings.take(); len(w) != 1 || !strings.Contains(w[0], "spec.DefaultTemplateName is a deprecated spelling") || !strings.Contains(w[0], "test2") {
			t.Errorf("warnings = %q, want one about the spelling", w)
		}
		got := get(t, name)
		if got.Spec.DefaultTemplateName != "test2" {
			t.Errorf("defaultTemplateName = %q, want test2", got.Spec.DefaultTemplateName)
		}
		if !ownsDefaultTemplateName(t, got, "b", metav1.ManagedFieldsOperationApply) || ownsDefaultTemplateName(t, got, "a", metav1.ManagedFieldsOperationApply) {
			t.Errorf("after the forced apply b should own defaultTemplateName and a not: %+v", got.ManagedFields)
		}
		requireNoAliasOwnership(t, got)
		// a re-applying its manifest now conflicts with b on the real field.
		requireConflict(t, "a re-applies", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasTApp(name, `"defaultTemplateName":"test"`), as("a")))
	})

	t.Run("apply creating with the alias", func(t *testing.T) {
		name := uniqueName(t, "alias")
		szRequireCode(t, "apply", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasTApp(name, `"DefaultTemplateName":"test"`), as("a")), http.StatusCreated)
		got := get(t, name)
		if got.Spec.DefaultTemplateName != "test" || !ownsDefaultTemplateName(t, got, "a", metav1.ManagedFieldsOperationApply) {
			t.Errorf("defaultTemplateName=%q, a owns it: %v; want test and true", got.Spec.DefaultTemplateName, ownsDefaultTemplateName(t, got, "a", metav1.ManagedFieldsOperationApply))
		}
		requireNoAliasOwnership(t, got)
		// The same manager switching to the lowercase key keeps its ownership and changes nothing.
		szRequireCode(t, "re-apply lowercase", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasTApp(name, `"defaultTemplateName":"test"`), as("a")), http.StatusOK)
		if again := get(t, name); again.Generation != got.Generation || !ownsDefaultTemplateName(t, again, "a", metav1.ManagedFieldsOperationApply) {
			t.Errorf("switching spelling: generation %d -> %d, a owns it %v", got.Generation, again.Generation, ownsDefaultTemplateName(t, again, "a", metav1.ManagedFieldsOperationApply))
		}
		// Dropping the field from the applied manifest gives it up: it returns to its default.
		szRequireCode(t, "apply without it", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasTApp(name, ""), as("a")), http.StatusOK)
		if again := get(t, name); again.Spec.DefaultTemplateName != "default" {
			t.Errorf("after dropping the field defaultTemplateName = %q, want default", again.Spec.DefaultTemplateName)
		}
	})

	t.Run("both spellings in one apply", func(t *testing.T) {
		name := owned(t)
		r := szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasPartial(name, `"defaultTemplateName":"test","DefaultTemplateName":"test2"`), forced("b"))
		if r.code != http.StatusUnprocessableEntity || !hasCause(statusError(t, r.err), "spec.DefaultTemplateName", metav1.CauseTypeFieldValueInvalid) {
			t.Errorf("both spellings with different values: code=%d err=%v, want 422 on spec.DefaultTemplateName", r.code, r.err)
		}
		szRequireCode(t, "both spellings, same value", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasPartial(name, `"defaultTemplateName":"test","DefaultTemplateName":"test"`), as("b")), http.StatusOK)
		got := get(t, name)
		if got.Spec.DefaultTemplateName != "test" {
			t.Errorf("defaultTemplateName = %q, want test", got.Spec.DefaultTemplateName)
		}
		requireNoAliasOwnership(t, got)
	})

	// Patches of every type and full updates record the change as one of defaultTemplateName.
	for _, c := range []struct {
		name, method, ctype, body string
	}{
		{"json patch add", "PATCH", string(types.JSONPatchType), `[{"op":"add","path":"/spec/DefaultTemplateName","value":"test2"}]`},
		{"json patch replace", "PATCH", string(types.JSONPatchType), `[{"op":"replace","path":"/spec/DefaultTemplateName","value":"test2"}]`},
		{"merge patch", "PATCH", string(types.MergePatchType), `{"spec":{"DefaultTemplateName":"test2"}}`},
		{"strategic merge patch", "PATCH", string(types.StrategicMergePatchType), `{"spec":{"DefaultTemplateName":"test2"}}`},
		{"strategic merge patch moving spellings", "PATCH", string(types.StrategicMergePatchType), `{"spec":{"defaultTemplateName":null,"DefaultTemplateName":"test2"}}`},
		{"update", "PUT", "application/json", ""},
		{"update as YAML", "PUT", "application/yaml", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := owned(t)
			body := []byte(c.body)
			if c.method == "PUT" {
				raw, err := rc.Get().AbsPath(tapps, name).Do(testContext(t)).Raw()
				if err != nil {
					t.Fatal(err)
				}
				// The object as read, with the alias added: the stored defaultTemplateName stays beside it.
				body = []byte(strings.Replace(string(raw), `"spec":{`, `"spec":{"DefaultTemplateName":"test2",`, 1))
				if c.ctype == "application/yaml" {
					if body, err = yaml.JSONToYAML(body); err != nil {
						t.Fatal(err)
					}
				}
			}
			warnings.take()
			szRequireCode(t, c.name, szDo(t, rc, c.method, tapps+"/"+name, c.ctype, body, map[string]string{"fieldManager": "writer"}), http.StatusOK)
			if w := warnings.take(); len(w) != 1 || !strings.Contains(w[0], "spec.DefaultTemplateName is a deprecated spelling") {
				t.Errorf("warnings = %q, want one about the spelling", w)
			}
			got := get(t, name)
			if got.Spec.DefaultTemplateName != "test2" {
				t.Errorf("defaultTemplateName = %q, want test2", got.Spec.DefaultTemplateName)
			}
			if !ownsDefaultTemplateName(t, got, "writer", metav1.ManagedFieldsOperationUpdate) {
				t.Errorf("writer does not own defaultTemplateName: %+v", got.ManagedFields)
			}
			requireNoAliasOwnership(t, got)
			// The owner's next apply conflicts on the real field, and a third manager's apply of the alias
			// conflicts with the writer.
			requireConflict(t, "a re-applies", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasTApp(name, `"defaultTemplateName":"test"`), as("a")))
			requireConflict(t, "c applies the alias", szDo(t, rc, "PATCH", tapps+"/"+name, applyType, aliasPartial(name, `"DefaultTemplateName":"default"`), as("c")))
		})
	}

	t.Run("json patch setting both spellings", func(t *testing.T) {
		name := owned(t)
		for _, body := range []string{
			`[{"op":"add","path":"/spec/DefaultTemplateName","value":"default"},{"op":"replace","path":"/spec/defaultTemplateName","value":"test2"}]`,
			`[{"op":"replace","path":"/spec","value":{"defaultTemplateName":"test","DefaultTemplateName":"test2"}}]`,
		} {
			r := szDo(t, rc, "PATCH", tapps+"/"+name, string(types.JSONPatchType), []byte(body), nil)
			if r.code != http.StatusUnprocessableEntity || !hasCause(statusError(t, r.err), "spec.DefaultTemplateName", "") {
				t.Errorf("%s: code=%d err=%v, want 422 on spec.DefaultTemplateName", body, r.code, r.err)
			}
		}
		if got := get(t, name); got.Spec.DefaultTemplateName != "test" {
			t.Errorf("defaultTemplateName = %q, want test", got.Spec.DefaultTemplateName)
		}
	})

	t.Run("update with both spellings", func(t *testing.T) {
		name := owned(t)
		raw, err := rc.Get().AbsPath(tapps, name).Do(testContext(t)).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		spec := obj["spec"].(map[string]any)
		// Both changed, to different values: refused.
		spec["defaultTemplateName"], spec["DefaultTemplateName"] = "default", "test2"
		body, _ := json.Marshal(obj)
		r := szDo(t, rc, "PUT", tapps+"/"+name, "application/json", body, nil)
		if r.code != http.StatusUnprocessableEntity || !hasCause(statusError(t, r.err), "spec.DefaultTemplateName", "") {
			t.Errorf("update changing both spellings differently: code=%d err=%v, want 422 on spec.DefaultTemplateName", r.code, r.err)
		}
		if got := get(t, name); got.Spec.DefaultTemplateName != "test" {
			t.Errorf("defaultTemplateName = %q, want test", got.Spec.DefaultTemplateName)
		}
	})

	// Ownership of the alias recorded before it was folded (here written into managedFields by the client,
	// which the API allows) is dropped on the next write, and the alias's applier no longer conflicts.
	t.Run("stale ownership of the alias", func(t *testing.T) {
		name := owned(t)
		entries := get(t, name).ManagedFields
		entries = append(entries, metav1.ManagedFieldsEntry{Manager: "old-jsonpatch", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "apps.tkestack.io/v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:DefaultTemplateName":{}}}`)}})
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"managedFields": entries, "labels": map[string]string{"touched": "yes"}}})
		if err != nil {
			t.Fatal(err)
		}
		szRequireCode(t, "merge patch carrying stale managedFields", szDo(t, rc, "PATCH", tapps+"/"+name, string(types.MergePatchType), patch, nil), http.StatusOK)
		got := get(t, name)
		requireNoAliasOwnership(t, got)
		if managerEntry(got.ManagedFields, "old-jsonpatch") != nil || !ownsDefaultTemplateName(t, got, "a", metav1.ManagedFieldsOperationApply) {
			t.Errorf("managedFields after the write: %+v, want old-jsonpatch gone and a still owning defaultTemplateName", got.ManagedFields)
		}
	})

	t.Run("create with the alias", func(t *testing.T) {
		name := uniqueName(t, "alias")
		warnings.take()
		szRequireCode(t, "create", szDo(t, rc, "POST", tapps, "application/json", aliasTApp(name, `"DefaultTemplateName":"test2"`), map[string]string{"fieldManager": "creator"}), http.StatusCreated)
		if w := warnings.take(); len(w) != 1 || !strings.Contains(w[0], "test2") {
			t.Errorf("warnings = %q, want one about the spelling", w)
		}
		got := get(t, name)
		if got.Spec.DefaultTemplateName != "test2" || !ownsDefaultTemplateName(t, got, "creator", metav1.ManagedFieldsOperationUpdate) {
			t.Errorf("defaultTemplateName = %q, creator owns it %v; want test2 and true", got.Spec.DefaultTemplateName, ownsDefaultTemplateName(t, got, "creator", metav1.ManagedFieldsOperationUpdate))
		}
		requireNoAliasOwnership(t, got)
		name = uniqueName(t, "alias")
		yamlBody := "apiVersion: apps.tkestack.io/v1\nkind: TApp\nmetadata:\n  name: " + name + "\nspec:\n  replicas: 1\n  DefaultTemplateName: default\n" +
			"  template:\n    metadata:\n      labels:\n        app: alias\n    spec:\n      containers:\n      - name: nginx\n        image: nginx\n"
		szRequireCode(t, "create from YAML", szDo(t, rc, "POST", tapps, "application/yaml", []byte(yamlBody), nil), http.StatusCreated)
		requireNoAliasOwnership(t, get(t, name))
	})
}
