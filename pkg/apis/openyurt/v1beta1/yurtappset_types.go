package v1beta1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// YurtAppSetConditionType is the type of a YurtAppSet condition: AppDispatched, AppDeleted, AppUpdated,
// AppReady or PoolFound.
type YurtAppSetConditionType string

// Condition types of a YurtAppSet, with OpenYurt's meanings.
const (
	// AppSetAppDispatched is True when every workload the YurtAppSet wants was created.
	AppSetAppDispatched YurtAppSetConditionType = "AppDispatched"
	// AppSetAppDeleted is True when every workload the YurtAppSet no longer wants was deleted.
	AppSetAppDeleted YurtAppSetConditionType = "AppDeleted"
	// AppSetAppUpdated is True when every workload was updated to the current revision.
	AppSetAppUpdated YurtAppSetConditionType = "AppUpdated"
	// AppSetAppReady is True when every workload is ready.
	AppSetAppReady YurtAppSetConditionType = "AppReady"
	// AppSetPoolFound is False when no pool matches spec.nodepoolSelector or spec.pools.
	AppSetPoolFound YurtAppSetConditionType = "PoolFound"
)

// PatchOperation is the operation of a tweak patch: add, remove or replace (RFC 6902).
type PatchOperation string

// Patch operations.
const (
	PatchOperationAdd     PatchOperation = "add"
	PatchOperationRemove  PatchOperation = "remove"
	PatchOperationReplace PatchOperation = "replace"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// YurtAppSet runs one Deployment or StatefulSet in every NodePool that spec.nodepoolSelector or spec.pools
// selects, rendered from one template and changed per pool by spec.workload.workloadTweaks.
type YurtAppSet struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state of the YurtAppSet.
	// +optional
	Spec YurtAppSetSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`

	// Status is the observed state of the YurtAppSet.
	// +optional
	Status YurtAppSetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// YurtAppSetSpec is the desired state of a YurtAppSet.
type YurtAppSetSpec struct {
	// Workload is the workload created in every selected pool and its per-pool tweaks.
	Workload Workload `json:"workload" protobuf:"bytes,1,opt,name=workload"`

	// NodePoolSelector is a label query over NodePool objects (not nodes): a workload is created in every
	// pool it matches. The selected pools are the union of this selector's and spec.pools.
	// +optional
	NodePoolSelector *metav1.LabelSelector `json:"nodepoolSelector,omitempty" protobuf:"bytes,2,opt,name=nodepoolSelector"`

	// Pools names NodePools to create a workload in, in addition to those nodepoolSelector matches. Names of
	// pools that do not exist are skipped.
	// +optional
	// +listType=set
	Pools []string `json:"pools,omitempty" protobuf:"bytes,3,rep,name=pools"`

	// RevisionHistoryLimit is the number of old ControllerRevisions to keep. Defaults to 10.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty" protobuf:"varint,4,opt,name=revisionHistoryLimit"`
}

// Workload is the workload template of a YurtAppSet and the tweaks made to it per pool.
type Workload struct {
	// WorkloadTemplate is the workload created in every selected pool. Exactly one of its templates must be set.
	WorkloadTemplate WorkloadTemplate `json:"workloadTemplate" protobuf:"bytes,1,opt,name=workloadTemplate"`

	// WorkloadTweaks change the workload of some pools. Every tweak whose pools or nodepoolSelector select a
	// pool applies to that pool's workload, in list order: first the replicas and container images of every
	// such tweak, then their patches; a later tweak wins over an earlier one.
	// +optional
	// +listType=atomic
	WorkloadTweaks []WorkloadTweak `json:"workloadTweaks,omitempty" protobuf:"bytes,2,rep,name=workloadTweaks"`
}

// WorkloadTemplate holds exactly one workload template.
type WorkloadTemplate struct {
	// StatefulSetTemplate renders one StatefulSet per pool.
	// +optional
	StatefulSetTemplate *StatefulSetTemplateSpec `json:"statefulSetTemplate,omitempty" protobuf:"bytes,1,opt,name=statefulSetTemplate"`

	// DeploymentTemplate renders one Deployment per pool.
	// +optional
	DeploymentTemplate *DeploymentTemplateSpec `json:"deploymentTemplate,omitempty" protobuf:"bytes,2,opt,name=deploymentTemplate"`
}

