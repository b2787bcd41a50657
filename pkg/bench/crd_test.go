package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTAppStructuralSchema checks the generated CRD schema is structural: every node has a type, or is
// int-or-string, or preserves unknown fields; no $ref, no description, no object defaults are left.
func TestTAppStructuralSchema(t *testing.T) {
	s, err := tappStructuralSchema()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s.Schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, forbidden := range []string{`"$ref"`, `"description"`, `"oneOf"`, `"allOf"`} {
		if strings.Contains(string(raw), forbidden) {
			t.Errorf("schema contains %s", forbidden)
		}
	}
	var walk func(path string, node map[string]interface{})
	walk = func(path string, node map[string]interface{}) {
		_, typed := node["type"]
		_, ios := node["x-kubernetes-int-or-string"]
		_, pres := node["x-kubernetes-preserve-unknown-fields"]
		if !typed && !ios && !pres {
			t.Errorf("%s: no type", path)
		}
		if d, ok := node["default"]; ok {
			if _, obj := d.(map[string]interface{}); obj {
				t.Errorf("%s: object default", path)
			}
		}
		if props, ok := node["properties"].(map[string]interface{}); ok {
			for k, v := range props {
				walk(path+"."+k, v.(map[string]interface{}))
			}
		}
		if items, ok := node["items"].(map[string]interface{}); ok {
			walk(path+"[]", items)
		}
		if ap, ok := node["additionalProperties"].(map[string]interface{}); ok {
			walk(path+"[*]", ap)
		}
	}
	walk("", s.Schema)
	for _, top := range []string{"spec", "status", "metadata"} {
		if _, ok := s.Schema["properties"].(map[string]interface{})[top]; !ok {
			t.Errorf("no %s", top)
		}
	}
	t.Logf("schema: %d bytes; preserved: %v; int-or-string: %v; atomic lists: %v", len(raw), s.Preserved, s.IntOrString, s.AtomicLists)
}
