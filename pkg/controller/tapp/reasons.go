package tapp

// Reasons of the TApp controller's Events and of the failures it reports in ReplicaFailure (the reasons of
// the conditions the policy decides are policy's). Other packages refer to them here rather than repeat the strings.
const (
	// ReasonUndefaulted: the TApp lacks fields the API server always defaults; nothing is planned for it.
	ReasonUndefaulted = "Undefaulted"
	// ReasonInstanceConflict: an instance's pod or claim name is held by an object that is not the TApp's.
	ReasonInstanceConflict = "InstanceConflict"
	// ReasonTemplateNotFound: an instance names a template that spec.templatePool does not have.
	ReasonTemplateNotFound = "TemplateNotFound"
	// ReasonFailedCreate: a pod or claim create failed.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulCreate: a pod or claim was created.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedDelete: a pod delete failed.
	ReasonFailedDelete = "FailedDelete"
	// ReasonSuccessfulDelete: a pod was deleted.
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// ReasonForceDeleted: a pod on a lost node was deleted without grace.
	ReasonForceDeleted = "ForceDeleted"
	// ReasonKilling: an instance is killed (spec.statuses).
	ReasonKilling = "Killing"
	// ReasonResizeInfeasible: a pod is recreated because the kubelet refused to resize it in place.
	ReasonResizeInfeasible = "ResizeInfeasible"
	// ReasonRecreating: a pod is recreated because its change cannot be applied in place.
	ReasonRecreating = "Recreating"
	// ReasonMigrating: a finished pod is recreated.
	ReasonMigrating = "Migrating"
	// ReasonFailedUpdate: an in-place update or readiness-gate write failed.
	ReasonFailedUpdate = "FailedUpdate"
	// ReasonInPlaceUpdate: a pod is being updated in place.
	ReasonInPlaceUpdate = "InPlaceUpdate"
	// ReasonInPlaceUpdated: a pod runs its new images.
	ReasonInPlaceUpdated = "InPlaceUpdated"
	// ReasonInPlaceUpdateFailed: the kubelet reports an in-place update failing.
	ReasonInPlaceUpdateFailed = "InPlaceUpdateFailed"
	// ReasonRelabelled: a pod got the current hash labels without a restart.
	ReasonRelabelled = "Relabelled"
	// ReasonAdopted: an orphan pod or claim was adopted.
	ReasonAdopted = "Adopted"
	// ReasonReleased: a pod or claim the selector no longer matches was released.
	ReasonReleased = "Released"
	// ReasonFailedAdopt: adopting an orphan failed.
	ReasonFailedAdopt = "FailedAdopt"
	// ReasonFailedRelease: releasing a pod or claim failed.
	ReasonFailedRelease = "FailedRelease"
	// ReasonClaimOwnerAdded: a claim got its owner reference (persistentVolumeClaimRetentionPolicy).
	ReasonClaimOwnerAdded = "ClaimOwnerAdded"
	// ReasonFailedClaimOwner: setting the owner of a claim failed.
	ReasonFailedClaimOwner = "FailedClaimOwner"
	// ReasonTemplatesPruned: unused templates were removed from spec.templatePool.
	ReasonTemplatesPruned = "TemplatesPruned"
	// ReasonClaimExpanding: a claim's storage request was raised to its template's
	// (spec.volumeClaimUpdateStrategy).
	ReasonClaimExpanding = "ClaimExpanding"
	// ReasonFailedClaimExpansion: raising a claim's storage request failed (other than a refusal of the
	// expansion itself).
	ReasonFailedClaimExpansion = "FailedClaimExpansion"
	// ReasonExpansionNotAllowed: a claim cannot be expanded: its storage class does not allow it (the
	// VolumeClaimsUpdated condition turned ExpansionNotAllowed, or the API server refused the patch).
	ReasonExpansionNotAllowed = "ExpansionNotAllowed"
	// ReasonClaimResizeFailed: a claim's resize failed (the VolumeClaimsUpdated condition turned ResizeFailed).
	ReasonClaimResizeFailed = "ClaimResizeFailed"
	// ReasonClaimsIncompatible: claims no longer match their templates and the strategy refuses to recreate
	// them (the VolumeClaimsUpdated condition turned Incompatible).
	ReasonClaimsIncompatible = "ClaimsIncompatible"
	// ReasonRecreatingForClaims: a pod is recreated to mount a new claim template's claim, or with claims
	// being recreated.
	ReasonRecreatingForClaims = "RecreatingForClaims"
	// ReasonClaimRecreating: a claim that no longer matches its template is deleted to be created again
	// (onIncompatibleChange: Recreate).
	ReasonClaimRecreating = "ClaimRecreating"
	// ReasonFailedClaimDelete: deleting such a claim failed.
	ReasonFailedClaimDelete = "FailedClaimDelete"
	// ReasonWaitingForPreDeleteHook: a pod to delete waits for its preDelete hook (spec.lifecycle) to be released.
	ReasonWaitingForPreDeleteHook = "WaitingForPreDeleteHook"
	// ReasonWaitingForInPlaceUpdateHook: a pod to update in place waits for its inPlaceUpdate hook to be released.
	ReasonWaitingForInPlaceUpdateHook = "WaitingForInPlaceUpdateHook"
	// ReasonPreDeleteHookSkipped: the TApp is deleted with orphan or foreground propagation, so no preDelete hook
	// runs for its pods.
	ReasonPreDeleteHookSkipped = "PreDeleteHookSkipped"
)
