package localcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// The pod simulator's client rate limit and workers, sized so that it keeps up with a thousand pods
// being created, updated in place or deleted at once: each status write is a read and a patch, and a pod
// start takes two, so a thousand pods starting need 4000 requests. It stands for the kubelets of the nodes
// such pods would need (each kubelet has a budget of its own, 50 QPS by default); with fewer workers or a
// lower limit it, not the controllers compared, would set the pace of every workload figure.
const (
	simulatorQPS     = 2000
	simulatorBurst   = 4000
	simulatorWorkers = 32
)

// kubelet stands in for the kubelets of the fake nodes: it reports the status of every pod bound to a
// node the way a kubelet's status manager does, as strategic merge patches of pods/status (statuspatch.go)
// and with as many writes per transition as a kubelet makes (docs/benchmarks.md, "The pod simulator"). A
// new pod is first reported Pending with its containers waiting, then once per completed init container,
// then Running and Ready unless a readiness gate says otherwise; a container whose image changes in place
// restarts with the new image, a new imageID and restartCount+1; an in-place resize is reported as the
// kubelet reports it (see resize); a deleted pod is reported terminal, then removed. With a node cost model
// (nodecost.go) the starts wait for what a node would spend on them. It also runs the storage stand-in
// (storage.go), which finishes the expansion of a claim's file system only while a pod on a node mounts
// it, as a kubelet does. All of it is real API traffic.
type kubelet struct {
	client   kubernetes.Interface
	factory  informers.SharedInformerFactory
	lister   cache.Indexer
	queue    workqueue.TypedRateLimitingInterface[string]
	costs    *nodeCosts
	mu       sync.Mutex
	nextIP   int
	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{}
}

func startKubelet(client kubernetes.Interface, cost *NodeCostModel) (*kubelet, error) {
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	k := &kubelet{
		client:  client,
		factory: factory,
		lister:  pods.GetIndexer(),
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		costs:   newNodeCosts(cost, time.Now),
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	enqueue := func(obj interface{}) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			k.queue.Add(key)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj interface{}) { enqueue(obj) },
		DeleteFunc: func(obj interface{}) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				k.costs.forget(pod.UID)
			}
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	volumes, err := newStorage(ctx, client, factory, pods)
	if err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		cancel()
		return nil, fmt.Errorf("pod informer did not sync")
	}
	var workers sync.WaitGroup
	if err := volumes.run(ctx, &workers); err != nil {
		cancel()
		return nil, err
	}
	for i := 0; i < simulatorWorkers; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			wait.UntilWithContext(ctx, k.work, time.Second)
		}()
	}
	go func() {
		<-ctx.Done()
		k.queue.ShutDown()
		volumes.queue.ShutDown()
		workers.Wait()
		volumes.broadcaster.Shutdown()
		factory.Shutdown()
		close(k.done)
	}()
	return k, nil
}

func (k *kubelet) stop() {
	k.stopOnce.Do(func() {
		k.cancel()
		<-k.done
	})
}

func (k *kubelet) work(ctx context.Context) {
	for {
		key, quit := k.queue.Get()
		if quit {
			return
		}
		if err := k.sync(ctx, key); err != nil && ctx.Err() == nil {
			k.queue.AddRateLimited(key)
		} else {
			k.queue.Forget(key)
		}
		k.queue.Done(key)
	}
}

