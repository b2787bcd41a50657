package yurtappset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

var fieldManager = actions.FieldManager(Name)

// Event reasons of the executor.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonSuccessfulUpdate = "SuccessfulUpdate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedCreate     = "FailedCreate"
	ReasonFailedUpdate     = "FailedUpdate"
	ReasonFailedDelete     = "FailedDelete"
	ReasonAdopted          = "Adopted"
	ReasonReleased         = "Released"
	ReasonFailedAdopt      = "FailedAdopt"
	ReasonFailedRelease    = "FailedRelease"
	ReasonInvalidPool      = policy.ReasonInvalidPool
)

// execute carries out plan for yas (a private copy), recording failures and writes in r: adoptions and
// releases, deletions (they free pools), updates, then creations in slow-start batches.
func (c *Controller) execute(ctx context.Context, key string, yas *v1beta1.YurtAppSet, plan *policy.Plan, r *syncResult) {
	var wrote atomic.Bool
	defer func() { r.wrote = r.wrote || wrote.Load() }()
	for _, e := range plan.PoolErrors {
		msg := fmt.Sprintf("pool %s: %s", e.Pool, e.Message)
		c.recorder.Event(yas, corev1.EventTypeWarning, ReasonInvalidPool, msg)
		r.fail(ReasonInvalidPool, "", msg, false)
	}
	c.adoptAndRelease(ctx, yas, plan, r, &wrote)
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Deletes), func(i int) {
		if c.deleteWorkload(ctx, key, yas, plan.Deletes[i], r) {
			wrote.Store(true)
		}
	})
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Updates), func(i int) {
		if c.updateWorkload(ctx, key, yas, plan.Updates[i], r) {
			wrote.Store(true)
		}
	})
	actions.SlowStart(ctx, len(plan.Creates), func(i int) bool {
		ok := c.createWorkload(ctx, key, yas, plan.Creates[i], r)
		if ok {
			wrote.Store(true)
		}
		return ok
	})
}

func (c *Controller) adoptAndRelease(ctx context.Context, yas *v1beta1.YurtAppSet, plan *policy.Plan, r *syncResult, wrote *atomic.Bool) {
	if len(plan.Adoptions) == 0 && len(plan.Releases) == 0 {
		return
	}
	recheck := ownership.Recheck(yas.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.OpenYurtAppsV1beta1().YurtAppSets(yas.Namespace).Get(ctx, yas.Name, metav1.GetOptions{})
	})
	patch := func(kind policy.Kind, name, action string, data []byte) error {
		var err error
		opts := metav1.PatchOptions{FieldManager: fieldManager}
		if kind == policy.StatefulSetKind {
			_, err = c.kubeClient.AppsV1().StatefulSets(yas.Namespace).Patch(ctx, name, types.StrategicMergePatchType, data, opts)
		} else {
			_, err = c.kubeClient.AppsV1().Deployments(yas.Namespace).Patch(ctx, name, types.StrategicMergePatchType, data, opts)
		}
		metrics.CountAction(action, err)
		return err
	}
	ref := ownership.ControllerRef(policy.ControllerKind.GroupVersion().String(), policy.ControllerKind.Kind, yas.Name, yas.UID)
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Adoptions), func(i int) {
		a := plan.Adoptions[i]
		if err := recheck(ctx); err != nil {
			if !errors.Is(err, ownership.ErrOwnerDeleting) {
				r.fail(ReasonFailedAdopt, "", err.Error(), true)
			}
			return
		}
		data, err := ownership.AdoptPatch(ref, a.UID)
		if err == nil {
			err = patch(a.Kind, a.Name, "adopt", data)
		}
		switch {
		case err == nil:
			c.recorder.Eventf(yas, corev1.EventTypeNormal, ReasonAdopted, "Adopted %s %s (uid %s) as the workload of pool %s", a.Kind, a.Name, a.UID, a.Pool)
			wrote.Store(true)
		case ownership.Gone(err):
		default:
			msg := fmt.Sprintf("adopt %s %s of pool %s: %v", a.Kind, a.Name, a.Pool, err)
			c.recorder.Event(yas, corev1.EventTypeWarning, ReasonFailedAdopt, msg)
			r.fail(ReasonFailedAdopt, "", msg, true)
		}
	})
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Releases), func(i int) {
		rel := plan.Releases[i]
		data, err := ownership.ReleasePatch(yas.UID, rel.UID)
		if err == nil {
			err = patch(rel.Kind, rel.Name, "release", data)
		}
		switch {
		case err == nil:
			c.recorder.Eventf(yas, corev1.EventTypeNormal, ReasonReleased, "Released %s %s (uid %s): its %s label no longer names this YurtAppSet", rel.Kind, rel.Name, rel.UID, policy.RefYurtAppSetLabel)
			wrote.Store(true)
		case ownership.Gone(err):
		default:
			msg := fmt.Sprintf("release %s %s: %v", rel.Kind, rel.Name, err)
			c.recorder.Event(yas, corev1.EventTypeWarning, ReasonFailedRelease, msg)
			r.fail(ReasonFailedRelease, "", msg, true)
		}
	})
}

