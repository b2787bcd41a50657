// Package validation checks YurtAppDaemons, YurtAppSets (yurtappset.go) and NodePools of the internal
// apps.openyurt.io API on create, update and status update. It runs after defaulting, so a YurtAppDaemon's
// template selector is expected to be a copy of its spec.selector and the pool type to be set.
//
// Unlike the original webhooks it validates the whole workload spec (Deployment or StatefulSet), the
// nodepoolSelector and the lengths of names that end up in label values of child workloads and nodes,
// and it reports errors under spec.workloadTemplate, the JSON name of the field.
package validation

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/errorlimit"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/podtemplate"
)

// Error details shared with tests and callers.
const (
	emptySelectorMsg         = "empty selector is invalid for YurtAppDaemon"
	templateRequiredMsg      = "one of deploymentTemplate or statefulSetTemplate is required"
	templateBothMsg          = "only one of deploymentTemplate or statefulSetTemplate may be set"
	selectorMismatchMsg      = "must match spec.selector"
	labelsMismatchMsg        = "`selector` does not match template `labels`"
	partitionForbiddenMsg    = "partition is not supported in statefulSetTemplate: every pool's StatefulSet is rendered from one template"
	workloadKindChangeMsg    = "changing the workload kind is not supported; delete and recreate the YurtAppDaemon"
	progressDeadlineMsg      = "must be greater than minReadySeconds"
	bothZeroMsg              = "may not be 0 when `maxSurge` is 0"
	recreateRollingMsg       = "may not be specified when strategy `type` is 'Recreate'"
	onDeleteRollingMsg       = "may not be specified when strategy `type` is 'OnDelete'"
	percentMsg               = "must be an integer or a percentage between 0% and 100%"
	statefulSetMaxUnavailMsg = "must be greater than 0"
)

// ValidateYurtAppDaemonName checks a YurtAppDaemon name: a DNS-1123 subdomain of at most
// openyurt.MaxYurtAppDaemonNameLength characters. It is a apivalidation.ValidateNameFunc.
func ValidateYurtAppDaemonName(name string, prefix bool) []string {
	msgs := apivalidation.NameIsDNSSubdomain(name, prefix)
	if !prefix && len(name) > openyurt.MaxYurtAppDaemonNameLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters, so that \"<name>-<revision hash>\" "+
			"(the controller-revision-hash label of every child) is a valid label value", openyurt.MaxYurtAppDaemonNameLength))
	}
	return msgs
}

// ValidateNodePoolName checks a NodePool name: a DNS-1123 label, because the name becomes the value of the
// apps.openyurt.io/nodepool label on nodes and of apps.openyurt.io/pool-name on child workloads and pods.
func ValidateNodePoolName(name string, prefix bool) []string {
	return apivalidation.NameIsDNSLabel(name, prefix)
}

// ValidateYurtAppDaemon checks a YurtAppDaemon on create. Like every Validate function of this package, it
// returns at most errorlimit.PerPath errors per field path (see errorlimit.Limit).
func ValidateYurtAppDaemon(yad *openyurt.YurtAppDaemon) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&yad.ObjectMeta, true, ValidateYurtAppDaemonName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateYurtAppDaemonSpec(&yad.Spec, field.NewPath("spec"))...)
	return errorlimit.Limit(allErrs)
}

// ValidateYurtAppDaemonUpdate checks an update of a YurtAppDaemon's metadata and spec.
func ValidateYurtAppDaemonUpdate(newObj, oldObj *openyurt.YurtAppDaemon) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateYurtAppDaemonSpec(&newObj.Spec, specPath)...)

	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newObj.Spec.Selector, oldObj.Spec.Selector, specPath.Child("selector"))...)

	wtPath := specPath.Child("workloadTemplate")
	newKind, oldKind := workloadKind(&newObj.Spec.WorkloadTemplate), workloadKind(&oldObj.Spec.WorkloadTemplate)
	if newKind != "" && oldKind != "" && newKind != oldKind {
		allErrs = append(allErrs, field.Forbidden(wtPath, workloadKindChangeMsg))
	}

	newSts, oldSts := newObj.Spec.WorkloadTemplate.StatefulSetTemplate, oldObj.Spec.WorkloadTemplate.StatefulSetTemplate
	if newSts != nil && oldSts != nil {
		stsSpecPath := wtPath.Child("statefulSetTemplate", "spec")
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(newSts.Spec.VolumeClaimTemplates, oldSts.Spec.VolumeClaimTemplates, stsSpecPath.Child("volumeClaimTemplates"))...)
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(newSts.Spec.ServiceName, oldSts.Spec.ServiceName, stsSpecPath.Child("serviceName"))...)
	}
	return errorlimit.Limit(allErrs)
}

