package yurtappset

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/workloop"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	openyurtinformers "github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions/openyurt/v1alpha1"
	openyurtv1beta1informers "github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions/openyurt/v1beta1"
	openyurtlisters "github.com/tapp-io/tapp-apiserver/pkg/generated/listers/openyurt/v1alpha1"
	openyurtv1beta1listers "github.com/tapp-io/tapp-apiserver/pkg/generated/listers/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
	"github.com/tapp-io/tapp-apiserver/pkg/workloadtweak"
)

// Name is the controller's name in --controllers, the workqueue and metrics.
const Name = "yurtappset"

// metrics are the controller's yurtappset_controller_sync_duration_seconds and yurtappset_controller_actions_total.
var metrics = workloop.NewMetrics(Name+"_controller", "YurtAppSet")

// Controller runs one Deployment or StatefulSet per selected NodePool for every YurtAppSet.
type Controller struct {
	kubeClient   kubernetes.Interface
	client       versioned.Interface
	sets         openyurtv1beta1listers.YurtAppSetLister
	pools        openyurtlisters.NodePoolLister
	deployments  appslisters.DeploymentLister
	statefulSets appslisters.StatefulSetLister
	revisions    appslisters.ControllerRevisionLister

	// listPools returns every NodePool; an error stops the sync before anything is deleted.
	listPools func() ([]*v1alpha1.NodePool, error)

	queue workqueue.TypedRateLimitingInterface[string]
	loop  *workloop.Loop
	// expectations holds a YurtAppSet back while the caches have not shown its workload writes.
	expectations *expectations.Expectations[workloadRef]
	recorder     record.EventRecorder
	clock        clock.WithTicker
}

// workloadRef names a workload in the YurtAppSet's namespace.
type workloadRef struct {
	kind policy.Kind
	name string
}

// NewController builds the YurtAppSet controller and registers its informers with their factories, which
// the caller starts. kubeClient reaches the cluster (workloads, ControllerRevisions, events); client
// reaches this server (YurtAppSets, NodePools). clk is the controller's clock.
func NewController(kubeClient kubernetes.Interface, client versioned.Interface,
	setInformer openyurtv1beta1informers.YurtAppSetInformer, poolInformer openyurtinformers.NodePoolInformer,
	deploymentInformer appsinformers.DeploymentInformer, statefulSetInformer appsinformers.StatefulSetInformer,
	revisionInformer appsinformers.ControllerRevisionInformer, recorder record.EventRecorder,
	clk clock.WithTicker) (*Controller, error) {
	c := &Controller{
		kubeClient:   kubeClient,
		client:       client,
		sets:         setInformer.Lister(),
		pools:        poolInformer.Lister(),
		deployments:  deploymentInformer.Lister(),
		statefulSets: statefulSetInformer.Lister(),
		revisions:    revisionInformer.Lister(),
		recorder:     recorder,
		expectations: expectations.New[workloadRef](clk),
		clock:        clk,
	}
	c.loop = workloop.New(Name, "YurtAppSet", clk, c.sync, metrics)
	c.queue = c.loop.Queue
	c.listPools = func() ([]*v1alpha1.NodePool, error) { return c.pools.List(labels.Everything()) }

	workloads := cache.ResourceEventHandlerFuncs{AddFunc: c.workloadAdded, UpdateFunc: c.workloadUpdated, DeleteFunc: c.workloadDeleted}
	if err := errors.Join(
		c.loop.Watch(setInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.loop.Enqueue, UpdateFunc: c.setUpdated, DeleteFunc: c.setDeleted,
		}),
		c.loop.Watch(poolInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.enqueueForPool(obj.(*v1alpha1.NodePool)) },
			UpdateFunc: c.poolUpdated,
			DeleteFunc: c.poolDeleted,
		}),
		c.loop.Watch(deploymentInformer.Informer(), workloads),
		c.loop.Watch(statefulSetInformer.Informer(), workloads),
		c.loop.Watch(revisionInformer.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: c.revisionDeleted}),
	); err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs YurtAppSets with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) { c.loop.Run(ctx, workers) }

// setUpdated ignores the controller's own status writes (neither spec nor generation changed).
func (c *Controller) setUpdated(oldObj, newObj any) {
	old, cur := oldObj.(*v1beta1.YurtAppSet), newObj.(*v1beta1.YurtAppSet)
	if old.ResourceVersion != cur.ResourceVersion && old.UID == cur.UID && old.Generation == cur.Generation &&
		cur.DeletionTimestamp.Equal(old.DeletionTimestamp) && apiequality.Semantic.DeepEqual(old.Spec, cur.Spec) {
		return
	}
	c.loop.Enqueue(cur)
}

