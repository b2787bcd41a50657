package tapp

import (
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// specOf decodes the spec of a folded object body.
func specOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatalf("folded body %s: %v", body, err)
	}
	spec, _ := obj["spec"].(map[string]any)
	return spec
}

func TestFoldLegacyAliasObjects(t *testing.T) {
	stored := func(v string) func() (string, bool) { return func() (string, bool) { return v, true } }
	for _, c := range []struct {
		name   string
		mt     string
		body   string
		stored func() (string, bool)
		// want is the folded spec's defaultTemplateName: "<none>" when the body is unchanged, "<absent>" when
		// the key is not in the folded spec, "<null>" when it is null.
		want      string
		conflict  bool
		warning   string
		noWarning bool
	}{
		{name: "alias alone", mt: "application/json", body: `{"spec":{"DefaultTemplateName":"test"}}`, want: "test", warning: `stored as spec.defaultTemplateName="test"`},
		{name: "apply alias alone", mt: string(types.ApplyYAMLPatchType), body: `{"metadata":{"name":"a"},"spec":{"replicas":1,"DefaultTemplateName":"test"}}`, want: "test"},
		{name: "merge patch alias", mt: string(types.MergePatchType), body: `{"spec":{"DefaultTemplateName":"test"}}`, want: "test"},
		{name: "strategic alias", mt: string(types.StrategicMergePatchType), body: `{"spec":{"DefaultTemplateName":"test"}}`, want: "test"},
		{name: "yaml create", mt: "application/yaml", body: "metadata:\n  name: a\nspec:\n  DefaultTemplateName: test\n", want: "test"},
		{name: "yaml apply", mt: string(types.ApplyYAMLPatchType), body: "metadata:\n  name: a\nspec:\n  DefaultTemplateName: test\n", want: "test"},
		{name: "escaped key", mt: "application/json", body: `{"spec":{"\u0044efaultTemplateName":"test"}}`, want: "test"},
		{name: "equal spellings", mt: string(types.ApplyYAMLPatchType), body: `{"spec":{"defaultTemplateName":"test","DefaultTemplateName":"test"}}`, want: "test"},
		{name: "different spellings", mt: string(types.ApplyYAMLPatchType), body: `{"metadata":{"name":"a"},"spec":{"defaultTemplateName":"default","DefaultTemplateName":"test"}}`, conflict: true},
		{name: "different spellings in a merge patch", mt: string(types.MergePatchType), body: `{"spec":{"defaultTemplateName":"test","DefaultTemplateName":"default"}}`, conflict: true},
		{name: "different spellings, put over the stored value", mt: "application/json", body: `{"spec":{"defaultTemplateName":"default","DefaultTemplateName":"test"}}`, stored: stored("default"), want: "test"},
		{name: "different spellings, put changing both", mt: "application/json", body: `{"spec":{"defaultTemplateName":"other","DefaultTemplateName":"test"}}`, stored: stored("default"), conflict: true},
		{name: "canonical deleted, alias set", mt: string(types.StrategicMergePatchType), body: `{"spec":{"defaultTemplateName":null,"DefaultTemplateName":"test"}}`, want: "test"},
		{name: "alias deleted, canonical set", mt: string(types.StrategicMergePatchType), body: `{"spec":{"DefaultTemplateName":null,"defaultTemplateName":"test"}}`, want: "test", noWarning: true},
		{name: "alias deleted alone", mt: string(types.MergePatchType), body: `{"spec":{"DefaultTemplateName":null}}`, want: "<null>"},
		{name: "empty alias", mt: "application/json", body: `{"spec":{"defaultTemplateName":"test","DefaultTemplateName":""}}`, want: "test"},
		{name: "empty alias alone", mt: "application/json", body: `{"spec":{"DefaultTemplateName":""}}`, want: "<absent>"},
		{name: "alias of the wrong type", mt: "application/json", body: `{"spec":{"DefaultTemplateName":7}}`, want: "<none>"},
		{name: "no alias", mt: "application/json", body: `{"metadata":{"annotations":{"a":"DefaultTemplateName: x"}},"spec":{"replicas":1}}`, want: "<none>"},
		{name: "lowercase only", mt: "application/json", body: `{"spec":{"defaultTemplateName":"test"}}`, want: "<none>"},
		{name: "cbor is left alone", mt: string(types.ApplyCBORPatchType), body: `{"spec":{"DefaultTemplateName":"test"}}`, want: "<none>"},
		{name: "malformed", mt: "application/json", body: `{"spec":{"DefaultTemplateName":`, want: "<none>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := foldLegacyAlias(c.mt, []byte(c.body), "", c.stored)
			if c.conflict {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("err = %v, want 422", err)
				}
				causes := err.(apierrors.APIStatus).Status().Details.Causes
				if len(causes) != 1 || causes[0].Field != "spec.DefaultTemplateName" {
					t.Errorf("causes = %+v, want one on spec.DefaultTemplateName", causes)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if c.want == "<none>" {
				if got.body != nil {
					t.Errorf("body rewritten to %s, want it unchanged", got.body)
				}
				return
			}
			if got.body == nil {
				t.Fatalf("body unchanged, want defaultTemplateName %s", c.want)
			}
			spec := specOf(t, got.body)
			if _, ok := spec["DefaultTemplateName"]; ok {
				t.Errorf("folded spec still has the alias: %v", spec)
			}
			value, ok := spec["defaultTemplateName"]
			switch {
			case c.want == "<absent>":
				if ok {
					t.Errorf("defaultTemplateName = %v, want it absent", value)
				}
			case c.want == "<null>":
				if !ok || value != nil {
					t.Errorf("defaultTemplateName = %v (present %v), want null", value, ok)
				}
			case value != c.want:
				t.Errorf("defaultTemplateName = %v, want %s", value, c.want)
			}
			if c.noWarning && len(got.warnings) != 0 {
				t.Errorf("warnings = %q, want none", got.warnings)
			}
			if c.warning != "" && (len(got.warnings) != 1 || !strings.Contains(got.warnings[0], c.warning)) {
				t.Errorf("warnings = %q, want one containing %q", got.warnings, c.warning)
			}
			if strings.HasPrefix(c.body, "metadata:") && c.mt == "application/yaml" && got.contentType != "application/json" {
				t.Errorf("content type = %q, want application/json for a YAML body sent on as JSON", got.contentType)
			}
		})
	}
}

