package tapp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/statuswrite"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/workloop"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	tappinformers "github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions/tkestack/v1"
	tapplisters "github.com/tapp-io/tapp-apiserver/pkg/generated/listers/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

// Name is the controller's name in --controllers, the workqueue and metrics.
const Name = "tapp"

// metrics are the controller's tapp_controller_sync_duration_seconds and tapp_controller_actions_total.
var metrics = workloop.NewMetrics(Name+"_controller", "TApp")

// Pod indexes.
const (
	byControllerUID = "controllerUID"
	byNodeName      = "nodeName"
)

// Controller turns TApps into pods.
type Controller struct {
	kubeClient kubernetes.Interface
	client     versioned.Interface
	tapps      tapplisters.TAppLister
	pods       corelisters.PodLister
	podIndex   cache.Indexer
	claims     corelisters.PersistentVolumeClaimLister
	classes    storagelisters.StorageClassLister
	nodes      corelisters.NodeLister
	revisions  appslisters.ControllerRevisionLister
	// revisionIndex indexes the revisions by controller UID (history.ControllerUIDIndex).
	revisionIndex cache.Indexer

	queue workqueue.TypedRateLimitingInterface[string]
	loop  *workloop.Loop
	// expectations holds a TApp back while the pod and claim caches have not shown its writes of pods and
	// claims.
	expectations *expectations.Expectations[writtenObject]
	// statusWritten holds each TApp as its last status write returned, until the cache shows it.
	statusWritten statuswrite.Written[*tkestackv1.TApp]
	// statusPacer paces the status writes that only report the instances' progress (statusPace).
	statusPacer statusPacer
	// planCosts sets how long the pod events of each TApp are batched, from its last planning.
	planCosts planCosts
	recorder  record.EventRecorder
	updater   *inplace.Updater
	// clock is the controller's one clock: its loop and queue (delays, backoff), its expectations, the
	// in-place updater and the plans and status writes all read it.
	clock clock.WithTicker
	// gateWrites holds the readiness-gate writes of pods that the pod cache may not show yet, so that a sync
	// working from an older copy of a pod does not make them again.
	gateWrites gateWrites
	// hookWaits holds the lifecycle hook waits last reported by an Event, by pod UID.
	hookWaits hookWaits
}

// writtenObject names a pod or a claim of the TApp's namespace that the controller writes, for its
// expectations.
type writtenObject struct {
	claim bool // a PersistentVolumeClaim; a pod otherwise
	name  string
}

func podObject(name string) writtenObject   { return writtenObject{name: name} }
func claimObject(name string) writtenObject { return writtenObject{claim: true, name: name} }

// tappKind is what a pod's controller reference names when the pod belongs to a TApp.
var tappKind = tkestackv1.SchemeGroupVersion.WithKind("TApp").GroupKind()

// NewController builds the TApp controller and registers its informers (pods, claims, storage classes, nodes,
// TApps, ControllerRevisions) with their factories, which the caller starts. podStatusClient makes the
// readiness-gate condition writes; it may be kubeClient, or a client with a rate limit of its own. clk is
// the controller's clock (clock.RealClock{} outside tests), shared by everything of it that reads the time.
func NewController(kubeClient, podStatusClient kubernetes.Interface, client versioned.Interface,
	podInformer coreinformers.PodInformer, claimInformer coreinformers.PersistentVolumeClaimInformer,
	classInformer storageinformers.StorageClassInformer, nodeInformer coreinformers.NodeInformer, tappInformer tappinformers.TAppInformer,
	revisionInformer appsinformers.ControllerRevisionInformer, recorder record.EventRecorder,
	clk clock.WithTicker) (*Controller, error) {
	c := &Controller{
		kubeClient:    kubeClient,
		client:        client,
		tapps:         tappInformer.Lister(),
		pods:          podInformer.Lister(),
		podIndex:      podInformer.Informer().GetIndexer(),
		claims:        claimInformer.Lister(),
		classes:       classInformer.Lister(),
		nodes:         nodeInformer.Lister(),
		revisions:     revisionInformer.Lister(),
		revisionIndex: revisionInformer.Informer().GetIndexer(),
		recorder:      recorder,
		updater: &inplace.Updater{Client: kubeClient, StatusClient: podStatusClient, Clock: clk,
			FieldManager: fieldManager},
		expectations: expectations.New[writtenObject](clk),
		clock:        clk,
	}
	c.loop = workloop.New(Name, "TApp", clk, c.sync, metrics)
	c.queue = c.loop.Queue
	if err := errors.Join(
		history.AddControllerUIDIndex(revisionInformer.Informer()),
		podInformer.Informer().AddIndexers(cache.Indexers{
			byControllerUID: func(obj any) ([]string, error) {
				if ref := metav1.GetControllerOfNoCopy(obj.(*corev1.Pod)); ref != nil {
					return []string{string(ref.UID)}, nil
				}
				return nil, nil
			},
			byNodeName: func(obj any) ([]string, error) {
				if n := obj.(*corev1.Pod).Spec.NodeName; n != "" {
					return []string{n}, nil
				}
				return nil, nil
			},
		}),
		c.loop.Watch(tappInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.loop.Enqueue, UpdateFunc: c.tappUpdated, DeleteFunc: c.tappDeleted,
		}),
		c.loop.Watch(podInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.podAdded, UpdateFunc: c.podUpdated, DeleteFunc: c.podDeleted,
		}),
		c.loop.Watch(claimInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.claimChanged, UpdateFunc: func(_, obj any) { c.claimChanged(obj) }, DeleteFunc: c.claimDeleted,
		}),
		c.loop.Watch(classInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.storageClassChanged, UpdateFunc: func(_, obj any) { c.storageClassChanged(obj) },
		}),
		c.loop.Watch(nodeInformer.Informer(), cache.ResourceEventHandlerFuncs{
			UpdateFunc: c.nodeUpdated, DeleteFunc: c.nodeDeleted,
		}),
		c.loop.Watch(revisionInformer.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: c.revisionDeleted}),
	); err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs TApps with workers goroutines until ctx is done, and returns once the workers stopped.
