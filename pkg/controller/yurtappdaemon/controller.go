package yurtappdaemon

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/workloop"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	openyurtinformers "github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions/openyurt/v1alpha1"
	openyurtlisters "github.com/tapp-io/tapp-apiserver/pkg/generated/listers/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

// Name is the controller's name in --controllers, the workqueue and metrics.
const Name = "yurtappdaemon"

// metrics are the controller's yurtappdaemon_controller_sync_duration_seconds and yurtappdaemon_controller_actions_total.
var metrics = workloop.NewMetrics(Name+"_controller", "YurtAppDaemon")

// Controller runs one Deployment or StatefulSet per selected NodePool for every YurtAppDaemon.
type Controller struct {
	kubeClient   kubernetes.Interface
	client       versioned.Interface
	yads         openyurtlisters.YurtAppDaemonLister
	pools        openyurtlisters.NodePoolLister
	deployments  appslisters.DeploymentLister
	statefulSets appslisters.StatefulSetLister
	revisions    appslisters.ControllerRevisionLister
	// revisionIndex indexes the revisions by controller UID (history.ControllerUIDIndex).
	revisionIndex cache.Indexer

	// listPools returns every NodePool; an error stops the sync before anything is deleted.
	listPools func() ([]*v1alpha1.NodePool, error)

	queue workqueue.TypedRateLimitingInterface[string]
	loop  *workloop.Loop
	// expectations holds a YurtAppDaemon back while the caches have not shown its child writes.
	expectations *expectations.Expectations[childRef]
	recorder     record.EventRecorder
	// clock is the controller's one clock: its loop and queue, its expectations and the status conditions'
	// transition times read it.
	clock clock.WithTicker
}

// childRef names a child workload in the YurtAppDaemon's namespace.
type childRef struct {
	kind v1alpha1.TemplateType
	name string
}

// NewController builds the YurtAppDaemon controller and registers its informers with their factories,
// which the caller starts. kubeClient reaches the cluster (workloads, ControllerRevisions, events); client
// reaches the server of YurtAppDaemons and NodePools. clk is the controller's clock (clock.RealClock{}
// outside tests).
func NewController(kubeClient kubernetes.Interface, client versioned.Interface,
	yadInformer openyurtinformers.YurtAppDaemonInformer, poolInformer openyurtinformers.NodePoolInformer,
	deploymentInformer appsinformers.DeploymentInformer, statefulSetInformer appsinformers.StatefulSetInformer,
	revisionInformer appsinformers.ControllerRevisionInformer, recorder record.EventRecorder,
	clk clock.WithTicker) (*Controller, error) {
	c := &Controller{
		kubeClient:    kubeClient,
		client:        client,
		yads:          yadInformer.Lister(),
		pools:         poolInformer.Lister(),
		deployments:   deploymentInformer.Lister(),
		statefulSets:  statefulSetInformer.Lister(),
		revisions:     revisionInformer.Lister(),
		revisionIndex: revisionInformer.Informer().GetIndexer(),
		recorder:      recorder,
		expectations:  expectations.New[childRef](clk),
		clock:         clk,
	}
	c.loop = workloop.New(Name, "YurtAppDaemon", clk, c.sync, metrics)
	c.queue = c.loop.Queue
	c.listPools = func() ([]*v1alpha1.NodePool, error) { return c.pools.List(labels.Everything()) }

	children := cache.ResourceEventHandlerFuncs{AddFunc: c.childAdded, UpdateFunc: c.childUpdated, DeleteFunc: c.childDeleted}
	if err := errors.Join(
		history.AddControllerUIDIndex(revisionInformer.Informer()),
		c.loop.Watch(yadInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.loop.Enqueue, UpdateFunc: c.yadUpdated, DeleteFunc: c.yadDeleted,
		}),
		c.loop.Watch(poolInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.enqueueForPool(obj.(*v1alpha1.NodePool).Labels) },
			UpdateFunc: c.poolUpdated,
			DeleteFunc: c.poolDeleted,
		}),
		c.loop.Watch(deploymentInformer.Informer(), children),
		c.loop.Watch(statefulSetInformer.Informer(), children),
		c.loop.Watch(revisionInformer.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: c.revisionDeleted}),
	); err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs YurtAppDaemons with workers goroutines until ctx is done, and returns once the workers stopped.