func (c *Controller) setDeleted(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.expectations.Forget(key)
	}
	c.loop.Enqueue(obj)
}

// enqueueForPool enqueues the YurtAppSets that select one of the pools (by name or nodepoolSelector) or
// tweak it.
func (c *Controller) enqueueForPool(pools ...*v1alpha1.NodePool) {
	sets, err := c.sets.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, yas := range sets {
		if related(yas, pools) {
			c.loop.Enqueue(yas)
		}
	}
}

func related(yas *v1beta1.YurtAppSet, pools []*v1alpha1.NodePool) bool {
	for _, p := range pools {
		if policy.Selects(yas.Spec.Pools, yas.Spec.NodePoolSelector, p.Name, p.Labels) {
			return true
		}
		for i := range yas.Spec.Workload.WorkloadTweaks {
			if workloadtweak.Selects(&yas.Spec.Workload.WorkloadTweaks[i], p.Name, p.Labels) {
				return true
			}
		}
	}
	return false
}

// poolUpdated enqueues the YurtAppSets related to the pool before or after a change of its labels or
// taints; status updates and resyncs are ignored.
func (c *Controller) poolUpdated(oldObj, newObj any) {
	old, cur := oldObj.(*v1alpha1.NodePool), newObj.(*v1alpha1.NodePool)
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	if !labels.Equals(old.Labels, cur.Labels) || !apiequality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) ||
		!cur.DeletionTimestamp.Equal(old.DeletionTimestamp) {
		c.enqueueForPool(old, cur)
	}
}

func (c *Controller) poolDeleted(obj any) {
	if pool, ok := workloop.Deleted[*v1alpha1.NodePool](obj); ok {
		c.enqueueForPool(pool)
	}
}

// ownerKey returns the key of the YurtAppSet that controls obj, if it exists with that UID.
func (c *Controller) ownerKey(obj metav1.Object) (string, bool) {
	ref := ownership.ControllerOf(obj, policy.ControllerKind.GroupKind())
	if ref == nil {
		return "", false
	}
	yas, err := c.sets.YurtAppSets(obj.GetNamespace()).Get(ref.Name)
	if err != nil || yas.UID != ref.UID {
		return "", false
	}
	return obj.GetNamespace() + "/" + ref.Name, true
}

func workloadObject(obj any) metav1.Object {
	if d, ok := workloop.Deleted[*appsv1.Deployment](obj); ok {
		return d
	}
	if s, ok := workloop.Deleted[*appsv1.StatefulSet](obj); ok {
		return s
	}
	return nil
}

// workloadChanged enqueues the owner of a workload, or for an orphan labelled
// RefYurtAppSetLabel the YurtAppSet it names (it may adopt it).
func (c *Controller) workloadChanged(obj metav1.Object) {
	if key, ok := c.ownerKey(obj); ok {
		c.queue.Add(key)
		return
	}
	if metav1.GetControllerOfNoCopy(obj) == nil {
		if name := obj.GetLabels()[policy.RefYurtAppSetLabel]; name != "" {
			if _, err := c.sets.YurtAppSets(obj.GetNamespace()).Get(name); err == nil {
				c.queue.Add(obj.GetNamespace() + "/" + name)
			}
		}
	}
}

func (c *Controller) workloadAdded(obj any) {
	if o := workloadObject(obj); o != nil {
		c.workloadChanged(o)
	}
}

func (c *Controller) workloadUpdated(oldObj, newObj any) {
	old, cur := workloadObject(oldObj), workloadObject(newObj)
	if old == nil || cur == nil || old.GetResourceVersion() == cur.GetResourceVersion() {
		return
	}
	if oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur); oldRef != nil && (curRef == nil || curRef.UID != oldRef.UID) {
		if key, ok := c.ownerKey(old); ok {
			c.queue.Add(key)
		}
	}
	c.workloadChanged(cur)
}

func (c *Controller) workloadDeleted(obj any) {
	if o := workloadObject(obj); o != nil {
		c.workloadChanged(o)
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

// lookupWorkload returns the cached workload of namespace named by ref, nil when there is none.
func (c *Controller) lookupWorkload(namespace string) func(workloadRef) metav1.Object {
	return func(ref workloadRef) metav1.Object {
		if ref.kind == policy.StatefulSetKind {
			if s, err := c.statefulSets.StatefulSets(namespace).Get(ref.name); err == nil {
				return s
			}
			return nil
		}
		if d, err := c.deployments.Deployments(namespace).Get(ref.name); err == nil {
			return d
		}
		return nil
	}
}
