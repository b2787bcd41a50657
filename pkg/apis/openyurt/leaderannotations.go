package openyurt

import (
	"encoding/json"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The leader annotations: how v1alpha1 and v1beta1 carry the NodePool fields of v1beta2.
//
// Every field v1beta2 adds to a NodePool has an annotation of its own in the older versions, named
// nodepool.tapp.io/<the field's JSON name> (LeaderAnnotations lists them). A field at its default has no
// annotation; any other value has exactly one form, the one the server writes (the canonical form:
// "true" for a bool, a decimal for a number, RFC 3339 in UTC for a time, compact JSON with the field names
// of v1beta2 for a map or a list). Reading an older version, an annotation in that form becomes the field
// and leaves metadata; one in any other form stays an annotation, and validation refuses it naming the
// annotation and the form it must have, so nothing a client writes is reinterpreted or dropped, and what
// it reads back is exactly what it wrote. A v1beta2 object cannot carry these annotations (validation
// refuses them too): the older versions could not tell them from the fields.
//
// The status fields are written by the NodePool controller; on the main resource of an older version they
// are shown, and writes of them are ignored as writes of status are.

// LeaderAnnotationPrefix starts the name of every leader annotation.
const LeaderAnnotationPrefix = "nodepool.tapp.io/"

// The leader annotations, one per v1beta2 field.
const (
	InterConnectivityAnnotation       = LeaderAnnotationPrefix + "interConnectivity"
	EnableLeaderElectionAnnotation    = LeaderAnnotationPrefix + "enableLeaderElection"
	LeaderElectionStrategyAnnotation  = LeaderAnnotationPrefix + "leaderElectionStrategy"
	LeaderNodeLabelSelectorAnnotation = LeaderAnnotationPrefix + "leaderNodeLabelSelector"
	LeaderReplicasAnnotation          = LeaderAnnotationPrefix + "leaderReplicas"
	PoolScopeMetadataAnnotation       = LeaderAnnotationPrefix + "poolScopeMetadata"
	LeaderEndpointsAnnotation         = LeaderAnnotationPrefix + "leaderEndpoints"
	LeaderNumAnnotation               = LeaderAnnotationPrefix + "leaderNum"
	LeaderLastElectedTimeAnnotation   = LeaderAnnotationPrefix + "leaderLastElectedTime"
	ConditionsAnnotation              = LeaderAnnotationPrefix + "conditions"
)

// +k8s:deepcopy-gen=false

// LeaderAnnotation pairs an annotation with the v1beta2 field it carries.
type LeaderAnnotation struct {
	Key   string
	Field *field.Path
	// Form describes the canonical form, for error messages.
	Form string
	// encode returns the annotation's value for the object, "" when the field is at its default.
	encode func(*NodePoolSpec, *NodePoolStatus) string
	// decode sets the field from value and reports whether value is in the canonical form.
	decode func(value string, spec *NodePoolSpec, status *NodePoolStatus) bool
}

// LeaderAnnotations lists every leader annotation.
var LeaderAnnotations = []LeaderAnnotation{
	{Key: InterConnectivityAnnotation, Field: field.NewPath("spec", "interConnectivity"), Form: `"true" (absent means false)`,
		encode: func(s *NodePoolSpec, _ *NodePoolStatus) string { return encodeBool(s.InterConnectivity) },
		decode: func(v string, s *NodePoolSpec, _ *NodePoolStatus) bool { return decodeBool(v, &s.InterConnectivity) }},
	{Key: EnableLeaderElectionAnnotation, Field: field.NewPath("spec", "enableLeaderElection"), Form: `"true" (absent means false)`,
		encode: func(s *NodePoolSpec, _ *NodePoolStatus) string { return encodeBool(s.EnableLeaderElection) },
		decode: func(v string, s *NodePoolSpec, _ *NodePoolStatus) bool { return decodeBool(v, &s.EnableLeaderElection) }},
	{Key: LeaderElectionStrategyAnnotation, Field: field.NewPath("spec", "leaderElectionStrategy"), Form: `"mark" (absent means random)`,
		encode: func(s *NodePoolSpec, _ *NodePoolStatus) string {
			if s.LeaderElectionStrategy == DefaultLeaderElectionStrategy {
				return ""
			}
			return string(s.LeaderElectionStrategy)
		},
		decode: func(v string, s *NodePoolSpec, _ *NodePoolStatus) bool {
			if v == "" || LeaderElectionStrategy(v) == DefaultLeaderElectionStrategy {
				return false
			}
			s.LeaderElectionStrategy = LeaderElectionStrategy(v)
			return true
		}},
	{Key: LeaderNodeLabelSelectorAnnotation, Field: field.NewPath("spec", "leaderNodeLabelSelector"), Form: `a JSON object of labels, compact, keys sorted (absent means none)`,
		encode: func(s *NodePoolSpec, _ *NodePoolStatus) string {
			if len(s.LeaderNodeLabelSelector) == 0 {
				return ""
			}
			return encodeJSON(s.LeaderNodeLabelSelector)
		},
		decode: func(v string, s *NodePoolSpec, _ *NodePoolStatus) bool {
			var m map[string]string
			if !decodeJSON(v, &m) || len(m) == 0 {
				return false
			}
			s.LeaderNodeLabelSelector = m
			return true
		}},
	{Key: LeaderReplicasAnnotation, Field: field.NewPath("spec", "leaderReplicas"), Form: `a decimal number other than 1 (absent means 1)`,
		encode: func(s *NodePoolSpec, _ *NodePoolStatus) string {
			if s.LeaderReplicas == DefaultLeaderReplicas {
				return ""
			}
			return strconv.FormatInt(int64(s.LeaderReplicas), 10)
		},
		decode: func(v string, s *NodePoolSpec, _ *NodePoolStatus) bool {
			n, ok := decodeInt32(v)
			if !ok || n == DefaultLeaderReplicas {
				return false
			}
			s.LeaderReplicas = n
			return true
		}},
	{Key: PoolScopeMetadataAnnotation, Field: field.NewPath("spec", "poolScopeMetadata"),
		Form: `a JSON list of {"group","version","resource"}, compact, holding v1 services and discovery.k8s.io/v1 endpointslices (absent means just those two)`,
		encode: func(s *NodePoolSpec, _ *NodePoolStatus) string {
			if len(s.PoolScopeMetadata) == 0 || IsDefaultPoolScopeMetadata(s.PoolScopeMetadata) {
				return "" // empty is not a defaulted object's; it reads back as the default
			}
			return encodeJSON(s.PoolScopeMetadata)
		},
		decode: func(v string, s *NodePoolSpec, _ *NodePoolStatus) bool {
			var list []metav1.GroupVersionResource
			if !decodeJSON(v, &list) || IsDefaultPoolScopeMetadata(list) || len(WithDefaultPoolScopeMetadata(list)) != len(list) {
				return false
			}
			s.PoolScopeMetadata = list
			return true
		}},
	{Key: LeaderEndpointsAnnotation, Field: field.NewPath("status", "leaderEndpoints"), Form: `a JSON list of {"nodeName","address"}, compact`,
		encode: func(_ *NodePoolSpec, st *NodePoolStatus) string {
			if len(st.LeaderEndpoints) == 0 {
				return ""
			}
			list := make([]leaderJSON, len(st.LeaderEndpoints))
			for i, l := range st.LeaderEndpoints {
				list[i] = leaderJSON(l)
			}
			return encodeJSON(list)
		},
		decode: func(v string, _ *NodePoolSpec, st *NodePoolStatus) bool {
			var list []leaderJSON
			if !decodeJSON(v, &list) || len(list) == 0 {
				return false
			}
			st.LeaderEndpoints = make([]Leader, len(list))
			for i, l := range list {
				st.LeaderEndpoints[i] = Leader(l)
			}
			return true
		}},
	{Key: LeaderNumAnnotation, Field: field.NewPath("status", "leaderNum"), Form: `a decimal number other than 0 (absent means 0)`,
		encode: func(_ *NodePoolSpec, st *NodePoolStatus) string {
			if st.LeaderNum == 0 {
				return ""
			}
			return strconv.FormatInt(int64(st.LeaderNum), 10)
		},
		decode: func(v string, _ *NodePoolSpec, st *NodePoolStatus) bool {
			n, ok := decodeInt32(v)
			if !ok || n == 0 {
				return false
			}
			st.LeaderNum = n
			return true
		}},
	{Key: LeaderLastElectedTimeAnnotation, Field: field.NewPath("status", "leaderLastElectedTime"), Form: `an RFC 3339 time in UTC, in seconds`,
		encode: func(_ *NodePoolSpec, st *NodePoolStatus) string {
			if st.LeaderLastElectedTime == nil {
				return ""
			}
			return st.LeaderLastElectedTime.UTC().Format(time.RFC3339)
		},
		decode: func(v string, _ *NodePoolSpec, st *NodePoolStatus) bool {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil || t.UTC().Format(time.RFC3339) != v {
				return false
			}
			mt := metav1.NewTime(t)
			st.LeaderLastElectedTime = &mt
			return true
		}},
	{Key: ConditionsAnnotation, Field: field.NewPath("status", "conditions"), Form: `a JSON list of {"type","status","lastTransitionTime","reason","message"}, compact`,
		encode: func(_ *NodePoolSpec, st *NodePoolStatus) string {
			if len(st.Conditions) == 0 {
				return ""
			}
			list := make([]conditionJSON, len(st.Conditions))
			for i, c := range st.Conditions {
				list[i] = conditionJSON(c)
			}
			return encodeJSON(list)
		},
		decode: func(v string, _ *NodePoolSpec, st *NodePoolStatus) bool {
			var list []conditionJSON
			if !decodeJSON(v, &list) || len(list) == 0 {
				return false
			}
			st.Conditions = make([]NodePoolCondition, len(list))
			for i, c := range list {
				st.Conditions[i] = NodePoolCondition(c)
			}
			return true
		}},
}

// leaderJSON and conditionJSON are Leader and NodePoolCondition with v1beta2's JSON names.
// +k8s:deepcopy-gen=false
type leaderJSON struct {
	NodeName string `json:"nodeName"`
	Address  string `json:"address"`
}

// +k8s:deepcopy-gen=false
type conditionJSON struct {
	Type               NodePoolConditionType  `json:"type,omitempty"`
	Status             corev1.ConditionStatus `json:"status,omitempty"`
	LastTransitionTime metav1.Time            `json:"lastTransitionTime,omitempty"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
}

// SetLeaderDefaults sets the leader fields of spec that are unset to their defaults (the strategy, the
// replicas) and adds the default pool scope metadata.
func SetLeaderDefaults(spec *NodePoolSpec) {
	if spec.LeaderElectionStrategy == "" {
		spec.LeaderElectionStrategy = DefaultLeaderElectionStrategy
	}
	if spec.LeaderReplicas == 0 {
		spec.LeaderReplicas = DefaultLeaderReplicas
	}
	spec.PoolScopeMetadata = WithDefaultPoolScopeMetadata(spec.PoolScopeMetadata)
}

// LeaderFieldsFromAnnotations reads the leader annotations of an older version's NodePool into spec and
// status, whose leader fields it first sets to their defaults (the older versions have none of their
// own). It returns the annotations to keep: all but those in the canonical form. The given map is never
// modified; nil is returned instead of an empty map when keys were removed.
func LeaderFieldsFromAnnotations(annotations map[string]string, spec *NodePoolSpec, status *NodePoolStatus) map[string]string {
	spec.InterConnectivity, spec.EnableLeaderElection = false, false
	spec.LeaderElectionStrategy, spec.LeaderReplicas, spec.PoolScopeMetadata = "", 0, nil
	spec.LeaderNodeLabelSelector = nil
	status.LeaderEndpoints, status.LeaderNum, status.LeaderLastElectedTime, status.Conditions = nil, 0, nil, nil
	SetLeaderDefaults(spec)
	out := annotations
	copied := false
	for _, a := range LeaderAnnotations {
		value, ok := annotations[a.Key]
		if !ok || !a.decode(value, spec, status) {
			continue
		}
		if !copied {
			out = make(map[string]string, len(annotations))
			for k, v := range annotations {
				out[k] = v
			}
			copied = true
		}
		delete(out, a.Key)
	}
	if copied && len(out) == 0 {
		return nil
	}
	return out
}

// LeaderFieldsToAnnotations writes the leader fields of spec and status that differ from their defaults as
// leader annotations for an older version. An annotation already there (kept by LeaderFieldsFromAnnotations
// because it was not canonical) is overwritten only when the field has a value to write. The given map is
// never modified.
func LeaderFieldsToAnnotations(annotations map[string]string, spec *NodePoolSpec, status *NodePoolStatus) map[string]string {
	out := annotations
	copied := false
	for _, a := range LeaderAnnotations {
		value := a.encode(spec, status)
		if value == "" {
			continue
		}
		if !copied {
			out = make(map[string]string, len(annotations)+1)
			for k, v := range annotations {
				out[k] = v
			}
			copied = true
		}
		out[a.Key] = value
	}
	return out
}

// LeaderAnnotationProblems returns, for each leader annotation on an internal NodePool (one an older
// version could not read, or one sent in v1beta2), its key and what is wrong.
func LeaderAnnotationProblems(annotations map[string]string) [][2]string {
	var out [][2]string
	for _, a := range LeaderAnnotations {
		if _, ok := annotations[a.Key]; !ok {
			continue
		}
		out = append(out, [2]string{a.Key, "carries " + a.Field.String() + " in v1alpha1 and v1beta1, and must be " + a.Form +
			"; in v1beta2 set " + a.Field.String() + " itself"})
	}
	return out
}

func encodeBool(b bool) string {
	if b {
		return "true"
	}
	return ""
}

func decodeBool(v string, b *bool) bool {
	if v != "true" {
		return false
	}
	*b = true
	return true
}

func decodeInt32(v string) (int32, bool) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || strconv.FormatInt(n, 10) != v {
		return 0, false
	}
	return int32(n), true
}

func encodeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "" // maps of strings and lists of plain structs always marshal
	}
	return string(b)
}

// decodeJSON decodes value into v and reports whether value is exactly v's compact encoding.
func decodeJSON(value string, v any) bool {
	if err := json.Unmarshal([]byte(value), v); err != nil {
		return false
	}
	return encodeJSON(v) == value
}