func TestFoldLegacyAliasJSONPatch(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       string // the folded patch, or "" when unchanged
		conflict   bool
	}{
		{name: "add alias", body: `[{"op":"add","path":"/spec/DefaultTemplateName","value":"test"}]`,
			want: `[{"op":"add","path":"/spec/defaultTemplateName","value":"test"}]`},
		{name: "remove alias", body: `[{"op":"remove","path":"/spec/DefaultTemplateName"}]`,
			want: `[{"op":"remove","path":"/spec/defaultTemplateName"}]`},
		{name: "test and move from alias", body: `[{"op":"test","path":"/spec/DefaultTemplateName","value":"a"},{"op":"copy","from":"/spec/DefaultTemplateName","path":"/spec/serviceName"}]`,
			want: `[{"op":"test","path":"/spec/defaultTemplateName","value":"a"},{"from":"/spec/defaultTemplateName","op":"copy","path":"/spec/serviceName"}]`},
		{name: "whole spec", body: `[{"op":"replace","path":"/spec","value":{"replicas":1,"DefaultTemplateName":"test"}}]`,
			want: `[{"op":"replace","path":"/spec","value":{"defaultTemplateName":"test","replicas":1}}]`},
		{name: "whole object", body: `[{"op":"replace","path":"","value":{"spec":{"DefaultTemplateName":"test"}}}]`,
			want: `[{"op":"replace","path":"","value":{"spec":{"defaultTemplateName":"test"}}}]`},
		{name: "both spellings, same value", body: `[{"op":"replace","path":"/spec/defaultTemplateName","value":"test"},{"op":"add","path":"/spec/DefaultTemplateName","value":"test"}]`,
			want: `[{"op":"replace","path":"/spec/defaultTemplateName","value":"test"},{"op":"add","path":"/spec/defaultTemplateName","value":"test"}]`},
		{name: "both spellings, different values", body: `[{"op":"replace","path":"/spec/defaultTemplateName","value":"test"},{"op":"add","path":"/spec/DefaultTemplateName","value":"default"}]`, conflict: true},
		{name: "whole spec with both spellings", body: `[{"op":"replace","path":"/spec","value":{"defaultTemplateName":"a","DefaultTemplateName":"b"}}]`, conflict: true},
		{name: "alias of the wrong type", body: `[{"op":"add","path":"/spec/DefaultTemplateName","value":1}]`},
		{name: "other paths", body: `[{"op":"add","path":"/spec/serviceName","value":"DefaultTemplateName"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := foldLegacyAlias(string(types.JSONPatchType), []byte(c.body), "x", nil)
			if c.conflict {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.DefaultTemplateName") {
					t.Fatalf("err = %v, want 422 on spec.DefaultTemplateName", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.body) != c.want {
				t.Errorf("folded = %s, want %s", got.body, c.want)
			}
		})
	}
}

func TestMayNameAlias(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
		want bool
	}{
		{"spelt out", `{"spec":{"DefaultTemplateName":"a"}}`, true},
		{"JSON \\u escape", `{"spec":{"\u0044efaultTemplateName":"a"}}`, true},
		{"YAML \\x escape", "spec:\n  \"\\x44efaultTemplateName\": a\n", true},
		{"YAML \\U escape", "spec:\n  \"\\U00000044efaultTemplateName\": a\n", true},
		{"YAML escaped line break", "spec:\n  \"Default\\\n  TemplateName\": a\n", true},
		{"YAML escaped CRLF line break", "spec:\r\n  \"Default\\\r\n  TemplateName\": a\r\n", true},
		{"escape after an escaped backslash", `{"a":"\\\u0044"}`, true},
		{"canonical key only", `{"spec":{"defaultTemplateName":"a"}}`, false},
		{"managedFields list keys", `{"metadata":{"managedFields":[{"fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{}}}}}]}}`, false},
		{"escaped backslash before u", `{"a":"\\u0044"}`, false},
		{"other escapes", `{"a":"\t\n\"\/\b"}`, false},
		{"trailing backslash", `\`, false},
		{"protobuf-like bytes", "k8s\x00\n\x0f\n\x13apps.tkestack.io/v1", false},
	} {
		if got := mayNameAlias([]byte(c.body)); got != c.want {
			t.Errorf("%s: mayNameAlias(%q) = %v, want %v", c.name, c.body, got, c.want)
		}
	}
}
