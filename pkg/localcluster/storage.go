package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/wait"
	storagev1ac "k8s.io/client-go/applyconfigurations/storage/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// The local cluster's storage: two StorageClasses served by a simulated CSI driver whose controller side
// (external-provisioner, external-resizer) and node side (the kubelet's volume expansion) run in the pod
// simulator's process.
const (
	// StorageClassStandard is the default StorageClass (a claim without storageClassName gets it):
	// dynamically provisioned by StorageProvisioner, reclaimPolicy Delete, volumeBindingMode Immediate,
	// allowVolumeExpansion true.
	StorageClassStandard = "standard"
	// StorageClassFixed is the same without volume expansion: kube-apiserver's PersistentVolumeClaimResize
	// admission refuses (403) a larger request on its claims.
	StorageClassFixed = "standard-fixed"
	// StorageProvisioner is the provisioner of both classes and the CSI driver of their volumes.
	StorageProvisioner = "simulated.localcluster.tapp.io"
	// ResizeFailureAnnotation on a claim makes its expansions fail as a CSI driver's would:
	// ResizeFailureController (ControllerExpandVolume fails: ControllerResizeError,
	// ControllerResizeInfeasible) or ResizeFailureNode (NodeExpandVolume fails: NodeResizeError,
	// NodeResizeInfeasible). Removing the annotation lets the expansion be tried again.
	ResizeFailureAnnotation = "localcluster.tapp.io/resize-failure"
	// NotReadyLabel "true" on a node makes kwok turn it NotReady until the label is removed
	// (manifests/kwok.yaml).
	NotReadyLabel           = "localcluster.tapp.io/not-ready"
	ResizeFailureController = "controller"
	ResizeFailureNode       = "node"
)

// Names the real components use, from k8s.io/component-helpers/storage/volume and the CSI sidecars.
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annBetaStorageClass       = "volume.beta.kubernetes.io/storage-class"
	annDefaultStorageClass    = "storageclass.kubernetes.io/is-default-class"
	annProvisionedBy          = "pv.kubernetes.io/provisioned-by"
	// provisionerFinalizer is the external-provisioner's finalizer on the volumes it provisions with
	// reclaimPolicy Delete (HonorPVReclaimPolicy): the backing volume goes before the object.
	provisionerFinalizer = "external-provisioner.volume.kubernetes.io/finalizer"
	// fsResizePendingMessage is the message of FileSystemResizePending set by the external-resizer.
	fsResizePendingMessage = "Waiting for user to (re-)start a pod to finish file system resize of volume on node."
)

// storageWorkers is the number of workers of the storage stand-in: claims come one per instance, far fewer
// than pod status writes.
const storageWorkers = 4

// claimIndex indexes pods by the "namespace/name" of the claims they mount.
const claimIndex = "localcluster.tapp.io/claims"

// applyStorageClasses creates or updates (server-side apply, so it is idempotent on a cluster started
// again on its own data) the two StorageClasses. A class of that name whose immutable fields (provisioner,
// reclaimPolicy, volumeBindingMode) differ, as one left by another version, is replaced.
func applyStorageClasses(ctx context.Context, client kubernetes.Interface) error {
	classes := client.StorageV1().StorageClasses()
	for _, sc := range []*storagev1ac.StorageClassApplyConfiguration{
		storageClass(StorageClassStandard, true).WithAnnotations(map[string]string{annDefaultStorageClass: "true"}),
		storageClass(StorageClassFixed, false),
	} {
		opts := metav1.ApplyOptions{FieldManager: "localcluster", Force: true}
		_, err := classes.Apply(ctx, sc, opts)
		if apierrors.IsInvalid(err) {
			if err = classes.Delete(ctx, *sc.Name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
				_, err = classes.Apply(ctx, sc, opts)
			}
		}
		if err != nil {
			return fmt.Errorf("applying StorageClass %s: %w", *sc.Name, err)
		}
	}
	return nil
}

