package yurtappset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
)

// Reasons of Warning events and of the conditions the controller sets on the error path.
const (
	ReasonRevisionFailed     = "FailedRevisionProvision"
	ReasonNodePoolListFailed = "NodePoolListFailed"
	ReasonListFailed         = "WorkloadListFailed"
	ReasonInvalidSpec        = "InvalidSpec"
)

// sync brings one YurtAppSet closer to its spec: the ControllerRevision of its spec.workload, the plan
// from the caches, its execution (unless the caches are behind the controller's own writes), the status
// (on the error path too) and the revision history.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.sets.YurtAppSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if cached.DeletionTimestamp != nil {
		c.expectations.Forget(key) // the garbage collector deletes the workloads and revisions
		return nil
	}
	if !c.expectations.Satisfied(key, c.lookupWorkload(namespace)) {
		klog.FromContext(ctx).V(4).Info("Waiting for the caches to show earlier writes", "pending", c.expectations.Pending(key))
		c.queue.AddAfter(key, expectations.TTL)
		return nil
	}

	yas := cached.DeepCopy()
	r := &syncResult{}
	revision, err := c.syncRevision(ctx, yas)
	if err != nil {
		r.fail(ReasonRevisionFailed, policy.ConditionAppUpdated, err.Error(), true)
		c.recorder.Eventf(cached, corev1.EventTypeWarning, ReasonRevisionFailed, "Failed to provision the ControllerRevision of spec.workload: %v", err)
		return c.finish(ctx, cached, yas, "", nil, r)
	}
	pools, err := c.listPools()
	if err != nil {
		msg := fmt.Sprintf("listing NodePools: %v; no workload is created, updated or deleted until it succeeds", err)
		r.fail(ReasonNodePoolListFailed, policy.ConditionPoolFound, msg, true)
		c.recorder.Event(cached, corev1.EventTypeWarning, ReasonNodePoolListFailed, msg)
		return c.finish(ctx, cached, yas, revision, nil, r)
	}
	deployments, err := c.deployments.Deployments(namespace).List(labels.Everything())
	if err != nil {
		r.fail(ReasonListFailed, policy.ConditionAppDispatched, err.Error(), true)
		return c.finish(ctx, cached, yas, revision, nil, r)
	}
	statefulSets, err := c.statefulSets.StatefulSets(namespace).List(labels.Everything())
	if err != nil {
		r.fail(ReasonListFailed, policy.ConditionAppDispatched, err.Error(), true)
		return c.finish(ctx, cached, yas, revision, nil, r)
	}
	plan, err := policy.ComputePlan(yas, revision, pools, deployments, statefulSets)
	if err != nil {
		r.fail(ReasonInvalidSpec, policy.ConditionAppDispatched, err.Error(), false)
		c.recorder.Event(cached, corev1.EventTypeWarning, ReasonInvalidSpec, err.Error())
		return c.finish(ctx, cached, yas, revision, nil, r)
	}
	if len(plan.Pools) == 0 || len(plan.MissingPools) > 0 {
		for _, cond := range plan.Status.Conditions {
			if cond.Type == policy.ConditionPoolFound && !hasCondition(cached, cond) {
				c.recorder.Event(cached, corev1.EventTypeWarning, cond.Reason, cond.Message)
			}
		}
	}
	inUse := map[string]bool{}
	for _, d := range deployments {
		if controlledBy(d, yas.UID) {
			inUse[d.Labels[policy.RevisionHashLabel]] = true
		}
	}
	for _, s := range statefulSets {
		if controlledBy(s, yas.UID) {
			inUse[s.Labels[policy.RevisionHashLabel]] = true
		}
	}
	r.inUse = inUse
	c.execute(ctx, key, yas, plan, r)
	return c.finish(ctx, cached, yas, revision, plan, r)
}

func hasCondition(yas *v1beta1.YurtAppSet, c v1beta1.YurtAppSetCondition) bool {
	for _, cur := range yas.Status.Conditions {
		if cur.Type == c.Type {
			return cur.Status == c.Status && cur.Reason == c.Reason
		}
	}
	return false
}

// syncResult collects what one sync did.
type syncResult struct {
	failures actions.Failures
	// conditions are the App* conditions set False by a failed write, by condition type.
	conditions map[v1beta1.YurtAppSetConditionType]v1beta1.YurtAppSetCondition
	// wrote is true when a workload was created, updated, deleted, adopted or released: the status is
	// then written by the next sync, once the caches show the writes.
	wrote bool
	// inUse are the revisions the workloads carried before the sync.
	inUse map[string]bool
}

// fail records a failure; condition, when not empty, is the App* condition type it turns False.
func (r *syncResult) fail(reason string, condition v1beta1.YurtAppSetConditionType, message string, retry bool) {
	r.failures.Add(actions.Failure{Reason: reason, Message: message, Retry: retry})
	if condition != "" {
		if r.conditions == nil {
			r.conditions = map[v1beta1.YurtAppSetConditionType]v1beta1.YurtAppSetCondition{}
		}
		if _, ok := r.conditions[condition]; !ok {
			r.conditions[condition] = v1beta1.YurtAppSetCondition{Type: condition, Status: corev1.ConditionFalse, Reason: reason, Message: message}
		}
	}
}

// finish writes the status unless the sync changed workloads without failing (the next sync, started by
// their events, reports them as they are), trims the history once the status names the current revision,
// and returns the errors to retry.
func (c *Controller) finish(ctx context.Context, cached, yas *v1beta1.YurtAppSet, revision string, plan *policy.Plan, r *syncResult) error {
	var errs []error
	statusWritten := true
	failures := r.failures.List()
	if !r.wrote || len(actions.Reported(failures)) > 0 {
		if err := c.writeStatus(ctx, cached, c.desiredStatus(cached, yas, revision, plan, r)); err != nil {
			errs = append(errs, err)
			statusWritten = false
		}
	}
	if plan != nil && statusWritten {
		if err := c.truncateHistory(ctx, yas, revision, r.inUse); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(append(errs, actions.Errors(failures)...))
}
