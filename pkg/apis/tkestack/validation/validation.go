// Package validation checks TApps (apps.tkestack.io) in their internal form, on create, update and status
// update.
//
// Validation expects a defaulted object (see pkg/apis/tkestack/v1 SetDefaults_TAppSpec), but it tolerates the
// fields defaulting fills: an empty defaultTemplateName means "default", an empty updateStrategy.template means
// defaultTemplateName, nil maxUnavailable budgets are skipped and an empty port protocol means TCP.
//
// Template pool names must be non-empty valid label values (at most 63 characters of alphanumerics, '-', '_'
// and '.', starting and ending with an alphanumeric). That accepts the names existing TApps use ("test2",
// "v1.2", "canary_b") while keeping a name usable as a pod label value.
package validation

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/errorlimit"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/podtemplate"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// Messages of errors a client may want to recognise.
const (
	instanceIDMsg        = "must be a non-negative integer instance id"
	emptySelectorMsg     = "empty selector is invalid for TApp"
	minUnavailableMsg    = "must be greater than or equal to 1"
	percentRangeMsg      = "must be a percentage between 1% and 100%"
	intOrPercentMsg      = "must be an integer or a percentage such as '50%'"
	legacyConflictMsg    = "conflicts with spec.defaultTemplateName; set only defaultTemplateName"
	reservedTemplateName = tkestack.DefaultTemplateName
)

// SupportedSpecStatuses are the values spec.statuses may hold.
var SupportedSpecStatuses = []string{string(tkestack.InstanceKilled)}

// SupportedSpreadPolicies are the values spec.spreadPolicy may hold (besides unset, which means Spread).
var SupportedSpreadPolicies = []string{string(tkestack.SpreadPolicySpread), string(tkestack.SpreadPolicyNone)}

// SupportedInstanceStatuses are the values status.statuses may hold.
var SupportedInstanceStatuses = []string{
	string(tkestack.InstanceNotCreated), string(tkestack.InstancePending), string(tkestack.InstanceRunning),
	string(tkestack.InstanceUpdating), string(tkestack.InstancePodFailed), string(tkestack.InstancePodSucc),
	string(tkestack.InstanceKilling), string(tkestack.InstanceKilled), string(tkestack.InstanceFailed),
	string(tkestack.InstanceSucc), string(tkestack.InstanceUnknown),
}

// SupportedAppStatuses are the non-empty values status.appStatus may hold.
var SupportedAppStatuses = []string{
	string(tkestack.AppPending), string(tkestack.AppRunning), string(tkestack.AppFailed),
	string(tkestack.AppSucc), string(tkestack.AppKilled),
}

// SupportedAccessModes are the access modes a volume claim template may request.
var SupportedAccessModes = []string{
	string(corev1.ReadWriteOnce), string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOncePod),
}

const (
	// maxPodNameLength is the limit of a pod (and PVC) name: a DNS-1123 subdomain.
	maxPodNameLength = validation.DNS1123SubdomainMaxLength
	// maxHostnameLength is the limit of a pod hostname: a DNS-1123 label.
	maxHostnameLength = validation.DNS1123LabelMaxLength
)

// instanceIDPattern is the canonical decimal form of an instance id: no sign, no leading zeros.
var instanceIDPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// percentPattern is an integer percentage such as "50%".
var percentPattern = regexp.MustCompile(`^[0-9]+%$`)

// ValidateTAppName checks the name of a TApp; it is usable as an apimachineryvalidation.ValidateNameFunc.
// The length of the pod names derived from it is checked by ValidateTApp, which knows the replicas.
func ValidateTAppName(name string, prefix bool) []string {
	return apimachineryvalidation.NameIsDNSSubdomain(name, prefix)
}

// ValidateTApp checks a TApp on create. Like every Validate function of this package, it returns at most
// errorlimit.PerPath errors per field path (see errorlimit.Limit), so a refusal costs no more than the body.
func ValidateTApp(tapp *tkestack.TApp) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&tapp.ObjectMeta, true, ValidateTAppName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateTAppSpecAndNames(tapp)...)
	return errorlimit.Limit(allErrs)
}

