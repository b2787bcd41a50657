package tapp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	sigsjson "sigs.k8s.io/json"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// richTemplate is a pod template with every kind of list a strategic merge patch treats specially: containers
// (merge key name), env (name), ports (containerPort), volumes (name, retainKeys), volumeMounts (mountPath).
const richTemplate = `{
  "metadata": {"labels": {"app": "x", "tier": "web"}, "annotations": {"a": "1"}},
  "spec": {
    "containers": [
      {"name": "main", "image": "nginx:1", "args": ["-v"],
       "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
       "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443, "protocol": "TCP"}],
       "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
      {"name": "sidecar", "image": "busybox:1"}
    ],
    "volumes": [{"name": "data", "emptyDir": {}}, {"name": "conf", "configMap": {"name": "c"}}],
    "nodeSelector": {"zone": "a"}
  }
}`

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(s), &m); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return m
}

// tappWithPool is a v1 TApp whose spec.template and templatePool entry "test" are both richTemplate.
func tappWithPool(t *testing.T) map[string]any {
	return decodeJSON(t, `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"web"},
		"spec":{"replicas":2,"template":`+richTemplate+`,"templatePool":{"test":`+richTemplate+`,"other":`+richTemplate+`}}}`)
}

func wrapPatch(t *testing.T, field, entryPatch string) map[string]any {
	if field == "template" {
		return decodeJSON(t, `{"spec":{"template":`+entryPatch+`}}`)
	}
	return decodeJSON(t, `{"spec":{"templatePool":{"test":`+entryPatch+`}}}`)
}

// TestStrategicMergeTemplatePoolMatchesTemplate applies each patch to spec.template with the upstream code (the
// oracle) and to spec.templatePool[test] with StrategicMerge: the results must be the same template, or both
// must fail. The other pool entry and spec.template must not change.
func TestStrategicMergeTemplatePoolMatchesTemplate(t *testing.T) {
	cases := map[string]string{
		"change an image":          `{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}`,
		"add a container":          `{"spec":{"containers":[{"name":"new","image":"redis"}]}}`,
		"delete a container":       `{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}`,
		"merge env by name":        `{"spec":{"containers":[{"name":"main","env":[{"name":"B","value":"20"},{"name":"C","value":"3"}]}]}}`,
		"delete an env var":        `{"spec":{"containers":[{"name":"main","env":[{"name":"A","$patch":"delete"}]}]}}`,
		"merge ports":              `{"spec":{"containers":[{"name":"main","ports":[{"containerPort":8080,"protocol":"TCP"}]}]}}`,
		"replace args":             `{"spec":{"containers":[{"name":"main","args":["-x","-y"]}]}}`,
		"volume retainKeys":        `{"spec":{"volumes":[{"name":"data","$retainKeys":["name","hostPath"],"hostPath":{"path":"/d"}}]}}`,
		"set element order":        `{"spec":{"$setElementOrder/containers":[{"name":"sidecar"},{"name":"main"}],"containers":[{"name":"main","image":"nginx:3"}]}}`,
		"replace containers":       `{"spec":{"containers":[{"name":"only","image":"x"},{"$patch":"replace"}]}}`,
		"label change and delete":  `{"metadata":{"labels":{"tier":null,"new":"v"}}}`,
		"replace the whole spec":   `{"spec":{"$patch":"replace","containers":[{"name":"c","image":"i"}]}}`,
		"replace the entry":        `{"$patch":"replace","spec":{"containers":[{"name":"c","image":"i"}]}}`,
		"node selector merge":      `{"spec":{"nodeSelector":{"zone":null,"disk":"ssd"}}}`,
		"delete from mounts":       `{"spec":{"containers":[{"name":"main","volumeMounts":[{"mountPath":"/data","$patch":"delete"}]}]}}`,
		"delete volume, keep rest": `{"spec":{"volumes":[{"name":"conf","$patch":"delete"}]}}`,
		"unknown field kept":       `{"spec":{"bogus":1}}`,
		"unknown list directive":   `{"spec":{"containers":[{"name":"main","$patch":"frobnicate"}]}}`,
		"unknown map directive":    `{"spec":{"$patch":"frobnicate"}}`,
		"malformed element order":  `{"spec":{"$setElementOrder/containers":"main","containers":[{"name":"main","image":"x"}]}}`,
		"element order of strings": `{"spec":{"$setElementOrder/containers":["main"],"containers":[{"name":"main","image":"x"}]}}`,
		"bad retainKeys":           `{"spec":{"volumes":[{"name":"data","$retainKeys":"name"}]}}`,
	}
	for name, entryPatch := range cases {
		t.Run(name, func(t *testing.T) {
			original := tappWithPool(t)
			want, wantErr := strategicpatch.StrategicMergeMapPatch(tappWithPool(t), wrapPatch(t, "template", entryPatch), &tkestackv1.TApp{})
			got, gotErr := StrategicMerge(original, wrapPatch(t, "pool", entryPatch))
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("spec.template: error %v; templatePool: error %v", wantErr, gotErr)
			}
			if wantErr != nil {
				return
			}
			wantTemplate := want["spec"].(map[string]any)["template"]
			gotSpec := got["spec"].(map[string]any)
			gotEntry := gotSpec["templatePool"].(map[string]any)["test"]
			if !reflect.DeepEqual(wantTemplate, gotEntry) {
				w, _ := json.Marshal(wantTemplate)
				g, _ := json.Marshal(gotEntry)
				t.Errorf("templatePool[test] differs from the same patch on spec.template:\n pool     %s\n template %s", g, w)
			}
			untouched := decodeJSON(t, richTemplate)
			if !reflect.DeepEqual(gotSpec["template"], untouched) || !reflect.DeepEqual(gotSpec["templatePool"].(map[string]any)["other"], untouched) {
				t.Errorf("the patch changed spec.template or templatePool[other]: %v", gotSpec)
			}
			if !reflect.DeepEqual(original, tappWithPool(t)) {
				t.Errorf("StrategicMerge changed its original")
			}
		})
	}
}