func (k *kubelet) sync(ctx context.Context, key string) error {
	obj, exists, err := k.lister.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	if pod.Spec.NodeName == "" {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		return k.terminate(ctx, pod)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	status, steps, wait := k.nextStatus(pod)
	if wait > 0 {
		// The node is still "starting" the pod's containers: look again when it is done, without holding
		// a worker meanwhile.
		k.queue.AddAfter(key, wait)
	}
	if status == nil {
		return nil
	}
	if err := k.resize(ctx, pod, status); err != nil {
		return err
	}
	if err := k.patchStatus(ctx, pod, *status); err != nil {
		return err
	}
	k.costs.done(pod.UID, steps...)
	return nil
}

// nextStatus is the status a kubelet would report for pod now (nil: nothing new yet), the node cost steps
// it completes and, when the node is still busy with a step, how long until the pod should be looked at
// again. A pod the kubelet has not reported yet is reported Pending with its containers waiting; a Pending
// pod completes its next init container, or starts its containers once every init container has
// completed; a Running pod keeps running, restarting a container whose image changed once the restart is
// done (until then it keeps the old container's status, as a kubelet busy restarting it reports nothing).
func (k *kubelet) nextStatus(pod *corev1.Pod) (*corev1.PodStatus, []string, time.Duration) {
	now := metav1.Now()
	if len(pod.Status.ContainerStatuses) == 0 {
		return k.pendingStatus(pod, 0, now), nil, 0
	}
	if pod.Status.Phase == corev1.PodPending {
		initDone := completedInitContainers(pod)
		if initDone < len(pod.Spec.InitContainers) {
			c := pod.Spec.InitContainers[initDone]
			step := fmt.Sprintf("init/%d", initDone)
			if wait := k.costs.until(pod, step, initDone == 0, []corev1.Container{c}); wait > 0 {
				return nil, nil, wait
			}
			// Even the last one: the kubelet reports it completed before it starts the containers.
			return k.pendingStatus(pod, initDone+1, now), []string{step}, 0
		}
		if neverPulled(pod.Spec.Containers) {
			return imagePullStatus(pod), nil, 0
		}
		if wait := k.costs.until(pod, "start", len(pod.Spec.InitContainers) == 0, pod.Spec.Containers); wait > 0 {
			return nil, nil, wait
		}
		return k.runningStatus(pod, now, func(string, string) bool { return true }), []string{"start"}, 0
	}
	var wait time.Duration
	var steps []string
	restarted := func(container, image string) bool {
		if strings.HasPrefix(image, NeverPulledRegistry) {
			return false // the new image is never pulled: the old container keeps running
		}
		step := "restart/" + container + "/" + image
		c := findContainer(pod.Spec.Containers, container)
		if w := k.costs.until(pod, step, false, []corev1.Container{*c}); w > 0 {
			if wait == 0 || w < wait {
				wait = w
			}
			return false
		}
		steps = append(steps, step)
		return true
	}
	return k.runningStatus(pod, now, restarted), steps, wait
}

// pendingStatus is what a kubelet reports for a pod whose containers are not running yet: Pending, the
// first initDone init containers completed, the next ones and the containers waiting. Before the first
// init container completes, the pod has no sandbox yet (PodReadyToStartContainers False, no pod IP).
func (k *kubelet) pendingStatus(pod *corev1.Pod, initDone int, now metav1.Time) *corev1.PodStatus {
	status := pod.Status.DeepCopy()
	status.Phase = corev1.PodPending
	if status.HostIP == "" {
		status.HostIP = "127.0.0.1"
		status.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
	}
	if status.StartTime == nil {
		status.StartTime = &now
	}
	sandbox := initDone > 0
	if sandbox && status.PodIP == "" {
		status.PodIP = k.allocateIP()
		status.PodIPs = []corev1.PodIP{{IP: status.PodIP}}
	}
	waitingReason := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		waitingReason = "PodInitializing"
	}
	status.InitContainerStatuses = nil
	for i, c := range pod.Spec.InitContainers {
		if i < initDone {
			status.InitContainerStatuses = append(status.InitContainerStatuses, completedInitContainer(pod, c, now))
			continue
		}
		reason := "PodInitializing"
		if i == 0 {
			reason = "ContainerCreating"
		}
		status.InitContainerStatuses = append(status.InitContainerStatuses, waitingContainer(c, reason))
	}
	status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		status.ContainerStatuses = append(status.ContainerStatuses, waitingContainer(c, waitingReason))
	}
	setCondition(status, corev1.PodReadyToStartContainers, sandbox, "", now)
	if initDone < len(pod.Spec.InitContainers) {
		setCondition(status, corev1.PodInitialized, false, "ContainersNotInitialized", now)
	} else {
		setCondition(status, corev1.PodInitialized, true, "", now)
	}
	setCondition(status, corev1.ContainersReady, false, "ContainersNotReady", now)
	setCondition(status, corev1.PodReady, false, "ContainersNotReady", now)
	return status
}