func (c *Controller) Run(ctx context.Context, workers int) { c.loop.Run(ctx, workers) }

// tappUpdated enqueues a changed TApp, unless only its status changed: the status is this controller's own
// write, which follows a sync, and a sync decides from the spec, the metadata and the pods, whose changes are
// events of their own. Without this, every status write of a busy TApp would cause one more sync of all its
// pods, and that sync one more status write. A periodic resync (the same resourceVersion) is enqueued: it is
// the controllers' safety net, and pod resyncs rely on it (podUpdated).
func (c *Controller) tappUpdated(oldObj, newObj any) {
	old, cur := oldObj.(*tkestackv1.TApp), newObj.(*tkestackv1.TApp)
	if key, err := cache.MetaNamespaceKeyFunc(cur); err == nil {
		c.statusWritten.Seen(key, cur)
	}
	if old.ResourceVersion != cur.ResourceVersion && statusOnly(old, cur) {
		return
	}
	c.loop.Enqueue(cur)
}

// statusOnly reports whether two versions of a TApp differ at most in their status, resourceVersion and
// managed fields.
func statusOnly(old, cur *tkestackv1.TApp) bool {
	return old.Generation == cur.Generation && old.UID == cur.UID &&
		old.DeletionTimestamp.Equal(cur.DeletionTimestamp) &&
		apiequality.Semantic.DeepEqual(old.Labels, cur.Labels) &&
		apiequality.Semantic.DeepEqual(old.Annotations, cur.Annotations) &&
		apiequality.Semantic.DeepEqual(old.Finalizers, cur.Finalizers) &&
		apiequality.Semantic.DeepEqual(old.OwnerReferences, cur.OwnerReferences)
}

// tappDeleted forgets the expectations and the last status write of a deleted TApp (one of the same name may
// follow) and enqueues it.
func (c *Controller) tappDeleted(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.expectations.Forget(key)
		c.statusWritten.Forget(key)
		c.statusPacer.forget(key)
		c.planCosts.forget(key)
	}
	c.loop.Enqueue(obj)
}

// ownerKey returns the key of the TApp that controls pod, if that TApp exists with the same UID.
func (c *Controller) ownerKey(pod *corev1.Pod) (string, bool) {
	ref := ownership.ControllerOf(pod, tappKind)
	if ref == nil {
		return "", false
	}
	tapp, err := c.tapps.TApps(pod.Namespace).Get(ref.Name)
	if err != nil || tapp.UID != ref.UID {
		return "", false
	}
	return pod.Namespace + "/" + ref.Name, true
}