// ValidateTAppUpdate checks a TApp on update: the metadata update rules, the whole spec, and that the
// selector did not change.
func ValidateTAppUpdate(newTApp, oldTApp *tkestack.TApp) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newTApp.ObjectMeta, &oldTApp.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateTAppSpecAndNames(newTApp)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newTApp.Spec.Selector, oldTApp.Spec.Selector,
		field.NewPath("spec", "selector"))...)
	allErrs = append(allErrs, validateClaimTemplateUpdate(&newTApp.Spec, &oldTApp.Spec, field.NewPath("spec", "volumeClaimTemplates"))...)
	return errorlimit.Limit(allErrs)
}

// ValidateTAppStatusUpdate checks a TApp on a status update: the metadata update rules, the status, and, when
// status.statuses raises the highest instance id, the names derived from it (pod, hostname and claim names),
// so that no status write can leave an object whose next spec write is refused. Those errors are reported on
// status.statuses, the field that raised the id.
func ValidateTAppStatusUpdate(newTApp, oldTApp *tkestack.TApp) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newTApp.ObjectMeta, &oldTApp.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	allErrs = append(allErrs, validateTAppStatus(&newTApp.Status, statusPath)...)
	if maxInstanceID(newTApp) > maxInstanceID(oldTApp) {
		statusesPath := statusPath.Child("statuses")
		derived := validatePodNameLength(newTApp, statusesPath)
		derived = append(derived, validateVolumeClaimTemplates(newTApp, field.NewPath("spec", "volumeClaimTemplates"))...)
		for _, err := range derived {
			if err.Type == field.ErrorTypeInvalid {
				allErrs = append(allErrs, field.Invalid(statusesPath, maxInstanceID(newTApp),
					"this instance id is too high for the TApp's name: "+err.Detail))
			}
		}
	}
	return errorlimit.Limit(allErrs)
}

// validateTAppSpecAndNames checks the spec and the names derived from the TApp name and the spec.
func validateTAppSpecAndNames(tapp *tkestack.TApp) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validateTAppSpec(&tapp.Spec, specPath)
	allErrs = append(allErrs, validatePodNameLength(tapp, field.NewPath("metadata", "name"))...)
	allErrs = append(allErrs, validateVolumeClaimTemplates(tapp, specPath.Child("volumeClaimTemplates"))...)
	return allErrs
}

func validateTAppSpec(spec *tkestack.TAppSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateReplicas(spec.Replicas, fldPath.Child("replicas"))
	allErrs = append(allErrs, validateSelectorAndTemplateLabels(spec, fldPath)...)
	allErrs = append(allErrs, validateTemplatePoolNames(spec.TemplatePool, fldPath.Child("templatePool"))...)
	allErrs = append(allErrs, validatePodTemplates(spec, fldPath)...)
	allErrs = append(allErrs, validateTemplateReferences(spec, fldPath)...)
	allErrs = append(allErrs, validateSpecStatuses(spec.Statuses, fldPath.Child("statuses"))...)
	allErrs = append(allErrs, validateMaxUnavailable(spec.UpdateStrategy.MaxUnavailable,
		fldPath.Child("updateStrategy", "maxUnavailable"))...)
	allErrs = append(allErrs, validateMaxUnavailable(spec.UpdateStrategy.ForceUpdate.MaxUnavailable,
		fldPath.Child("updateStrategy", "forceUpdate", "maxUnavailable"))...)
	allErrs = append(allErrs, validateRolloutControls(spec, fldPath)...)
	allErrs = append(allErrs, validateLifecycle(spec.Lifecycle, spec.Selector, fldPath.Child("lifecycle"))...)
	if spec.ServiceName != "" {
		for _, msg := range validation.IsDNS1123Label(spec.ServiceName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	if spec.LegacyDefaultTemplateName != "" && spec.LegacyDefaultTemplateName != spec.DefaultTemplateName {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("DefaultTemplateName"), spec.LegacyDefaultTemplateName, legacyConflictMsg))
	}
	return allErrs
}

