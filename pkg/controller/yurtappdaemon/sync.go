package yurtappdaemon

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

// Reasons of the WorkLoadFailure condition and of Warning events, besides the executor's.
const (
	ReasonRevisionFailed     = "RevisionFailed"
	ReasonNodePoolListFailed = "NodePoolListFailed"
	ReasonListFailed         = "WorkloadListFailed"
	ReasonInvalidSpec        = "InvalidSpec"
)

// sync brings one YurtAppDaemon closer to its spec: it makes sure the ControllerRevision of its template
// exists, computes the plan from the caches, executes it unless the caches are known to be behind the
// controller's own writes, writes the status (on the error path too) and trims the revision history.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.yads.YurtAppDaemons(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if cached.DeletionTimestamp != nil {
		// The garbage collector deletes the children and the revisions.
		c.expectations.Forget(key)
		return nil
	}
	if !c.expectations.Satisfied(key, c.lookupChild(namespace)) {
		klog.FromContext(ctx).V(4).Info("Waiting for the caches to show earlier writes", "pending", c.expectations.Pending(key))
		c.queue.AddAfter(key, expectations.TTL)
		return nil
	}

	yad := cached.DeepCopy()
	r := &syncResult{}
	revision, err := c.syncRevision(ctx, yad)
	if err != nil {
		r.fail(ReasonRevisionFailed, err.Error(), true)
		c.recorder.Eventf(cached, corev1.EventTypeWarning, "FailedRevision", "Failed to provision the ControllerRevision of the template: %v", err)
		return c.finish(ctx, cached, yad, "", nil, r)
	}
	pools, err := c.listPools()
	if err != nil {
		// Never plan from an incomplete view of the pools: it would delete children.
		msg := fmt.Sprintf("listing NodePools: %v; no workload is created, updated or deleted until it succeeds", err)
		r.fail(ReasonNodePoolListFailed, msg, true)
		c.recorder.Event(cached, corev1.EventTypeWarning, ReasonNodePoolListFailed, msg)
		return c.finish(ctx, cached, yad, revision, nil, r)
	}
	deployments, err := c.deployments.Deployments(namespace).List(labels.Everything())
	if err != nil {
		r.fail(ReasonListFailed, err.Error(), true)
		return c.finish(ctx, cached, yad, revision, nil, r)
	}
	statefulSets, err := c.statefulSets.StatefulSets(namespace).List(labels.Everything())
	if err != nil {
		r.fail(ReasonListFailed, err.Error(), true)
		return c.finish(ctx, cached, yad, revision, nil, r)
	}
	plan, err := policy.ComputePlan(yad, pools, deployments, statefulSets)
	if err != nil {
		// Only a spec change can fix this; the spec's update event syncs again.
		r.fail(ReasonInvalidSpec, err.Error(), false)
		c.recorder.Event(cached, corev1.EventTypeWarning, ReasonInvalidSpec, err.Error())
		return c.finish(ctx, cached, yad, revision, nil, r)
	}
	if plan.Revision != revision {
		return fmt.Errorf("internal error: planned revision %s, provisioned %s", plan.Revision, revision)
	}
	c.execute(ctx, key, yad, plan, r)
	if len(plan.Waiting) > 0 {
		c.queue.AddAfter(key, 5*time.Second)
	}
	inUse := map[string]bool{}
	for _, d := range deployments {
		if controlledBy(d, yad.UID) {
			inUse[d.Labels[policy.RevisionHashLabel]] = true
		}
	}
	for _, s := range statefulSets {
		if controlledBy(s, yad.UID) {
			inUse[s.Labels[policy.RevisionHashLabel]] = true
		}
	}
	r.inUse = inUse
	return c.finish(ctx, cached, yad, revision, plan, r)
}

// syncResult collects what one sync did.
type syncResult struct {
	// failures end up in the WorkLoadFailure condition (actions.Summary).
	failures actions.Failures
	// wrote is true when a child was created, updated or deleted: the status is then written by the next
	// sync, once the caches show the writes.
	wrote bool
	// inUse are the revisions the children carried before the sync.
	inUse map[string]bool
}

func (r *syncResult) fail(reason, message string, retry bool) {
	r.failures.Add(actions.Failure{Reason: reason, Message: message, Retry: retry})
}

// finish writes the status unless the sync changed children without failing (the next sync, started by
// the children's events, reports them as they are), trims the revision history once the status names the
// current revision, and returns the errors to retry.
func (c *Controller) finish(ctx context.Context, cached, yad *v1alpha1.YurtAppDaemon, revision string, plan *policy.Plan, r *syncResult) error {
	var errs []error
	statusWritten := true
	failures := r.failures.List()
	if reported := actions.Reported(failures); !r.wrote || len(reported) > 0 {
		if err := c.writeStatus(ctx, cached, desiredStatus(cached, yad, revision, plan, reported, c.now())); err != nil {
			errs = append(errs, err)
			statusWritten = false
		}
	}
	if plan != nil && statusWritten {
		if err := c.truncateHistory(ctx, yad, revision, r.inUse); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(append(errs, actions.Errors(failures)...))
}
