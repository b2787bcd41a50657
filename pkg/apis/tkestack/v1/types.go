package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// InstanceStatus is the state of one instance. In spec.statuses only "Killed" is accepted: it stops the
// instance and keeps it down. In status.statuses the values are NotCreated, Pending, Running, Updating,
// PodFailed, PodSucc, Killing, Killed, Failed, Succ and Unknown.
type InstanceStatus string

// AppStatus summarises a TApp: Pending, Running, Failed, Succ or Killed.
type AppStatus string

// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TApp runs a set of pods with stable identities <name>-<id>. Every instance can use its own template
// from a pool, be killed and brought back individually, and is updated in place when only images change.
type TApp struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec defines the desired instances of this TApp.
	// +optional
	Spec TAppSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`

	// Status is the observed state of the instances. It may lag behind the spec.
	// +optional
	Status TAppStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// TAppSpec is the desired state of a TApp.
type TAppSpec struct {
	// Replicas is the desired number of instances; instance ids are 0..replicas-1. Killed instances keep
	// their id and count towards replicas. Omitted, it is 0 (always written out, even when 0).
	// +optional
	Replicas int32 `json:"replicas" protobuf:"varint,1,opt,name=replicas"`

	// Selector is a label query over the pods of this TApp. Defaults to the labels of spec.template.
	// It must match the labels of spec.template and of every templatePool entry, and cannot be changed.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`

	// Template is the pod template named "default". Instances use it unless spec.templates or
	// spec.defaultTemplateName name a templatePool entry.
	Template corev1.PodTemplateSpec `json:"template" protobuf:"bytes,3,opt,name=template"`

	// TemplatePool holds named pod templates. The name "default" is reserved for spec.template.
	// +optional
	TemplatePool map[string]corev1.PodTemplateSpec `json:"templatePool,omitempty" protobuf:"bytes,4,rep,name=templatePool"`

	// Statuses holds the desired state of single instances, keyed by instance id. The only value is
	// "Killed": the instance's pod is deleted and kept down. Remove the entry to bring it back.
	// +optional
	Statuses map[string]InstanceStatus `json:"statuses,omitempty" protobuf:"bytes,5,rep,name=statuses,castvalue=InstanceStatus"`

	// Templates maps an instance id to the name of the template it runs ("default" or a templatePool key).
	// Instances not listed run spec.defaultTemplateName.
	// +optional
	Templates map[string]string `json:"templates,omitempty" protobuf:"bytes,6,rep,name=templates"`

	// UpdateStrategy names the rolling-update template and bounds how many instances update at once.
	// +optional
	UpdateStrategy TAppUpdateStrategy `json:"updateStrategy,omitempty" protobuf:"bytes,7,opt,name=updateStrategy"`

	// ForceDeletePod force-deletes (grace period 0) terminating pods whose node is lost, so they can be recreated.
	// +optional
	ForceDeletePod bool `json:"forceDeletePod,omitempty" protobuf:"varint,8,opt,name=forceDeletePod"`

	// AutoDeleteUnusedTemplate removes templatePool entries that no instance, the default template name
	// nor the update strategy references. The removal cannot be undone.
	// +optional
	AutoDeleteUnusedTemplate bool `json:"autoDeleteUnusedTemplate,omitempty" protobuf:"varint,9,opt,name=autoDeleteUnusedTemplate"`

	// NeverMigrate keeps finished pods where they are instead of recreating them, whatever their restartPolicy.
	// +optional
	NeverMigrate bool `json:"neverMigrate,omitempty" protobuf:"varint,10,opt,name=neverMigrate"`

	// VolumeClaimTemplates are claims every instance gets its own copy of, named <claim>-<tapp>-<id>.
	// Each claim must be mounted by name in the pod templates that use it. Claims are kept when an
	// instance is killed or scaled away.
	// +optional
	// +listType=atomic
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty" protobuf:"bytes,11,rep,name=volumeClaimTemplates"`

	// ServiceName is the headless Service that governs the pods' network identity. When set, every pod
	// gets hostname <tapp>-<id> and subdomain serviceName.
	// +optional
	ServiceName string `json:"serviceName,omitempty" protobuf:"bytes,12,opt,name=serviceName"`

	// DefaultTemplateName is the template used by instances not listed in spec.templates: "default"
	// (spec.template) or a templatePool key. Defaults to "default".
	// +optional
	DefaultTemplateName string `json:"defaultTemplateName" protobuf:"bytes,13,opt,name=defaultTemplateName"`

	// LegacyDefaultTemplateName accepts the capitalised key "DefaultTemplateName" that older TApp manifests
	// use. Its value is moved to defaultTemplateName when the object is stored, with a warning; setting both
	// to different values is an error.
	// +optional
	LegacyDefaultTemplateName string `json:"DefaultTemplateName,omitempty" protobuf:"bytes,14,opt,name=legacyDefaultTemplateName"`

	// RevisionHistoryLimit is the number of ControllerRevisions kept besides the current and the update
	// revision. Older revisions no instance uses are deleted, oldest first. Defaults to 10.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty" protobuf:"varint,15,opt,name=revisionHistoryLimit"`

	// MinReadySeconds is how long a pod must have been ready, without any of its containers crashing, to
	// count as available: in status.availableReplicas and in the maxUnavailable budgets of updates.
	// Defaults to 0 (available as soon as it is ready).
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty" protobuf:"varint,16,opt,name=minReadySeconds"`

	// PersistentVolumeClaimRetentionPolicy says what happens to the claims of volumeClaimTemplates when the
	// TApp is deleted (whenDeleted) or an instance is removed by lowering spec.replicas (whenScaled).
	// Defaults to Retain for both: claims are kept. A claim whose pod still runs is never deleted; the
	// claims of killed instances are always kept.
	// +optional
	PersistentVolumeClaimRetentionPolicy *TAppPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty" protobuf:"bytes,17,opt,name=persistentVolumeClaimRetentionPolicy"`

	// VolumeClaimUpdateStrategy says whether the existing claims of the instances follow changes of
	// spec.volumeClaimTemplates. Unset (the default), they do not: a claim is created from its template once
	// and never changed, as for a StatefulSet. With a type set:
	//   - a storage increase (spec.resources.requests[storage] of a template raised) is applied by patching
	//     each instance's claim (online expansion, no pod restarted), where the claim's storage class allows
	//     volume expansion; where it does not, or the resize fails (ControllerResizeError, NodeResizeError),
	//     the VolumeClaimsUpdated condition and an Event say so and nothing is deleted;
	//   - a new claim template gets its claim, and the pod is recreated to mount it;
	//   - any other change of a template that exists before and after the update (storage class, access
	//     modes, volume mode, selector, data source, a storage decrease...) is refused (422 naming the field),
	//     unless onIncompatibleChange is Recreate. Removing a template is allowed: the existing claims are
	//     kept, and pods created afterwards no longer mount them.
	// status.volumeClaims reports, per template, how many instances have a claim that matches it.
	// +optional
	VolumeClaimUpdateStrategy *TAppVolumeClaimUpdateStrategy `json:"volumeClaimUpdateStrategy,omitempty" protobuf:"bytes,21,opt,name=volumeClaimUpdateStrategy"`

	// PodManagementPolicy says how instances are created and removed. Parallel (the default) creates and
	// deletes all the pods that are due at once. OrderedReady creates instance n only once instances
	// 0..n-1 are Running and Ready, removes instances (scale-down, kills) in descending id order one at a
	// time, each once the previous pod is gone, and updates one instance at a time, only while every other
	// instance is Running and Ready.
	// +optional
	PodManagementPolicy PodManagementPolicyType `json:"podManagementPolicy,omitempty" protobuf:"bytes,18,opt,name=podManagementPolicy,casttype=PodManagementPolicyType"`

	// ProgressDeadlineSeconds is the number of seconds a rollout (a template change, a scale-up, instances
	// being recreated) may go without progress before the controller reports it failed: the Progressing
	// condition turns False with reason ProgressDeadlineExceeded. Progress is an instance being updated or
	// becoming ready or available, or a new update revision; the time of the last progress is
	// status.lastProgressTime. The controller keeps acting on the TApp after the deadline; the condition
	// turns True again on the next progress. Pausing the rollout (updateStrategy.paused) stops the clock,
	// and resuming starts it afresh. It must be greater than minReadySeconds. Unset (the default), there
	// is no deadline, and Progressing never turns False.
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty" protobuf:"varint,19,opt,name=progressDeadlineSeconds"`

	// SpreadPolicy says whether the instances are spread over nodes and zones by default. Spread (what an
	// unset policy means) gives every pod whose template has no topologySpreadConstraints two soft
	// constraints (whenUnsatisfiable ScheduleAnyway, maxSkew 1) over the pods spec.selector matches: one
	// with topologyKey kubernetes.io/hostname and, when nodes carry topology.kubernetes.io/zone, one with
	// that key. None adds none. The constraints are not part of the template: adding them, or changing this
	// field, never restarts a pod; they apply to pods created afterwards.
	// +optional
	SpreadPolicy SpreadPolicyType `json:"spreadPolicy,omitempty" protobuf:"bytes,20,opt,name=spreadPolicy,casttype=SpreadPolicyType"`

	// Lifecycle holds hooks that let another tool (a drainer, a traffic manager) finish its work on a pod
	// before the controller deletes or updates it. Each pod's stage is in its tkestack.io/lifecycle-state
	// label (Normal, PreparingUpdate, Updating, Updated, PreparingDelete). Unset, pods are deleted and
	// updated at once, as without hooks.
	// +optional
	Lifecycle *TAppLifecycle `json:"lifecycle,omitempty" protobuf:"bytes,22,opt,name=lifecycle"`
}