// validateRolloutControls checks spec.updateStrategy.partition (0..MaxReplicas), spec.revisionHistoryLimit
// and spec.minReadySeconds (non-negative), spec.progressDeadlineSeconds and spec.spreadPolicy.
func validateRolloutControls(spec *tkestack.TAppSpec, fldPath *field.Path) field.ErrorList {
	partitionPath := fldPath.Child("updateStrategy", "partition")
	allErrs := apimachineryvalidation.ValidateNonnegativeField(int64(spec.UpdateStrategy.Partition), partitionPath)
	if spec.UpdateStrategy.Partition > tkestack.MaxReplicas {
		allErrs = append(allErrs, field.Invalid(partitionPath, spec.UpdateStrategy.Partition,
			fmt.Sprintf("must be less than or equal to %d", tkestack.MaxReplicas)))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	allErrs = append(allErrs, validateProgressDeadline(spec, fldPath.Child("progressDeadlineSeconds"))...)
	// Empty means Spread; the API does not default it (TApps stored before it keep their form).
	if spec.SpreadPolicy != "" && !sets.New(SupportedSpreadPolicies...).Has(string(spec.SpreadPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("spreadPolicy"), spec.SpreadPolicy, SupportedSpreadPolicies))
	}
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit),
			fldPath.Child("revisionHistoryLimit"))...)
	}
	allErrs = append(allErrs, validateClaimRetentionPolicy(spec.PersistentVolumeClaimRetentionPolicy, fldPath.Child("persistentVolumeClaimRetentionPolicy"))...)
	allErrs = append(allErrs, validateVolumeClaimUpdateStrategy(spec.VolumeClaimUpdateStrategy, fldPath.Child("volumeClaimUpdateStrategy"))...)
	// Empty only in objects built without the defaults (Parallel).
	if policies := []string{string(tkestack.ParallelPodManagement), string(tkestack.OrderedReadyPodManagement)}; spec.PodManagementPolicy != "" && !sets.New(policies...).Has(string(spec.PodManagementPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("podManagementPolicy"), spec.PodManagementPolicy, policies))
	}
	return allErrs
}

// progressDeadlineMsg is the message of a progress deadline not above minReadySeconds, as the core API
// words it for a Deployment.
const progressDeadlineMsg = "must be greater than minReadySeconds"

// validateProgressDeadline checks spec.progressDeadlineSeconds when set: not negative and, as for a
// Deployment, greater than spec.minReadySeconds (an instance must be able to become available before the
// deadline). So 0 is refused too.
func validateProgressDeadline(spec *tkestack.TAppSpec, fldPath *field.Path) field.ErrorList {
	if spec.ProgressDeadlineSeconds == nil {
		return nil
	}
	deadline := *spec.ProgressDeadlineSeconds
	if errs := apimachineryvalidation.ValidateNonnegativeField(int64(deadline), fldPath); len(errs) > 0 {
		return errs
	}
	if deadline <= spec.MinReadySeconds {
		return field.ErrorList{field.Invalid(fldPath, deadline, progressDeadlineMsg)}
	}
	return nil
}

// claimRetentionPolicyTypes are the values of persistentVolumeClaimRetentionPolicy.whenDeleted and .whenScaled.
var claimRetentionPolicyTypes = []string{
	string(tkestack.RetainPersistentVolumeClaimRetentionPolicyType),
	string(tkestack.DeletePersistentVolumeClaimRetentionPolicyType),
}