// ValidateYurtAppDaemonStatusUpdate checks an update of a YurtAppDaemon's status.
func ValidateYurtAppDaemonStatusUpdate(newObj, oldObj *openyurt.YurtAppDaemon) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateYurtAppDaemonStatus(&newObj.Status, field.NewPath("status"))...)
	return errorlimit.Limit(allErrs)
}

// workloadKind is the kind of workload a template renders, or "" when it holds none or both.
func workloadKind(t *openyurt.WorkloadTemplate) openyurt.TemplateType {
	return openyurt.WorkloadTemplateType(t.DeploymentTemplate != nil, t.StatefulSetTemplate != nil)
}

func validateYurtAppDaemonSpec(spec *openyurt.YurtAppDaemonSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList

	// selector: required, valid and not empty. A nil selector (if the spec selector is invalid) skips the
	// label-match checks below, which would only repeat the same error.
	var selector labels.Selector
	selPath := fldPath.Child("selector")
	if spec.Selector == nil {
		allErrs = append(allErrs, field.Required(selPath, ""))
	} else {
		selErrs := metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, selPath)
		allErrs = append(allErrs, selErrs...)
		if len(selErrs) == 0 {
			if len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
				allErrs = append(allErrs, field.Invalid(selPath, spec.Selector, emptySelectorMsg))
			} else if s, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
				allErrs = append(allErrs, field.Invalid(selPath, spec.Selector, err.Error()))
			} else {
				selector = s
			}
		}
	}

	// nodepoolSelector: required; {} selects every pool.
	npPath := fldPath.Child("nodepoolSelector")
	if spec.NodePoolSelector == nil {
		allErrs = append(allErrs, field.Required(npPath, "use {} to select every NodePool"))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.NodePoolSelector, metav1validation.LabelSelectorValidationOptions{}, npPath)...)
	}

	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}

	wt := &spec.WorkloadTemplate
	wtPath := fldPath.Child("workloadTemplate")
	switch {
	case workloadKind(wt) != "":
	case wt.DeploymentTemplate != nil:
		allErrs = append(allErrs, field.Forbidden(wtPath, templateBothMsg))
	default:
		allErrs = append(allErrs, field.Required(wtPath, templateRequiredMsg))
	}
	selectors := templateSelectors{spec: spec.Selector, metadata: selector, pods: selector}
	if t := wt.DeploymentTemplate; t != nil {
		allErrs = append(allErrs, validateDeploymentTemplate(t, selectors, wtPath.Child("deploymentTemplate"))...)
	}
	if t := wt.StatefulSetTemplate; t != nil {
		allErrs = append(allErrs, validateStatefulSetTemplate(t, selectors, wtPath.Child("statefulSetTemplate"))...)
	}
	return allErrs
}

// templateSelectors are the selectors a workload template must agree with. A YurtAppDaemon's template takes
// all three from spec.selector; a YurtAppSet's has only its own selector, which its pod template's labels
// must match.
type templateSelectors struct {
	// spec, when set, is the selector the template's own selector must equal (a YurtAppDaemon's
	// spec.selector, copied there by defaulting).
	spec *metav1.LabelSelector
	// metadata, when set, must match the template's labels.
	metadata labels.Selector
	// pods, when set, must match the labels of the template's pod template.
	pods labels.Selector
}

