package validation

import (
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/errorlimit"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/workloadtweak"
)

// A YurtAppSet is checked as OpenYurt's webhook checks it, and further: its workload template with the same
// rules as a YurtAppDaemon's (its own selector, which must match its pod template's labels, standing for the
// YurtAppDaemon's spec.selector), and every workload tweak on its own, applied by package workloadtweak to
// the workload the template renders for any pool (workloadtweak.Base), as the controller applies it: a patch
// whose path or operation does not apply, a container image naming no container of the template, or a
// rendering the template rules refuse is refused at its field path.

const (
	yasTemplateRequiredMsg = "exactly one of deploymentTemplate or statefulSetTemplate is required"
	yasTemplateBothMsg     = "only one of deploymentTemplate or statefulSetTemplate may be set"
	yasKindChangeMsg       = "changing the workload kind is not supported; delete and recreate the YurtAppSet"
	emptyWorkloadSelector  = "empty selector is invalid: the workload would select every pod of the namespace"
	noSuchContainerMsg     = "no container or init container of the workload template has this name"
	patchValueMsg          = "add and replace need a value"
	yasStatefulSetNameMsg  = "must be a DNS-1123 label with a statefulSetTemplate: its StatefulSets' pods take their hostnames from it"
)

// dryRunPool and dryRunRevision stand for the pool and revision of the workload a YurtAppSet's tweaks are
// checked on: any valid pool name shows the same problems.
const (
	// renderRoot is the root of the field paths of a rendered workload's errors, cut off in messages.
	renderRoot     = "workload"
	dryRunPool     = "pool"
	dryRunRevision = "revision"
)

var supportedPatchOperations = []openyurt.PatchOperation{
	openyurt.PatchOperationAdd, openyurt.PatchOperationRemove, openyurt.PatchOperationReplace,
}

var supportedYurtAppSetConditionTypes = []openyurt.YurtAppSetConditionType{
	openyurt.AppSetAppDispatched, openyurt.AppSetAppDeleted, openyurt.AppSetAppUpdated, openyurt.AppSetAppReady, openyurt.AppSetPoolFound,
}

// ValidateYurtAppSetName checks a YurtAppSet name: a DNS-1123 subdomain that is also a valid label value
// (at most 63 characters), because every workload carries it as apps.openyurt.io/ref-yurtappset. The
// workloads are named "<name>-<pool>-<random>" (or "<name>-<random>"), which the API server keeps valid.
func ValidateYurtAppSetName(name string, prefix bool) []string {
	msgs := apivalidation.NameIsDNSSubdomain(name, prefix)
	if !prefix && len(name) > utilvalidation.LabelValueMaxLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters, so that the apps.openyurt.io/ref-yurtappset "+
			"label of every workload is a valid label value", utilvalidation.LabelValueMaxLength))
	}
	return msgs
}

// ValidateYurtAppSet checks a YurtAppSet on create.
func ValidateYurtAppSet(yas *openyurt.YurtAppSet) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&yas.ObjectMeta, true, ValidateYurtAppSetName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateYurtAppSetStatefulSetName(yas)...)
	allErrs = append(allErrs, validateYurtAppSetSpec(&yas.Spec, yas.Name, yas.Namespace, field.NewPath("spec"))...)
	return errorlimit.Limit(allErrs)
}

// ValidateYurtAppSetUpdate checks an update of a YurtAppSet's metadata and spec: the workload kind cannot
// change, nor (for a StatefulSet) the fields a StatefulSet cannot change.
func ValidateYurtAppSetUpdate(newObj, oldObj *openyurt.YurtAppSet) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateYurtAppSetSpec(&newObj.Spec, newObj.Name, newObj.Namespace, specPath)...)

	wtPath := specPath.Child("workload", "workloadTemplate")
	newWT, oldWT := &newObj.Spec.Workload.WorkloadTemplate, &oldObj.Spec.Workload.WorkloadTemplate
	if newKind, oldKind := workloadKind(newWT), workloadKind(oldWT); newKind != "" && oldKind != "" && newKind != oldKind {
		allErrs = append(allErrs, field.Forbidden(wtPath, yasKindChangeMsg))
	}
	if newSts, oldSts := newWT.StatefulSetTemplate, oldWT.StatefulSetTemplate; newSts != nil && oldSts != nil {
		stsSpecPath := wtPath.Child("statefulSetTemplate", "spec")
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(newSts.Spec.VolumeClaimTemplates, oldSts.Spec.VolumeClaimTemplates, stsSpecPath.Child("volumeClaimTemplates"))...)
		allErrs = append(allErrs, apivalidation.ValidateImmutableField(newSts.Spec.ServiceName, oldSts.Spec.ServiceName, stsSpecPath.Child("serviceName"))...)
	}
	return errorlimit.Limit(allErrs)
}

