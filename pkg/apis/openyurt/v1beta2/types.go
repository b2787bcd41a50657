package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePoolType is the kind of nodes in a pool: Edge or Cloud.
type NodePoolType string

// Pool types.
const (
	Edge  NodePoolType = "Edge"
	Cloud NodePoolType = "Cloud"
)

// LeaderElectionStrategy is how a pool's leaders are chosen: random or mark.
type LeaderElectionStrategy string

// Leader election strategies.
const (
	ElectionStrategyRandom LeaderElectionStrategy = "random"
	ElectionStrategyMark   LeaderElectionStrategy = "mark"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodePool is a named group of nodes that share labels, annotations and taints, and may elect leaders
// among its nodes.
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

	// Selector is a label query over the nodes of the pool, kept from v1alpha1 and v1beta1 (OpenYurt's
	// v1beta2 has none). Defaults to apps.openyurt.io/nodepool=<name>; informational: membership is the
	// node label apps.openyurt.io/nodepool.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`

	// HostNetwork says that the nodes of the pool run no CNI, so their pods share the host's network.
	// It cannot be changed and a Cloud pool cannot set it. In v1alpha1 it is the annotation
	// nodepool.openyurt.io/hostnetwork: "true".
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty" protobuf:"varint,3,opt,name=hostNetwork"`

	// Labels are put on every node of the pool.
	// +optional
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,4,rep,name=labels"`

	// Annotations are put on every node of the pool.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,5,rep,name=annotations"`

	// Taints are put on every node of the pool; workloads of a YurtAppDaemon tolerate them.
	// +optional
	// +listType=atomic
	Taints []corev1.Taint `json:"taints,omitempty" protobuf:"bytes,6,rep,name=taints"`

	// InterConnectivity says that the nodes of the pool reach each other over layer 2 or 3, so requests can
	// be shared pool-wide. It cannot be changed after creation. In v1alpha1 and v1beta1 it is the
	// annotation nodepool.tapp.io/interConnectivity: "true".
	// +optional
	InterConnectivity bool `json:"interConnectivity,omitempty" protobuf:"varint,7,opt,name=interConnectivity"`

	// LeaderElectionStrategy is how leaders are elected when enableLeaderElection is set: random (any Ready
	// node of the pool; this server takes them in order of name) or mark (Ready nodes carrying every label
	// of leaderNodeLabelSelector). Defaults to random. In v1alpha1 and v1beta1 it is the annotation
	// nodepool.tapp.io/leaderElectionStrategy.
	// +optional
	LeaderElectionStrategy LeaderElectionStrategy `json:"leaderElectionStrategy,omitempty" protobuf:"bytes,8,opt,name=leaderElectionStrategy,casttype=LeaderElectionStrategy"`

	// LeaderNodeLabelSelector are the labels a node must carry, all of them, to be elected under the mark
	// strategy, which requires at least one. In v1alpha1 and v1beta1 it is the annotation
	// nodepool.tapp.io/leaderNodeLabelSelector, a JSON object.
	// +optional
	LeaderNodeLabelSelector map[string]string `json:"leaderNodeLabelSelector,omitempty" protobuf:"bytes,9,rep,name=leaderNodeLabelSelector"`

	// EnableLeaderElection makes the NodePool controller elect leaderReplicas leaders among the Ready nodes
	// of the pool that have an InternalIP, and report them in status.leaderEndpoints. A leader stays while
	// it is Ready and in the pool. In v1alpha1 and v1beta1 it is the annotation
	// nodepool.tapp.io/enableLeaderElection: "true".
	// +optional
	EnableLeaderElection bool `json:"enableLeaderElection,omitempty" protobuf:"varint,10,opt,name=enableLeaderElection"`

	// PoolScopeMetadata are the resources the pool's leaders share with the other nodes of the pool. It
	// always holds v1 services and discovery.k8s.io/v1 endpointslices (defaulting adds them). In v1alpha1 and
	// v1beta1 it is the annotation nodepool.tapp.io/poolScopeMetadata, a JSON list, when it holds more.
	// +optional
	// +listType=atomic
	PoolScopeMetadata []metav1.GroupVersionResource `json:"poolScopeMetadata,omitempty" protobuf:"bytes,11,rep,name=poolScopeMetadata"`

	// LeaderReplicas is the number of leaders to elect, at least 1. Defaults to 1. In v1alpha1 and v1beta1
	// it is the annotation nodepool.tapp.io/leaderReplicas.
	// +optional
	LeaderReplicas int32 `json:"leaderReplicas,omitempty" protobuf:"varint,12,opt,name=leaderReplicas"`
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

	// LeaderEndpoints are the elected leaders of the pool, sorted by node name. In v1alpha1 and v1beta1 it
	// is the annotation nodepool.tapp.io/leaderEndpoints, a JSON list.
	// +optional
	// +listType=atomic
	LeaderEndpoints []Leader `json:"leaderEndpoints,omitempty" protobuf:"bytes,4,rep,name=leaderEndpoints"`

	// LeaderNum is the number of elected leaders. In v1alpha1 and v1beta1 it is the annotation
	// nodepool.tapp.io/leaderNum.
	// +optional
	LeaderNum int32 `json:"leaderNum,omitempty" protobuf:"varint,5,opt,name=leaderNum"`

	// LeaderLastElectedTime is when the set of leaders last changed. In v1alpha1 and v1beta1 it is the
	// annotation nodepool.tapp.io/leaderLastElectedTime.
	// +optional
	LeaderLastElectedTime *metav1.Time `json:"leaderLastElectedTime,omitempty" protobuf:"bytes,6,opt,name=leaderLastElectedTime"`

	// Conditions are the latest observations of the pool: LeaderReady, True when the pool has at least one
	// leader, False with the reason when it has none. In v1alpha1 and v1beta1 they are the annotation
	// nodepool.tapp.io/conditions, a JSON list.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []NodePoolCondition `json:"conditions,omitempty" protobuf:"bytes,7,rep,name=conditions"`
}

// Leader is an elected leader of a pool.
type Leader struct {
	// NodeName is the name of the leader's node.
	NodeName string `json:"nodeName" protobuf:"bytes,1,opt,name=nodeName"`

	// Address is the node's InternalIP.
	Address string `json:"address" protobuf:"bytes,2,opt,name=address"`
}

// NodePoolConditionType is the type of a NodePool condition.
type NodePoolConditionType string

// LeaderReady says whether the pool has leaders.
const LeaderReady NodePoolConditionType = "LeaderReady"

// NodePoolCondition is one observation of a NodePool's state.
type NodePoolCondition struct {
	// Type of the condition: LeaderReady.
	Type NodePoolConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=NodePoolConditionType"`

	// Status of the condition: True, False or Unknown.
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`

	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`

	// Reason is a one-word CamelCase reason for the status.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`

	// Message says why, for people.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
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