// validateTemplateCommon checks what Deployment and StatefulSet templates share: the workload metadata,
// the workload selector, the pod template labels and the pod template itself.
func validateTemplateCommon(meta *metav1.ObjectMeta, workloadSelector *metav1.LabelSelector, podTemplate *corev1.PodTemplateSpec,
	claimNames sets.Set[string], selectors templateSelectors, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	metaPath := fldPath.Child("metadata")
	allErrs = append(allErrs, metav1validation.ValidateLabels(meta.Labels, metaPath.Child("labels"))...)
	allErrs = append(allErrs, apivalidation.ValidateAnnotations(meta.Annotations, metaPath.Child("annotations"))...)
	if selectors.metadata != nil && !selectors.metadata.Matches(labels.Set(meta.Labels)) {
		allErrs = append(allErrs, field.Invalid(metaPath.Child("labels"), meta.Labels, labelsMismatchMsg))
	}

	specPath := fldPath.Child("spec")
	if specSelector := selectors.spec; specSelector != nil {
		// Defaulting copies spec.selector here; a different one would make the children select other pods
		// than the YurtAppDaemon believes they own.
		if workloadSelector == nil {
			allErrs = append(allErrs, field.Required(specPath.Child("selector"), selectorMismatchMsg))
		} else if !apiequality.Semantic.DeepEqual(workloadSelector, specSelector) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("selector"), workloadSelector, selectorMismatchMsg))
		}
	}

	tplPath := specPath.Child("template")
	if selectors.pods != nil && !selectors.pods.Matches(labels.Set(podTemplate.Labels)) {
		allErrs = append(allErrs, field.Invalid(tplPath.Child("metadata", "labels"), podTemplate.Labels, labelsMismatchMsg))
	}
	allErrs = append(allErrs, podtemplate.ValidatePodTemplateSpec(podTemplate, claimNames, tplPath)...)
	allErrs = append(allErrs, validateWorkloadPodSpec(&podTemplate.Spec, tplPath)...)
	if p := podTemplate.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(tplPath.Child("spec", "restartPolicy"), p, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	return allErrs
}

func validateDeploymentTemplate(t *openyurt.DeploymentTemplateSpec, selectors templateSelectors, fldPath *field.Path) field.ErrorList {
	allErrs := validateTemplateCommon(&t.ObjectMeta, t.Spec.Selector, &t.Spec.Template, nil, selectors, fldPath)

	spec := &t.Spec
	specPath := fldPath.Child("spec")
	if spec.Replicas != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), specPath.Child("replicas"))...)
	}
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), specPath.Child("revisionHistoryLimit"))...)
	}
	allErrs = append(allErrs, validateDeploymentDeadline(spec, specPath)...)
	if spec.ProgressDeadlineSeconds != nil && *spec.ProgressDeadlineSeconds <= spec.MinReadySeconds {
		allErrs = append(allErrs, field.Invalid(specPath.Child("progressDeadlineSeconds"), *spec.ProgressDeadlineSeconds, progressDeadlineMsg))
	}

	strategyPath := specPath.Child("strategy")
	switch spec.Strategy.Type {
	case "", appsv1.RollingUpdateDeploymentStrategyType, appsv1.RecreateDeploymentStrategyType:
	default:
		allErrs = append(allErrs, field.NotSupported(strategyPath.Child("type"), spec.Strategy.Type,
			[]appsv1.DeploymentStrategyType{appsv1.RollingUpdateDeploymentStrategyType, appsv1.RecreateDeploymentStrategyType}))
	}
	if ru := spec.Strategy.RollingUpdate; ru != nil {
		ruPath := strategyPath.Child("rollingUpdate")
		if spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
			allErrs = append(allErrs, field.Forbidden(ruPath, recreateRollingMsg))
		}
		muErrs := validateMaxUnavailable(ru.MaxUnavailable, ruPath.Child("maxUnavailable"))
		msErrs := validateMaxSurge(ru.MaxSurge, ruPath.Child("maxSurge"))
		allErrs = append(allErrs, muErrs...)
		allErrs = append(allErrs, msErrs...)
		if len(muErrs) == 0 && len(msErrs) == 0 && isZero(ru.MaxUnavailable) && isZero(ru.MaxSurge) {
			allErrs = append(allErrs, field.Invalid(ruPath.Child("maxUnavailable"), ru.MaxUnavailable.String(), bothZeroMsg))
		}
	}
	return allErrs
}