// TAppLifecycle holds the lifecycle hooks of a TApp's pods.
type TAppLifecycle struct {
	// PreDelete holds a pod before it is deleted: by a scale-down, a kill (spec.statuses), a recreation
	// for an update that cannot be applied in place, or the deletion of the TApp (background propagation
	// only). The controller labels the pod tkestack.io/lifecycle-state=PreparingDelete (and turns its
	// readiness gate False when markPodNotReady is set), waits while the pod is hooked, then deletes it.
	// +optional
	PreDelete *LifecycleHook `json:"preDelete,omitempty" protobuf:"bytes,1,opt,name=preDelete"`
	// InPlaceUpdate holds a pod before it is updated in place. The controller labels the pod
	// tkestack.io/lifecycle-state=PreparingUpdate (and turns its readiness gate False when markPodNotReady
	// is set), waits while the pod is hooked, then updates it (state Updating, then Updated once its new
	// containers run; Normal again once it is hooked again).
	// +optional
	InPlaceUpdate *LifecycleHook `json:"inPlaceUpdate,omitempty" protobuf:"bytes,2,opt,name=inPlaceUpdate"`
}

// LifecycleHook says what holds a pod: the pod is hooked while it carries any of labelsHandler's labels
// with that value, or any of finalizersHandler's finalizers. Put them in the pod template (labels) or have a
// tool add them, and have the tool remove them once it is done with the pod. At least one label or
// finalizer is required.
type LifecycleHook struct {
	// LabelsHandler are labels (key: value) that hold the pod while it carries any of them with that value.
	// They must not be labels spec.selector uses (removing one would release the pod from the TApp): give
	// spec.selector explicitly when the template carries the hook's label.
	// +optional
	LabelsHandler map[string]string `json:"labelsHandler,omitempty" protobuf:"bytes,1,rep,name=labelsHandler"`
	// FinalizersHandler are finalizers that hold the pod while it carries any of them.
	// +optional
	// +listType=set
	FinalizersHandler []string `json:"finalizersHandler,omitempty" protobuf:"bytes,2,rep,name=finalizersHandler"`
	// MarkPodNotReady turns the pod's tkestack.io/InPlaceUpdate readiness gate condition False before the
	// wait, so that the pod leaves the endpoints of its Services while it is drained. A pod whose action is
	// no longer wanted gets the condition True again.
	// +optional
	MarkPodNotReady bool `json:"markPodNotReady,omitempty" protobuf:"varint,3,opt,name=markPodNotReady"`
}