// validateClaimRetentionPolicy checks spec.persistentVolumeClaimRetentionPolicy (filled by the defaults).
func validateClaimRetentionPolicy(policy *tkestack.TAppPersistentVolumeClaimRetentionPolicy, fldPath *field.Path) field.ErrorList {
	if policy == nil {
		return nil
	}
	var allErrs field.ErrorList
	for _, f := range []struct {
		name  string
		value tkestack.PersistentVolumeClaimRetentionPolicyType
	}{{"whenDeleted", policy.WhenDeleted}, {"whenScaled", policy.WhenScaled}} {
		if !sets.New(claimRetentionPolicyTypes...).Has(string(f.value)) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child(f.name), f.value, claimRetentionPolicyTypes))
		}
	}
	return allErrs
}

func validateReplicas(replicas int32, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateNonnegativeField(int64(replicas), fldPath)
	if replicas > tkestack.MaxReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath, replicas,
			fmt.Sprintf("must be less than or equal to %d", tkestack.MaxReplicas)))
	}
	return allErrs
}

// validateSelectorAndTemplateLabels checks the selector and that it selects every template.
func validateSelectorAndTemplateLabels(spec *tkestack.TAppSpec, fldPath *field.Path) field.ErrorList {
	selPath := fldPath.Child("selector")
	if spec.Selector == nil {
		return field.ErrorList{field.Required(selPath, "")}
	}
	if len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		return field.ErrorList{field.Invalid(selPath, spec.Selector, emptySelectorMsg)}
	}
	allErrs := metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, selPath)
	if len(allErrs) > 0 {
		return allErrs
	}
	selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return field.ErrorList{field.Invalid(selPath, spec.Selector, err.Error())}
	}
	allErrs = append(allErrs, podtemplate.ValidatePodTemplateLabelsMatchSelector(spec.PodTemplate(), selector, fldPath.Child("template"))...)
	for _, name := range sortedKeys(spec.TemplatePool) {
		template := spec.TemplatePool[name]
		allErrs = append(allErrs, podtemplate.ValidatePodTemplateLabelsMatchSelector(&template, selector,
			fldPath.Child("templatePool").Key(name))...)
	}
	return allErrs
}

// validateTemplatePoolNames checks the keys of spec.templatePool; see the package comment for the rule.
func validateTemplatePoolNames(pool map[string]corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sortedKeys(pool) {
		keyPath := fldPath.Key(name)
		switch {
		case name == reservedTemplateName:
			allErrs = append(allErrs, field.Forbidden(keyPath,
				fmt.Sprintf("the template name %q is reserved for spec.template", reservedTemplateName)))
		case name == "":
			allErrs = append(allErrs, field.Invalid(keyPath, name, "a template name must not be empty"))
		default:
			for _, msg := range validation.IsValidLabelValue(name) {
				allErrs = append(allErrs, field.Invalid(keyPath, name, msg))
			}
		}
	}
	return allErrs
}

// validatePodTemplates checks spec.template and every pool entry as a pod template.
func validatePodTemplates(spec *tkestack.TAppSpec, fldPath *field.Path) field.ErrorList {
	claimNames := sets.New[string]()
	for _, claim := range spec.VolumeClaimTemplates {
		claimNames.Insert(claim.Name)
	}
	allErrs := podtemplate.ValidatePodTemplateSpec(spec.PodTemplate(), claimNames, fldPath.Child("template"))
	for _, name := range sortedKeys(spec.TemplatePool) {
		template := spec.TemplatePool[name]
		allErrs = append(allErrs, podtemplate.ValidatePodTemplateSpec(&template, claimNames, fldPath.Child("templatePool").Key(name))...)
	}
	return allErrs
}

// validateTemplateReferences checks spec.templates, spec.defaultTemplateName and spec.updateStrategy.template.
func validateTemplateReferences(spec *tkestack.TAppSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	templatesPath := fldPath.Child("templates")
	ids := sortedKeys(spec.Templates)
	allErrs = append(allErrs, ValidateInstanceKeys(ids, templatesPath)...)
	for _, id := range ids {
		if _, ok := parseInstanceID(id); ok {
			allErrs = append(allErrs, validateTemplateName(spec.Templates[id], spec.TemplatePool, templatesPath.Key(id))...)
		}
	}
	if spec.DefaultTemplateName != "" {
		allErrs = append(allErrs, validateTemplateName(spec.DefaultTemplateName, spec.TemplatePool, fldPath.Child("defaultTemplateName"))...)
	}
	if spec.UpdateStrategy.Template != "" {
		allErrs = append(allErrs, validateTemplateName(spec.UpdateStrategy.Template, spec.TemplatePool,
			fldPath.Child("updateStrategy", "template"))...)
	}
	return allErrs
}

