package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

var (
	supportedLeaderElectionStrategies = []openyurt.LeaderElectionStrategy{openyurt.ElectionStrategyRandom, openyurt.ElectionStrategyMark}
)

// validateNodePoolLeaderSpec checks the v1beta2 fields of a NodePool spec: a known strategy, at least one
// leader, a valid label set as leader selector (required by mark, whose leaders are the nodes carrying
// it), and valid, distinct pool scope resources.
func validateNodePoolLeaderSpec(spec *openyurt.NodePoolSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	strategyPath := fldPath.Child("leaderElectionStrategy")
	switch spec.LeaderElectionStrategy {
	case openyurt.ElectionStrategyRandom, openyurt.ElectionStrategyMark:
	case "":
		allErrs = append(allErrs, field.Required(strategyPath, "random or mark"))
	default:
		allErrs = append(allErrs, field.NotSupported(strategyPath, spec.LeaderElectionStrategy, supportedLeaderElectionStrategies))
	}
	selectorPath := fldPath.Child("leaderNodeLabelSelector")
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.LeaderNodeLabelSelector, selectorPath)...)
	if spec.LeaderElectionStrategy == openyurt.ElectionStrategyMark && len(spec.LeaderNodeLabelSelector) == 0 {
		allErrs = append(allErrs, field.Required(selectorPath, "the mark strategy elects the Ready nodes carrying these labels; name at least one"))
	}
	if spec.LeaderReplicas < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaderReplicas"), spec.LeaderReplicas, "must be at least 1"))
	}
	metaPath := fldPath.Child("poolScopeMetadata")
	seen := sets.New[metav1.GroupVersionResource]()
	for i, gvr := range spec.PoolScopeMetadata {
		p := metaPath.Index(i)
		if gvr.Group != "" {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(gvr.Group) {
				allErrs = append(allErrs, field.Invalid(p.Child("group"), gvr.Group, msg))
			}
		}
		if gvr.Version == "" {
			allErrs = append(allErrs, field.Required(p.Child("version"), ""))
		} else {
			for _, msg := range utilvalidation.IsDNS1035Label(gvr.Version) {
				allErrs = append(allErrs, field.Invalid(p.Child("version"), gvr.Version, msg))
			}
		}
		if gvr.Resource == "" {
			allErrs = append(allErrs, field.Required(p.Child("resource"), ""))
		} else {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(gvr.Resource) {
				allErrs = append(allErrs, field.Invalid(p.Child("resource"), gvr.Resource, msg))
			}
		}
		if seen.Has(gvr) {
			allErrs = append(allErrs, field.Duplicate(p, gvr))
		}
		seen.Insert(gvr)
	}
	return allErrs
}

// validateLeaderAnnotations refuses the leader annotations left on an internal NodePool: an older
// version's annotation not in its canonical form, or one sent in v1beta2 (openyurt/leaderannotations.go).
func validateLeaderAnnotations(pool *openyurt.NodePool) field.ErrorList {
	var allErrs field.ErrorList
	for _, problem := range openyurt.LeaderAnnotationProblems(pool.Annotations) {
		key := problem[0]
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "annotations").Key(key), pool.Annotations[key], problem[1]))
	}
	return allErrs
}

// validateNodePoolLeaderStatus checks the leader fields of a NodePool status: distinct leaders with a
// node name and an IP address, a leader count equal to their number, and conditions of distinct types.
func validateNodePoolLeaderStatus(status *openyurt.NodePoolStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	endpointsPath := fldPath.Child("leaderEndpoints")
	names := sets.New[string]()
	for i, l := range status.LeaderEndpoints {
		p := endpointsPath.Index(i)
		if l.NodeName == "" {
			allErrs = append(allErrs, field.Required(p.Child("nodeName"), ""))
		} else {
			for _, msg := range apivalidation.NameIsDNSSubdomain(l.NodeName, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("nodeName"), l.NodeName, msg))
			}
		}
		if names.Has(l.NodeName) {
			allErrs = append(allErrs, field.Duplicate(p.Child("nodeName"), l.NodeName))
		}
		names.Insert(l.NodeName)
		if l.Address == "" {
			allErrs = append(allErrs, field.Required(p.Child("address"), ""))
		} else {
			allErrs = append(allErrs, utilvalidation.IsValidIP(p.Child("address"), l.Address)...)
		}
	}
	if int(status.LeaderNum) != len(status.LeaderEndpoints) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaderNum"), status.LeaderNum,
			fmt.Sprintf("must be the number of leaderEndpoints (%d)", len(status.LeaderEndpoints))))
	}
	conditionsPath := fldPath.Child("conditions")
	types := sets.New[openyurt.NodePoolConditionType]()
	for i, c := range status.Conditions {
		p := conditionsPath.Index(i)
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(p.Child("type"), ""))
		}
		if types.Has(c.Type) {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
		}
		types.Insert(c.Type)
		switch c.Status {
		case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("status"), c.Status, supportedConditionStatuses))
		}
	}
	return allErrs
}
