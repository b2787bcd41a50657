package history

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNewControllerRevision(t *testing.T) {
	ref := metav1.OwnerReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "web", UID: "u1"}
	long := strings.Repeat("a", 70)
	for _, owner := range []string{"web", long} {
		rev := NewControllerRevision(Owner{Namespace: "ns", Name: owner, Ref: ref, Label: "apps.tkestack.io/tapp"}, "web-abc", "abc", []byte(`{}`), 3)
		if rev.Name != "web-abc" || rev.Namespace != "ns" || rev.Revision != 3 || string(rev.Data.Raw) != `{}` {
			t.Errorf("revision %s/%s #%d data %s", rev.Namespace, rev.Name, rev.Revision, rev.Data.Raw)
		}
		if rev.Labels[HashLabel] != "abc" {
			t.Errorf("hash label %q", rev.Labels[HashLabel])
		}
		v := rev.Labels["apps.tkestack.io/tapp"]
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("owner label %q is not a label value: %v", v, errs)
		}
		if (owner == "web") != (v == "web") {
			t.Errorf("owner %q labelled %q: a valid name is its own value, another its hash", owner, v)
		}
		if len(rev.OwnerReferences) != 1 || rev.OwnerReferences[0] != ref {
			t.Errorf("owner references %v", rev.OwnerReferences)
		}
	}
}
