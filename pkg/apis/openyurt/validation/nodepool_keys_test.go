package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

const hostNetworkAnnotationPath = "metadata.annotations[nodepool.openyurt.io/hostnetwork]"

// TestValidateNodePoolReservedKeys: spec.labels and spec.annotations cannot set the node keys the NodePool
// controller owns, on create and on update; the error names the key. Keys that merely look alike are fine.
func TestValidateNodePoolReservedKeys(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*openyurt.NodePool)
		want   []wantErr
	}{
		{"membership label", func(p *openyurt.NodePool) { p.Spec.Labels[openyurt.NodePoolLabel] = "hangzhou" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.labels[apps.openyurt.io/nodepool]"}}},
		{"membership label naming another pool", func(p *openyurt.NodePool) { p.Spec.Labels[openyurt.NodePoolLabel] = "beijing" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.labels[apps.openyurt.io/nodepool]"}}},
		{"membership label with an empty value", func(p *openyurt.NodePool) { p.Spec.Labels[openyurt.NodePoolLabel] = "" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.labels[apps.openyurt.io/nodepool]"}}},
		{"desired membership label", func(p *openyurt.NodePool) { p.Spec.Labels[openyurt.DesiredNodePoolLabel] = "hangzhou" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.labels[apps.openyurt.io/desired-nodepool]"}}},
		{"both membership labels, each named", func(p *openyurt.NodePool) {
			p.Spec.Labels = map[string]string{openyurt.DesiredNodePoolLabel: "a", openyurt.NodePoolLabel: "a", "zone": "z"}
		}, []wantErr{
			{field.ErrorTypeForbidden, "spec.labels[apps.openyurt.io/desired-nodepool]"},
			{field.ErrorTypeForbidden, "spec.labels[apps.openyurt.io/nodepool]"}}},
		{"applied-record annotation", func(p *openyurt.NodePool) { p.Spec.Annotations[openyurt.NodePoolAppliedAnnotation] = "{}" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.annotations[nodepool.openyurt.io/previous-attributes]"}}},
		{"applied-record annotation with an empty value", func(p *openyurt.NodePool) { p.Spec.Annotations[openyurt.NodePoolAppliedAnnotation] = "" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.annotations[nodepool.openyurt.io/previous-attributes]"}}},
		{"reserved label key as an annotation is only an annotation", func(p *openyurt.NodePool) { p.Spec.Annotations[openyurt.NodePoolLabel] = "x" }, nil},
		{"reserved annotation key as a label is only a label", func(p *openyurt.NodePool) { p.Spec.Labels[openyurt.NodePoolAppliedAnnotation] = "x" }, nil},
		{"look-alike keys are not reserved", func(p *openyurt.NodePool) {
			p.Spec.Labels["apps.openyurt.io/nodepool-zone"] = "a"
			p.Spec.Labels["example.com/nodepool"] = "a"
			p.Spec.Annotations["nodepool.openyurt.io/previous"] = "a"
		}, nil},
		{"the pool's own metadata may carry them", func(p *openyurt.NodePool) {
			p.Labels[openyurt.NodePoolLabel] = "hangzhou"
			p.Annotations = map[string]string{openyurt.NodePoolAppliedAnnotation: "{}"}
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool := validNodePool()
			tc.mutate(pool)
			expectErrors(t, ValidateNodePool(pool), tc.want...)
			old := validNodePool()
			expectErrors(t, ValidateNodePoolUpdate(pool, old), tc.want...)
			for _, e := range ValidateNodePool(pool) {
				if !strings.Contains(e.Detail, "reserved") {
					t.Errorf("%s: detail %q does not say the key is reserved", e.Field, e.Detail)
				}
			}
		})
	}
}

// TestValidateNodePoolHostNetworkAnnotation: the annotation as it reaches the internal object (v1alpha1
// "true" is moved into the field by conversion; everything else is kept as written) must be true or false
// in any case and agree with spec.hostNetwork; the exact "true" beside the field only comes from v1beta1,
// where it could not be returned as written.
func TestValidateNodePoolHostNetworkAnnotation(t *testing.T) {
	cases := []struct {
		value       string
		hostNetwork bool
		want        field.ErrorType // "" for valid
		detail      string
	}{
		{"false", false, "", ""},
		{"FALSE", false, "", ""},
		{"False", false, "", ""},
		{"TRUE", true, "", ""},
		{"True", true, "", ""},
		{"1", false, field.ErrorTypeNotSupported, `"true", "false"`},
		{"0", false, field.ErrorTypeNotSupported, `"true", "false"`},
		{"", false, field.ErrorTypeNotSupported, `"true", "false"`},
		{" true", false, field.ErrorTypeNotSupported, `"true", "false"`},
		{"true ", true, field.ErrorTypeNotSupported, `"true", "false"`},
		{"yes", false, field.ErrorTypeNotSupported, `"true", "false"`},
		{"ｔｒｕｅ", false, field.ErrorTypeNotSupported, `"true", "false"`},
		{"true", false, field.ErrorTypeInvalid, "contradicts spec.hostNetwork (false)"},
		{"TRUE", false, field.ErrorTypeInvalid, "contradicts spec.hostNetwork (false)"},
		{"false", true, field.ErrorTypeInvalid, "contradicts spec.hostNetwork (true)"},
		{"true", true, field.ErrorTypeInvalid, "repeats spec.hostNetwork"},
	}
	for _, tc := range cases {
		pool := validNodePool()
		pool.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: tc.value, "note": "x"}
		pool.Spec.HostNetwork = tc.hostNetwork
		var want []wantErr
		if tc.want != "" {
			want = []wantErr{{tc.want, hostNetworkAnnotationPath}}
		}
		errs := ValidateNodePool(pool)
		expectErrors(t, errs, want...)
		for _, e := range errs {
			if !strings.Contains(e.Error(), tc.detail) {
				t.Errorf("%q beside hostNetwork %t: %q does not say %q", tc.value, tc.hostNetwork, e.Error(), tc.detail)
			}
		}
		old := validNodePool()
		old.Spec.HostNetwork = tc.hostNetwork
		expectErrors(t, ValidateNodePoolUpdate(pool, old), want...)
	}
	// No annotation: the field alone is fine either way.
	for _, hostNetwork := range []bool{false, true} {
		pool := validNodePool()
		pool.Spec.HostNetwork = hostNetwork
		expectErrors(t, ValidateNodePool(pool))
	}
}
