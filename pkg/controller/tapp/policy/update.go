package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// templateInfo is one template of a TApp as ComputePlan compares pods with it and the executor builds its
// pods. It is built once per plan (templateCache), so hashing a template costs the same for 1 pod as for
// 1000, whether the pods are compared (hash labels, or content for foreign hashes) or created.
type templateInfo struct {
	name     string
	revision string                  // the ControllerRevision the template belongs to, if known
	template *corev1.PodTemplateSpec // read only
	err      error                   // the template does not exist
	// prepared builds the template's pods with the hashes and keys computed once (tapppod.Prepare).
	prepared *tapppod.Template
	hash     string // tapppod.TemplateHash
	uniq     string // tapppod.UniqHash
	resize   string // tapppod.ResizeHash
	// labels are the labels of the template's pods (PodLabels) without the instance label.
	labels map[string]string
	// annotations are the annotations an in-place update sets (see InPlaceUpdate).
	annotations map[string]string
}

// templateCache resolves the templates of one TApp by name, each once. It is safe for concurrent use (the
// executor builds pods from it in parallel).
type templateCache struct {
	tapp *tkestackv1.TApp
	// revision names the ControllerRevision of tapp's templates; "" when unknown.
	revision string
	mu       sync.Mutex
	byName   map[string]*templateInfo
}

func newTemplateCache(tapp *tkestackv1.TApp) *templateCache {
	return &templateCache{tapp: tapp, byName: map[string]*templateInfo{}}
}

