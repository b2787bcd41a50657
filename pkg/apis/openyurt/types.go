package openyurt

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Well-known keys and defaults of the apps.openyurt.io API.
const (
	// DefaultRevisionHistoryLimit is the default of YurtAppDaemon spec.revisionHistoryLimit.
	DefaultRevisionHistoryLimit = 10
	// NodePoolLabel on a node names the pool it belongs to; children pin their pods with it.
	NodePoolLabel = "apps.openyurt.io/nodepool"
	// DesiredNodePoolLabel on a node is the user's request that the node join the named pool.
	DesiredNodePoolLabel = "apps.openyurt.io/desired-nodepool"
	// PoolNameLabel on a child workload and its pods names the pool it serves.
	PoolNameLabel = "apps.openyurt.io/pool-name"
	// RevisionHashLabel on a child workload and its pods names the ControllerRevision it was rendered from.
	RevisionHashLabel = "apps.openyurt.io/controller-revision-hash"
	// NodePoolAppliedAnnotation on a node records, as JSON, what the NodePool controller applied to it from
	// its pool, so that keys later removed from the pool are removed from the node.
	NodePoolAppliedAnnotation = "nodepool.openyurt.io/previous-attributes"
	// NodePoolTypeLabel on a NodePool carries its type in lower case, so pools can be selected by type.
	NodePoolTypeLabel = "nodepool.openyurt.io/type"
	// MaxYurtAppDaemonNameLength keeps "<name>-<revision hash>" a valid label value.
	MaxYurtAppDaemonNameLength = 52
	// NodePoolHostNetworkAnnotation on a NodePool is how versions without spec.hostNetwork carry it: "true"
	// (any case) means hostNetwork, "false" (any case) means none. Conversion from v1alpha1 moves the exact
	// value "true" into the field; any other value stays on the internal object as written, so that it is
	// stored and returned unchanged, and validation refuses values that are neither and values that
	// contradict the field (see hostnetwork.go).
	NodePoolHostNetworkAnnotation = "nodepool.openyurt.io/hostnetwork"
)

// TemplateType is the kind of workload a YurtAppDaemon creates per pool.
type TemplateType string

// Workload kinds.
const (
	StatefulSetTemplateType TemplateType = "StatefulSet"
	DeploymentTemplateType  TemplateType = "Deployment"
)

// YurtAppDaemonConditionType is the type of a YurtAppDaemon condition.
type YurtAppDaemonConditionType string

// Condition types of a YurtAppDaemon.
const (
	WorkLoadProvisioned YurtAppDaemonConditionType = "WorkLoadProvisioned"
	WorkLoadUpdated     YurtAppDaemonConditionType = "WorkLoadUpdated"
	WorkLoadFailure     YurtAppDaemonConditionType = "WorkLoadFailure"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// YurtAppDaemon runs one Deployment or StatefulSet per selected NodePool.
type YurtAppDaemon struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   YurtAppDaemonSpec
	Status YurtAppDaemonStatus
}

// YurtAppDaemonSpec is the desired state of a YurtAppDaemon.
type YurtAppDaemonSpec struct {
	Selector             *metav1.LabelSelector
	WorkloadTemplate     WorkloadTemplate
	NodePoolSelector     *metav1.LabelSelector
	RevisionHistoryLimit *int32
}

// WorkloadTemplate holds exactly one workload template.
type WorkloadTemplate struct {
	StatefulSetTemplate *StatefulSetTemplateSpec
	DeploymentTemplate  *DeploymentTemplateSpec
}

// StatefulSetTemplateSpec is the template of a per-pool StatefulSet.
type StatefulSetTemplateSpec struct {
	metav1.ObjectMeta
	Spec appsv1.StatefulSetSpec
}

// DeploymentTemplateSpec is the template of a per-pool Deployment.
type DeploymentTemplateSpec struct {
	metav1.ObjectMeta
	Spec appsv1.DeploymentSpec
}

// YurtAppDaemonStatus is the observed state of a YurtAppDaemon.
type YurtAppDaemonStatus struct {
	ObservedGeneration int64
	CollisionCount     *int32
	CurrentRevision    string
	Conditions         []YurtAppDaemonCondition
	TemplateType       TemplateType
	NodePools          []string
}

// YurtAppDaemonCondition is one observation of a YurtAppDaemon's state.
type YurtAppDaemonCondition struct {
	Type               YurtAppDaemonConditionType
	Status             corev1.ConditionStatus
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// YurtAppDaemonList is a list of YurtAppDaemons.
type YurtAppDaemonList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []YurtAppDaemon
}

// NodePoolType is the kind of nodes in a pool.
type NodePoolType string

// Pool types.
const (
	Edge  NodePoolType = "Edge"
	Cloud NodePoolType = "Cloud"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePool is a named group of nodes with shared labels, annotations and taints.
type NodePool struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   NodePoolSpec
	Status NodePoolStatus
}