func storageClass(name string, expandable bool) *storagev1ac.StorageClassApplyConfiguration {
	return storagev1ac.StorageClass(name).
		WithProvisioner(StorageProvisioner).
		WithReclaimPolicy(corev1.PersistentVolumeReclaimDelete).
		WithVolumeBindingMode(storagev1.VolumeBindingImmediate).
		WithAllowVolumeExpansion(expandable)
}

// storage stands in for the CSI driver of StorageProvisioner: as the external-provisioner it creates a
// PersistentVolume for every claim kube-controller-manager's PV controller hands to StorageProvisioner
// (which then binds the two) and deletes the Released ones of reclaimPolicy Delete; as the external-resizer
// and the kubelet it expands the volume of a claim whose request grew, one status write per step, with
// the fields of RecoverVolumeExpansionFailure (nextExpansion), and records the Events they record
// (stepEvent). It shares the pod simulator's client and informer factory and stops with it.
type storage struct {
	client      kubernetes.Interface
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	claims      corelisters.PersistentVolumeClaimLister
	volumes     corelisters.PersistentVolumeLister
	classes     storagelisters.StorageClassLister
	pods        cache.Indexer
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]
}

// newStorage registers the storage stand-in's informers and handlers on factory, whose pod informer is
// pods (before the factory starts).
func newStorage(ctx context.Context, client kubernetes.Interface, factory informers.SharedInformerFactory, pods cache.SharedIndexInformer) (*storage, error) {
	claims := factory.Core().V1().PersistentVolumeClaims()
	volumes := factory.Core().V1().PersistentVolumes()
	classes := factory.Storage().V1().StorageClasses()
	s := &storage{
		client:  client,
		claims:  claims.Lister(),
		volumes: volumes.Lister(),
		classes: classes.Lister(),
		pods:    pods.GetIndexer(),
		synced:  []cache.InformerSynced{claims.Informer().HasSynced, volumes.Informer().HasSynced, classes.Informer().HasSynced},
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	s.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
	s.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	s.recorder = s.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: StorageProvisioner})
	if err := pods.AddIndexers(cache.Indexers{claimIndex: podClaims}); err != nil {
		return nil, err
	}
	onClaim := func(obj interface{}) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			s.queue.Add("claim/" + key)
		}
	}
	if _, err := claims.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onClaim, UpdateFunc: func(_, obj interface{}) { onClaim(obj) },
	}); err != nil {
		return nil, err
	}
	onVolume := func(obj interface{}) {
		pv, ok := obj.(*corev1.PersistentVolume)
		if !ok {
			return
		}
		s.queue.Add("volume/" + pv.Name)
		if ref := pv.Spec.ClaimRef; ref != nil {
			s.queue.Add("claim/" + ref.Namespace + "/" + ref.Name)
		}
	}
	if _, err := volumes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onVolume, UpdateFunc: func(_, obj interface{}) { onVolume(obj) },
	}); err != nil {
		return nil, err
	}
	// A pod placed on a node mounts its claims there: a node expansion waiting for that can go on.
	onPod := func(obj interface{}) {
		keys, _ := podClaims(obj)
		for _, key := range keys {
			s.queue.Add("claim/" + key)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(old, obj interface{}) {
			if o, ok := old.(*corev1.Pod); ok && o.Spec.NodeName == "" {
				onPod(obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// podClaims returns the "namespace/name" of the claims a pod placed on a node mounts.
func podClaims(obj interface{}) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil, nil
	}
	var keys []string
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			keys = append(keys, pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		}
	}
	return keys, nil
}

// run starts the workers once the informers have synced; they stop when ctx ends (after the queue is
// shut down), each calling workers.Done.
func (s *storage) run(ctx context.Context, workers *sync.WaitGroup) error {
	if !cache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return fmt.Errorf("storage informers did not sync")
	}
	for i := 0; i < storageWorkers; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			wait.UntilWithContext(ctx, s.work, time.Second)
		}()
	}
	return nil
}

func (s *storage) work(ctx context.Context) {
	for {
		key, quit := s.queue.Get()
		if quit {
			return
		}
		if err := s.sync(ctx, key); err != nil && ctx.Err() == nil {
			s.queue.AddRateLimited(key)
		} else {
			s.queue.Forget(key)
		}
		s.queue.Done(key)
	}
}