func validateStatefulSetTemplate(t *openyurt.StatefulSetTemplateSpec, selectors templateSelectors, fldPath *field.Path) field.ErrorList {
	spec := &t.Spec
	specPath := fldPath.Child("spec")

	claimNames := sets.New[string]()
	var claimErrs field.ErrorList
	claimsPath := specPath.Child("volumeClaimTemplates")
	for i := range spec.VolumeClaimTemplates {
		claimErrs = append(claimErrs, validateVolumeClaimTemplate(&spec.VolumeClaimTemplates[i], claimNames, claimsPath.Index(i))...)
	}

	allErrs := validateTemplateCommon(&t.ObjectMeta, spec.Selector, &spec.Template, claimNames, selectors, fldPath)
	allErrs = append(allErrs, claimErrs...)

	if spec.Replicas != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), specPath.Child("replicas"))...)
	}
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), specPath.Child("revisionHistoryLimit"))...)
	}
	if spec.ServiceName != "" {
		for _, msg := range utilvalidation.IsDNS1123Label(spec.ServiceName) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("serviceName"), spec.ServiceName, msg))
		}
	}

	allErrs = append(allErrs, validateStatefulSetExtras(spec, specPath)...)

	switch spec.PodManagementPolicy {
	case "", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		allErrs = append(allErrs, field.NotSupported(specPath.Child("podManagementPolicy"), spec.PodManagementPolicy,
			[]appsv1.PodManagementPolicyType{appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement}))
	}

	usPath := specPath.Child("updateStrategy")
	switch spec.UpdateStrategy.Type {
	case "", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType:
	default:
		allErrs = append(allErrs, field.NotSupported(usPath.Child("type"), spec.UpdateStrategy.Type,
			[]appsv1.StatefulSetUpdateStrategyType{appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType}))
	}
	if ru := spec.UpdateStrategy.RollingUpdate; ru != nil {
		ruPath := usPath.Child("rollingUpdate")
		if spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			allErrs = append(allErrs, field.Forbidden(ruPath, onDeleteRollingMsg))
		}
		if ru.Partition != nil {
			allErrs = append(allErrs, field.Forbidden(ruPath.Child("partition"), partitionForbiddenMsg))
		}
		if ru.MaxUnavailable != nil {
			muPath := ruPath.Child("maxUnavailable")
			muErrs := validateMaxUnavailable(ru.MaxUnavailable, muPath)
			allErrs = append(allErrs, muErrs...)
			if len(muErrs) == 0 && isZero(ru.MaxUnavailable) {
				allErrs = append(allErrs, field.Invalid(muPath, ru.MaxUnavailable.String(), statefulSetMaxUnavailMsg))
			}
		}
	}
	return allErrs
}

var supportedAccessModes = []corev1.PersistentVolumeAccessMode{
	corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod,
}

// validateVolumeClaimTemplate checks what a StatefulSet needs of a claim template: a unique DNS-label name
// (it prefixes the claim names and is a volume name in the pod), access modes and a storage request.
// The name is added to names when it is valid.
func validateVolumeClaimTemplate(pvc *corev1.PersistentVolumeClaim, names sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	namePath := fldPath.Child("metadata", "name")
	switch {
	case pvc.Name == "":
		allErrs = append(allErrs, field.Required(namePath, ""))
	case names.Has(pvc.Name):
		allErrs = append(allErrs, field.Duplicate(namePath, pvc.Name))
	default:
		msgs := utilvalidation.IsDNS1123Label(pvc.Name)
		for _, msg := range msgs {
			allErrs = append(allErrs, field.Invalid(namePath, pvc.Name, msg))
		}
		if len(msgs) == 0 {
			names.Insert(pvc.Name)
		}
	}
	metaPath := fldPath.Child("metadata")
	allErrs = append(allErrs, metav1validation.ValidateLabels(pvc.Labels, metaPath.Child("labels"))...)
	allErrs = append(allErrs, apivalidation.ValidateAnnotations(pvc.Annotations, metaPath.Child("annotations"))...)

	specPath := fldPath.Child("spec")
	amPath := specPath.Child("accessModes")
	if len(pvc.Spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(amPath, "at least 1 access mode is required"))
	}
	for i, mode := range pvc.Spec.AccessModes {
		if !sets.New(supportedAccessModes...).Has(mode) {
			allErrs = append(allErrs, field.NotSupported(amPath.Index(i), mode, supportedAccessModes))
		}
	}
	storagePath := specPath.Child("resources", "requests").Key(string(corev1.ResourceStorage))
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if q.Sign() <= 0 {
		allErrs = append(allErrs, field.Invalid(storagePath, q.String(), "must be greater than zero"))
	}
	return allErrs
}

