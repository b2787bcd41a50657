package yurtappdaemon

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
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

var fieldManager = actions.FieldManager(Name)

const (
	// alreadyExistsRetry is when a YurtAppDaemon whose child create met an existing object is synced again
	// (the cache shows it by then, as a child or as a conflict).
	alreadyExistsRetry = time.Second
)

// Event and failure reasons of the executor; a refused pool is reported with policy.ReasonWorkloadConflict
// or policy.ReasonInvalidPool, the reasons of its Provisioned condition.
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
)

// execute carries out plan for yad (a private copy) and records failures and writes in r. Deletions go
// first (they free names), then updates, then creations in slow-start batches (actions.SlowStart), so a
// YurtAppDaemon whose children are all refused costs one call per sync, not one per pool.
func (c *Controller) execute(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, plan *policy.Plan, r *syncResult) {
	var wrote atomic.Bool
	defer func() { r.wrote = r.wrote || wrote.Load() }()
	record := func(f *actions.Failure, w bool) {
		if f != nil {
			r.failures.Add(*f)
		}
		if w {
			wrote.Store(true)
		}
	}

	for _, conflict := range plan.Conflicts {
		msg := fmt.Sprintf("%s %s for pool %s exists and is not a child of this YurtAppDaemon (held by %s); delete or rename it to let the YurtAppDaemon create its workload",
			conflict.Kind, conflict.Name, conflict.Pool, conflict.Owner)
		c.recorder.Event(yad, corev1.EventTypeWarning, policy.ReasonWorkloadConflict, msg)
		record(&actions.Failure{Reason: policy.ReasonWorkloadConflict, Message: msg}, false)
	}
	for _, e := range plan.PoolErrors {
		msg := fmt.Sprintf("pool %s: %s", e.Pool, e.Message)
		c.recorder.Event(yad, corev1.EventTypeWarning, policy.ReasonInvalidPool, msg)
		record(&actions.Failure{Reason: policy.ReasonInvalidPool, Message: msg}, false)
	}

	c.adoptAndRelease(ctx, yad, plan, record)
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Deletes), func(i int) {
		record(c.deleteChild(ctx, key, yad, plan.Deletes[i]))
	})
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Updates), func(i int) {
		record(c.updateChild(ctx, key, yad, plan.Updates[i]))
	})
	actions.SlowStart(ctx, len(plan.Creates), func(i int) bool {
		f, w := c.createChild(ctx, key, yad, plan.Creates[i])
		record(f, w)
		return f == nil
	})
}

// adoptAndRelease carries out the plan's adoptions and releases, each with one strategic merge patch bound
// to the workload's UID that adds or removes only the YurtAppDaemon's reference. Before the first adoption
// the YurtAppDaemon is read again from the API server; if it is being deleted (or was replaced) nothing is
// adopted. Workloads that are gone or were replaced meanwhile are skipped: the next plan decides again.
func (c *Controller) adoptAndRelease(ctx context.Context, yad *v1alpha1.YurtAppDaemon, plan *policy.Plan, record func(*actions.Failure, bool)) {
	if len(plan.Adoptions) == 0 && len(plan.Releases) == 0 {
		return
	}
	recheck := ownership.Recheck(yad.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.OpenYurtAppsV1alpha1().YurtAppDaemons(yad.Namespace).Get(ctx, yad.Name, metav1.GetOptions{})
	})
	patch := func(kind v1alpha1.TemplateType, name, action string, data []byte) error {
		var err error
		opts := metav1.PatchOptions{FieldManager: fieldManager}
		if kind == policy.StatefulSetKind {
			_, err = c.kubeClient.AppsV1().StatefulSets(yad.Namespace).Patch(ctx, name, types.StrategicMergePatchType, data, opts)
		} else {
			_, err = c.kubeClient.AppsV1().Deployments(yad.Namespace).Patch(ctx, name, types.StrategicMergePatchType, data, opts)
		}
		metrics.CountAction(action, err)
		return err
	}
	ref := ownership.ControllerRef(policy.ControllerKind.GroupVersion().String(), policy.ControllerKind.Kind, yad.Name, yad.UID)
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Adoptions), func(i int) {
		a := plan.Adoptions[i]
		if err := recheck(ctx); err != nil {
			if !errors.Is(err, ownership.ErrOwnerDeleting) {
				record(&actions.Failure{Reason: ReasonFailedAdopt, Message: err.Error(), Retry: true}, false)
			}
			return
		}
		data, err := ownership.AdoptPatch(ref, a.UID)
		if err == nil {
			err = patch(a.Kind, a.Name, "adopt", data)
		}
		switch {
		case err == nil:
			c.recorder.Eventf(yad, corev1.EventTypeNormal, ReasonAdopted, "Adopted %s %s (uid %s) as the workload of pool %s", a.Kind, a.Name, a.UID, a.Pool)
			record(nil, true)
		case ownership.Gone(err):
		default:
			msg := fmt.Sprintf("adopt %s %s of pool %s: %v", a.Kind, a.Name, a.Pool, err)
			c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedAdopt, msg)
			record(&actions.Failure{Reason: ReasonFailedAdopt, Message: msg, Retry: true}, false)
		}
	})
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Releases), func(i int) {
		r := plan.Releases[i]
		data, err := ownership.ReleasePatch(yad.UID, r.UID)
		if err == nil {
			err = patch(r.Kind, r.Name, "release", data)
		}
		switch {
		case err == nil:
			c.recorder.Eventf(yad, corev1.EventTypeNormal, ReasonReleased, "Released %s %s (uid %s) of pool %s: spec.selector no longer matches its pods", r.Kind, r.Name, r.UID, describePool(r.Pool))
			record(nil, true)
		case ownership.Gone(err):
		default:
			msg := fmt.Sprintf("release %s %s of pool %s: %v", r.Kind, r.Name, describePool(r.Pool), err)
			c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedRelease, msg)
			record(&actions.Failure{Reason: ReasonFailedRelease, Message: msg, Retry: true}, false)
		}
	})
	klog.FromContext(ctx).V(2).Info("Ownership", "adoptions", len(plan.Adoptions), "releases", len(plan.Releases))
}