// validateTemplateName checks that name refers to spec.template ("default") or to a pool entry.
func validateTemplateName(name string, pool map[string]corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	if name == tkestack.DefaultTemplateName {
		return nil
	}
	if _, ok := pool[name]; ok {
		return nil
	}
	return field.ErrorList{field.NotFound(fldPath, name)}
}

func validateSpecStatuses(statuses map[string]tkestack.InstanceStatus, fldPath *field.Path) field.ErrorList {
	ids := sortedKeys(statuses)
	allErrs := ValidateInstanceKeys(ids, fldPath)
	for _, id := range ids {
		if _, ok := parseInstanceID(id); ok && statuses[id] != tkestack.InstanceKilled {
			allErrs = append(allErrs, field.NotSupported(fldPath.Key(id), statuses[id], SupportedSpecStatuses))
		}
	}
	return allErrs
}

// parseInstanceID returns the id a key of spec.templates, spec.statuses or status.statuses denotes, and false
// if the key is not a canonical decimal integer below MaxReplicas.
func parseInstanceID(key string) (int, bool) {
	// The canonical form of instanceIDPattern, checked by hand: this runs for every key of every map.
	if key == "" || len(key) > len(strconv.Itoa(tkestack.MaxReplicas)) || (key[0] == '0' && len(key) > 1) {
		return 0, false
	}
	id := 0
	for i := 0; i < len(key); i++ {
		if key[i] < '0' || key[i] > '9' {
			return 0, false
		}
		id = id*10 + int(key[i]-'0')
	}
	if id >= tkestack.MaxReplicas {
		return 0, false
	}
	return id, true
}

// maxKeyExamples is how many of the keys that are not instance ids validateInstanceKeys names.
const maxKeyExamples = 3

// ValidateInstanceKeys checks the keys of a map keyed by instance id (sorted). A single bad key is reported
// on its own path; several are one error on the map, naming the first few and the count: a key that can never
// be an instance needs no error of its own, and a body of many such keys gets an answer of constant size.
func ValidateInstanceKeys(keys []string, fldPath *field.Path) field.ErrorList {
	var bad []string
	badCount := 0
	for _, key := range keys {
		if _, ok := parseInstanceID(key); !ok {
			if len(bad) < maxKeyExamples {
				bad = append(bad, key)
			}
			badCount++
		}
	}
	switch {
	case badCount == 0:
		return nil
	case badCount == 1:
		return validateInstanceID(bad[0], fldPath.Key(bad[0]))
	}
	quoted := make([]string, len(bad))
	for i, key := range bad {
		quoted[i] = strconv.Quote(truncate(key, 20))
	}
	return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, fmt.Sprintf(
		"%d keys are not instance ids (%s less than %d), e.g. %s",
		badCount, instanceIDMsg, tkestack.MaxReplicas, strings.Join(quoted, ", ")))}
}

// truncate shortens s to at most n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func validateInstanceID(key string, fldPath *field.Path) field.ErrorList {
	if !instanceIDPattern.MatchString(key) {
		return field.ErrorList{field.Invalid(fldPath, key, instanceIDMsg)}
	}
	if _, ok := parseInstanceID(key); !ok {
		return field.ErrorList{field.Invalid(fldPath, key, fmt.Sprintf("%s less than %d", instanceIDMsg, tkestack.MaxReplicas))}
	}
	return nil
}

