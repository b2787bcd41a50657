package openyurt

import (
	"reflect"
	"testing"
)

// TestLeaderFieldsFromAnnotations: an annotation in its canonical form becomes the field and leaves the
// annotations; any other form stays as written (validation refuses it); and the fields write back exactly
// the canonical annotations read.
func TestLeaderFieldsFromAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value map[string]string
		kept  bool
		check func(NodePoolSpec, NodePoolStatus) bool
	}{
		{"interConnectivity", map[string]string{InterConnectivityAnnotation: "true"}, false,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.InterConnectivity }},
		{"bool in another case", map[string]string{EnableLeaderElectionAnnotation: "True"}, true,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return !s.EnableLeaderElection }},
		{"mark", map[string]string{LeaderElectionStrategyAnnotation: "mark"}, false,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.LeaderElectionStrategy == ElectionStrategyMark }},
		{"the default strategy written out", map[string]string{LeaderElectionStrategyAnnotation: "random"}, true,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.LeaderElectionStrategy == ElectionStrategyRandom }},
		{"an unknown strategy is the field (validation names it)", map[string]string{LeaderElectionStrategyAnnotation: "Random"}, false,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.LeaderElectionStrategy == "Random" }},
		{"replicas", map[string]string{LeaderReplicasAnnotation: "3"}, false,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.LeaderReplicas == 3 }},
		{"replicas padded", map[string]string{LeaderReplicasAnnotation: "03"}, true,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.LeaderReplicas == DefaultLeaderReplicas }},
		{"selector", map[string]string{LeaderNodeLabelSelectorAnnotation: `{"a":"1","b":"2"}`}, false,
			func(s NodePoolSpec, _ NodePoolStatus) bool {
				return reflect.DeepEqual(s.LeaderNodeLabelSelector, map[string]string{"a": "1", "b": "2"})
			}},
		{"selector with spaces", map[string]string{LeaderNodeLabelSelectorAnnotation: `{"a": "1"}`}, true,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.LeaderNodeLabelSelector == nil }},
		{"selector keys unsorted", map[string]string{LeaderNodeLabelSelectorAnnotation: `{"b":"2","a":"1"}`}, true,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return s.LeaderNodeLabelSelector == nil }},
		{"pool scope metadata without the defaults", map[string]string{PoolScopeMetadataAnnotation: `[{"group":"apps","version":"v1","resource":"deployments"}]`}, true,
			func(s NodePoolSpec, _ NodePoolStatus) bool { return IsDefaultPoolScopeMetadata(s.PoolScopeMetadata) }},
		{"leaders", map[string]string{LeaderEndpointsAnnotation: `[{"nodeName":"n1","address":"10.0.0.1"}]`, LeaderNumAnnotation: "1",
			LeaderLastElectedTimeAnnotation: "2026-01-02T03:04:05Z"}, false,
			func(_ NodePoolSpec, st NodePoolStatus) bool {
				return len(st.LeaderEndpoints) == 1 && st.LeaderEndpoints[0].Address == "10.0.0.1" && st.LeaderNum == 1 &&
					st.LeaderLastElectedTime != nil && st.LeaderLastElectedTime.UTC().Hour() == 3
			}},
		{"time not in UTC", map[string]string{LeaderLastElectedTimeAnnotation: "2026-01-02T03:04:05+01:00"}, true,
			func(_ NodePoolSpec, st NodePoolStatus) bool { return st.LeaderLastElectedTime == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]string{"other": "x"}
			for k, v := range tc.value {
				in[k] = v
			}
			var spec NodePoolSpec
			var status NodePoolStatus
			out := LeaderFieldsFromAnnotations(in, &spec, &status)
			want := map[string]string{"other": "x"}
			if tc.kept {
				want = in
			}
			if !reflect.DeepEqual(out, want) {
				t.Errorf("annotations = %v, want %v", out, want)
			}
			if !tc.check(spec, status) {
				t.Errorf("fields = %+v %+v", spec, status)
			}
			if len(in) != len(tc.value)+1 {
				t.Errorf("the given annotations were modified: %v", in)
			}
			if back := LeaderFieldsToAnnotations(out, &spec, &status); !reflect.DeepEqual(back, in) {
				t.Errorf("written back = %v, want %v", back, in)
			}
			if problems := LeaderAnnotationProblems(out); (len(problems) != 0) != tc.kept {
				t.Errorf("problems = %v", problems)
			}
		})
	}
}
