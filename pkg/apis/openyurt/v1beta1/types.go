package v1beta1

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
