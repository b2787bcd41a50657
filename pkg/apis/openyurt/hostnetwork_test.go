package openyurt

import (
	"reflect"
	"testing"
)

func TestHostNetworkFromAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in, want    map[string]string
		hostNetwork bool
	}{
		{"none", nil, nil, false},
		{"other annotations only", map[string]string{"a": "b"}, map[string]string{"a": "b"}, false},
		{"exact true moves into the field", map[string]string{NodePoolHostNetworkAnnotation: "true"}, nil, true},
		{"exact true beside others", map[string]string{NodePoolHostNetworkAnnotation: "true", "a": "b"}, map[string]string{"a": "b"}, true},
		{"TRUE is host network, kept as written", map[string]string{NodePoolHostNetworkAnnotation: "TRUE"}, map[string]string{NodePoolHostNetworkAnnotation: "TRUE"}, true},
		{"false kept as written", map[string]string{NodePoolHostNetworkAnnotation: "false"}, map[string]string{NodePoolHostNetworkAnnotation: "false"}, false},
		{"unknown value kept for validation", map[string]string{NodePoolHostNetworkAnnotation: "1"}, map[string]string{NodePoolHostNetworkAnnotation: "1"}, false},
		{"padded true kept for validation", map[string]string{NodePoolHostNetworkAnnotation: " true"}, map[string]string{NodePoolHostNetworkAnnotation: " true"}, false},
		{"empty kept for validation", map[string]string{NodePoolHostNetworkAnnotation: ""}, map[string]string{NodePoolHostNetworkAnnotation: ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var orig map[string]string
			if tc.in != nil {
				orig = map[string]string{}
				for k, v := range tc.in {
					orig[k] = v
				}
			}
			got, hostNetwork := HostNetworkFromAnnotations(tc.in)
			if !reflect.DeepEqual(got, tc.want) || hostNetwork != tc.hostNetwork {
				t.Errorf("got %v, %t; want %v, %t", got, hostNetwork, tc.want, tc.hostNetwork)
			}
			if !reflect.DeepEqual(tc.in, orig) {
				t.Errorf("input modified: %v", tc.in)
			}
			// And back: what v1alpha1 read is what it writes.
			if back := HostNetworkToAnnotations(got, hostNetwork); !reflect.DeepEqual(back, tc.in) && !(len(back) == 0 && len(tc.in) == 0) {
				t.Errorf("written back as %v, want %v", back, tc.in)
			}
		})
	}
}

func TestHostNetworkAnnotationProblem(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		hostNetwork bool
		problem     bool
		badValue    bool
	}{
		{nil, false, false, false},
		{nil, true, false, false},
		{map[string]string{NodePoolHostNetworkAnnotation: "false"}, false, false, false},
		{map[string]string{NodePoolHostNetworkAnnotation: "False"}, false, false, false},
		{map[string]string{NodePoolHostNetworkAnnotation: "TRUE"}, true, false, false},
		{map[string]string{NodePoolHostNetworkAnnotation: "true"}, true, true, false},
		{map[string]string{NodePoolHostNetworkAnnotation: "true"}, false, true, false},
		{map[string]string{NodePoolHostNetworkAnnotation: "false"}, true, true, false},
		{map[string]string{NodePoolHostNetworkAnnotation: "1"}, false, true, true},
		{map[string]string{NodePoolHostNetworkAnnotation: ""}, true, true, true},
	} {
		problem, badValue := HostNetworkAnnotationProblem(tc.annotations, tc.hostNetwork)
		if (problem != "") != tc.problem || badValue != tc.badValue {
			t.Errorf("%v beside %t: problem %q, bad value %t; want a problem %t, bad value %t", tc.annotations, tc.hostNetwork, problem, badValue, tc.problem, tc.badValue)
		}
	}
}

func TestReservedNodePoolKeys(t *testing.T) {
	for key, want := range map[string]bool{NodePoolLabel: true, DesiredNodePoolLabel: true, NodePoolAppliedAnnotation: false, "apps.openyurt.io/nodepool-x": false, "": false} {
		if got := IsReservedNodePoolLabel(key); got != want {
			t.Errorf("IsReservedNodePoolLabel(%q) = %t, want %t", key, got, want)
		}
	}
	for key, want := range map[string]bool{NodePoolAppliedAnnotation: true, NodePoolLabel: false, NodePoolHostNetworkAnnotation: false} {
		if got := IsReservedNodePoolAnnotation(key); got != want {
			t.Errorf("IsReservedNodePoolAnnotation(%q) = %t, want %t", key, got, want)
		}
	}
}