// forID returns the template of instance id; its err is set when the template does not exist.
func (c *templateCache) forID(id string) *templateInfo {
	name := TemplateNameFor(c.tapp, id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if info, ok := c.byName[name]; ok {
		return info
	}
	info := &templateInfo{name: name, revision: c.revision}
	c.byName[name] = info
	t, err := TemplateFor(c.tapp, name)
	if err != nil {
		info.err = err
		return info
	}
	info.template = t
	info.prepared = tapppod.Prepare(t)
	info.labels = info.prepared.Labels("")
	delete(info.labels, tkestack.InstanceIDLabel)
	info.hash, info.uniq, info.resize = info.prepared.TemplateHash, info.prepared.UniqHash, info.prepared.ResizeHash
	info.annotations = make(map[string]string, len(t.Annotations)+1)
	for k, v := range t.Annotations {
		if k != PortMappingAnnotation && k != inplace.StateAnnotation {
			info.annotations[k] = v
		}
	}
	info.annotations[tapppod.TemplateKeysAnnotation] = info.prepared.Keys
	return info
}

// newPod returns the pod of instance id (see NewPod).
func (c *templateCache) newPod(id string) (*corev1.Pod, error) {
	t := c.forID(id)
	if t.err != nil {
		return nil, t.err
	}
	owner := PodOwner(c.tapp)
	owner.Spread = SpreadFor(c.tapp, Topology{})
	pod := t.prepared.New(owner, id)
	if t.revision != "" {
		pod.Labels[tkestack.ControllerRevisionHashLabel] = t.revision
	}
	if c.tapp.Spec.Lifecycle != nil {
		pod.Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStateNormal
	}
	return pod, nil
}

// inPlaceUpdate is the one diff between pod and the template: the InPlaceUpdate that moves instance id's pod
// to it. It reports false when a container of the template has no container of the same name in the pod:
// such a pod is recreated. Container resources are part of the diff only for a resizable pod whose uniq
// hash differs (the resources are what differs): a pod judged by content (foreign hashes) or moved by
// images alone never has its resources rewritten, e.g. defaults a LimitRange gave it.
func (info *templateInfo) inPlaceUpdate(id string, pod *corev1.Pod) (InPlaceUpdate, bool) {
	images := map[string]string{}
	var resources map[string]corev1.ResourceRequirements
	resize := pod.Labels[tkestack.UniqHashLabel] != info.uniq && info.resizable(pod)
	for _, want := range info.template.Spec.Containers {
		have := findContainer(pod.Spec.Containers, want.Name)
		if have == nil {
			return InPlaceUpdate{}, false
		}
		if have.Image != want.Image {
			images[want.Name] = want.Image
		}
		if resize && !equality.Semantic.DeepEqual(have.Resources, want.Resources) {
			if resources == nil {
				resources = map[string]corev1.ResourceRequirements{}
			}
			resources[want.Name] = *want.Resources.DeepCopy()
		}
	}
	labels := make(map[string]string, len(info.labels)+1)
	for k, v := range info.labels {
		labels[k] = v
	}
	labels[tkestack.InstanceIDLabel] = id
	if info.revision != "" {
		labels[tkestack.ControllerRevisionHashLabel] = info.revision
	}
	recorded := recordedTemplateKeys(pod)
	var removeLabels, removeAnnotations []string
	for _, k := range recorded.Labels {
		if _, keep := labels[k]; !keep {
			removeLabels = append(removeLabels, k)
		}
	}
	for _, k := range recorded.Annotations {
		if _, keep := info.template.Annotations[k]; !keep && k != PortMappingAnnotation && k != tapppod.TemplateKeysAnnotation && k != inplace.StateAnnotation {
			removeAnnotations = append(removeAnnotations, k)
		}
	}
	sort.Strings(removeLabels)
	sort.Strings(removeAnnotations)
	return InPlaceUpdate{
		ID:       id,
		PodName:  pod.Name,
		UID:      pod.UID,
		Template: info.name,
		Update: inplace.Update{
			Revision:          info.hash,
			Images:            images,
			Resources:         resources,
			Labels:            labels,
			RemoveLabels:      removeLabels,
			Annotations:       info.annotations,
			RemoveAnnotations: removeAnnotations,
		},
	}, true
}

// GateAction is a write of the in-place readiness gate condition of one pod.
type GateAction string

// Gate actions.
const (
	// GateTrue: the pod has the gate, no in-place update in progress, and its condition is not True (a new
	// pod, or one left False by an update that was not applied): set it True (inplace.Updater
	// EnsureReadinessGateTrue).
	GateTrue GateAction = "True"
	// GateComplete: the kubelet has finished the pod's in-place update (inplace.Check is Done): set the
	// condition True and remove the update state (inplace.Updater Complete).
	GateComplete GateAction = "Complete"
	// GateFailed: the pod's in-place update fails (inplace.Check is Failed): report Message; the condition
	// stays False, and a newer template may be applied over it.
	GateFailed GateAction = "Failed"
)

// Gate is a gate action on one pod of the snapshot.
type Gate struct {
	PodName string
	Action  GateAction
	// Message says why the update fails (GateFailed).
	Message string
}

// ComputeGates returns the gate actions the pods of tapp need, by pod name: for every pod the TApp controls
// that is not terminating nor finished, has the readiness gate and is not updated in place or relabelled by
// plan. A pod in a preparing lifecycle state whose hook asks markPodNotReady keeps its condition False. A pod whose update is in progress and neither done nor failed needs nothing.
func ComputeGates(tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *Plan) []Gate {
	updating := map[string]bool{}
	for _, u := range plan.InPlaceUpdates {
		updating[u.PodName] = true
	}
	for _, u := range plan.Relabels {
		updating[u.PodName] = true
	}
	var gates []Gate
	for _, pod := range pods {
		if pod == nil || pod.Namespace != tapp.Namespace || !IsControlledBy(pod, tapp) || isTerminating(pod) || isFinished(pod) ||
			updating[pod.Name] || !inplace.HasReadinessGate(pod) {
			continue
		}
		g := Gate{PodName: pod.Name}
		switch {
		case inplace.InProgress(pod):
			result := inplace.Check(pod)
			switch {
			case result.Done:
				g.Action = GateComplete
			case result.Failed:
				g.Action, g.Message = GateFailed, result.Message
			default:
				continue
			}
		case inplace.GateStatus(pod) != corev1.ConditionTrue && !keepsNotReady(tapp, pod):
			g.Action = GateTrue
		default:
			continue
		}
		gates = append(gates, g)
	}
	sort.Slice(gates, func(i, j int) bool { return gates[i].PodName < gates[j].PodName })
	return gates
}