// TestStrategicMergeTemplatePoolEntries covers what only a pool has: entries added, removed and replaced.
func TestStrategicMergeTemplatePoolEntries(t *testing.T) {
	cases := []struct {
		name    string
		patch   string
		want    []string // the pool's entries afterwards, sorted
		image   string   // the image of the first container of entry "test" afterwards, if set
		wantErr string
	}{
		{name: "$patch delete removes an entry", patch: `{"spec":{"templatePool":{"test":{"$patch":"delete"}}}}`, want: []string{"other"}},
		{name: "null removes an entry", patch: `{"spec":{"templatePool":{"test":null}}}`, want: []string{"other"}},
		{name: "delete a missing entry", patch: `{"spec":{"templatePool":{"gone":{"$patch":"delete"}}}}`, want: []string{"other", "test"}},
		{name: "a new entry is added", patch: `{"spec":{"templatePool":{"new":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"redis"}]}}}}}`, want: []string{"new", "other", "test"}},
		{name: "a new entry's directives are applied, not stored", patch: `{"spec":{"templatePool":{"test":null,"new":{"spec":{"$setElementOrder/containers":[{"name":"c"}],"containers":[{"name":"c","image":"redis"}]}}}}}`, want: []string{"new", "other"}},
		{name: "merge one, delete another", patch: `{"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"main","image":"nginx:9"}]}},"other":{"$patch":"delete"}}}}`, want: []string{"test"}, image: "nginx:9"},
		{name: "pool $patch replace", patch: `{"spec":{"templatePool":{"$patch":"replace","test":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}}`, want: []string{"test"}, image: "i"},
		{name: "pool $patch delete", patch: `{"spec":{"templatePool":{"$patch":"delete"}}}`},
		{name: "pool null", patch: `{"spec":{"templatePool":null}}`},
		{name: "spec $patch replace starts from an empty pool", patch: `{"spec":{"$patch":"replace","replicas":1,"template":{},"templatePool":{"test":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}}`, want: []string{"test"}, image: "i"},
		{name: "unknown pool directive", patch: `{"spec":{"templatePool":{"$patch":"frobnicate"}}}`, wantErr: "unknown patch directive"},
		{name: "delete with other keys", patch: `{"spec":{"templatePool":{"test":{"$patch":"delete","spec":{}}}}}`, wantErr: "only key"},
		{name: "unknown directive inside an entry", patch: `{"spec":{"templatePool":{"test":{"$patch":"frobnicate"}}}}`, wantErr: "templatePool[test]"},
		{name: "everything else is merged as before", patch: `{"spec":{"replicas":7,"templatePool":{"test":{"metadata":{"labels":{"x":"y"}}}}}}`, want: []string{"other", "test"}, image: "nginx:1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StrategicMerge(tappWithPool(t), decodeJSON(t, tc.patch))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			spec := got["spec"].(map[string]any)
			pool, _ := spec["templatePool"].(map[string]any)
			var names []string
			for name := range pool {
				names = append(names, name)
			}
			if strings.Join(sortedStrings(names), ",") != strings.Join(tc.want, ",") {
				t.Errorf("pool entries %v, want %v", sortedStrings(names), tc.want)
			}
			if tc.image != "" {
				containers := pool["test"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
				if image := containers[0].(map[string]any)["image"]; image != tc.image {
					t.Errorf("templatePool[test] image %v, want %s", image, tc.image)
				}
			}
			body, _ := json.Marshal(got)
			if strings.Contains(string(body), "$") {
				t.Errorf("a directive was stored: %s", body)
			}
		})
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