// validateMaxUnavailable accepts nil, a non-negative integer or a percentage between 0% and 100% (the rule of
// maxUnavailable; maxSurge has validateMaxSurge).
func validateMaxUnavailable(v *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	return validateIntOrPercent(v, fldPath, func(s string) bool {
		p, ok := parsePercent(s)
		return ok && p <= 100
	}, percentMsg)
}

// validateIntOrPercent accepts nil, a non-negative integer, or a string that percentOK accepts; anything else
// is invalid with msg.
func validateIntOrPercent(v *intstr.IntOrString, fldPath *field.Path, percentOK func(string) bool, msg string) field.ErrorList {
	if v == nil {
		return nil
	}
	switch v.Type {
	case intstr.Int:
		return apivalidation.ValidateNonnegativeField(int64(v.IntVal), fldPath)
	case intstr.String:
		if percentOK(v.StrVal) {
			return nil
		}
		return field.ErrorList{field.Invalid(fldPath, v.StrVal, msg)}
	}
	return field.ErrorList{field.Invalid(fldPath, v.String(), msg)}
}

// parsePercent parses "N%" with N a non-negative decimal integer.
func parsePercent(s string) (int, bool) {
	digits, ok := strings.CutSuffix(s, "%")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return n, true
}

// isZero reports whether a validated int-or-percent is explicitly 0 or 0%. nil is not zero: it is defaulted.
func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return false
	}
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	p, ok := parsePercent(v.StrVal)
	return ok && p == 0
}

var (
	supportedConditionTypes = []openyurt.YurtAppDaemonConditionType{
		openyurt.WorkLoadProvisioned, openyurt.WorkLoadUpdated, openyurt.WorkLoadFailure,
	}
	supportedConditionStatuses = []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}
	supportedTemplateTypes     = []openyurt.TemplateType{openyurt.DeploymentTemplateType, openyurt.StatefulSetTemplateType}
)

func validateYurtAppDaemonStatus(status *openyurt.YurtAppDaemonStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(status.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	if status.CollisionCount != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*status.CollisionCount), fldPath.Child("collisionCount"))...)
	}

	condPath := fldPath.Child("conditions")
	seenTypes := sets.New[openyurt.YurtAppDaemonConditionType]()
	for i, c := range status.Conditions {
		typePath := condPath.Index(i).Child("type")
		switch {
		case !sets.New(supportedConditionTypes...).Has(c.Type):
			allErrs = append(allErrs, field.NotSupported(typePath, c.Type, supportedConditionTypes))
		case seenTypes.Has(c.Type):
			allErrs = append(allErrs, field.Duplicate(typePath, c.Type))
		}
		seenTypes.Insert(c.Type)
		if !sets.New(supportedConditionStatuses...).Has(c.Status) {
			allErrs = append(allErrs, field.NotSupported(condPath.Index(i).Child("status"), c.Status, supportedConditionStatuses))
		}
	}

	if status.TemplateType != "" && !sets.New(supportedTemplateTypes...).Has(status.TemplateType) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("templateType"), status.TemplateType, supportedTemplateTypes))
	}
	allErrs = append(allErrs, validateUniqueNames(status.NodePools, fldPath.Child("nodepools"))...)
	allErrs = append(allErrs, validateStatusContents(status, fldPath)...)
	return allErrs
}

// validateUniqueNames reports every repeated entry of names as Duplicate.
func validateUniqueNames(names []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, name := range names {
		if seen.Has(name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), name))
		}
		seen.Insert(name)
	}
	return allErrs
}