func (s *storage) sync(ctx context.Context, key string) error {
	kind, name, _ := strings.Cut(key, "/")
	if kind == "volume" {
		return s.syncVolume(ctx, name)
	}
	ns, name, _ := strings.Cut(name, "/")
	claim, err := s.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if claim.Spec.VolumeName == "" {
		return s.provision(ctx, claim)
	}
	pv, err := s.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	step := nextExpansion(claim, pv, claim.Annotations[ResizeFailureAnnotation], s.inUse(claim), metav1.Now())
	if wrote, err := s.write(ctx, claim, pv, step); err != nil || !wrote {
		return err
	}
	if eventType, reason, message := stepEvent(step.name, pv.Name, claim.Annotations[ResizeFailureAnnotation]); reason != "" {
		s.recorder.Event(claim, eventType, reason, message)
	}
	return nil
}

// write makes an expansion step's write (of the volume's capacity or the claim's status, with the
// resourceVersion read: a step computed from a stale copy conflicts and is computed again) and reports
// whether it made one.
func (s *storage) write(ctx context.Context, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, step expansionStep) (bool, error) {
	if step.capacity != nil {
		patch, err := json.Marshal(map[string]interface{}{
			"metadata": map[string]interface{}{"resourceVersion": pv.ResourceVersion},
			"spec":     map[string]interface{}{"capacity": map[string]interface{}{"storage": step.capacity.String()}},
		})
		if err != nil {
			return false, err
		}
		_, err = s.client.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err == nil, err
	}
	if step.status != nil && !apiequality.Semantic.DeepEqual(*step.status, claim.Status) {
		return true, s.patchClaimStatus(ctx, claim, *step.status)
	}
	return false, nil
}

// inUse reports whether a pod placed on a node, not terminating, mounts the claim: only then does the
// kubelet expand its file system.
func (s *storage) inUse(claim *corev1.PersistentVolumeClaim) bool {
	objs, err := s.pods.ByIndex(claimIndex, claim.Namespace+"/"+claim.Name)
	if err != nil {
		return false
	}
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return true
		}
	}
	return false
}

