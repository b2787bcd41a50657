package tkestack

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Well-known names and defaults of the TApp API.
const (
	// DefaultTemplateName is the template name that refers to spec.template.
	DefaultTemplateName = "default"
	// DefaultMaxUnavailable is the default rolling-update budget.
	DefaultMaxUnavailable = 1
	// DefaultForceUpdateMaxUnavailable is the default budget for instances pinned to other templates.
	DefaultForceUpdateMaxUnavailable = "100%"
	// DefaultRevisionHistoryLimit is the default spec.revisionHistoryLimit.
	DefaultRevisionHistoryLimit = 10
	// MaxReplicas bounds spec.replicas and every instance id.
	MaxReplicas = 100000

	// InstanceIDLabel maps a pod to its instance id.
	InstanceIDLabel = "tapp_instance_key"
	// TemplateHashLabel carries the hash of the pod's whole template.
	TemplateHashLabel = "tapp_template_hash_key"
	// UniqHashLabel carries the hash of the pod's template spec without images.
	UniqHashLabel = "tapp_uniq_hash_key"
	// ControllerRevisionHashLabel on a pod names the ControllerRevision its templates come from, as on a
	// StatefulSet's pods.
	ControllerRevisionHashLabel = "controller-revision-hash"
	// InPlaceUpdateReadinessGate is the readiness gate the in-place update engine drives.
	InPlaceUpdateReadinessGate = "tkestack.io/InPlaceUpdate"
	// LifecycleStateLabel on a pod of a TApp with spec.lifecycle says where the pod is in its lifecycle hooks:
	// one of the LifecycleState values.
	LifecycleStateLabel = "tkestack.io/lifecycle-state"
	// PreDeleteFinalizer is on a TApp with spec.lifecycle.preDelete: it keeps the TApp until its pods have
	// gone through the hook (background deletion), or at once for orphan and foreground deletion.
	PreDeleteFinalizer = "apps.tkestack.io/lifecycle-pre-delete"
)

// InstanceStatus is the state of one instance.
type InstanceStatus string

// Instance states. Only InstanceKilled has a meaning in spec.statuses.
const (
	InstanceNotCreated InstanceStatus = "NotCreated"
	InstancePending    InstanceStatus = "Pending"
	InstanceRunning    InstanceStatus = "Running"
	InstanceUpdating   InstanceStatus = "Updating"
	InstancePodFailed  InstanceStatus = "PodFailed"
	InstancePodSucc    InstanceStatus = "PodSucc"
	InstanceKilling    InstanceStatus = "Killing"
	InstanceKilled     InstanceStatus = "Killed"
	InstanceFailed     InstanceStatus = "Failed"
	InstanceSucc       InstanceStatus = "Succ"
	InstanceUnknown    InstanceStatus = "Unknown"
)

// AppStatus summarises a TApp.
type AppStatus string

// TApp states.
const (
	AppPending AppStatus = "Pending"
	AppRunning AppStatus = "Running"
	AppFailed  AppStatus = "Failed"
	AppSucc    AppStatus = "Succ"
	AppKilled  AppStatus = "Killed"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TApp is a set of pods with stable identities and per-instance templates.
type TApp struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   TAppSpec
	Status TAppStatus
}

