package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TemplateType is the kind of workload a YurtAppDaemon creates per pool: Deployment or StatefulSet.
type TemplateType string

// YurtAppDaemonConditionType is the type of a YurtAppDaemon condition: WorkLoadProvisioned,
// WorkLoadUpdated or WorkLoadFailure.
type YurtAppDaemonConditionType string

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// YurtAppDaemon runs one Deployment or StatefulSet in every NodePool its nodepoolSelector selects, like a
// DaemonSet whose unit is a node pool instead of a node.
type YurtAppDaemon struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state of the YurtAppDaemon.
	// +optional
	Spec YurtAppDaemonSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`

	// Status is the observed state of the YurtAppDaemon.
	// +optional
	Status YurtAppDaemonStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// YurtAppDaemonSpec is the desired state of a YurtAppDaemon.
type YurtAppDaemonSpec struct {
	// Selector is a label query over the pods of every child workload. It must match the labels of the
	// workload template and of its pod template, must not be empty and cannot be changed.
	Selector *metav1.LabelSelector `json:"selector" protobuf:"bytes,1,opt,name=selector"`

	// WorkloadTemplate is the workload created in every selected pool.
	// +optional
	WorkloadTemplate WorkloadTemplate `json:"workloadTemplate,omitempty" protobuf:"bytes,2,opt,name=workloadTemplate"`

	// NodePoolSelector is a label query over NodePool objects (not nodes). An empty selector selects every pool.
	NodePoolSelector *metav1.LabelSelector `json:"nodepoolSelector" protobuf:"bytes,3,opt,name=nodepoolSelector"`

	// RevisionHistoryLimit is the number of old ControllerRevisions to keep. Defaults to 10.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty" protobuf:"varint,4,opt,name=revisionHistoryLimit"`
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
	// Metadata of the StatefulSets; labels must match spec.selector.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec of the StatefulSets. Its selector is set from the YurtAppDaemon's selector.
	Spec appsv1.StatefulSetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// DeploymentTemplateSpec is the template of a per-pool Deployment.
type DeploymentTemplateSpec struct {
	// Metadata of the Deployments; labels must match spec.selector.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec of the Deployments. Its selector is set from the YurtAppDaemon's selector.
	Spec appsv1.DeploymentSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// YurtAppDaemonStatus is the observed state of a YurtAppDaemon.
type YurtAppDaemonStatus struct {
	// ObservedGeneration is the generation of the spec the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`

	// CollisionCount counts hash collisions of ControllerRevision names.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty" protobuf:"varint,2,opt,name=collisionCount"`

	// CurrentRevision is the name of the ControllerRevision of the current template.
	// +optional
	CurrentRevision string `json:"currentRevision" protobuf:"bytes,3,opt,name=currentRevision"`

	// Conditions are the latest observations of the YurtAppDaemon's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []YurtAppDaemonCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,4,rep,name=conditions"`

	// TemplateType is the kind of the child workloads: Deployment or StatefulSet.
	// +optional
	TemplateType TemplateType `json:"templateType" protobuf:"bytes,5,opt,name=templateType,casttype=TemplateType"`

	// NodePools lists the selected pools, sorted by name.
	// +optional
	// +listType=atomic
	NodePools []string `json:"nodepools,omitempty" protobuf:"bytes,6,rep,name=nodepools"`
}

// YurtAppDaemonCondition is one observation of a YurtAppDaemon's state.
type YurtAppDaemonCondition struct {
	// Type of the condition.
	Type YurtAppDaemonConditionType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=YurtAppDaemonConditionType"`
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

// YurtAppDaemonList is a list of YurtAppDaemons.
type YurtAppDaemonList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Items is the list of YurtAppDaemons.
	Items []YurtAppDaemon `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// NodePoolType is the kind of nodes in a pool: Edge or Cloud.
type NodePoolType string

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePool is a named group of nodes that share labels, annotations and taints.
type NodePool struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state of the NodePool.
	// +optional
	Spec NodePoolSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`

	// Status is the observed state of the NodePool.
	// +optional
	Status NodePoolStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// NodePoolSpec is the desired state of a NodePool.
type NodePoolSpec struct {
	// Type is Edge or Cloud. Defaults to Edge and cannot be changed.
	// +optional
	Type NodePoolType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=NodePoolType"`

	// Selector is a label query over the nodes of the pool. Defaults to apps.openyurt.io/nodepool=<name>.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`

	// Labels are put on every node of the pool.
	// +optional
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,3,rep,name=labels"`

	// Annotations are put on every node of the pool.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,4,rep,name=annotations"`

	// Taints are put on every node of the pool; workloads of a YurtAppDaemon tolerate them.
	// +optional
	// +listType=atomic
	Taints []corev1.Taint `json:"taints,omitempty" protobuf:"bytes,5,rep,name=taints"`
}

// NodePoolStatus is the observed state of a NodePool.
type NodePoolStatus struct {
	// ReadyNodeNum is the number of Ready nodes in the pool.
	// +optional
	ReadyNodeNum int32 `json:"readyNodeNum" protobuf:"varint,1,opt,name=readyNodeNum"`

	// UnreadyNodeNum is the number of nodes in the pool that are not Ready.
	// +optional
	UnreadyNodeNum int32 `json:"unreadyNodeNum" protobuf:"varint,2,opt,name=unreadyNodeNum"`

	// Nodes lists the nodes of the pool, sorted by name.
	// +optional
	// +listType=atomic
	Nodes []string `json:"nodes,omitempty" protobuf:"bytes,3,rep,name=nodes"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePoolList is a list of NodePools.
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Items is the list of NodePools.
	Items []NodePool `json:"items" protobuf:"bytes,2,rep,name=items"`
}