// provision creates the volume of a claim handed to StorageProvisioner, as the external-provisioner does;
// kube-controller-manager's PV controller binds them.
func (s *storage) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	className := claimClass(claim)
	if className == "" {
		return nil
	}
	class, err := s.classes.Get(className)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !shouldProvision(claim, class) {
		return nil
	}
	if _, err := s.volumes.Get(volumeName(claim)); err == nil {
		return nil
	}
	pv, err := s.client.CoreV1().PersistentVolumes().Create(ctx, provisionedVolume(claim, class), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	s.recorder.Eventf(claim, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", pv.Name)
	return nil
}

// syncVolume deletes a volume of StorageProvisioner once it is Released with reclaimPolicy Delete, as the
// external-provisioner does: the backing volume first (nothing to do here), then its finalizer, then the
// object.
func (s *storage) syncVolume(ctx context.Context, name string) error {
	pv, err := s.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !shouldDelete(pv) {
		return nil
	}
	if i := indexOf(pv.Finalizers, provisionerFinalizer); i >= 0 {
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, provisionerFinalizer, i)
		if _, err := s.client.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	if pv.DeletionTimestamp != nil {
		return nil
	}
	err = s.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// patchClaimStatus writes a claim's status as the CSI sidecars and the kubelet do: a strategic merge patch
// of status from the claim as read, with its resourceVersion.
func (s *storage) patchClaimStatus(ctx context.Context, claim *corev1.PersistentVolumeClaim, status corev1.PersistentVolumeClaimStatus) error {
	updated := claim.DeepCopy()
	updated.Status = status
	oldData, err := json.Marshal(claim)
	if err != nil {
		return err
	}
	newData, err := json.Marshal(updated)
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, claim)
	if err != nil {
		return err
	}
	var fields map[string]interface{}
	if err := json.Unmarshal(patch, &fields); err != nil {
		return err
	}
	meta, _ := fields["metadata"].(map[string]interface{})
	if meta == nil {
		meta = map[string]interface{}{}
	}
	meta["resourceVersion"] = claim.ResourceVersion
	fields["metadata"] = meta
	if patch, err = json.Marshal(fields); err != nil {
		return err
	}
	_, err = s.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Patch(ctx, claim.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// claimClass is the claim's StorageClass name (the beta annotation first, as the PV controller reads it).
func claimClass(claim *corev1.PersistentVolumeClaim) string {
	if class, ok := claim.Annotations[annBetaStorageClass]; ok {
		return class
	}
	if claim.Spec.StorageClassName != nil {
		return *claim.Spec.StorageClassName
	}
	return ""
}

// shouldProvision reports whether the external-provisioner of StorageProvisioner would provision a volume
// for claim of class: the class is StorageProvisioner's, the PV controller has handed the claim to it
// (annotation), the claim is not bound to a volume and not being deleted.
func shouldProvision(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) bool {
	if class.Provisioner != StorageProvisioner || claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil {
		return false
	}
	return claim.Annotations[annStorageProvisioner] == StorageProvisioner || claim.Annotations[annBetaStorageProvisioner] == StorageProvisioner
}

// volumeName is the name the external-provisioner gives a claim's volume: "pvc-" and the claim's UID.
func volumeName(claim *corev1.PersistentVolumeClaim) string { return "pvc-" + string(claim.UID) }

// provisionedVolume is the volume the external-provisioner creates for claim of class: a CSI volume of
// StorageProvisioner with the requested capacity, the claim's access modes and volume mode, the class's
// reclaim policy and mount options, and a claimRef to the claim (with its UID) that the PV controller
// completes into a binding.
func provisionedVolume(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) *corev1.PersistentVolume {
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        volumeName(claim),
			Annotations: map[string]string{annProvisionedBy: StorageProvisioner},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes: append([]corev1.PersistentVolumeAccessMode(nil), claim.Spec.AccessModes...),
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion,
			},
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              class.Name,
			MountOptions:                  append([]string(nil), class.MountOptions...),
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver:       StorageProvisioner,
				VolumeHandle: "simulated-" + string(claim.UID),
			}},
		},
	}
	if claim.Spec.VolumeMode == nil || *claim.Spec.VolumeMode == corev1.PersistentVolumeFilesystem {
		pv.Spec.CSI.FSType = "ext4"
	}
	if reclaim == corev1.PersistentVolumeReclaimDelete {
		pv.Finalizers = []string{provisionerFinalizer}
	}
	return pv
}

// shouldDelete reports whether a volume is one of StorageProvisioner's to delete: Released, reclaimPolicy
// Delete, provisioned by StorageProvisioner.
func shouldDelete(pv *corev1.PersistentVolume) bool {
	return pv.Annotations[annProvisionedBy] == StorageProvisioner &&
		pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete &&
		pv.Status.Phase == corev1.VolumeReleased
}

// expansionStep is one write of a volume expansion: a new capacity of the volume, or a new status of
// the claim (nil: nothing to write).
type expansionStep struct {
	name     string
	capacity *resource.Quantity
	status   *corev1.PersistentVolumeClaimStatus
}

