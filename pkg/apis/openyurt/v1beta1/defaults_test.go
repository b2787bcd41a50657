package v1beta1

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestSetDefaultsNodePoolType(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		in, want NodePoolType
	}{
		"unset is Edge": {"", Edge},
		"Cloud is kept": {Cloud, Cloud},
	} {
		t.Run(name, func(t *testing.T) {
			pool := &NodePool{Spec: NodePoolSpec{Type: tc.in}}
			scheme.Default(pool)
			if pool.Spec.Type != tc.want {
				t.Errorf("type = %q, want %q", pool.Spec.Type, tc.want)
			}
			list := &NodePoolList{Items: []NodePool{{Spec: NodePoolSpec{Type: tc.in}}}}
			scheme.Default(list)
			if list.Items[0].Spec.Type != tc.want {
				t.Errorf("list item type = %q, want %q", list.Items[0].Spec.Type, tc.want)
			}
		})
	}
}
