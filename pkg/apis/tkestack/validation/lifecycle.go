package validation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// MaxLifecycleHandlers bounds the labels and the finalizers of one lifecycle hook (each).
const MaxLifecycleHandlers = 16

// controllerLabels are the pod labels the controller writes itself: a hook cannot wait on them.
var controllerLabels = sets.New(tkestack.LifecycleStateLabel, tkestack.InstanceIDLabel, tkestack.TemplateHashLabel,
	tkestack.UniqHashLabel, tkestack.ControllerRevisionHashLabel)

// validateLifecycle checks spec.lifecycle: every hook set has at least one label or finalizer, at most
// MaxLifecycleHandlers of each; label keys and values are valid label keys and values, and not a label the
// controller writes; finalizers are qualified names (as metadata.finalizers requires), each listed once.
//
// A label of labelsHandler must not be one spec.selector uses: the drain tool removing it would release the pod
// from the TApp instead of releasing the hook (a selector left out is defaulted from the template's labels,
// hook label included: give spec.selector explicitly).
func validateLifecycle(lifecycle *tkestack.TAppLifecycle, selector *metav1.LabelSelector, fldPath *field.Path) field.ErrorList {
	if lifecycle == nil {
		return nil
	}
	selectorKeys := sets.New[string]()
	if selector != nil {
		for k := range selector.MatchLabels {
			selectorKeys.Insert(k)
		}
		for _, e := range selector.MatchExpressions {
			selectorKeys.Insert(e.Key)
		}
	}
	allErrs := validateLifecycleHook(lifecycle.PreDelete, selectorKeys, fldPath.Child("preDelete"))
	return append(allErrs, validateLifecycleHook(lifecycle.InPlaceUpdate, selectorKeys, fldPath.Child("inPlaceUpdate"))...)
}

func validateLifecycleHook(hook *tkestack.LifecycleHook, selectorKeys sets.Set[string], fldPath *field.Path) field.ErrorList {
	if hook == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(hook.LabelsHandler) == 0 && len(hook.FinalizersHandler) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "a hook needs at least one label in labelsHandler or one finalizer in finalizersHandler"))
	}
	labelsPath := fldPath.Child("labelsHandler")
	if len(hook.LabelsHandler) > MaxLifecycleHandlers {
		allErrs = append(allErrs, field.TooMany(labelsPath, len(hook.LabelsHandler), MaxLifecycleHandlers))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabels(hook.LabelsHandler, labelsPath)...)
	for _, k := range sortedKeys(hook.LabelsHandler) {
		if controllerLabels.Has(k) {
			allErrs = append(allErrs, field.Invalid(labelsPath.Key(k), k, "is a label the TApp controller writes itself"))
		}
		if selectorKeys.Has(k) {
			allErrs = append(allErrs, field.Invalid(labelsPath.Key(k), k,
				"is used by spec.selector: removing it would release the pod from the TApp; set spec.selector without it (a selector left out takes every label of the template)"))
		}
	}
	finalizersPath := fldPath.Child("finalizersHandler")
	if len(hook.FinalizersHandler) > MaxLifecycleHandlers {
		allErrs = append(allErrs, field.TooMany(finalizersPath, len(hook.FinalizersHandler), MaxLifecycleHandlers))
	}
	seen := sets.New[string]()
	for i, f := range hook.FinalizersHandler {
		for _, msg := range validation.IsQualifiedName(f) {
			allErrs = append(allErrs, field.Invalid(finalizersPath.Index(i), f, msg))
		}
		if seen.Has(f) {
			allErrs = append(allErrs, field.Duplicate(finalizersPath.Index(i), f))
		}
		seen.Insert(f)
	}
	return allErrs
}