// runningStatus is the status a kubelet would report for a pod whose containers run. restarted says
// whether the restart of a container for a new image is done (the status keeps the old container until
// then, as a kubelet busy restarting it reports nothing new).
func (k *kubelet) runningStatus(pod *corev1.Pod, now metav1.Time, restarted func(container, image string) bool) *corev1.PodStatus {
	status := pod.Status.DeepCopy()
	status.Phase = corev1.PodRunning
	if status.HostIP == "" {
		status.HostIP = "127.0.0.1"
		status.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
	}
	if status.PodIP == "" {
		status.PodIP = k.allocateIP()
		status.PodIPs = []corev1.PodIP{{IP: status.PodIP}}
	}
	if status.StartTime == nil {
		status.StartTime = &now
	}
	status.InitContainerStatuses = initContainerStatuses(pod, status.InitContainerStatuses, now)
	status.ContainerStatuses = containerStatuses(pod, status.ContainerStatuses, now, restarted)

	gatesReady := true
	for _, gate := range pod.Spec.ReadinessGates {
		if c := findCondition(status.Conditions, gate.ConditionType); c == nil || c.Status != corev1.ConditionTrue {
			gatesReady = false
		}
	}
	setCondition(status, corev1.PodReadyToStartContainers, true, "", now)
	setCondition(status, corev1.PodInitialized, true, "", now)
	setCondition(status, corev1.ContainersReady, true, "", now)
	reason := ""
	if !gatesReady {
		reason = "ReadinessGatesNotReady"
	}
	setCondition(status, corev1.PodReady, gatesReady, reason, now)
	return status
}

// terminate does what a kubelet does with a pod being deleted: it stops the containers (at once here),
// reports the pod terminal (phase Succeeded, containers terminated, not ready), then deletes it with grace
// period 0 and the pod's UID as precondition.
func (k *kubelet) terminate(ctx context.Context, pod *corev1.Pod) error {
	if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		if err := k.patchStatus(ctx, pod, terminalStatus(pod, metav1.Now())); err != nil {
			return err
		}
	}
	k.costs.forget(pod.UID)
	zero := int64(0)
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// terminalStatus is the status a kubelet reports once a deleted pod's containers have stopped: phase
// Succeeded (they stop with exit code 0), every container terminated and not ready.
func terminalStatus(pod *corev1.Pod, now metav1.Time) corev1.PodStatus {
	status := pod.Status.DeepCopy()
	status.Phase = corev1.PodSucceeded
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		if cs.State.Terminated != nil {
			continue
		}
		started := now
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now, ContainerID: cs.ContainerID,
		}}
		cs.Ready, cs.Started = false, boolPtr(false)
	}
	setCondition(status, corev1.PodReadyToStartContainers, false, "", now)
	setCondition(status, corev1.ContainersReady, false, "PodCompleted", now)
	setCondition(status, corev1.PodReady, false, "PodCompleted", now)
	return *status
}

// resize carries out an in-place resize the way the kubelet reports it, one step per status write: a
// container's status resources are what it runs with; when its spec resources differ, the pod first gets
// PodResizeInProgress (status resources unchanged), then the new resources in the status with the condition
// removed, and a restart (restartCount+1) of the container if the resizePolicy of a changed resource is
// RestartContainer. A resize whose cpu or memory requests exceed the node's allocatable is not applied:
// the pod gets PodResizePending with reason Infeasible until the spec changes again.
func (k *kubelet) resize(ctx context.Context, pod *corev1.Pod, status *corev1.PodStatus) error {
	var changed []int
	for i, c := range pod.Spec.Containers {
		cs := findContainerStatus(status.ContainerStatuses, c.Name)
		if cs.Resources == nil {
			cs.Resources = reportedResources(c.Resources) // a new container runs with its spec's resources
			continue
		}
		if !apiequality.Semantic.DeepEqual(*cs.Resources, *reportedResources(c.Resources)) {
			changed = append(changed, i)
		}
	}
	now := metav1.Now()
	if len(changed) == 0 {
		removeCondition(status, corev1.PodResizePending)
		removeCondition(status, corev1.PodResizeInProgress)
		return nil
	}
	if fits, msg, err := k.fitsNode(ctx, pod); err != nil {
		return err
	} else if !fits {
		removeCondition(status, corev1.PodResizeInProgress)
		setResizeCondition(status, corev1.PodResizePending, corev1.PodReasonInfeasible, msg, now)
		return nil
	}
	removeCondition(status, corev1.PodResizePending)
	if findCondition(status.Conditions, corev1.PodResizeInProgress) == nil {
		setResizeCondition(status, corev1.PodResizeInProgress, "", "", now)
		return nil
	}
	for _, i := range changed {
		c := pod.Spec.Containers[i]
		cs := findContainerStatus(status.ContainerStatuses, c.Name)
		if needsRestart(c, *cs.Resources) {
			if cs.State.Running != nil {
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: cs.State.Running.StartedAt, FinishedAt: now,
					ContainerID: cs.ContainerID,
				}}
			}
			cs.RestartCount++
			cs.ContainerID = containerID(pod, c.Name, cs.RestartCount)
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		}
		cs.Resources = reportedResources(c.Resources)
	}
	removeCondition(status, corev1.PodResizeInProgress)
	return nil
}

