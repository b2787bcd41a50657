package localcluster

import "time"

// NodeCostModel is what the pod simulator makes a pod wait for, standing in for what a node spends on it:
// creating the pod's sandbox, pulling each image the node does not hold yet (one cache of pulled images per
// node), starting a container, and attaching the volumes of its claims. The waits are modelled, not
// measured: the figures obtained with a model are reported apart from the unmodelled ones.
type NodeCostModel struct {
	// SandboxCreate is spent once per pod, before its containers start.
	SandboxCreate time.Duration
	// ImagePull is spent the first time a node runs an image; later pods on that node reuse the image.
	ImagePull time.Duration
	// ContainerStart is spent for each container start, including a restart for an in-place image change.
	ContainerStart time.Duration
	// VolumeAttach is spent once per pod for each persistentVolumeClaim volume, before its containers start.
	VolumeAttach time.Duration
}

// PublishedNodeCost is the node cost model whose parameters follow published Kubernetes measurements; each
// value and its source are given in docs/benchmarks.md ("Node cost model").
func PublishedNodeCost() NodeCostModel {
	return NodeCostModel{
		SandboxCreate:  500 * time.Millisecond,
		ImagePull:      3 * time.Second,
		ContainerStart: 200 * time.Millisecond,
		VolumeAttach:   10 * time.Second,
	}
}