// nextExpansion is the next write of the expansion of claim's volume pv, a volume of StorageProvisioner
// bound to it: the external-resizer's while the volume is smaller than asked for, then the kubelet's
// once a pod placed on a node mounts the claim (inUse), each as the real component makes it with
// RecoverVolumeExpansionFailure (GA):
//
//   - controller: status.allocatedResources[storage] = the new size, allocatedResourceStatuses[storage]
//     ControllerResizeInProgress, condition Resizing (other resize conditions removed); the volume's
//     capacity; then NodeResizePending with FileSystemResizePending added (the driver needs a file system
//     resize on the node).
//   - node: NodeResizeInProgress; then status.capacity = the volume's capacity, the storage entry of
//     allocatedResourceStatuses and every resize condition removed.
//
// fault is the claim's ResizeFailureAnnotation: "controller" makes the controller step fail as an
// infeasible ControllerExpandVolume (ControllerResizeInfeasible, condition ControllerResizeError), "node"
// the node step as an infeasible NodeExpandVolume (NodeResizeInfeasible, condition NodeResizeError); a
// failed step is tried again once the annotation is gone or the request changes.
func nextExpansion(claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, fault string, inUse bool, now metav1.Time) expansionStep {
	if claim.Status.Phase != corev1.ClaimBound || pv.Spec.CSI == nil || pv.Spec.CSI.Driver != StorageProvisioner ||
		pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID || claim.DeletionTimestamp != nil {
		return expansionStep{}
	}
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := claim.Status.Capacity[corev1.ResourceStorage]
	volumeSize := pv.Spec.Capacity[corev1.ResourceStorage]
	allocated, hasAllocated := claim.Status.AllocatedResources[corev1.ResourceStorage]
	status := claim.Status.DeepCopy()
	with := func(name string, state corev1.ClaimResourceStatus, keep bool, conditions ...corev1.PersistentVolumeClaimCondition) expansionStep {
		status.Conditions = mergeResizeConditions(status.Conditions, conditions, keep)
		if status.AllocatedResourceStatuses == nil {
			status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{}
		}
		status.AllocatedResourceStatuses[corev1.ResourceStorage] = state
		return expansionStep{name: name, status: status}
	}
	condition := func(t corev1.PersistentVolumeClaimConditionType, message string) corev1.PersistentVolumeClaimCondition {
		return corev1.PersistentVolumeClaimCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now, Message: message}
	}
	start := func(size resource.Quantity) expansionStep {
		if status.AllocatedResources == nil {
			status.AllocatedResources = corev1.ResourceList{}
		}
		status.AllocatedResources[corev1.ResourceStorage] = size
		return with("ControllerResizeInProgress", corev1.PersistentVolumeClaimControllerResizeInProgress, false, condition(corev1.PersistentVolumeClaimResizing, ""))
	}
	switch claim.Status.AllocatedResourceStatuses[corev1.ResourceStorage] {
	case corev1.PersistentVolumeClaimControllerResizeInProgress:
		target := requested
		if hasAllocated {
			target = allocated
		}
		if volumeSize.Cmp(target) < 0 {
			if fault == ResizeFailureController {
				return with("ControllerResizeInfeasible", corev1.PersistentVolumeClaimControllerResizeInfeasible, true,
					condition(corev1.PersistentVolumeClaimControllerResizeError, fmt.Sprintf(
						"failed to expand pvc with rpc error: code = OutOfRange desc = simulated ControllerExpandVolume failure to %s (%s=%s)",
						target.String(), ResizeFailureAnnotation, fault)))
			}
			return expansionStep{name: "VolumeCapacity", capacity: &target}
		}
		return with("NodeResizePending", corev1.PersistentVolumeClaimNodeResizePending, true,
			condition(corev1.PersistentVolumeClaimFileSystemResizePending, fsResizePendingMessage))
	case corev1.PersistentVolumeClaimControllerResizeInfeasible:
		if requested.Cmp(capacity) <= 0 || (fault == ResizeFailureController && hasAllocated && allocated.Cmp(requested) == 0) {
			return expansionStep{}
		}
		return start(requested)
	case corev1.PersistentVolumeClaimNodeResizePending:
		if !inUse {
			return expansionStep{}
		}
		return with("NodeResizeInProgress", corev1.PersistentVolumeClaimNodeResizeInProgress, true)
	case corev1.PersistentVolumeClaimNodeResizeInProgress:
		if !inUse {
			return expansionStep{}
		}
		if fault == ResizeFailureNode {
			return with("NodeResizeInfeasible", corev1.PersistentVolumeClaimNodeResizeInfeasible, true,
				condition(corev1.PersistentVolumeClaimNodeResizeError, fmt.Sprintf(
					"failed to expand pvc with rpc error: code = OutOfRange desc = simulated NodeExpandVolume failure to %s (%s=%s)",
					volumeSize.String(), ResizeFailureAnnotation, fault)))
		}
		if status.Capacity == nil {
			status.Capacity = corev1.ResourceList{}
		}
		status.Capacity[corev1.ResourceStorage] = volumeSize
		delete(status.AllocatedResourceStatuses, corev1.ResourceStorage)
		if len(status.AllocatedResourceStatuses) == 0 {
			status.AllocatedResourceStatuses = nil
		}
		status.Conditions = mergeResizeConditions(status.Conditions, nil, false)
		return expansionStep{name: "Finished", status: status}
	case corev1.PersistentVolumeClaimNodeResizeInfeasible:
		if fault == ResizeFailureNode {
			return expansionStep{}
		}
		// The external-resizer makes the node try again.
		return with("NodeResizePending", corev1.PersistentVolumeClaimNodeResizePending, true,
			condition(corev1.PersistentVolumeClaimFileSystemResizePending, fsResizePendingMessage))
	}
	if requested.Cmp(capacity) <= 0 {
		return expansionStep{}
	}
	return start(requested)
}