// reportedResources is what the kubelet reports in a container's status for the spec's resources: the cpu
// and memory requests and limits.
func reportedResources(r corev1.ResourceRequirements) *corev1.ResourceRequirements {
	out := &corev1.ResourceRequirements{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := r.Requests[name]; ok {
			if out.Requests == nil {
				out.Requests = corev1.ResourceList{}
			}
			out.Requests[name] = q
		}
		if q, ok := r.Limits[name]; ok {
			if out.Limits == nil {
				out.Limits = corev1.ResourceList{}
			}
			out.Limits[name] = q
		}
	}
	return out
}

// needsRestart reports whether resizing container c from the resources it runs with (have) restarts it:
// the resizePolicy of a resource whose request or limit changes is RestartContainer.
func needsRestart(c corev1.Container, have corev1.ResourceRequirements) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy != corev1.RestartContainer {
			continue
		}
		wantReq, wantLim := c.Resources.Requests[p.ResourceName], c.Resources.Limits[p.ResourceName]
		haveReq, haveLim := have.Requests[p.ResourceName], have.Limits[p.ResourceName]
		if wantReq.Cmp(haveReq) != 0 || wantLim.Cmp(haveLim) != 0 {
			return true
		}
	}
	return false
}

// fitsNode reports whether the pod's cpu and memory requests fit the allocatable of its node.
func (k *kubelet) fitsNode(ctx context.Context, pod *corev1.Pod) (bool, string, error) {
	node, err := k.client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, "", nil
	}
	if err != nil {
		return false, "", err
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		allocatable, ok := node.Status.Allocatable[name]
		if !ok {
			continue
		}
		var total resource.Quantity
		for _, c := range pod.Spec.Containers {
			if q, ok := c.Resources.Requests[name]; ok {
				total.Add(q)
			}
		}
		if total.Cmp(allocatable) > 0 {
			return false, fmt.Sprintf("Node didn't have enough capacity: %s, requested: %s, capacity: %s", name, total.String(), allocatable.String()), nil
		}
	}
	return true, "", nil
}

func setResizeCondition(status *corev1.PodStatus, t corev1.PodConditionType, reason, message string, now metav1.Time) {
	if c := findCondition(status.Conditions, t); c != nil {
		c.Reason, c.Message = reason, message
		return
	}
	status.Conditions = append(status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now})
}

func removeCondition(status *corev1.PodStatus, t corev1.PodConditionType) {
	out := status.Conditions[:0]
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}

func (k *kubelet) allocateIP() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nextIP++
	return fmt.Sprintf("10.244.%d.%d", k.nextIP/250, k.nextIP%250+1)
}

// containerStatuses keeps running containers as they are and restarts a container whose image changed
// once restarted says the restart is done (until then its status stays as it was).
func containerStatuses(pod *corev1.Pod, current []corev1.ContainerStatus, now metav1.Time, restarted func(container, image string) bool) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		old := findContainerStatus(current, c.Name)
		status := corev1.ContainerStatus{
			Name:        c.Name,
			Image:       c.Image,
			ImageID:     imageID(c.Image),
			Ready:       true,
			Started:     boolPtr(true),
			ContainerID: containerID(pod, c.Name, 0),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}
		switch {
		case old != nil && old.Image == c.Image && old.State.Running != nil:
			status = *old.DeepCopy()
			status.Ready = true
		case old != nil && old.State.Running != nil && !restarted(c.Name, c.Image):
			status = *old.DeepCopy()
		case old != nil && old.State.Running == nil:
			// The first start, after the pod was reported waiting.
		case old != nil:
			// The image changed in place: the kubelet kills the container and starts the new image, with
			// the resources it runs with (a resize alongside is reported by resize).
			status.Resources = old.Resources.DeepCopy()
			status.RestartCount = old.RestartCount + 1
			status.ContainerID = containerID(pod, c.Name, status.RestartCount)
			if old.State.Running != nil {
				status.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: old.State.Running.StartedAt, FinishedAt: now,
					ContainerID: old.ContainerID,
				}}
			}
		}
		out = append(out, status)
	}
	return out
}

