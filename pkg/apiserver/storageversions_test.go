package apiserver

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestKindStorageVersions(t *testing.T) {
	table := KindStorageVersions{
		Kinds: map[schema.GroupKind]string{
			{Group: "g", Kind: "A"}: "v2",
			{Group: "g", Kind: "B"}: "v1",
		},
		Groups: map[string]string{"g": "v1"},
	}
	cases := []struct {
		name  string
		kinds []schema.GroupVersionKind
		want  schema.GroupVersionKind
		ok    bool
	}{
		{"kind in table", []schema.GroupVersionKind{{Group: "g", Version: "v1", Kind: "A"}}, schema.GroupVersionKind{Group: "g", Version: "v2", Kind: "A"}, true},
		{"other kind of the group keeps its version", []schema.GroupVersionKind{{Group: "g", Version: "v2", Kind: "B"}}, schema.GroupVersionKind{Group: "g", Version: "v1", Kind: "B"}, true},
		{"kind outside the table takes the group's", []schema.GroupVersionKind{{Group: "g", Version: "v3", Kind: "AList"}}, schema.GroupVersionKind{Group: "g", Version: "v1", Kind: "AList"}, true},
		{"table entry wins over an earlier group match", []schema.GroupVersionKind{{Group: "g", Kind: "C"}, {Group: "g", Kind: "A"}}, schema.GroupVersionKind{Group: "g", Version: "v2", Kind: "A"}, true},
		{"unknown group", []schema.GroupVersionKind{{Group: "h", Version: "v1", Kind: "A"}}, schema.GroupVersionKind{}, false},
	}
	for _, c := range cases {
		got, ok := table.KindForGroupVersionKinds(c.kinds)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if table.Identifier() == (KindStorageVersions{Groups: map[string]string{"g": "v1"}}).Identifier() {
		t.Errorf("different tables share the identifier %q", table.Identifier())
	}
	if got := StorageVersions.For(schema.GroupKind{Group: "apps.openyurt.io", Kind: "NodePool"}); got.Version == "" {
		t.Errorf("NodePool has no storage version")
	}
}