func (c *Controller) deleteChild(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, d policy.Delete) (*actions.Failure, bool) {
	ref := childRef{kind: d.Kind, name: d.Name}
	uid := d.UID
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background}
	c.expectations.Raise(key, ref, expectations.Delete(uid))
	var err error
	if d.Kind == policy.StatefulSetKind {
		err = c.kubeClient.AppsV1().StatefulSets(yad.Namespace).Delete(ctx, d.Name, opts)
	} else {
		err = c.kubeClient.AppsV1().Deployments(yad.Namespace).Delete(ctx, d.Name, opts)
	}
	metrics.CountAction("delete", err)
	if err != nil {
		c.expectations.Lower(key, ref)
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil, false // already gone, or the name now holds another object: the next plan decides
		}
		msg := fmt.Sprintf("delete %s %s of pool %s (%s): %v", d.Kind, d.Name, describePool(d.Pool), d.Reason, err)
		c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedDelete, msg)
		return &actions.Failure{Reason: ReasonFailedDelete, Message: msg, Retry: true}, false
	}
	c.recorder.Eventf(yad, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted %s %s of pool %s (%s)", d.Kind, d.Name, describePool(d.Pool), d.Reason)
	return nil, true
}

func describePool(pool string) string {
	if pool == "" {
		return "<none>"
	}
	return pool
}

func (c *Controller) updateChild(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, u policy.Update) (*actions.Failure, bool) {
	ref := childRef{kind: u.Kind, name: u.Name}
	var err error
	if u.StatefulSet != nil {
		c.expectations.Raise(key, ref, expectations.UpdateFrom(u.StatefulSet.ResourceVersion))
		_, err = c.kubeClient.AppsV1().StatefulSets(yad.Namespace).Update(ctx, u.StatefulSet, metav1.UpdateOptions{FieldManager: fieldManager})
	} else {
		c.expectations.Raise(key, ref, expectations.UpdateFrom(u.Deployment.ResourceVersion))
		_, err = c.kubeClient.AppsV1().Deployments(yad.Namespace).Update(ctx, u.Deployment, metav1.UpdateOptions{FieldManager: fieldManager})
	}
	metrics.CountAction("update", err)
	reasons := make([]string, len(u.Reasons))
	for i, r := range u.Reasons {
		reasons[i] = string(r)
	}
	if err != nil {
		c.expectations.Lower(key, ref)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			klog.FromContext(ctx).V(2).Info("Child changed since the cache saw it, syncing again", "kind", u.Kind, "name", u.Name, "err", err)
			return &actions.Failure{Reason: actions.ReasonConflict, Message: err.Error(), Retry: true, Err: apierrors.NewConflict(
				appsResource(u.Kind), u.Name, err)}, false
		}
		msg := fmt.Sprintf("update %s %s of pool %s (%s): %v", u.Kind, u.Name, u.Pool, strings.Join(reasons, ", "), err)
		c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedUpdate, msg)
		return &actions.Failure{Reason: ReasonFailedUpdate, Message: msg, Retry: true}, false
	}
	c.recorder.Eventf(yad, corev1.EventTypeNormal, ReasonSuccessfulUpdate, "Updated %s %s of pool %s (%s)", u.Kind, u.Name, u.Pool, strings.Join(reasons, ", "))
	return nil, true
}

func (c *Controller) createChild(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, cr policy.Create) (*actions.Failure, bool) {
	kind, name := policy.DeploymentKind, ""
	if cr.StatefulSet != nil {
		kind, name = policy.StatefulSetKind, cr.StatefulSet.Name
	} else {
		name = cr.Deployment.Name
	}
	ref := childRef{kind: kind, name: name}
	c.expectations.Raise(key, ref, expectations.Create())
	var err error
	if cr.StatefulSet != nil {
		_, err = c.kubeClient.AppsV1().StatefulSets(yad.Namespace).Create(ctx, cr.StatefulSet, metav1.CreateOptions{FieldManager: fieldManager})
	} else {
		_, err = c.kubeClient.AppsV1().Deployments(yad.Namespace).Create(ctx, cr.Deployment, metav1.CreateOptions{FieldManager: fieldManager})
	}
	metrics.CountAction("create", err)
	if err != nil {
		c.expectations.Lower(key, ref)
		if apierrors.IsAlreadyExists(err) {
			// The cache is behind (ours) or someone took the name (a conflict the next plan reports).
			c.queue.AddAfter(key, alreadyExistsRetry)
			return nil, false
		}
		msg := fmt.Sprintf("create %s %s for pool %s: %v", kind, name, cr.Pool, err)
		c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedCreate, msg)
		return &actions.Failure{Reason: ReasonFailedCreate, Message: msg, Retry: true}, false
	}
	c.recorder.Eventf(yad, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created %s %s for pool %s", kind, name, cr.Pool)
	return nil, true
}