func (c *Controller) deleteWorkload(ctx context.Context, key string, yas *v1beta1.YurtAppSet, d policy.Delete, r *syncResult) bool {
	ref := workloadRef{kind: d.Kind, name: d.Name}
	uid := d.UID
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background}
	c.expectations.Raise(key, ref, expectations.Delete(uid))
	var err error
	if d.Kind == policy.StatefulSetKind {
		err = c.kubeClient.AppsV1().StatefulSets(yas.Namespace).Delete(ctx, d.Name, opts)
	} else {
		err = c.kubeClient.AppsV1().Deployments(yas.Namespace).Delete(ctx, d.Name, opts)
	}
	metrics.CountAction("delete", err)
	if err != nil {
		c.expectations.Lower(key, ref)
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return false // already gone or replaced: the next plan decides
		}
		msg := fmt.Sprintf("delete %s %s of pool %s (%s): %v", d.Kind, d.Name, d.Pool, d.Reason, err)
		c.recorder.Event(yas, corev1.EventTypeWarning, ReasonFailedDelete, msg)
		r.fail(policy.ReasonDeleteWorkloadError, policy.ConditionAppDeleted, msg, true)
		return false
	}
	c.recorder.Eventf(yas, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted %s %s of pool %s (%s)", d.Kind, d.Name, d.Pool, d.Reason)
	return true
}

func (c *Controller) updateWorkload(ctx context.Context, key string, yas *v1beta1.YurtAppSet, u policy.Update, r *syncResult) bool {
	ref := workloadRef{kind: u.Kind, name: u.Name}
	var err error
	if u.StatefulSet != nil {
		c.expectations.Raise(key, ref, expectations.UpdateFrom(u.StatefulSet.ResourceVersion))
		_, err = c.kubeClient.AppsV1().StatefulSets(yas.Namespace).Update(ctx, u.StatefulSet, metav1.UpdateOptions{FieldManager: fieldManager})
	} else {
		c.expectations.Raise(key, ref, expectations.UpdateFrom(u.Deployment.ResourceVersion))
		_, err = c.kubeClient.AppsV1().Deployments(yas.Namespace).Update(ctx, u.Deployment, metav1.UpdateOptions{FieldManager: fieldManager})
	}
	metrics.CountAction("update", err)
	reasons := make([]string, len(u.Reasons))
	for i, reason := range u.Reasons {
		reasons[i] = string(reason)
	}
	if u.PodsKept {
		reasons = append(reasons, "pod template kept")
	}
	if err != nil {
		c.expectations.Lower(key, ref)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			r.failures.Add(actions.Failure{Reason: actions.ReasonConflict, Message: err.Error(), Retry: true, Err: err})
			return false
		}
		msg := fmt.Sprintf("update %s %s of pool %s (%s): %v", u.Kind, u.Name, u.Pool, strings.Join(reasons, ", "), err)
		c.recorder.Event(yas, corev1.EventTypeWarning, ReasonFailedUpdate, msg)
		r.fail(policy.ReasonUpdateWorkloadError, policy.ConditionAppUpdated, msg, true)
		return false
	}
	c.recorder.Eventf(yas, corev1.EventTypeNormal, ReasonSuccessfulUpdate, "Updated %s %s of pool %s (%s)", u.Kind, u.Name, u.Pool, strings.Join(reasons, ", "))
	return true
}

// createRetry is when a YurtAppSet whose create timed out is synced again.
const createRetry = time.Second

// createWorkload creates the workload of a pool; the API server names it (generateName), so the
// expectation is raised with the name it returns (the key is not synced meanwhile).
func (c *Controller) createWorkload(ctx context.Context, key string, yas *v1beta1.YurtAppSet, cr policy.Create, r *syncResult) bool {
	kind, name := policy.DeploymentKind, ""
	var err error
	if cr.StatefulSet != nil {
		kind = policy.StatefulSetKind
		s, e := c.kubeClient.AppsV1().StatefulSets(yas.Namespace).Create(ctx, cr.StatefulSet, metav1.CreateOptions{FieldManager: fieldManager})
		if err = e; err == nil {
			name = s.Name
		}
	} else {
		d, e := c.kubeClient.AppsV1().Deployments(yas.Namespace).Create(ctx, cr.Deployment, metav1.CreateOptions{FieldManager: fieldManager})
		if err = e; err == nil {
			name = d.Name
		}
	}
	metrics.CountAction("create", err)
	if err != nil {
		if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
			// It may have been created: the next sync sees it (a duplicate is deleted).
			c.queue.AddAfter(key, createRetry)
			return false
		}
		msg := fmt.Sprintf("create %s for pool %s: %v", kind, cr.Pool, err)
		c.recorder.Event(yas, corev1.EventTypeWarning, ReasonFailedCreate, msg)
		r.fail(policy.ReasonCreateWorkloadError, policy.ConditionAppDispatched, msg, true)
		return false
	}
	c.expectations.Raise(key, workloadRef{kind: kind, name: name}, expectations.Create())
	c.recorder.Eventf(yas, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created %s %s for pool %s", kind, name, cr.Pool)
	return true
}
