package tapp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// FuzzStrategicMergeTemplatePool applies arbitrary strategic merge patches to a TApp with a template pool, both
// as the patch of one pool entry and as a whole patch. Nothing may panic, and:
//   - an entry patch merges into templatePool[test] exactly as the same patch merges into spec.template
//     (the upstream code, the oracle): both fail, or both give the same template, and nothing else changes;
//   - a whole patch either fails or leaves no patch directive ("$...") anywhere in the pool;
//   - the inputs are never modified.
func FuzzStrategicMergeTemplatePool(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}`,
		`{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}`,
		`{"spec":{"containers":[{"name":"main","env":[{"name":"B","value":"20"},{"name":"C","value":"3"}]}]}}`,
		`{"spec":{"volumes":[{"name":"data","$retainKeys":["name","hostPath"],"hostPath":{"path":"/d"}}]}}`,
		`{"spec":{"$setElementOrder/containers":[{"name":"sidecar"},{"name":"main"}],"containers":[{"name":"main","image":"nginx:3"}]}}`,
		`{"$patch":"replace","spec":{"containers":[{"name":"c","image":"i"}]}}`,
		`{"$patch":"delete"}`,
		`{"spec":{"$patch":"frobnicate"}}`,
		`{"spec":{"$setElementOrder/containers":"main"}}`,
		`{"metadata":{"labels":{"tier":null,"new":"v"}}}`,
		`{"spec":{"templatePool":{"test":{"$patch":"delete"},"new":{"spec":{"containers":[{"name":"c","image":"redis"}]}}}}}`,
		`{"spec":{"templatePool":{"$patch":"replace","test":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}}`,
		`{"spec":{"templatePool":{"test":null}}}`,
		`{"spec":{"$patch":"replace","template":{},"templatePool":{"x":{}}}}`,
		`{"spec":{"templatePool":[1,2]}}`,
	} {
		f.Add(seed)
	}
	original := func() map[string]any {
		var m map[string]any
		body := `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"web"},
			"spec":{"replicas":2,"template":` + richTemplate + `,"templatePool":{"test":` + richTemplate + `,"other":` + richTemplate + `}}}`
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(body), &m); err != nil {
			f.Fatal(err)
		}
		return m
	}
	f.Fuzz(func(t *testing.T, patchJSON string) {
		var entryPatch map[string]any
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(patchJSON), &entryPatch); err != nil || entryPatch == nil {
			return
		}

		// The whole patch.
		whole, orig := runtime.DeepCopyJSON(entryPatch), original()
		if merged, err := StrategicMerge(orig, whole); err == nil {
			if spec, ok := merged["spec"].(map[string]any); ok {
				if pool, ok := spec["templatePool"].(map[string]any); ok {
					body, _ := json.Marshal(pool)
					if strings.Contains(string(body), `"$patch"`) || strings.Contains(string(body), `"$setElementOrder/`) {
						t.Errorf("a directive was stored in the pool: %s", body)
					}
				}
			}
		}
		if !reflect.DeepEqual(whole, entryPatch) || !reflect.DeepEqual(orig, original()) {
			t.Fatalf("StrategicMerge modified its inputs")
		}

		// The same patch on spec.template and on templatePool[test].
		onTemplate := map[string]any{"spec": map[string]any{"template": runtime.DeepCopyJSON(entryPatch)}}
		onPool := map[string]any{"spec": map[string]any{"templatePool": map[string]any{"test": runtime.DeepCopyJSON(entryPatch)}}}
		want, wantErr := requestpath.MergeWithStruct(original(), onTemplate, &tkestackv1.TApp{})
		got, gotErr := StrategicMerge(original(), onPool)
		if directive(entryPatch) == deleteDir {
			// Only here do the two differ on purpose: the entry is removed, the template emptied.
			if gotErr == nil {
				if _, still := got["spec"].(map[string]any)["templatePool"].(map[string]any)["test"]; still {
					t.Errorf("$patch: delete left the entry")
				}
			}
			return
		}
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("spec.template: error %v; templatePool[test]: error %v", wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		wantTemplate := want["spec"].(map[string]any)["template"]
		gotSpec := got["spec"].(map[string]any)
		gotPool, _ := gotSpec["templatePool"].(map[string]any)
		if !reflect.DeepEqual(normalizeEmpty(wantTemplate), normalizeEmpty(gotPool["test"])) {
			w, _ := json.Marshal(wantTemplate)
			g, _ := json.Marshal(gotPool["test"])
			t.Errorf("templatePool[test] differs from the same patch on spec.template:\n pool     %s\n template %s", g, w)
		}
		if !reflect.DeepEqual(gotSpec["template"], original()["spec"].(map[string]any)["template"]) {
			t.Errorf("a pool patch changed spec.template")
		}
	})
}

// normalizeEmpty treats a missing template and an empty one alike.
func normalizeEmpty(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return v
}