// SpreadPolicyType says whether the instances of a TApp are spread over nodes and zones by default: Spread
// or None.
// +enum
type SpreadPolicyType string

const (
	// SpreadPolicySpread adds soft topology spread constraints over nodes (and zones) to the pods whose
	// template has none. An unset policy means Spread.
	SpreadPolicySpread SpreadPolicyType = "Spread"
	// SpreadPolicyNone adds none: the pods are scheduled by their template alone.
	SpreadPolicyNone SpreadPolicyType = "None"
)

// PodManagementPolicyType says how instances are created and removed: Parallel or OrderedReady.
// +enum
type PodManagementPolicyType string

const (
	// ParallelPodManagement creates and removes instances all at once.
	ParallelPodManagement PodManagementPolicyType = "Parallel"
	// OrderedReadyPodManagement creates instances in ascending id order, each once the lower ones are
	// Running and Ready, and removes them in descending order, one at a time.
	OrderedReadyPodManagement PodManagementPolicyType = "OrderedReady"
)

// PersistentVolumeClaimRetentionPolicyType is what happens to a claim: Retain or Delete.
// +enum
type PersistentVolumeClaimRetentionPolicyType string

const (
	// RetainPersistentVolumeClaimRetentionPolicyType keeps the claim.
	RetainPersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Retain"
	// DeletePersistentVolumeClaimRetentionPolicyType lets the garbage collector delete the claim with its owner.
	DeletePersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Delete"
)

