package localcluster

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

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
		VolumeAttach:   15 * time.Second,
	}
}

// maxNodeCostWait bounds how long one step of a pod (its start, an init container, a restart) is made to
// wait, whatever the model says.
const maxNodeCostWait = 5 * time.Minute

// nodeCosts keeps, for the pod simulator, when each modelled step of a pod is done and which images each
// node holds (and since when). Without a model every step is done at once.
type nodeCosts struct {
	model *NodeCostModel
	now   func() time.Time
	mu    sync.Mutex
	// images is, per node, the time each image it pulled is (or will be) on the node.
	images map[string]map[string]time.Time
	// doneAt is, per pod, the time each of its steps in progress is done.
	doneAt map[types.UID]map[string]time.Time
}

func newNodeCosts(model *NodeCostModel, now func() time.Time) *nodeCosts {
	return &nodeCosts{
		model:  model,
		now:    now,
		images: map[string]map[string]time.Time{},
		doneAt: map[types.UID]map[string]time.Time{},
	}
}

// until returns how long until the step of pod is done (0: done), starting it on first call: creating the
// sandbox and attaching the pod's claims when sandbox is set, then, for each container in order, pulling
// its image unless the node holds it (or waiting for a pull of it in progress) and starting it, as a
// kubelet does them one after the other.
func (n *nodeCosts) until(pod *corev1.Pod, step string, sandbox bool, containers []corev1.Container) time.Duration {
	if n == nil || n.model == nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	steps := n.doneAt[pod.UID]
	if steps == nil {
		steps = map[string]time.Time{}
		n.doneAt[pod.UID] = steps
	}
	if at, ok := steps[step]; ok {
		if at.After(now) {
			return at.Sub(now)
		}
		return 0
	}
	at := now
	if sandbox {
		at = at.Add(n.model.SandboxCreate)
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				at = at.Add(n.model.VolumeAttach)
			}
		}
	}
	images := n.images[pod.Spec.NodeName]
	if images == nil {
		images = map[string]time.Time{}
		n.images[pod.Spec.NodeName] = images
	}
	for _, c := range containers {
		if pulled, ok := images[c.Image]; !ok {
			at = at.Add(n.model.ImagePull)
			images[c.Image] = at
		} else if pulled.After(at) {
			at = pulled
		}
		at = at.Add(n.model.ContainerStart)
	}
	if limit := now.Add(maxNodeCostWait); at.After(limit) {
		at = limit
	}
	steps[step] = at
	if at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// done forgets steps of a pod once their result is reported.
func (n *nodeCosts) done(uid types.UID, steps ...string) {
	if n == nil || n.model == nil || len(steps) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range steps {
		delete(n.doneAt[uid], s)
	}
	if len(n.doneAt[uid]) == 0 {
		delete(n.doneAt, uid)
	}
}

// forget drops what is kept of a pod that is gone or going.
func (n *nodeCosts) forget(uid types.UID) {
	if n == nil || n.model == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.doneAt, uid)
}