// stepEvent is the Event (type, reason, message; no reason: none) the external-resizer or the kubelet
// records on the claim with an expansion step of its volume.
func stepEvent(step, volume, fault string) (string, string, string) {
	switch step {
	case "ControllerResizeInProgress":
		return corev1.EventTypeNormal, "Resizing", fmt.Sprintf("External resizer is resizing volume %s", volume)
	case "ControllerResizeInfeasible":
		return corev1.EventTypeWarning, "VolumeResizeFailed", fmt.Sprintf("resize volume %q by resizer %q failed: simulated ControllerExpandVolume failure (%s=%s)", volume, StorageProvisioner, ResizeFailureAnnotation, fault)
	case "NodeResizePending":
		return corev1.EventTypeNormal, "FileSystemResizeRequired", "Require file system resize of volume on node"
	case "NodeResizeInfeasible":
		return corev1.EventTypeWarning, "FileSystemResizeFailed", fmt.Sprintf("MountVolume.NodeExpandVolume failed for volume %q: simulated NodeExpandVolume failure (%s=%s)", volume, ResizeFailureAnnotation, fault)
	case "Finished":
		return corev1.EventTypeNormal, "FileSystemResizeSuccessful", fmt.Sprintf("MountVolume.NodeExpandVolume succeeded for volume %q", volume)
	}
	return "", "", ""
}

// resizeConditions are the claim conditions of a volume expansion.
var resizeConditions = map[corev1.PersistentVolumeClaimConditionType]bool{
	corev1.PersistentVolumeClaimResizing:                true,
	corev1.PersistentVolumeClaimFileSystemResizePending: true,
	corev1.PersistentVolumeClaimControllerResizeError:   true,
	corev1.PersistentVolumeClaimNodeResizeError:         true,
}

// mergeResizeConditions sets the given resize conditions, keeping a present one of the same status as it
// is, and keeps the other resize conditions only if keep; conditions of other types are left alone.
func mergeResizeConditions(current, set []corev1.PersistentVolumeClaimCondition, keep bool) []corev1.PersistentVolumeClaimCondition {
	var out []corev1.PersistentVolumeClaimCondition
	done := map[corev1.PersistentVolumeClaimConditionType]bool{}
	for _, c := range current {
		if !resizeConditions[c.Type] {
			out = append(out, c)
			continue
		}
		if i := indexOfCondition(set, c.Type); i >= 0 {
			done[c.Type] = true
			if set[i].Status != c.Status || set[i].Message != c.Message {
				c = set[i]
			}
			out = append(out, c)
		} else if keep {
			out = append(out, c)
		}
	}
	for _, c := range set {
		if !done[c.Type] {
			out = append(out, c)
		}
	}
	return out
}

func indexOfCondition(conditions []corev1.PersistentVolumeClaimCondition, t corev1.PersistentVolumeClaimConditionType) int {
	for i := range conditions {
		if conditions[i].Type == t {
			return i
		}
	}
	return -1
}

func indexOf(list []string, s string) int {
	for i := range list {
		if list[i] == s {
			return i
		}
	}
	return -1
}