// TAppPersistentVolumeClaimRetentionPolicy is the lifecycle of the claims of volumeClaimTemplates. The
// controller expresses it with owner references on the claims, which the garbage collector follows.
type TAppPersistentVolumeClaimRetentionPolicy struct {
	// WhenDeleted is what happens to the claims when the TApp is deleted: Retain (the default) keeps them;
	// Delete makes the TApp an owner of every claim, so they are deleted with it (each once no pod uses it).
	// +optional
	WhenDeleted PersistentVolumeClaimRetentionPolicyType `json:"whenDeleted,omitempty" protobuf:"bytes,1,opt,name=whenDeleted,casttype=PersistentVolumeClaimRetentionPolicyType"`
	// WhenScaled is what happens to the claims of an instance removed because spec.replicas was lowered:
	// Retain (the default) keeps them; Delete makes the instance's pod an owner of its claims, so they are
	// deleted once the pod is gone. Claims of instances that are killed are kept.
	// +optional
	WhenScaled PersistentVolumeClaimRetentionPolicyType `json:"whenScaled,omitempty" protobuf:"bytes,2,opt,name=whenScaled,casttype=PersistentVolumeClaimRetentionPolicyType"`
}

// VolumeClaimUpdateStrategyType says when the existing claims of a TApp follow spec.volumeClaimTemplates:
// OnPodRollingUpdate or OnDelete.
// +enum
type VolumeClaimUpdateStrategyType string

const (
	// OnPodRollingUpdateVolumeClaimUpdateStrategyType: the claims follow the templates through the rolling
	// update, within the budgets of spec.updateStrategy (maxUnavailable for instances on the rolling
	// template, forceUpdate.maxUnavailable for the others), in ascending id order, and not while paused nor
	// below the partition. An instance whose claim is being resized (or whose resize failed, until it
	// recovers) counts as unavailable, so at most maxUnavailable instances resize at once.
	OnPodRollingUpdateVolumeClaimUpdateStrategyType VolumeClaimUpdateStrategyType = "OnPodRollingUpdate"
	// OnDeleteVolumeClaimUpdateStrategyType: the claims of an instance follow the templates only when its pod
	// is created again for another reason (deleted by a user, recreated by an update, revived after Killed):
	// before the new pod is created, a missing claim is created, a storage increase is patched and, with
	// onIncompatibleChange Recreate, an incompatible claim is deleted and created again.
	OnDeleteVolumeClaimUpdateStrategyType VolumeClaimUpdateStrategyType = "OnDelete"
)

