package v1

// Condition types of a TApp's status.conditions. The controller (pkg/controller/tapp) sets them; the reasons
// it gives are declared beside it.
const (
	// TAppAvailable is True while at least (wanted instances − updateStrategy.maxUnavailable) are ready
	// (available, with spec.minReadySeconds).
	TAppAvailable = "Available"
	// TAppProgressing is True; its reason says whether the TApp is RolloutComplete (every wanted instance
	// runs its current template and is ready) or RolloutInProgress. It is False with reason
	// ProgressDeadlineExceeded once a rollout made no progress for spec.progressDeadlineSeconds.
	TAppProgressing = "Progressing"
	// TAppPaused is True while spec.updateStrategy.paused holds the rollout; Progressing is then Unknown with
	// reason RolloutPaused.
	TAppPaused = "Paused"
	// TAppReplicaFailure is True while an action fails (pod creation refused by the API, a foreign pod
	// holding an instance's name, a missing template); its message is the API's message.
	TAppReplicaFailure = "ReplicaFailure"
)

// TAppVolumeClaimsUpdated is set while spec.volumeClaimUpdateStrategy.type is set: True (reason Updated)
// when every wanted instance's claims match their templates and are ready; False with reason Updating while
// claims are being created, resized or recreated, ExpansionNotAllowed when a claim's storage class does not
// allow volume expansion, ResizeFailed when a resize fails, Incompatible when a claim no longer matches its
// template and the strategy refuses to recreate it.
const TAppVolumeClaimsUpdated = "VolumeClaimsUpdated"