// TAppSpec is the desired state of a TApp.
type TAppSpec struct {
	Replicas int32
	Selector *metav1.LabelSelector
	// Template is a pointer here, unlike in the served versions, so that the watch cache's TApps share one
	// copy of an equal template (pkg/interning) instead of each holding its own inline. Conversion from a
	// served version always sets it; code that builds a TApp by hand may leave it nil, which reads as empty.
	Template                 *corev1.PodTemplateSpec
	TemplatePool             map[string]corev1.PodTemplateSpec
	Statuses                 map[string]InstanceStatus
	Templates                map[string]string
	UpdateStrategy           TAppUpdateStrategy
	ForceDeletePod           bool
	AutoDeleteUnusedTemplate bool
	NeverMigrate             bool
	VolumeClaimTemplates     []corev1.PersistentVolumeClaim
	ServiceName              string
	DefaultTemplateName      string
	// LegacyDefaultTemplateName holds the value of the capitalised key "DefaultTemplateName"
	// used by old manifests. Defaulting moves it to DefaultTemplateName; it is never stored.
	LegacyDefaultTemplateName string
	RevisionHistoryLimit      *int32
	MinReadySeconds           int32
	// PersistentVolumeClaimRetentionPolicy says what happens to the claims of volumeClaimTemplates when the
	// TApp is deleted or an instance is scaled away.
	PersistentVolumeClaimRetentionPolicy *TAppPersistentVolumeClaimRetentionPolicy
	// VolumeClaimUpdateStrategy says whether the existing claims follow changes of volumeClaimTemplates;
	// nil (or an empty type) means they do not.
	VolumeClaimUpdateStrategy *TAppVolumeClaimUpdateStrategy
	// PodManagementPolicy is Parallel (default) or OrderedReady.
	PodManagementPolicy PodManagementPolicyType
	// ProgressDeadlineSeconds is how long a rollout may go without progress before Progressing turns False
	// with reason ProgressDeadlineExceeded; nil means no deadline.
	ProgressDeadlineSeconds *int32
	// SpreadPolicy is Spread (also when empty) or None: whether the controller adds soft topology spread
	// constraints to pods whose template has none.
	SpreadPolicy SpreadPolicyType
	// Lifecycle holds the preDelete and inPlaceUpdate hooks; nil means none.
	Lifecycle *TAppLifecycle
}

// TAppLifecycle holds the lifecycle hooks of a TApp's pods.
type TAppLifecycle struct {
	PreDelete     *LifecycleHook
	InPlaceUpdate *LifecycleHook
}

// LifecycleHook holds a pod while it carries any of LabelsHandler's labels (with that value) or any of
// FinalizersHandler's finalizers; MarkPodNotReady turns its readiness gate False before the wait.
type LifecycleHook struct {
	LabelsHandler     map[string]string
	FinalizersHandler []string
	MarkPodNotReady   bool
}

// Lifecycle states: the values of LifecycleStateLabel.
const (
	// LifecycleStateNormal: no hook is in progress.
	LifecycleStateNormal = "Normal"
	// LifecycleStatePreparingUpdate: the pod waits for its inPlaceUpdate hook before an in-place update.
	LifecycleStatePreparingUpdate = "PreparingUpdate"
	// LifecycleStateUpdating: the pod is being updated in place.
	LifecycleStateUpdating = "Updating"
	// LifecycleStateUpdated: the pod's in-place update is done; it turns Normal once the pod is hooked again.
	LifecycleStateUpdated = "Updated"
	// LifecycleStatePreparingDelete: the pod waits for its preDelete hook before it is deleted.
	LifecycleStatePreparingDelete = "PreparingDelete"
)

// SpreadPolicyType says whether the instances of a TApp are spread over nodes and zones by default.
type SpreadPolicyType string

const (
	// SpreadPolicySpread adds soft topology spread constraints over nodes (and zones) to the pods whose
	// template has none. An empty policy means Spread.
	SpreadPolicySpread SpreadPolicyType = "Spread"
	// SpreadPolicyNone adds none: the pods are scheduled by their template alone.
	SpreadPolicyNone SpreadPolicyType = "None"
)

// PodManagementPolicyType says how instances are created and removed: Parallel or OrderedReady.
type PodManagementPolicyType string

const (
	// ParallelPodManagement creates and removes instances all at once.
	ParallelPodManagement PodManagementPolicyType = "Parallel"
	// OrderedReadyPodManagement creates instances in ascending id order, each once the lower ones are
	// Running and Ready, and removes them in descending order, one at a time.
	OrderedReadyPodManagement PodManagementPolicyType = "OrderedReady"
)