// ValidateYurtAppSetStatusUpdate checks an update of a YurtAppSet's status.
func ValidateYurtAppSetStatusUpdate(newObj, oldObj *openyurt.YurtAppSet) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateYurtAppSetStatus(&newObj.Status, field.NewPath("status"))...)
	return errorlimit.Limit(allErrs)
}

// validateYurtAppSetStatefulSetName refuses a name with dots when the YurtAppSet renders StatefulSets.
func validateYurtAppSetStatefulSetName(yas *openyurt.YurtAppSet) field.ErrorList {
	if yas.Spec.Workload.WorkloadTemplate.StatefulSetTemplate == nil || yas.Name == "" {
		return nil
	}
	if len(apivalidation.NameIsDNSLabel(yas.Name, false)) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), yas.Name, yasStatefulSetNameMsg)}
}

func validateYurtAppSetSpec(spec *openyurt.YurtAppSetSpec, name, namespace string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.NodePoolSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.NodePoolSelector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("nodepoolSelector"))...)
	}
	allErrs = append(allErrs, validatePoolNames(spec.Pools, fldPath.Child("pools"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), fldPath.Child("revisionHistoryLimit"))...)
	}

	workloadPath := fldPath.Child("workload")
	wt := &spec.Workload.WorkloadTemplate
	wtPath := workloadPath.Child("workloadTemplate")
	switch {
	case workloadKind(wt) != "":
	case wt.DeploymentTemplate != nil:
		allErrs = append(allErrs, field.Forbidden(wtPath, yasTemplateBothMsg))
	default:
		allErrs = append(allErrs, field.Required(wtPath, yasTemplateRequiredMsg))
	}
	var containers sets.Set[string]
	if t := wt.DeploymentTemplate; t != nil {
		allErrs = append(allErrs, validateYurtAppSetDeploymentTemplate(t, wtPath.Child("deploymentTemplate"))...)
		containers = containerNames(&t.Spec.Template.Spec)
	}
	if t := wt.StatefulSetTemplate; t != nil {
		allErrs = append(allErrs, validateYurtAppSetStatefulSetTemplate(t, wtPath.Child("statefulSetTemplate"))...)
		containers = containerNames(&t.Spec.Template.Spec)
	}

	tweaksPath := workloadPath.Child("workloadTweaks")
	for i := range spec.Workload.WorkloadTweaks {
		tweak := &spec.Workload.WorkloadTweaks[i]
		tweakPath := tweaksPath.Index(i)
		tweakErrs := validateWorkloadTweak(tweak, containers, tweakPath)
		allErrs = append(allErrs, tweakErrs...)
		// Render only a well-formed tweak over a template of one kind: the errors above say what is wrong.
		if len(tweakErrs) == 0 && workloadKind(wt) != "" {
			allErrs = append(allErrs, validateRenderedTweak(spec, name, namespace, tweak, tweakPath.Child("tweaks"))...)
		}
	}
	return allErrs
}

// validateWorkloadSelector checks the selector of a YurtAppSet's workload template as the core API checks a
// Deployment's or StatefulSet's: required, valid and not empty. It returns the parsed selector when it is.
func validateWorkloadSelector(selector *metav1.LabelSelector, fldPath *field.Path) (labels.Selector, field.ErrorList) {
	if selector == nil {
		return nil, field.ErrorList{field.Required(fldPath, "")}
	}
	if errs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, fldPath); len(errs) > 0 {
		return nil, errs
	}
	if len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
		return nil, field.ErrorList{field.Invalid(fldPath, selector, emptyWorkloadSelector)}
	}
	parsed, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(fldPath, selector, err.Error())}
	}
	return parsed, nil
}

// validateYurtAppSetDeploymentTemplate checks a deploymentTemplate with the YurtAppDaemon template rules,
// its own selector standing for spec.selector.
func validateYurtAppSetDeploymentTemplate(t *openyurt.DeploymentTemplateSpec, fldPath *field.Path) field.ErrorList {
	selector, allErrs := validateWorkloadSelector(t.Spec.Selector, fldPath.Child("spec", "selector"))
	return append(allErrs, validateDeploymentTemplate(t, templateSelectors{pods: selector}, fldPath)...)
}