var (
	supportedNodePoolTypes = []openyurt.NodePoolType{openyurt.Edge, openyurt.Cloud}
	supportedTaintEffects  = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
)

// ValidateNodePool checks a NodePool on create.
func ValidateNodePool(pool *openyurt.NodePool) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&pool.ObjectMeta, false, ValidateNodePoolName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateNodePoolSpec(&pool.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateNodePoolHostNetworkAnnotation(pool)...)
	allErrs = append(allErrs, validateLeaderAnnotations(pool)...)
	return errorlimit.Limit(allErrs)
}

// ValidateNodePoolUpdate checks an update of a NodePool's metadata and spec.
func ValidateNodePoolUpdate(newObj, oldObj *openyurt.NodePool) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateNodePoolSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateNodePoolHostNetworkAnnotation(newObj)...)
	allErrs = append(allErrs, validateLeaderAnnotations(newObj)...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newObj.Spec.Type, oldObj.Spec.Type, specPath.Child("type"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newObj.Spec.HostNetwork, oldObj.Spec.HostNetwork, specPath.Child("hostNetwork"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(newObj.Spec.InterConnectivity, oldObj.Spec.InterConnectivity, specPath.Child("interConnectivity"))...)
	return errorlimit.Limit(allErrs)
}

// ValidateNodePoolStatusUpdate checks an update of a NodePool's status.
func ValidateNodePoolStatusUpdate(newObj, oldObj *openyurt.NodePool) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(newObj.Status.ReadyNodeNum), statusPath.Child("readyNodeNum"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(newObj.Status.UnreadyNodeNum), statusPath.Child("unreadyNodeNum"))...)
	nodesPath := statusPath.Child("nodes")
	allErrs = append(allErrs, validateUniqueNames(newObj.Status.Nodes, nodesPath)...)
	for i, name := range newObj.Status.Nodes {
		for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
			allErrs = append(allErrs, field.Invalid(nodesPath.Index(i), name, msg))
		}
	}
	allErrs = append(allErrs, validateNodePoolLeaderStatus(&newObj.Status, statusPath)...)
	return errorlimit.Limit(allErrs)
}

func validateNodePoolSpec(spec *openyurt.NodePoolSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	typePath := fldPath.Child("type")
	switch spec.Type {
	case openyurt.Edge, openyurt.Cloud:
	case "":
		allErrs = append(allErrs, field.Required(typePath, ""))
	default:
		allErrs = append(allErrs, field.NotSupported(typePath, spec.Type, supportedNodePoolTypes))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	if spec.HostNetwork && spec.Type == openyurt.Cloud {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("hostNetwork"), spec.HostNetwork, "a Cloud pool cannot use the host network"))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Labels, fldPath.Child("labels"))...)
	allErrs = append(allErrs, apivalidation.ValidateAnnotations(spec.Annotations, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, validateNodePoolReservedKeys(spec, fldPath)...)
	allErrs = append(allErrs, validateNodePoolLeaderSpec(spec, fldPath)...)

	type taintID struct {
		key    string
		effect corev1.TaintEffect
	}
	seen := sets.New[taintID]()
	taintsPath := fldPath.Child("taints")
	for i, taint := range spec.Taints {
		p := taintsPath.Index(i)
		if taint.Key == "" {
			allErrs = append(allErrs, field.Required(p.Child("key"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(taint.Key) {
				allErrs = append(allErrs, field.Invalid(p.Child("key"), taint.Key, msg))
			}
		}
		for _, msg := range utilvalidation.IsValidLabelValue(taint.Value) {
			allErrs = append(allErrs, field.Invalid(p.Child("value"), taint.Value, msg))
		}
		switch taint.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		case "":
			allErrs = append(allErrs, field.Required(p.Child("effect"), ""))
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("effect"), taint.Effect, supportedTaintEffects))
		}
		id := taintID{key: taint.Key, effect: taint.Effect}
		if seen.Has(id) {
			allErrs = append(allErrs, field.Duplicate(p, fmt.Sprintf("%s:%s", taint.Key, taint.Effect)))
		}
		seen.Insert(id)
	}
	return allErrs
}
