package validation

import (
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// This file holds the checks of a YurtAppDaemon's workload templates that follow the core API's rules for
// Deployments and StatefulSets field by field: what the core API refuses in the workload a template renders
// is refused with the same rule, and what it accepts in these fields (a maxSurge above 100%) is accepted.
// The package keeps a few checks the core API does not make, on purpose: a StatefulSet template's pod
// template and claim templates are checked as the pods and claims its controller creates will be (the core
// API checks neither in a StatefulSet), its serviceName is a DNS label (the pods' subdomain), its
// revisionHistoryLimit is not negative, and rollingUpdate.partition is refused (one template for every pool).
// The bounds of the status are here too.

const (
	activeDeadlineMsg = "may not be set in a workload's pod template: the workload's pods run until replaced"
	surgeMsg          = "must be a non-negative integer or a percentage such as '25%'"
	// maxConditionReasonLength and maxConditionMessageLength bound a condition's reason and message as the
	// core API bounds those of metav1.Condition.
	maxConditionReasonLength  = 1024
	maxConditionMessageLength = 32 * 1024
	conditionReasonMsg        = "a condition reason must start with a letter, hold only letters, digits and '_,:', " +
		"and end with a letter, a digit or '_' (e.g. 'MyReason', 'Reason_A', 'ReasonA:ReasonB')"
)

// percentPattern is the form of a percentage the core API accepts in maxSurge and maxUnavailable.
var percentPattern = regexp.MustCompile(`^[0-9]+%$`)

// conditionReasonPattern is the form of a condition reason (the core API's rule for metav1.Condition).
var conditionReasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// validateMaxSurge accepts nil, a non-negative integer or any percentage: a Deployment bounds maxUnavailable
// by 100%, but may surge by more than its replicas.
func validateMaxSurge(v *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	return validateIntOrPercent(v, fldPath, percentPattern.MatchString, surgeMsg)
}

// validateWorkloadPodSpec checks what a Deployment or StatefulSet refuses in its pod template beyond the
// pod's own rules: an active deadline (restartPolicy Always is checked with the template).
func validateWorkloadPodSpec(spec *corev1.PodSpec, tplPath *field.Path) field.ErrorList {
	if spec.ActiveDeadlineSeconds != nil {
		return field.ErrorList{field.Forbidden(tplPath.Child("spec", "activeDeadlineSeconds"), activeDeadlineMsg)}
	}
	return nil
}

// validateDeploymentDeadline checks spec.progressDeadlineSeconds: not negative (and, in
// validateDeploymentTemplate, greater than minReadySeconds).
func validateDeploymentDeadline(spec *appsv1.DeploymentSpec, specPath *field.Path) field.ErrorList {
	if spec.ProgressDeadlineSeconds == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*spec.ProgressDeadlineSeconds), specPath.Child("progressDeadlineSeconds"))
}

var claimRetentionPolicyTypes = []appsv1.PersistentVolumeClaimRetentionPolicyType{
	appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
}

// validateStatefulSetExtras checks the StatefulSet fields the core API checks and validateStatefulSetTemplate
// does not otherwise: persistentVolumeClaimRetentionPolicy (Retain or Delete; empty is defaulted to Retain)
// and ordinals.start (not negative).
func validateStatefulSetExtras(spec *appsv1.StatefulSetSpec, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		policyPath := specPath.Child("persistentVolumeClaimRetentionPolicy")
		for _, f := range []struct {
			name  string
			value appsv1.PersistentVolumeClaimRetentionPolicyType
		}{{"whenDeleted", p.WhenDeleted}, {"whenScaled", p.WhenScaled}} {
			if f.value != "" && !sets.New(claimRetentionPolicyTypes...).Has(f.value) {
				allErrs = append(allErrs, field.NotSupported(policyPath.Child(f.name), f.value, claimRetentionPolicyTypes))
			}
		}
	}
	if spec.Ordinals != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(spec.Ordinals.Start), specPath.Child("ordinals", "start"))...)
	}
	return allErrs
}

// validateStatusContents checks the names and texts of a YurtAppDaemon's status: currentRevision names a
// ControllerRevision (a DNS-1123 subdomain), every entry of nodepools names a NodePool (a DNS-1123 label), and
// a condition's reason and message are bounded as the core API bounds a metav1.Condition's. The reason may
// stay empty (conditions written by yurt-app-manager carry none).
func validateStatusContents(status *openyurt.YurtAppDaemonStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if r := status.CurrentRevision; r != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(r, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("currentRevision"), r, msg))
		}
	}
	poolsPath := fldPath.Child("nodepools")
	for i, name := range status.NodePools {
		if name == "" {
			allErrs = append(allErrs, field.Required(poolsPath.Index(i), "a NodePool name"))
			continue
		}
		for _, msg := range ValidateNodePoolName(name, false) {
			allErrs = append(allErrs, field.Invalid(poolsPath.Index(i), name, msg))
		}
	}
	condPath := fldPath.Child("conditions")
	for i, c := range status.Conditions {
		allErrs = append(allErrs, validateConditionText(c.Reason, c.Message, condPath.Index(i))...)
	}
	return allErrs
}

// validateConditionText bounds a condition's reason and message as the core API bounds a metav1.Condition's.
// The reason may stay empty (conditions written by yurt-app-manager carry none).
func validateConditionText(reason, message string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	reasonPath := fldPath.Child("reason")
	switch {
	case reason == "":
	case len(reason) > maxConditionReasonLength:
		allErrs = append(allErrs, field.TooLong(reasonPath, "", maxConditionReasonLength))
	case !conditionReasonPattern.MatchString(reason):
		allErrs = append(allErrs, field.Invalid(reasonPath, reason, conditionReasonMsg))
	}
	if len(message) > maxConditionMessageLength {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("message"), "", maxConditionMessageLength))
	}
	return allErrs
}