// VolumeClaimIncompatibleChangePolicy says what happens to a claim whose template changed in a way an
// existing claim cannot follow: Refuse or Recreate.
// +enum
type VolumeClaimIncompatibleChangePolicy string

const (
	// RefuseVolumeClaimIncompatibleChange refuses such a change of spec.volumeClaimTemplates (422).
	RefuseVolumeClaimIncompatibleChange VolumeClaimIncompatibleChangePolicy = "Refuse"
	// RecreateVolumeClaimIncompatibleChange accepts it, and deletes each instance's claim that no longer
	// matches its template together with its pod, when the strategy's type says the instance is updated;
	// both are then created again. The claim's data is lost.
	RecreateVolumeClaimIncompatibleChange VolumeClaimIncompatibleChangePolicy = "Recreate"
)

// TAppVolumeClaimUpdateStrategy says how the existing claims of the instances follow spec.volumeClaimTemplates.
type TAppVolumeClaimUpdateStrategy struct {
	// Type is OnPodRollingUpdate or OnDelete. Unset, the claims never follow their templates (the behaviour
	// of a TApp without this strategy), and nothing else of this strategy applies.
	// +optional
	Type VolumeClaimUpdateStrategyType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=VolumeClaimUpdateStrategyType"`

	// OnIncompatibleChange is Refuse (what an unset value means) or Recreate. Refuse: a change of a claim
	// template other than a storage increase is refused by the API server. Recreate: it is accepted, and
	// each claim that no longer matches its template is deleted with its pod and both are created again:
	// the claim's data is lost. Example: {"type": "OnPodRollingUpdate", "onIncompatibleChange": "Recreate"}.
	// +optional
	OnIncompatibleChange VolumeClaimIncompatibleChangePolicy `json:"onIncompatibleChange,omitempty" protobuf:"bytes,2,opt,name=onIncompatibleChange,casttype=VolumeClaimIncompatibleChangePolicy"`
}

// TAppUpdateStrategy controls how template changes are rolled out.
type TAppUpdateStrategy struct {
	// Template is the name of the rolling-update template. Instances running it are updated in ascending
	// id order, at most maxUnavailable at a time. Defaults to spec.defaultTemplateName.
	// +optional
	Template string `json:"template,omitempty" protobuf:"bytes,1,opt,name=template"`

	// MaxUnavailable is the number (e.g. 1) or percentage of replicas (e.g. "50%") that may be unavailable
	// during a rolling update. Defaults to 1.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty" protobuf:"bytes,2,opt,name=maxUnavailable"`

	// ForceUpdate is the budget for instances that run templates other than the rolling one.
	// +optional
	ForceUpdate ForceUpdateStrategy `json:"forceUpdate,omitempty" protobuf:"bytes,3,opt,name=forceUpdate"`

	// Paused stops the rollout: while true no instance is updated, neither by the rolling update nor by a
	// force update. Scaling up still creates instances, from the templates of status.currentRevision, and
	// killed or removed instances are still deleted. Set it back to false to resume.
	// +optional
	Paused bool `json:"paused,omitempty" protobuf:"varint,4,opt,name=paused"`

	// Partition is the lowest instance id that is updated: instances with a lower id keep the templates of
	// status.currentRevision, and are created from them when their pod is recreated, as with a
	// StatefulSet's rollingUpdate.partition. Defaults to 0 (every instance is updated).
	// +optional
	Partition int32 `json:"partition,omitempty" protobuf:"varint,5,opt,name=partition"`
}

// ForceUpdateStrategy bounds updates of instances pinned to templates other than the rolling one.
type ForceUpdateStrategy struct {
	// MaxUnavailable is the number or percentage of those instances that may be unavailable at once.
	// Defaults to "100%".
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty" protobuf:"bytes,1,opt,name=maxUnavailable"`
}