func (c *Controller) Run(ctx context.Context, workers int) { c.loop.Run(ctx, workers) }

// yadUpdated ignores updates that change neither the spec nor the metadata the controller reads: the
// controller's own status writes would otherwise sync every YurtAppDaemon twice. Periodic resyncs pass.
func (c *Controller) yadUpdated(oldObj, newObj any) {
	old, cur := oldObj.(*v1alpha1.YurtAppDaemon), newObj.(*v1alpha1.YurtAppDaemon)
	if old.ResourceVersion != cur.ResourceVersion && old.UID == cur.UID && old.Generation == cur.Generation &&
		cur.DeletionTimestamp.Equal(old.DeletionTimestamp) && apiequality.Semantic.DeepEqual(old.Spec, cur.Spec) {
		return
	}
	c.loop.Enqueue(cur)
}

// yadDeleted forgets the expectations of a deleted YurtAppDaemon (one of the same name may follow) and enqueues it.
func (c *Controller) yadDeleted(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.expectations.Forget(key)
	}
	c.loop.Enqueue(obj)
}

// enqueueForPool enqueues the YurtAppDaemons whose nodepoolSelector matches one of the label sets.
func (c *Controller) enqueueForPool(sets ...labels.Set) {
	yads, err := c.yads.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, yad := range yads {
		if yad.Spec.NodePoolSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(yad.Spec.NodePoolSelector)
		if err != nil {
			continue
		}
		for _, set := range sets {
			if sel.Matches(set) {
				c.loop.Enqueue(yad)
				break
			}
		}
	}
}

// poolUpdated enqueues the YurtAppDaemons that selected the pool before or after a label change, or that
// select it when its taints (the placement of its child) change. Status updates and periodic resyncs (the
// YurtAppDaemons are resynced themselves) are ignored.
func (c *Controller) poolUpdated(oldObj, newObj any) {
	old, cur := oldObj.(*v1alpha1.NodePool), newObj.(*v1alpha1.NodePool)
	switch {
	case old.ResourceVersion == cur.ResourceVersion:
	case !labels.Equals(old.Labels, cur.Labels):
		c.enqueueForPool(old.Labels, cur.Labels)
	case policy.PlacementHash(old) != policy.PlacementHash(cur) || !cur.DeletionTimestamp.Equal(old.DeletionTimestamp):
		c.enqueueForPool(cur.Labels)
	}
}

func (c *Controller) poolDeleted(obj any) {
	if pool, ok := workloop.Deleted[*v1alpha1.NodePool](obj); ok {
		c.enqueueForPool(pool.Labels)
	}
}

// ownerKey returns the key of the YurtAppDaemon that controls obj, if it exists with that UID.
func (c *Controller) ownerKey(obj metav1.Object) (string, bool) {
	ref := ownership.ControllerOf(obj, policy.ControllerKind.GroupKind())
	if ref == nil {
		return "", false
	}
	yad, err := c.yads.YurtAppDaemons(obj.GetNamespace()).Get(ref.Name)
	if err != nil || yad.UID != ref.UID {
		return "", false
	}
	return obj.GetNamespace() + "/" + ref.Name, true
}

// childObject returns the workload of a Deployment or StatefulSet event, unwrapping tombstones.
func childObject(obj any) metav1.Object {
	if d, ok := workloop.Deleted[*appsv1.Deployment](obj); ok {
		return d
	}
	if s, ok := workloop.Deleted[*appsv1.StatefulSet](obj); ok {
		return s
	}
	return nil
}