// validateYurtAppSetStatefulSetTemplate is validateYurtAppSetDeploymentTemplate for a statefulSetTemplate.
func validateYurtAppSetStatefulSetTemplate(t *openyurt.StatefulSetTemplateSpec, fldPath *field.Path) field.ErrorList {
	selector, allErrs := validateWorkloadSelector(t.Spec.Selector, fldPath.Child("spec", "selector"))
	return append(allErrs, validateStatefulSetTemplate(t, templateSelectors{pods: selector}, fldPath)...)
}

// validatePoolNames checks a list of NodePool names: each a valid NodePool name, none repeated.
func validatePoolNames(pools []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, pool := range pools {
		if pool == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), "a NodePool name"))
			continue
		}
		for _, msg := range ValidateNodePoolName(pool, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), pool, msg))
		}
	}
	return append(allErrs, validateUniqueNames(pools, fldPath)...)
}

// containerNames returns the names of the containers and init containers of a pod spec.
func containerNames(spec *corev1.PodSpec) sets.Set[string] {
	names := sets.New[string]()
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			names.Insert(containers[i].Name)
		}
	}
	return names
}

// validateWorkloadTweak checks a tweak's fields on their own. containers are the template's container
// names; nil when there is no template to check image tweaks against.
func validateWorkloadTweak(tweak *openyurt.WorkloadTweak, containers sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if tweak.NodePoolSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(tweak.NodePoolSelector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("nodepoolSelector"))...)
	}
	allErrs = append(allErrs, validatePoolNames(tweak.Pools, fldPath.Child("pools"))...)

	tweaksPath := fldPath.Child("tweaks")
	t := &tweak.Tweaks
	if t.Replicas != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*t.Replicas), tweaksPath.Child("replicas"))...)
	}
	imagesPath := tweaksPath.Child("containerImages")
	seen := sets.New[string]()
	for i, image := range t.ContainerImages {
		namePath := imagesPath.Index(i).Child("name")
		switch {
		case image.Name == "":
			allErrs = append(allErrs, field.Required(namePath, "the name of a container of the workload template"))
		case seen.Has(image.Name):
			allErrs = append(allErrs, field.Duplicate(namePath, image.Name))
		case containers != nil && !containers.Has(image.Name):
			notFound := field.NotFound(namePath, image.Name)
			notFound.Detail = noSuchContainerMsg
			allErrs = append(allErrs, notFound)
		}
		seen.Insert(image.Name)
		imagePath := imagesPath.Index(i).Child("targetImage")
		switch {
		case image.TargetImage == "":
			allErrs = append(allErrs, field.Required(imagePath, ""))
		case strings.TrimSpace(image.TargetImage) != image.TargetImage:
			allErrs = append(allErrs, field.Invalid(imagePath, image.TargetImage, "must not have leading or trailing whitespace"))
		}
	}
	patchesPath := tweaksPath.Child("patches")
	for i, p := range t.Patches {
		patchPath := patchesPath.Index(i)
		switch {
		case p.Path == "":
			allErrs = append(allErrs, field.Required(patchPath.Child("path"), "a JSON pointer such as /metadata/labels/tier"))
		case !strings.HasPrefix(p.Path, "/"):
			allErrs = append(allErrs, field.Invalid(patchPath.Child("path"), p.Path, "must be a JSON pointer (RFC 6901) starting with '/'"))
		}
		switch {
		case p.Operation == "":
			allErrs = append(allErrs, field.Required(patchPath.Child("operation"), ""))
		case !sets.New(supportedPatchOperations...).Has(p.Operation):
			allErrs = append(allErrs, field.NotSupported(patchPath.Child("operation"), p.Operation, supportedPatchOperations))
		case p.Operation != openyurt.PatchOperationRemove && (p.Value == nil || len(p.Value.Raw) == 0):
			allErrs = append(allErrs, field.Required(patchPath.Child("value"), patchValueMsg))
		}
	}
	return allErrs
}

