package nodepool

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/nodepool/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/statuswrite"
)

var fieldManager = actions.FieldManager(Name)

// sync brings the nodes that refer to pool name in line with their pools, then writes the pool's status
// when it changed. Every node is synced with the pool it should be in (not necessarily name), so two syncs
// that touch the same node agree on the result.
func (c *Controller) sync(ctx context.Context, name string) error {
	pool, err := c.pools.Get(name)
	switch {
	case apierrors.IsNotFound(err):
		pool = nil
	case err != nil:
		return err
	}
	nodes, err := c.nodesOf(name)
	if err != nil {
		return err
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	var errs []error
	for _, node := range nodes {
		if err := c.syncNode(ctx, node); err != nil {
			errs = append(errs, err)
		}
	}
	if pool != nil && pool.DeletionTimestamp == nil {
		if err := c.writeStatus(ctx, pool, policy.Status(name, nodes), nodes); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// syncNode patches node (a cache object, not modified) to carry the attributes of the pool it should be
// in. The patch touches only what the controller manages and carries its own preconditions
// (policy.NodePatch); when one fails because the node was written since it was read (by its kubelet, say),
// the node is read again from the API server and the patch recomputed, a few times, before the sync is
// requeued. A kubelet's write is never overwritten.
func (c *Controller) syncNode(ctx context.Context, node *corev1.Node) error {
	var (
		pool   *v1beta2.NodePool
		action policy.Action
		reread bool
	)
	err := retry.OnError(retry.DefaultRetry, stale, func() error {
		if reread {
			fresh, err := c.kubeClient.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node = fresh
		}
		reread = true
		var err error
		if pool, err = c.poolOf(node); err != nil {
			return err
		}
		if _, err := policy.ReadApplied(node); err != nil {
			klog.FromContext(ctx).Info("Ignoring an unreadable record of applied pool attributes", "node", node.Name, "err", err)
		}
		var updated *corev1.Node
		updated, action = policy.SyncNode(node, pool)
		if action == policy.ActionNone {
			return nil
		}
		patch, err := policy.NodePatch(node, updated)
		if err != nil || patch == nil {
			return err
		}
		_, err = c.kubeClient.CoreV1().Nodes().Patch(ctx, node.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		metrics.CountAction("patch-node", err)
		return err
	})
	if action == policy.ActionNone && err == nil {
		return nil
	}
	var subject runtime.Object = node
	if pool != nil {
		subject = pool
	} else if prev, _ := policy.ReadApplied(node); prev != nil {
		if p, err := c.pools.Get(prev.Pool); err == nil {
			subject = p
		}
	}
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err // the node keeps changing, or is gone; the node's events requeue the pools
		}
		c.recorder.Eventf(subject, corev1.EventTypeWarning, "FailedUpdateNode", "Failed to update node %s (%s): %v", node.Name, action, err)
		return fmt.Errorf("updating node %s: %w", node.Name, err)
	}
	switch action {
	case policy.ActionJoined:
		c.recorder.Eventf(subject, corev1.EventTypeNormal, "NodeJoined", "Node %s joined pool %s", node.Name, pool.Name)
	case policy.ActionLeft:
		c.recorder.Eventf(subject, corev1.EventTypeNormal, "NodeLeft", "Node %s left its pool; the pool's labels, annotations and taints were removed", node.Name)
	default:
		c.recorder.Eventf(subject, corev1.EventTypeNormal, "NodeUpdated", "Updated the labels, annotations and taints of node %s from pool %s", node.Name, pool.Name)
	}
	return nil
}

// stale reports whether a node patch failed because the node changed since it was read: a conflict, or a
// test of the patch that failed (422 Invalid). An Invalid that persists after the retries is reported.
func stale(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsInvalid(err)
}

// poolOf returns the existing, not deleted pool node should be in, nil for none.
func (c *Controller) poolOf(node *corev1.Node) (*v1beta2.NodePool, error) {
	target := policy.DesiredPool(node)
	if target == "" {
		return nil, nil
	}
	p, err := c.pools.Get(target)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case p.DeletionTimestamp != nil:
		return nil, nil
	}
	return p, nil
}

// writeStatus writes the node counts of status and the pool's leaders (policy.Leaders, elected against the
// pool as read, so current leaders stay) when they differ from the pool's (statuswrite: retried on a fresh
// read after a conflict).
func (c *Controller) writeStatus(ctx context.Context, pool *v1beta2.NodePool, counts v1beta2.NodePoolStatus, nodes []*corev1.Node) error {
	now := metav1.NewTime(c.clock.Now()).Rfc3339Copy()
	return statuswrite.Write(ctx, c.client.OpenYurtAppsV1beta2().NodePools(), pool.Name, pool,
		func(cur *v1beta2.NodePool) (*v1beta2.NodePool, bool) {
			status := counts
			leaders := policy.Leaders(cur.Name, cur.Spec, cur.Status, nodes, now)
			status.LeaderEndpoints, status.LeaderNum = leaders.LeaderEndpoints, leaders.LeaderNum
			status.LeaderLastElectedTime, status.Conditions = leaders.LeaderLastElectedTime, leaders.Conditions
			if policy.SameStatus(cur.Status, status) {
				return cur, false
			}
			updated := cur.DeepCopy()
			updated.Status = status
			return updated, true
		}, fieldManager, metrics)
}