// TAppStatus is the observed state of a TApp.
type TAppStatus struct {
	// ObservedGeneration is the generation of the spec the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`

	// Replicas is the number of instances that exist (every id whose status is not NotCreated). It is the
	// value a HorizontalPodAutoscaler and kubectl scale see as the current size.
	Replicas int32 `json:"replicas" protobuf:"varint,2,opt,name=replicas"`

	// ReadyReplicas is the number of instances whose pod is Running and Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty" protobuf:"varint,3,opt,name=readyReplicas"`

	// UpdatedReplicas is the number of instances whose pod runs the current version of its template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty" protobuf:"varint,4,opt,name=updatedReplicas"`

	// UpdatedReadyReplicas is the number of updated instances that are ready.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas,omitempty" protobuf:"varint,5,opt,name=updatedReadyReplicas"`

	// ScaleLabelSelector is spec.selector as a label selector string, as used by the scale subresource.
	// +optional
	ScaleLabelSelector string `json:"scaleLabelSelector,omitempty" protobuf:"bytes,6,opt,name=scaleLabelSelector"`

	// AppStatus summarises the TApp: Pending, Running, Failed, Succ or Killed.
	// +optional
	AppStatus AppStatus `json:"appStatus,omitempty" protobuf:"bytes,7,opt,name=appStatus,casttype=AppStatus"`

	// Statuses is the observed state of every instance, keyed by instance id. The controller writes the map
	// whole, and server-side apply treats it as one field.
	// +optional
	// +mapType=atomic
	Statuses map[string]InstanceStatus `json:"statuses,omitempty" protobuf:"bytes,8,rep,name=statuses,castvalue=InstanceStatus"`

	// Conditions are the latest observations of the TApp's state, such as Progressing and Available.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,9,rep,name=conditions"`

	// CurrentRevision is the name of the ControllerRevision whose templates every instance ran before the
	// rollout to updateRevision started. It becomes updateRevision once every instance runs it.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty" protobuf:"bytes,10,opt,name=currentRevision"`

	// UpdateRevision is the name of the ControllerRevision of the current spec.template and
	// spec.templatePool.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty" protobuf:"bytes,11,opt,name=updateRevision"`

	// CollisionCount counts hash collisions of the TApp's ControllerRevision names. The controller adds it
	// to the hash to find a free name.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty" protobuf:"varint,12,opt,name=collisionCount"`

	// AvailableReplicas is the number of instances whose pod has been ready for at least
	// spec.minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty" protobuf:"varint,13,opt,name=availableReplicas"`

	// LastProgressTime is when the rollout last made progress: an instance was updated or became ready or
	// available, the update revision changed, or a rollout started or resumed. The controller measures
	// spec.progressDeadlineSeconds from it, and keeps it only while that field is set.
	// +optional
	LastProgressTime *metav1.Time `json:"lastProgressTime,omitempty" protobuf:"bytes,14,opt,name=lastProgressTime"`

	// VolumeClaims reports, while spec.volumeClaimUpdateStrategy.type is set, for every claim template how
	// many wanted instances have a claim that matches it and how many of those claims are ready.
	// +optional
	// +listType=map
	// +listMapKey=volumeClaimName
	VolumeClaims []TAppVolumeClaimStatus `json:"volumeClaims,omitempty" protobuf:"bytes,15,rep,name=volumeClaims"`
}

// TAppVolumeClaimStatus is the state of the instances' claims of one claim template.
type TAppVolumeClaimStatus struct {
	// VolumeClaimName is the name of the claim template (spec.volumeClaimTemplates[].metadata.name).
	VolumeClaimName string `json:"volumeClaimName" protobuf:"bytes,1,opt,name=volumeClaimName"`

	// CompatibleReplicas is the number of wanted instances whose claim of this template exists and matches
	// it: same storage class (when the template names one), access modes and volume mode, and a storage
	// request at least the template's.
	CompatibleReplicas int32 `json:"compatibleReplicas" protobuf:"varint,2,opt,name=compatibleReplicas"`

	// CompatibleReadyReplicas is the number of those claims that are bound, have a capacity at least the
	// template's storage request, and no resize in progress or failed.
	CompatibleReadyReplicas int32 `json:"compatibleReadyReplicas" protobuf:"varint,3,opt,name=compatibleReadyReplicas"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TAppList is a list of TApps.
type TAppList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Items is the list of TApps.
	Items []TApp `json:"items" protobuf:"bytes,2,rep,name=items"`
}