// validateRenderedTweak applies tweak alone, as the controller would for a pool it selects, to the workload
// the template renders (workloadtweak.Base), and refuses a patch that does not apply, and a rendering that the
// template rules refuse but the template passes. fldPath is the tweak's tweaks field.
func validateRenderedTweak(spec *openyurt.YurtAppSetSpec, name, namespace string, tweak *openyurt.WorkloadTweak, fldPath *field.Path) field.ErrorList {
	if len(tweak.Tweaks.Patches) == 0 {
		return nil // replicas and images are checked field by field
	}
	var versioned v1beta1.Tweaks
	if err := v1beta1.Convert_openyurt_Tweaks_To_v1beta1_Tweaks(&tweak.Tweaks, &versioned, nil); err != nil {
		return field.ErrorList{field.InternalError(fldPath, err)}
	}
	base := workloadtweak.Base{YurtAppSet: name, Namespace: namespace, Pool: dryRunPool, Revision: dryRunRevision}
	wt := &spec.Workload.WorkloadTemplate
	var applyErr error
	var before, after field.ErrorList
	renderPath := field.NewPath(renderRoot)
	if t := wt.DeploymentTemplate; t != nil {
		d := base.Deployment(&t.ObjectMeta, &t.Spec)
		before = validateRenderedDeployment(d, renderPath)
		if applyErr = workloadtweak.ApplyToDeployment(d, dryRunPool, []v1beta1.Tweaks{versioned}); applyErr == nil {
			after = validateRenderedDeployment(d, renderPath)
		}
	} else if t := wt.StatefulSetTemplate; t != nil {
		s := base.StatefulSet(&t.ObjectMeta, &t.Spec)
		before = validateRenderedStatefulSet(s, renderPath)
		if applyErr = workloadtweak.ApplyToStatefulSet(s, dryRunPool, []v1beta1.Tweaks{versioned}); applyErr == nil {
			after = validateRenderedStatefulSet(s, renderPath)
		}
	}
	kind := string(workloadKind(wt))
	patchesPath := fldPath.Child("patches")
	if applyErr != nil {
		var pe *workloadtweak.PatchError
		if errors.As(applyErr, &pe) {
			return field.ErrorList{field.Invalid(patchesPath.Index(pe.Patch), field.OmitValueType{},
				fmt.Sprintf("cannot be applied to the %s the template renders: %v", kind, pe.Err))}
		}
		return field.ErrorList{field.Invalid(patchesPath, field.OmitValueType{},
			fmt.Sprintf("cannot be applied to the %s the template renders: %v", kind, applyErr))}
	}
	// What the template itself gets wrong is reported under the template already.
	known := sets.New[string]()
	for _, e := range before {
		known.Insert(e.Error())
	}
	var allErrs field.ErrorList
	for _, e := range after {
		if !known.Has(e.Error()) {
			allErrs = append(allErrs, field.Invalid(patchesPath, field.OmitValueType{},
				fmt.Sprintf("the patched %s is invalid: %s", kind, strings.TrimPrefix(e.Error(), renderRoot+"."))))
		}
	}
	return allErrs
}

// validateRenderedDeployment checks a rendered Deployment with the template rules.
func validateRenderedDeployment(d *appsv1.Deployment, fldPath *field.Path) field.ErrorList {
	t := &openyurt.DeploymentTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: d.Labels, Annotations: d.Annotations}, Spec: d.Spec}
	return validateYurtAppSetDeploymentTemplate(t, fldPath)
}

// validateRenderedStatefulSet checks a rendered StatefulSet with the template rules.
func validateRenderedStatefulSet(s *appsv1.StatefulSet, fldPath *field.Path) field.ErrorList {
	t := &openyurt.StatefulSetTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: s.Labels, Annotations: s.Annotations}, Spec: s.Spec}
	return validateYurtAppSetStatefulSetTemplate(t, fldPath)
}

func validateYurtAppSetStatus(status *openyurt.YurtAppSetStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(status.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	if status.CollisionCount != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*status.CollisionCount), fldPath.Child("collisionCount"))...)
	}
	for _, f := range []struct {
		name  string
		value int32
	}{{"readyWorkloads", status.ReadyWorkloads}, {"updatedWorkloads", status.UpdatedWorkloads}, {"totalWorkloads", status.TotalWorkloads}} {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(f.value), fldPath.Child(f.name))...)
	}
	if r := status.CurrentRevision; r != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(r, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("currentRevision"), r, msg))
		}
	}
	condPath := fldPath.Child("conditions")
	seenTypes := sets.New[openyurt.YurtAppSetConditionType]()
	for i, c := range status.Conditions {
		typePath := condPath.Index(i).Child("type")
		switch {
		case !sets.New(supportedYurtAppSetConditionTypes...).Has(c.Type):
			allErrs = append(allErrs, field.NotSupported(typePath, c.Type, supportedYurtAppSetConditionTypes))
		case seenTypes.Has(c.Type):
			allErrs = append(allErrs, field.Duplicate(typePath, c.Type))
		}
		seenTypes.Insert(c.Type)
		if !sets.New(supportedConditionStatuses...).Has(c.Status) {
			allErrs = append(allErrs, field.NotSupported(condPath.Index(i).Child("status"), c.Status, supportedConditionStatuses))
		}
		allErrs = append(allErrs, validateConditionText(c.Reason, c.Message, condPath.Index(i))...)
	}
	return allErrs
}