// validateMaxUnavailable checks an update budget: an integer of at least 1 or a percentage from 1% to 100%.
func validateMaxUnavailable(value *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if value == nil {
		return nil
	}
	switch value.Type {
	case intstr.Int:
		if value.IntVal < 1 {
			return field.ErrorList{field.Invalid(fldPath, value.IntVal, minUnavailableMsg)}
		}
	case intstr.String:
		if !percentPattern.MatchString(value.StrVal) {
			return field.ErrorList{field.Invalid(fldPath, value.StrVal, intOrPercentMsg)}
		}
		percent, err := strconv.Atoi(strings.TrimSuffix(value.StrVal, "%"))
		if err != nil || percent < 1 || percent > 100 {
			return field.ErrorList{field.Invalid(fldPath, value.StrVal, percentRangeMsg)}
		}
	default:
		return field.ErrorList{field.Invalid(fldPath, value.String(), intOrPercentMsg)}
	}
	return nil
}

// maxInstanceID is the highest id a pod of tapp may get: replicas-1, or a larger id listed in spec.templates,
// spec.statuses or status.statuses. Invalid ids are ignored; they are reported elsewhere.
func maxInstanceID(tapp *tkestack.TApp) int {
	maxID := int(tapp.Spec.Replicas) - 1
	maxID = min(max(maxID, 0), tkestack.MaxReplicas-1)
	raise := func(key string) {
		if id, ok := parseInstanceID(key); ok && id > maxID {
			maxID = id
		}
	}
	for key := range tapp.Spec.Templates {
		raise(key)
	}
	for key := range tapp.Spec.Statuses {
		raise(key)
	}
	for key := range tapp.Status.Statuses {
		raise(key)
	}
	return maxID
}

// validatePodNameLength checks that the longest pod name "<name>-<id>" is a valid pod name and, when
// spec.serviceName is set, a valid hostname.
func validatePodNameLength(tapp *tkestack.TApp, fldPath *field.Path) field.ErrorList {
	name := tapp.Name
	if name == "" || len(ValidateTAppName(name, false)) > 0 {
		return nil // reported by the metadata validation
	}
	podName := fmt.Sprintf("%s-%d", name, maxInstanceID(tapp))
	if len(podName) > maxPodNameLength {
		return field.ErrorList{field.Invalid(fldPath, name, fmt.Sprintf(
			"the pod name %q derived from this name and the highest instance id must be no more than %d characters",
			podName, maxPodNameLength))}
	}
	if tapp.Spec.ServiceName == "" {
		return nil
	}
	if msgs := validation.IsDNS1123Label(podName); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fldPath, name, fmt.Sprintf(
			"the pod name %q derived from this name and the highest instance id is the pod hostname because spec.serviceName is set, "+
				"so it must be a DNS-1123 label of no more than %d characters: %s",
			podName, maxHostnameLength, strings.Join(msgs, "; ")))}
	}
	return nil
}

// validateVolumeClaimTemplates checks spec.volumeClaimTemplates; each claim becomes a PVC "<claim>-<tapp>-<id>".
func validateVolumeClaimTemplates(tapp *tkestack.TApp, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	longestSuffix := fmt.Sprintf("-%s-%d", tapp.Name, maxInstanceID(tapp))
	for i := range tapp.Spec.VolumeClaimTemplates {
		claim := &tapp.Spec.VolumeClaimTemplates[i]
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateClaimName(claim.Name, names, longestSuffix, idxPath.Child("metadata", "name"))...)
		allErrs = append(allErrs, validateClaimSpec(&claim.Spec, idxPath.Child("spec"))...)
	}
	return allErrs
}

func validateClaimName(name string, seen sets.Set[string], longestSuffix string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	if seen.Has(name) {
		return field.ErrorList{field.Duplicate(fldPath, name)}
	}
	seen.Insert(name)
	if pvcName := name + longestSuffix; len(pvcName) > maxPodNameLength {
		return field.ErrorList{field.Invalid(fldPath, name, fmt.Sprintf(
			"the claim name %q derived from this name, the TApp name and the highest instance id must be no more than %d characters",
			pvcName, maxPodNameLength))}
	}
	return nil
}

func validateClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	modesPath := fldPath.Child("accessModes")
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(modesPath, "at least one access mode is required"))
	}
	supported := sets.New(SupportedAccessModes...)
	for i, mode := range spec.AccessModes {
		if !supported.Has(string(mode)) {
			allErrs = append(allErrs, field.NotSupported(modesPath.Index(i), mode, SupportedAccessModes))
		}
	}
	storagePath := fldPath.Child("resources", "requests").Key(string(corev1.ResourceStorage))
	storage, ok := spec.Resources.Requests[corev1.ResourceStorage]
	switch {
	case !ok:
		allErrs = append(allErrs, field.Required(storagePath, "a storage request is required"))
	case storage.Sign() <= 0:
		allErrs = append(allErrs, field.Invalid(storagePath, storage.String(), "must be greater than zero"))
	}
	return allErrs
}

func validateTAppStatus(status *tkestack.TAppStatus, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateNonnegativeField(status.ObservedGeneration, fldPath.Child("observedGeneration"))
	for _, counter := range []struct {
		name  string
		value int32
	}{
		{"replicas", status.Replicas},
		{"readyReplicas", status.ReadyReplicas},
		{"updatedReplicas", status.UpdatedReplicas},
		{"updatedReadyReplicas", status.UpdatedReadyReplicas},
		{"availableReplicas", status.AvailableReplicas},
	} {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(counter.value), fldPath.Child(counter.name))...)
	}
	allErrs = append(allErrs, validateStatusCounterBounds(status, fldPath)...)
	statusesPath := fldPath.Child("statuses")
	known := sets.New(SupportedInstanceStatuses...)
	ids := sortedKeys(status.Statuses)
	allErrs = append(allErrs, ValidateInstanceKeys(ids, statusesPath)...)
	for _, id := range ids {
		if _, ok := parseInstanceID(id); ok && !known.Has(string(status.Statuses[id])) {
			allErrs = append(allErrs, field.NotSupported(statusesPath.Key(id), status.Statuses[id], SupportedInstanceStatuses))
		}
	}
	if status.AppStatus != "" && !sets.New(SupportedAppStatuses...).Has(string(status.AppStatus)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("appStatus"), status.AppStatus, SupportedAppStatuses))
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))...)
	allErrs = append(allErrs, validateVolumeClaimStatuses(status.VolumeClaims, fldPath.Child("volumeClaims"))...)
	if status.CollisionCount != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*status.CollisionCount), fldPath.Child("collisionCount"))...)
	}
	for _, revision := range []struct {
		name  string
		value string
	}{
		{"currentRevision", status.CurrentRevision},
		{"updateRevision", status.UpdateRevision},
	} {
		if revision.value == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(revision.value) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(revision.name), revision.value, msg))
		}
	}
	return allErrs
}

// Messages of the status counter bounds, as the core API words them for StatefulSets.
const (
	aboveReplicasMsg = "cannot be greater than status.replicas"
	aboveReadyMsg    = "cannot be greater than status.readyReplicas"
)

// validateStatusCounterBounds checks what the counters mean: every instance counted ready, available, updated
// or updated and ready is one of status.replicas, and an available instance is a ready one. The controller
// computes them so (pkg/controller/tapp/policy computeStatus); a client writing the status must too, as the
// core API requires of a StatefulSet's status.
func validateStatusCounterBounds(status *tkestack.TAppStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, counter := range []struct {
		name  string
		value int32
	}{
		{"readyReplicas", status.ReadyReplicas},
		{"updatedReplicas", status.UpdatedReplicas},
		{"updatedReadyReplicas", status.UpdatedReadyReplicas},
		{"availableReplicas", status.AvailableReplicas},
	} {
		if counter.value > status.Replicas {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(counter.name), counter.value, aboveReplicasMsg))
		}
	}
	if status.AvailableReplicas > status.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), status.AvailableReplicas, aboveReadyMsg))
	}
	return allErrs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}