// initContainerStatuses reports every init container as completed.
func initContainerStatuses(pod *corev1.Pod, current []corev1.ContainerStatus, now metav1.Time) []corev1.ContainerStatus {
	if len(pod.Spec.InitContainers) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(pod.Spec.InitContainers))
	for _, c := range pod.Spec.InitContainers {
		if old := findContainerStatus(current, c.Name); old != nil && old.Image == c.Image && old.State.Terminated != nil {
			out = append(out, *old.DeepCopy())
			continue
		}
		out = append(out, completedInitContainer(pod, c, now))
	}
	return out
}

func completedInitContainer(pod *corev1.Pod, c corev1.Container, now metav1.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: imageID(c.Image), Ready: true, Started: boolPtr(false),
		ContainerID: containerID(pod, c.Name, 0),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: containerID(pod, c.Name, 0),
		}},
	}
}

// waitingContainer is a container the kubelet has not started yet.
// NeverPulledRegistry is a registry whose images the simulated kubelet never pulls (.invalid is a reserved
// name, RFC 2606), for tests of rollouts that cannot progress: a pod with a container of such an image stays
// Pending with that container waiting in ErrImagePull, and an in-place change to such an image never
// restarts the container.
const NeverPulledRegistry = "never-pulled.invalid/"

// neverPulled reports whether a container's image is in NeverPulledRegistry.
func neverPulled(containers []corev1.Container) bool {
	for _, c := range containers {
		if strings.HasPrefix(c.Image, NeverPulledRegistry) {
			return true
		}
	}
	return false
}

// imagePullStatus is the status of a Pending pod whose containers of NeverPulledRegistry images wait in
// ErrImagePull, or nil when the pod already reports it.
func imagePullStatus(pod *corev1.Pod) *corev1.PodStatus {
	status := pod.Status.DeepCopy()
	changed := false
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		c := findContainer(pod.Spec.Containers, cs.Name)
		if c == nil || !strings.HasPrefix(c.Image, NeverPulledRegistry) || (cs.State.Waiting != nil && cs.State.Waiting.Reason == "ErrImagePull") {
			continue
		}
		*cs = waitingContainer(*c, "ErrImagePull")
		cs.State.Waiting.Message = fmt.Sprintf("failed to pull image %q: the registry %s does not exist", c.Image, strings.TrimSuffix(NeverPulledRegistry, "/"))
		changed = true
	}
	if !changed {
		return nil
	}
	return status
}

func waitingContainer(c corev1.Container, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, Started: boolPtr(false),
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
	}
}

// completedInitContainers is the number of init containers, in order, that have completed.
func completedInitContainers(pod *corev1.Pod) int {
	n := 0
	for _, c := range pod.Spec.InitContainers {
		cs := findContainerStatus(pod.Status.InitContainerStatuses, c.Name)
		if cs == nil || cs.State.Terminated == nil {
			break
		}
		n++
	}
	return n
}

func findContainer(containers []corev1.Container, name string) *corev1.Container {
	for i := range containers {
		if containers[i].Name == name {
			return &containers[i]
		}
	}
	return nil
}

func findContainerStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

func findCondition(conditions []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// setCondition sets a condition, moving its transition time only when its status changes.
func setCondition(status *corev1.PodStatus, t corev1.PodConditionType, value bool, reason string, now metav1.Time) {
	want := corev1.ConditionFalse
	if value {
		want = corev1.ConditionTrue
	}
	if c := findCondition(status.Conditions, t); c != nil {
		if c.Status != want {
			c.Status, c.LastTransitionTime = want, now
		}
		c.Reason = reason
		return
	}
	status.Conditions = append(status.Conditions, corev1.PodCondition{Type: t, Status: want, Reason: reason, LastTransitionTime: now})
}

// imageID is a stable digest-style id for an image reference, as a container runtime reports it.
func imageID(image string) string {
	sum := sha256.Sum256([]byte(image))
	return image + "@sha256:" + hex.EncodeToString(sum[:])
}

func containerID(pod *corev1.Pod, container string, restart int32) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d", pod.UID, container, restart)))
	return "kwok://" + hex.EncodeToString(sum[:16])
}

func boolPtr(b bool) *bool { return &b }