// NodePoolSpec is the desired state of a NodePool.
type NodePoolSpec struct {
	Type     NodePoolType
	Selector *metav1.LabelSelector
	// HostNetwork says the pool's nodes run no CNI: their pods share the host's network. Set only at
	// creation, never on a Cloud pool; no controller here acts on it.
	HostNetwork bool
	Labels      map[string]string
	Annotations map[string]string
	Taints      []corev1.Taint

	// The fields below are OpenYurt's v1beta2 (nodepool_leader.go); older versions carry them as
	// annotations (leaderannotations.go).

	// InterConnectivity says the pool's nodes reach each other; set only at creation.
	InterConnectivity bool
	// EnableLeaderElection makes the NodePool controller elect LeaderReplicas leaders among the pool's nodes.
	EnableLeaderElection bool
	// LeaderElectionStrategy is how leaders are chosen: random (any Ready node) or mark (Ready nodes
	// carrying every label of LeaderNodeLabelSelector).
	LeaderElectionStrategy LeaderElectionStrategy
	// LeaderNodeLabelSelector are the labels a node needs to be a leader under the mark strategy.
	LeaderNodeLabelSelector map[string]string
	// LeaderReplicas is the number of leaders to elect, at least 1.
	LeaderReplicas int32
	// PoolScopeMetadata are the resources shared by the pool's leaders; it always holds
	// DefaultPoolScopeMetadata.
	PoolScopeMetadata []metav1.GroupVersionResource
}

// NodePoolStatus is the observed state of a NodePool.
type NodePoolStatus struct {
	ReadyNodeNum   int32
	UnreadyNodeNum int32
	Nodes          []string

	// LeaderEndpoints are the elected leaders, sorted by node name.
	LeaderEndpoints []Leader
	// LeaderNum is the number of LeaderEndpoints.
	LeaderNum int32
	// LeaderLastElectedTime is when the set of leaders last changed.
	LeaderLastElectedTime *metav1.Time
	// Conditions of the pool: LeaderReady.
	Conditions []NodePoolCondition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePoolList is a list of NodePools.
type NodePoolList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []NodePool
}

// Well-known keys of YurtAppSets.
const (
	// YurtAppSetOwnerLabel on a YurtAppSet's workload names the YurtAppSet it belongs to.
	YurtAppSetOwnerLabel = "apps.openyurt.io/ref-yurtappset"
	// NodePoolNamePlaceholder in a tweak patch's value is replaced by the name of the pool the workload serves.
	NodePoolNamePlaceholder = "{{nodepool-name}}"
)

// YurtAppSetConditionType is the type of a YurtAppSet condition.
type YurtAppSetConditionType string

// Condition types of a YurtAppSet, with upstream's meanings.
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

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// YurtAppSet runs one Deployment or StatefulSet per selected NodePool, with per-pool tweaks.
type YurtAppSet struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   YurtAppSetSpec
	Status YurtAppSetStatus
}

// YurtAppSetSpec is the desired state of a YurtAppSet.
type YurtAppSetSpec struct {
	Workload             Workload
	NodePoolSelector     *metav1.LabelSelector
	Pools                []string
	RevisionHistoryLimit *int32
}

// Workload is the workload template of a YurtAppSet and its per-pool tweaks.
type Workload struct {
	WorkloadTemplate WorkloadTemplate
	WorkloadTweaks   []WorkloadTweak
}

// WorkloadTweak is a set of tweaks and the pools whose workloads they apply to.
type WorkloadTweak struct {
	NodePoolSelector *metav1.LabelSelector
	Pools            []string
	Tweaks           Tweaks
}

// Tweaks change the workload rendered for a pool.
type Tweaks struct {
	Replicas        *int32
	ContainerImages []ContainerImage
	Patches         []Patch
}

// ContainerImage replaces the image of a container (or init container) by name.
type ContainerImage struct {
	Name        string
	TargetImage string
}

// Patch is one JSON patch operation on the rendered workload.
type Patch struct {
	Path      string
	Operation PatchOperation
	Value     *apiextensionsv1.JSON
}

// YurtAppSetStatus is the observed state of a YurtAppSet.
type YurtAppSetStatus struct {
	ObservedGeneration int64
	CollisionCount     *int32
	CurrentRevision    string
	Conditions         []YurtAppSetCondition
	ReadyWorkloads     int32
	UpdatedWorkloads   int32
	TotalWorkloads     int32
}

// YurtAppSetCondition is one observation of a YurtAppSet's state.
type YurtAppSetCondition struct {
	Type               YurtAppSetConditionType
	Status             corev1.ConditionStatus
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// YurtAppSetList is a list of YurtAppSets.
type YurtAppSetList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []YurtAppSet
}