// PersistentVolumeClaimRetentionPolicyType is what happens to a claim: Retain or Delete.
type PersistentVolumeClaimRetentionPolicyType string

const (
	// RetainPersistentVolumeClaimRetentionPolicyType keeps the claim.
	RetainPersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Retain"
	// DeletePersistentVolumeClaimRetentionPolicyType lets the garbage collector delete the claim with its owner.
	DeletePersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Delete"
)

// TAppPersistentVolumeClaimRetentionPolicy is the lifecycle of the claims of volumeClaimTemplates.
type TAppPersistentVolumeClaimRetentionPolicy struct {
	WhenDeleted PersistentVolumeClaimRetentionPolicyType
	WhenScaled  PersistentVolumeClaimRetentionPolicyType
}

// VolumeClaimUpdateStrategyType says when existing claims follow their templates.
type VolumeClaimUpdateStrategyType string

const (
	// OnPodRollingUpdateVolumeClaimUpdateStrategyType: the claims follow through the rolling update.
	OnPodRollingUpdateVolumeClaimUpdateStrategyType VolumeClaimUpdateStrategyType = "OnPodRollingUpdate"
	// OnDeleteVolumeClaimUpdateStrategyType: the claims follow when the instance's pod is created again.
	OnDeleteVolumeClaimUpdateStrategyType VolumeClaimUpdateStrategyType = "OnDelete"
)

// VolumeClaimIncompatibleChangePolicy says what happens to claims whose template changed incompatibly.
type VolumeClaimIncompatibleChangePolicy string

const (
	// RefuseVolumeClaimIncompatibleChange refuses the change (an empty value means Refuse).
	RefuseVolumeClaimIncompatibleChange VolumeClaimIncompatibleChangePolicy = "Refuse"
	// RecreateVolumeClaimIncompatibleChange recreates the claims (and their pods).
	RecreateVolumeClaimIncompatibleChange VolumeClaimIncompatibleChangePolicy = "Recreate"
)

// TAppVolumeClaimUpdateStrategy says how the existing claims follow spec.volumeClaimTemplates.
type TAppVolumeClaimUpdateStrategy struct {
	Type                 VolumeClaimUpdateStrategyType
	OnIncompatibleChange VolumeClaimIncompatibleChangePolicy
}

// TAppUpdateStrategy describes how template changes roll out.
type TAppUpdateStrategy struct {
	Template       string
	MaxUnavailable *intstr.IntOrString
	ForceUpdate    ForceUpdateStrategy
	Paused         bool
	Partition      int32
}

// ForceUpdateStrategy bounds updates of instances pinned to templates other than the rolling one.
type ForceUpdateStrategy struct {
	MaxUnavailable *intstr.IntOrString
}

// TAppStatus is the observed state of a TApp.
type TAppStatus struct {
	ObservedGeneration   int64
	Replicas             int32
	ReadyReplicas        int32
	UpdatedReplicas      int32
	UpdatedReadyReplicas int32
	ScaleLabelSelector   string
	AppStatus            AppStatus
	Statuses             map[string]InstanceStatus
	Conditions           []metav1.Condition
	CurrentRevision      string
	UpdateRevision       string
	CollisionCount       *int32
	AvailableReplicas    int32
	// LastProgressTime is when the rollout last made progress; kept only while spec.progressDeadlineSeconds
	// is set.
	LastProgressTime *metav1.Time
	// VolumeClaims reports per claim template the instances whose claim matches it.
	VolumeClaims []TAppVolumeClaimStatus
}

// TAppVolumeClaimStatus is the state of the instances' claims of one claim template.
type TAppVolumeClaimStatus struct {
	VolumeClaimName         string
	CompatibleReplicas      int32
	CompatibleReadyReplicas int32
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TAppList is a list of TApps.
type TAppList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []TApp
}