// enqueueSelecting enqueues the TApps of the pod's namespace whose selector matches it (they may adopt it),
// and the TApp whose instance name <tapp>-<id> it holds (a conflict that may just have been resolved).
func (c *Controller) enqueueSelecting(pod *corev1.Pod) {
	if i := strings.LastIndexByte(pod.Name, '-'); i > 0 {
		if _, ok := policy.ParseID(pod.Name[i+1:]); ok {
			if tapp, err := c.tapps.TApps(pod.Namespace).Get(pod.Name[:i]); err == nil {
				c.loop.Enqueue(tapp)
			}
		}
	}
	tapps, err := c.tapps.TApps(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, tapp := range tapps {
		if tapp.Spec.Selector == nil {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(tapp.Spec.Selector); err == nil && sel.Matches(labels.Set(pod.Labels)) {
			c.loop.Enqueue(tapp)
		}
	}
}

// enqueueBatched enqueues the TApp key after its pod event batch (planCosts.batch).
func (c *Controller) enqueueBatched(key string) { c.queue.AddAfter(key, c.planCosts.batch(key)) }

func (c *Controller) podAdded(obj any) {
	pod := obj.(*corev1.Pod)
	key, ok := c.ownerKey(pod)
	if !ok {
		if metav1.GetControllerOfNoCopy(pod) == nil {
			c.enqueueSelecting(pod)
		}
		return
	}
	c.enqueueBatched(key)
}

func (c *Controller) podUpdated(oldObj, newObj any) {
	oldPod, pod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	if oldPod.ResourceVersion == pod.ResourceVersion {
		return // periodic resync: the TApps are resynced themselves
	}
	if key, ok := c.ownerKey(oldPod); ok {
		if ref := metav1.GetControllerOfNoCopy(pod); ref == nil || ref.UID != metav1.GetControllerOfNoCopy(oldPod).UID {
			c.queue.Add(key) // released
		}
	}
	key, ok := c.ownerKey(pod)
	if !ok {
		if metav1.GetControllerOfNoCopy(pod) == nil {
			c.enqueueSelecting(pod)
		}
		return
	}
	c.enqueueBatched(key)
}

func (c *Controller) podDeleted(obj any) {
	pod, ok := workloop.Deleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	c.gateWrites.forget(pod.UID)
	c.hookWaits.forget(pod.UID)
	key, ok := c.ownerKey(pod)
	if !ok {
		if metav1.GetControllerOfNoCopy(pod) == nil {
			c.enqueueSelecting(pod)
		}
		return
	}
	c.queue.Add(key)
}

// claimDeleted enqueues the TApps whose claims follow their templates and of which the claim was an
// instance claim: an instance whose claim is recreated waits for the old one to be gone.
func (c *Controller) claimDeleted(obj any) {
	if claim, ok := workloop.Deleted[*corev1.PersistentVolumeClaim](obj); ok {
		c.enqueueFollowing(claim)
	}
}

// enqueueFollowing enqueues the TApps of the claim's namespace whose claims follow their templates
// (spec.volumeClaimUpdateStrategy.type set) and whose instance claim it is, whatever its labels.
func (c *Controller) enqueueFollowing(claim *corev1.PersistentVolumeClaim) {
	tapps, err := c.tapps.TApps(claim.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, tapp := range tapps {
		if policy.VolumeClaimUpdateType(tapp) != "" && policy.IsInstanceClaim(tapp, claim.Name) {
			c.loop.Enqueue(tapp)
		}
	}
}

// claimChanged enqueues the TApp that controls a claim, or, for an orphan claim, the TApps whose selector
// matches it (they may adopt it) and those whose instance claim it is (enqueueFollowing).
func (c *Controller) claimChanged(obj any) {
	claim, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	if metav1.GetControllerOfNoCopy(claim) == nil {
		c.enqueueFollowing(claim)
		tapps, err := c.tapps.TApps(claim.Namespace).List(labels.Everything())
		if err != nil {
			return
		}
		for _, tapp := range tapps {
			if len(tapp.Spec.VolumeClaimTemplates) == 0 || tapp.Spec.Selector == nil {
				continue
			}
			if sel, err := metav1.LabelSelectorAsSelector(tapp.Spec.Selector); err == nil && !sel.Empty() && sel.Matches(labels.Set(claim.Labels)) {
				c.loop.Enqueue(tapp)
			}
		}
		return
	}
	if ref := ownership.ControllerOf(claim, tappKind); ref != nil {
		if tapp, err := c.tapps.TApps(claim.Namespace).Get(ref.Name); err == nil && tapp.UID == ref.UID {
			c.loop.Enqueue(tapp)
		}
	}
}

// storageClassChanged enqueues the TApps whose claims follow their templates
// (spec.volumeClaimUpdateStrategy.type set): whether a class allows expansion decides their plans.
func (c *Controller) storageClassChanged(any) {
	tapps, err := c.tapps.List(labels.Everything())
	if err != nil {
		return
	}
	for _, tapp := range tapps {
		if policy.VolumeClaimUpdateType(tapp) != "" && len(tapp.Spec.VolumeClaimTemplates) > 0 {
			c.loop.Enqueue(tapp)
		}
	}
}

// storage is what the policy needs of the TApp's claims and the cluster's storage classes while its
// claims follow their templates (spec.volumeClaimUpdateStrategy.type set): the cached claims of its namespace
// named as its instances' claims (whatever their labels: a selector of matchExpressions alone does not put
// its labels on the claims), and whether each class allows volume expansion.
func (c *Controller) storage(tapp *tkestackv1.TApp) policy.Storage {
	if policy.VolumeClaimUpdateType(tapp) == "" || len(tapp.Spec.VolumeClaimTemplates) == 0 {
		return policy.Storage{}
	}
	s := policy.Storage{Expansion: map[string]bool{}}
	if all, err := c.claims.PersistentVolumeClaims(tapp.Namespace).List(labels.Everything()); err == nil {
		for _, claim := range all {
			if policy.IsInstanceClaim(tapp, claim.Name) {
				s.Claims = append(s.Claims, claim)
			}
		}
	}
	if classes, err := c.classes.List(labels.Everything()); err == nil {
		for _, class := range classes {
			s.Expansion[class.Name] = class.AllowVolumeExpansion != nil && *class.AllowVolumeExpansion
		}
	}
	return s
}

// claimsOf returns the claims of the TApp's namespace it controls or its selector matches (cache objects:
// read only), or nothing when the TApp has no volumeClaimTemplates.
func (c *Controller) claimsOf(tapp *tkestackv1.TApp) ([]*corev1.PersistentVolumeClaim, error) {
	if len(tapp.Spec.VolumeClaimTemplates) == 0 {
		return nil, nil
	}
	all, err := c.claims.PersistentVolumeClaims(tapp.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var sel labels.Selector
	if tapp.Spec.Selector != nil {
		if sel, err = metav1.LabelSelectorAsSelector(tapp.Spec.Selector); err != nil {
			return nil, fmt.Errorf("spec.selector: %w", err)
		}
	}
	var out []*corev1.PersistentVolumeClaim
	for _, claim := range all {
		if ref := metav1.GetControllerOfNoCopy(claim); (ref != nil && ref.UID == tapp.UID) || (sel != nil && !sel.Empty() && sel.Matches(labels.Set(claim.Labels))) {
			out = append(out, claim)
		}
	}
	return out, nil
}

// nodeUpdated enqueues the owners of the node's pods when the node is lost or comes back, for forceDeletePod.
func (c *Controller) nodeUpdated(oldObj, newObj any) {
	oldNode, node := oldObj.(*corev1.Node), newObj.(*corev1.Node)
	if policy.NodeStateOf(oldNode) != policy.NodeStateOf(node) {
		c.enqueueOwnersOnNode(node.Name)
	}
}

func (c *Controller) nodeDeleted(obj any) {
	if node, ok := workloop.Deleted[*corev1.Node](obj); ok {
		c.enqueueOwnersOnNode(node.Name)
	}
}

func (c *Controller) enqueueOwnersOnNode(nodeName string) {
	objs, err := c.podIndex.ByIndex(byNodeName, nodeName)
	if err != nil {
		return
	}
	for _, obj := range objs {
		if key, ok := c.ownerKey(obj.(*corev1.Pod)); ok {
			c.queue.Add(key)
		}
	}
}

// podsOf returns the pods the TApp controls, the pods of its namespace its selector matches (orphans it may
// adopt) and the pods holding the name of one of its instances (conflicts, such as a released pod), without
// duplicates. They are cache objects: read only.
func (c *Controller) podsOf(tapp *tkestackv1.TApp) ([]*corev1.Pod, error) {
	objs, err := c.podIndex.ByIndex(byControllerUID, string(tapp.UID))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		if pod.Namespace == tapp.Namespace {
			seen[pod.Name] = true
			pods = append(pods, pod)
		}
	}
	if tapp.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(tapp.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("spec.selector: %w", err)
		}
		matching, err := c.pods.Pods(tapp.Namespace).List(sel)
		if err != nil {
			return nil, err
		}
		for _, pod := range matching {
			if !seen[pod.Name] {
				seen[pod.Name] = true
				pods = append(pods, pod)
			}
		}
	}
	for n := 0; n < int(tapp.Spec.Replicas); n++ {
		name := policy.PodName(tapp, strconv.Itoa(n))
		if seen[name] {
			continue
		}
		if pod, err := c.pods.Pods(tapp.Namespace).Get(name); err == nil {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// topology is what the cached nodes offer for spreading new pods (policy.TopologyOf).
func (c *Controller) topology() policy.Topology {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return policy.Topology{}
	}
	return policy.TopologyOf(nodes)
}

// nodeState is the policy's view of a node from the cache.
func (c *Controller) nodeState(name string) policy.NodeState {
	node, err := c.nodes.Get(name)
	if err != nil {
		return policy.NodeStateOf(nil)
	}
	return policy.NodeStateOf(node)
}
