package validation

import (
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// SupportedVolumeClaimUpdateStrategyTypes are the values of spec.volumeClaimUpdateStrategy.type (besides
// unset).
var SupportedVolumeClaimUpdateStrategyTypes = []string{
	string(tkestack.OnPodRollingUpdateVolumeClaimUpdateStrategyType), string(tkestack.OnDeleteVolumeClaimUpdateStrategyType),
}

// SupportedVolumeClaimIncompatibleChangePolicies are the values of
// spec.volumeClaimUpdateStrategy.onIncompatibleChange (besides unset, which means Refuse).
var SupportedVolumeClaimIncompatibleChangePolicies = []string{
	string(tkestack.RefuseVolumeClaimIncompatibleChange), string(tkestack.RecreateVolumeClaimIncompatibleChange),
}

// incompatibleClaimChangeMsg is the message of a refused claim template change.
const incompatibleClaimChangeMsg = "existing claims cannot follow this change of a claim template (only a storage increase can be applied to them); " +
	"set spec.volumeClaimUpdateStrategy.onIncompatibleChange to Recreate to delete and recreate the claims (their data is lost), " +
	"or give the template a new name"

// validateVolumeClaimUpdateStrategy checks the values of spec.volumeClaimUpdateStrategy; the API stores them as
// written (no default).
func validateVolumeClaimUpdateStrategy(s *tkestack.TAppVolumeClaimUpdateStrategy, fldPath *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var allErrs field.ErrorList
	if s.Type != "" && !sets.New(SupportedVolumeClaimUpdateStrategyTypes...).Has(string(s.Type)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), s.Type, SupportedVolumeClaimUpdateStrategyTypes))
	}
	if s.OnIncompatibleChange != "" && !sets.New(SupportedVolumeClaimIncompatibleChangePolicies...).Has(string(s.OnIncompatibleChange)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("onIncompatibleChange"), s.OnIncompatibleChange, SupportedVolumeClaimIncompatibleChangePolicies))
	}
	return allErrs
}

// validateClaimTemplateUpdate refuses, when the new spec's volumeClaimUpdateStrategy has a type and does not
// say onIncompatibleChange: Recreate, any change of a claim template present in both specs (by name) other
// than a storage increase: existing claims could not follow it. Each error names the field that changed.
// Adding and removing templates is allowed, and so is a change of a template's metadata.
func validateClaimTemplateUpdate(newSpec, oldSpec *tkestack.TAppSpec, fldPath *field.Path) field.ErrorList {
	s := newSpec.VolumeClaimUpdateStrategy
	if s == nil || s.Type == "" || s.OnIncompatibleChange == tkestack.RecreateVolumeClaimIncompatibleChange {
		return nil
	}
	old := make(map[string]*corev1.PersistentVolumeClaimSpec, len(oldSpec.VolumeClaimTemplates))
	for i := range oldSpec.VolumeClaimTemplates {
		old[oldSpec.VolumeClaimTemplates[i].Name] = &oldSpec.VolumeClaimTemplates[i].Spec
	}
	var allErrs field.ErrorList
	for i := range newSpec.VolumeClaimTemplates {
		t := &newSpec.VolumeClaimTemplates[i]
		if prev, ok := old[t.Name]; ok {
			allErrs = append(allErrs, incompatibleClaimChanges(&t.Spec, prev, fldPath.Index(i).Child("spec"))...)
		}
	}
	return allErrs
}

// incompatibleClaimChanges returns one error per field of cur that differs from prev in a way an existing
// claim cannot follow.
func incompatibleClaimChanges(cur, prev *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	immutable := func(name string, a, b any) {
		if !equality.Semantic.DeepEqual(a, b) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(name), a, incompatibleClaimChangeMsg))
		}
	}
	immutable("storageClassName", cur.StorageClassName, prev.StorageClassName)
	immutable("accessModes", cur.AccessModes, prev.AccessModes)
	immutable("volumeMode", cur.VolumeMode, prev.VolumeMode)
	immutable("selector", cur.Selector, prev.Selector)
	immutable("volumeName", cur.VolumeName, prev.VolumeName)
	immutable("dataSource", cur.DataSource, prev.DataSource)
	immutable("dataSourceRef", cur.DataSourceRef, prev.DataSourceRef)
	immutable("volumeAttributesClassName", cur.VolumeAttributesClassName, prev.VolumeAttributesClassName)
	storagePath := fldPath.Child("resources", "requests").Key(string(corev1.ResourceStorage))
	newStorage, hasNew := cur.Resources.Requests[corev1.ResourceStorage]
	oldStorage, hasOld := prev.Resources.Requests[corev1.ResourceStorage]
	if hasNew && hasOld && newStorage.Cmp(oldStorage) < 0 {
		allErrs = append(allErrs, field.Invalid(storagePath, newStorage.String(),
			"must not be less than the previous request "+oldStorage.String()+": claims cannot shrink; "+incompatibleClaimChangeMsg))
	}
	// Any other change of the resources (other requests, limits).
	curRes, prevRes := cur.Resources.DeepCopy(), prev.Resources.DeepCopy()
	delete(curRes.Requests, corev1.ResourceStorage)
	delete(prevRes.Requests, corev1.ResourceStorage)
	if len(curRes.Requests) == 0 {
		curRes.Requests = nil
	}
	if len(prevRes.Requests) == 0 {
		prevRes.Requests = nil
	}
	if !equality.Semantic.DeepEqual(curRes, prevRes) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("resources"), "", "only resources.requests[storage] may change, and only upwards: "+incompatibleClaimChangeMsg))
	}
	return allErrs
}

// validateVolumeClaimStatuses checks status.volumeClaims: a template name, no duplicates, non-negative counts,
// and ready claims among the compatible ones.
func validateVolumeClaimStatuses(statuses []tkestack.TAppVolumeClaimStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, s := range statuses {
		p := fldPath.Index(i)
		switch {
		case s.VolumeClaimName == "":
			allErrs = append(allErrs, field.Required(p.Child("volumeClaimName"), ""))
		case seen.Has(s.VolumeClaimName):
			allErrs = append(allErrs, field.Duplicate(p.Child("volumeClaimName"), s.VolumeClaimName))
		}
		seen.Insert(s.VolumeClaimName)
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(s.CompatibleReplicas), p.Child("compatibleReplicas"))...)
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(s.CompatibleReadyReplicas), p.Child("compatibleReadyReplicas"))...)
		if s.CompatibleReadyReplicas > s.CompatibleReplicas {
			allErrs = append(allErrs, field.Invalid(p.Child("compatibleReadyReplicas"), s.CompatibleReadyReplicas, "cannot be greater than compatibleReplicas"))
		}
	}
	return allErrs
}