// childChanged enqueues the owner of a workload, or, for a workload that no YurtAppDaemon controls, the
// YurtAppDaemons of its namespace that report a name conflict (it may hold the name of one of their
// children) and, for an orphan, those whose selector matches its pods (they may adopt it).
func (c *Controller) childChanged(obj metav1.Object) {
	if key, ok := c.ownerKey(obj); ok {
		c.queue.Add(key)
		return
	}
	if ownership.ControllerOf(obj, policy.ControllerKind.GroupKind()) != nil {
		return // the child of a YurtAppDaemon that is gone: the garbage collector deletes it
	}
	c.enqueueConflicted(obj.GetNamespace())
	if metav1.GetControllerOfNoCopy(obj) == nil {
		c.enqueueSelecting(obj)
	}
}

// enqueueSelecting enqueues the YurtAppDaemons of an orphan workload's namespace whose selector matches the
// labels of its pods.
func (c *Controller) enqueueSelecting(obj metav1.Object) {
	var podLabels labels.Set
	switch o := obj.(type) {
	case *appsv1.Deployment:
		podLabels = o.Spec.Template.Labels
	case *appsv1.StatefulSet:
		podLabels = o.Spec.Template.Labels
	default:
		return
	}
	yads, err := c.yads.YurtAppDaemons(obj.GetNamespace()).List(labels.Everything())
	if err != nil {
		return
	}
	for _, yad := range yads {
		if yad.Spec.Selector == nil {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(yad.Spec.Selector); err == nil && !sel.Empty() && sel.Matches(podLabels) {
			c.loop.Enqueue(yad)
		}
	}
}

func (c *Controller) enqueueConflicted(namespace string) {
	yads, err := c.yads.YurtAppDaemons(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, yad := range yads {
		for _, cond := range yad.Status.Conditions {
			if cond.Type == policy.ConditionProvisioned && cond.Reason == policy.ReasonWorkloadConflict {
				c.loop.Enqueue(yad)
			}
		}
	}
}

func (c *Controller) childAdded(obj any) {
	if o := childObject(obj); o != nil {
		c.childChanged(o)
	}
}

func (c *Controller) childUpdated(oldObj, newObj any) {
	old, cur := childObject(oldObj), childObject(newObj)
	if old == nil || cur == nil || old.GetResourceVersion() == cur.GetResourceVersion() {
		return // periodic resync: the YurtAppDaemons are resynced themselves
	}
	if oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur); oldRef != nil && (curRef == nil || curRef.UID != oldRef.UID) {
		if key, ok := c.ownerKey(old); ok {
			c.queue.Add(key) // released by its owner
		}
	}
	c.childChanged(cur)
}

// childDeleted also enqueues the YurtAppDaemons reporting a name conflict: the name may be free now.
func (c *Controller) childDeleted(obj any) {
	if o := childObject(obj); o != nil {
		c.childChanged(o)
		c.enqueueConflicted(o.GetNamespace())
	}
}

// revisionDeleted enqueues the owner of a deleted ControllerRevision: its current revision is recreated.
func (c *Controller) revisionDeleted(obj any) {
	if rev, ok := workloop.Deleted[*appsv1.ControllerRevision](obj); ok {
		if key, ok := c.ownerKey(rev); ok {
			c.queue.Add(key)
		}
	}
}

// lookupChild returns the cached child of namespace named by ref, nil when there is none.
func (c *Controller) lookupChild(namespace string) func(childRef) metav1.Object {
	return func(ref childRef) metav1.Object {
		switch ref.kind {
		case policy.StatefulSetKind:
			if s, err := c.statefulSets.StatefulSets(namespace).Get(ref.name); err == nil {
				return s
			}
		default:
			if d, err := c.deployments.Deployments(namespace).Get(ref.name); err == nil {
				return d
			}
		}
		return nil
	}
}

// appsResource is the group resource of a child kind, for error messages.
func appsResource(kind v1alpha1.TemplateType) schema.GroupResource {
	if kind == policy.StatefulSetKind {
		return appsv1.Resource("statefulsets")
	}
	return appsv1.Resource("deployments")
}
