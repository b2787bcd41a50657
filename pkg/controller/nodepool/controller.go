package nodepool

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/nodepool/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/workloop"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	openyurtinformers "github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions/openyurt/v1beta2"
	openyurtlisters "github.com/tapp-io/tapp-apiserver/pkg/generated/listers/openyurt/v1beta2"
)

// Name is the controller's name in --controllers, the workqueue and metrics.
const Name = "nodepool"

// metrics are the controller's nodepool_controller_sync_duration_seconds and nodepool_controller_actions_total.
var metrics = workloop.NewMetrics(Name+"_controller", "NodePool")

// byPool indexes nodes by every pool they refer to (policy.PoolsOf).
const byPool = "nodepool.openyurt.io/pool"

// Controller keeps nodes in their pools and writes the pools' status. Its queue holds pool names; a pool
// that does not exist is still synced, to strip what it applied from its former nodes.
type Controller struct {
	kubeClient kubernetes.Interface
	client     versioned.Interface
	pools      openyurtlisters.NodePoolLister
	nodes      corelisters.NodeLister
	nodeIndex  cache.Indexer

	queue    workqueue.TypedRateLimitingInterface[string]
	loop     *workloop.Loop
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// NewController builds the NodePool controller and registers its informers (NodePools, nodes) with their
// factories, which the caller starts. clk times its loop and queue (clock.RealClock{} outside tests).
func NewController(kubeClient kubernetes.Interface, client versioned.Interface,
	poolInformer openyurtinformers.NodePoolInformer, nodeInformer coreinformers.NodeInformer,
	recorder record.EventRecorder, clk clock.WithTicker) (*Controller, error) {
	c := &Controller{
		kubeClient: kubeClient,
		client:     client,
		pools:      poolInformer.Lister(),
		nodes:      nodeInformer.Lister(),
		nodeIndex:  nodeInformer.Informer().GetIndexer(),
		recorder:   recorder,
		clock:      clk,
	}
	c.loop = workloop.New(Name, "NodePool", clk, c.sync, metrics)
	c.queue = c.loop.Queue
	if err := errors.Join(
		nodeInformer.Informer().AddIndexers(cache.Indexers{byPool: func(obj any) ([]string, error) {
			if node, ok := obj.(*corev1.Node); ok {
				return policy.PoolsOf(node), nil
			}
			return nil, nil
		}}),
		c.loop.Watch(poolInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.loop.Enqueue, UpdateFunc: c.poolUpdated, DeleteFunc: c.loop.Enqueue,
		}),
		c.loop.Watch(nodeInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: c.nodeAdded, UpdateFunc: c.nodeUpdated, DeleteFunc: c.nodeDeleted,
		}),
	); err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs NodePools with workers goroutines until ctx is done, and returns once the workers stopped.
func (c *Controller) Run(ctx context.Context, workers int) { c.loop.Run(ctx, workers) }

// poolUpdated enqueues a pool when its attributes or its leader election change, and on periodic resyncs;
// its own status writes are ignored.
func (c *Controller) poolUpdated(oldObj, newObj any) {
	old, cur := oldObj.(*v1beta2.NodePool), newObj.(*v1beta2.NodePool)
	if old.ResourceVersion != cur.ResourceVersion && !policy.AttributesChanged(old, cur) && !policy.LeaderSpecChanged(old, cur) &&
		cur.DeletionTimestamp.Equal(old.DeletionTimestamp) {
		return
	}
	c.queue.Add(cur.Name)
}

func (c *Controller) enqueueNodePools(node *corev1.Node) {
	for _, p := range policy.PoolsOf(node) {
		c.queue.Add(p)
	}
}

func (c *Controller) nodeAdded(obj any) {
	c.enqueueNodePools(obj.(*corev1.Node))
}

func (c *Controller) nodeUpdated(oldObj, newObj any) {
	old, cur := oldObj.(*corev1.Node), newObj.(*corev1.Node)
	if old.ResourceVersion == cur.ResourceVersion || !policy.NodeChanged(old, cur) {
		return // a resync or a heartbeat: the pools are resynced themselves
	}
	c.enqueueNodePools(old)
	c.enqueueNodePools(cur)
}

func (c *Controller) nodeDeleted(obj any) {
	if node, ok := workloop.Deleted[*corev1.Node](obj); ok {
		c.enqueueNodePools(node)
	}
}

// nodesOf returns the cached nodes that refer to pool (read only).
func (c *Controller) nodesOf(pool string) ([]*corev1.Node, error) {
	objs, err := c.nodeIndex.ByIndex(byPool, pool)
	if err != nil {
		return nil, err
	}
	nodes := make([]*corev1.Node, 0, len(objs))
	for _, obj := range objs {
		if n, ok := obj.(*corev1.Node); ok {
			nodes = append(nodes, n)
		}
	}
	return nodes, nil
}