// StatefulSetTemplateSpec is the template of a per-pool StatefulSet.
type StatefulSetTemplateSpec struct {
	// Metadata of the StatefulSets: their labels and annotations.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec of the StatefulSets. Its selector must match the labels of its pod template.
	Spec appsv1.StatefulSetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// DeploymentTemplateSpec is the template of a per-pool Deployment.
type DeploymentTemplateSpec struct {
	// Metadata of the Deployments: their labels and annotations.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec of the Deployments. Its selector must match the labels of its pod template.
	Spec appsv1.DeploymentSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// WorkloadTweak is a set of tweaks and the pools whose workloads they change: the pools named in pools and
// those nodepoolSelector matches.
type WorkloadTweak struct {
	// NodePoolSelector is a label query over NodePool objects whose workloads get the tweaks.
	// +optional
	NodePoolSelector *metav1.LabelSelector `json:"nodepoolSelector,omitempty" protobuf:"bytes,1,opt,name=nodepoolSelector"`

	// Pools names NodePools whose workloads get the tweaks.
	// +optional
	// +listType=set
	Pools []string `json:"pools,omitempty" protobuf:"bytes,2,rep,name=pools"`

	// Tweaks are the changes made to the workloads of the selected pools.
	Tweaks Tweaks `json:"tweaks" protobuf:"bytes,3,opt,name=tweaks"`
}

// Tweaks change the workload rendered for a pool.
type Tweaks struct {
	// Replicas replaces spec.replicas of the workload.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`

	// ContainerImages replace the images of containers and init containers of the workload's pod template,
	// by container name.
	// +optional
	// +listType=map
	// +listMapKey=name
	ContainerImages []ContainerImage `json:"containerImages,omitempty" protobuf:"bytes,2,rep,name=containerImages"`

	// Patches are JSON patch operations (RFC 6902) on the whole rendered workload object, applied in order
	// after replicas and containerImages. The text {{nodepool-name}} in a value is replaced by the pool's name.
	// +optional
	// +listType=atomic
	Patches []Patch `json:"patches,omitempty" protobuf:"bytes,3,rep,name=patches"`
}

// ContainerImage replaces the image of a container or init container of the workload's pod template.
type ContainerImage struct {
	// Name is the name of the container (or init container) whose image is replaced. The template must
	// have a container of that name.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`

	// TargetImage is the image the container runs instead of the template's.
	TargetImage string `json:"targetImage" protobuf:"bytes,2,opt,name=targetImage"`
}

// Patch is one JSON patch operation (RFC 6902) on the rendered workload, for example
// {path: /spec/template/spec/nodeSelector/disk, operation: add, value: ssd}.
type Patch struct {
	// Path is the JSON pointer (RFC 6901) of the field in the workload, such as /metadata/labels/tier or
	// /spec/template/spec/containers/0/env/-. It must exist in the workload rendered from the template,
	// except for the last segment of an add.
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`

	// Operation is add, remove or replace.
	Operation PatchOperation `json:"operation" protobuf:"bytes,2,opt,name=operation,casttype=PatchOperation"`

	// Value is the JSON value that add and replace put at path; required for them, ignored by remove.
	// The text {{nodepool-name}} in it is replaced by the name of the workload's pool.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty" protobuf:"bytes,3,opt,name=value"`
}

// YurtAppSetStatus is the observed state of a YurtAppSet.
type YurtAppSetStatus struct {
	// ObservedGeneration is the generation of the spec the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`

	// CollisionCount counts hash collisions of ControllerRevision names; the controller uses it to name the
	// newest ControllerRevision.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty" protobuf:"varint,2,opt,name=collisionCount"`

	// CurrentRevision is the name of the ControllerRevision of the current workload template and tweaks.
	// +optional
	CurrentRevision string `json:"currentRevision" protobuf:"bytes,3,opt,name=currentRevision"`

	// Conditions are the latest observations of the YurtAppSet's state: AppDispatched, AppDeleted,
	// AppUpdated, AppReady and PoolFound.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []YurtAppSetCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,4,rep,name=conditions"`

	// ReadyWorkloads is the number of workloads whose replicas are all ready (and more than zero).
	// +optional
	ReadyWorkloads int32 `json:"readyWorkloads" protobuf:"varint,5,opt,name=readyWorkloads"`

	// UpdatedWorkloads is the number of workloads at the current revision whose replicas are all updated.
	// +optional
	UpdatedWorkloads int32 `json:"updatedWorkloads" protobuf:"varint,6,opt,name=updatedWorkloads"`

	// TotalWorkloads is the number of workloads of the YurtAppSet.
	// +optional
	TotalWorkloads int32 `json:"totalWorkloads" protobuf:"varint,7,opt,name=totalWorkloads"`
}

// YurtAppSetCondition is one observation of a YurtAppSet's state.
type YurtAppSetCondition struct {
	// Type of the condition: AppDispatched (every wanted workload created), AppDeleted (every unwanted
	// workload deleted), AppUpdated (every workload updated), AppReady (every workload ready) or PoolFound
	// (some pool is selected).
	Type YurtAppSetConditionType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=YurtAppSetConditionType"`
	// Status of the condition: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status,omitempty" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	// Reason is a CamelCase word for the last transition.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	// Message is a human readable explanation of the last transition.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// YurtAppSetList is a list of YurtAppSets.
type YurtAppSetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Items is the list of YurtAppSets.
	Items []YurtAppSet `json:"items" protobuf:"bytes,2,rep,name=items"`
}
