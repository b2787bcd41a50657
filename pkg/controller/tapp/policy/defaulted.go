package policy

import (
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// Undefaulted returns the paths of the fields of tapp that the API's defaulting (SetDefaults_TAppSpec in
// pkg/apis/tkestack/v1) always sets and that are missing. The API server defaults every TApp it stores and
// serves, so the policy decides on defaulted TApps only and never fills in a default of its own: the
// controller refuses to plan for a TApp this returns anything for.
func Undefaulted(tapp *tkestackv1.TApp) []string {
	var missing []string
	spec := &tapp.Spec
	if spec.DefaultTemplateName == "" {
		missing = append(missing, "spec.defaultTemplateName")
	}
	if spec.UpdateStrategy.Template == "" {
		missing = append(missing, "spec.updateStrategy.template")
	}
	if spec.UpdateStrategy.MaxUnavailable == nil {
		missing = append(missing, "spec.updateStrategy.maxUnavailable")
	}
	if spec.UpdateStrategy.ForceUpdate.MaxUnavailable == nil {
		missing = append(missing, "spec.updateStrategy.forceUpdate.maxUnavailable")
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted == "" || p.WhenScaled == "" {
		missing = append(missing, "spec.persistentVolumeClaimRetentionPolicy")
	}
	if spec.PodManagementPolicy == "" {
		missing = append(missing, "spec.podManagementPolicy")
	}
	if spec.RevisionHistoryLimit == nil {
		missing = append(missing, "spec.revisionHistoryLimit")
	}
	return missing
}
