package yurtappdaemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

const (
	fieldManager = "yurtappdaemon-controller"
	// maxParallel bounds the concurrent API calls of one sync for deletions and updates.
	maxParallel = 16
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
// first (they free names), then updates, then creations in batches of growing size (slow start), so a
// YurtAppDaemon whose children are all refused costs one call per sync, not one per pool.
func (c *Controller) execute(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, plan *policy.Plan, r *syncResult) {
	var mu sync.Mutex
	record := func(f *failure, wrote bool) {
		mu.Lock()
		defer mu.Unlock()
		if f != nil {
			r.failures = append(r.failures, *f)
		}
		if wrote {
			r.wrote = true
		}
	}

	for _, conflict := range plan.Conflicts {
		msg := fmt.Sprintf("%s %s for pool %s exists and is not a child of this YurtAppDaemon (held by %s); delete or rename it to let the YurtAppDaemon create its workload",
			conflict.Kind, conflict.Name, conflict.Pool, conflict.Owner)
		c.recorder.Event(yad, corev1.EventTypeWarning, policy.ReasonWorkloadConflict, msg)
		record(&failure{reason: policy.ReasonWorkloadConflict, message: msg}, false)
	}
	for _, e := range plan.PoolErrors {
		msg := fmt.Sprintf("pool %s: %s", e.Pool, e.Message)
		c.recorder.Event(yad, corev1.EventTypeWarning, policy.ReasonInvalidPool, msg)
		record(&failure{reason: policy.ReasonInvalidPool, message: msg}, false)
	}

	c.adoptAndRelease(ctx, yad, plan, record)
	workqueue.ParallelizeUntil(ctx, maxParallel, len(plan.Deletes), func(i int) {
		record(c.deleteChild(ctx, key, yad, plan.Deletes[i]))
	})
	workqueue.ParallelizeUntil(ctx, maxParallel, len(plan.Updates), func(i int) {
		record(c.updateChild(ctx, key, yad, plan.Updates[i]))
	})
	remaining := plan.Creates
	for batch := 1; len(remaining) > 0; batch *= 2 {
		if batch > len(remaining) {
			batch = len(remaining)
		}
		failed := false
		workqueue.ParallelizeUntil(ctx, maxParallel, batch, func(i int) {
			f, wrote := c.createChild(ctx, key, yad, remaining[i])
			record(f, wrote)
			if f != nil {
				mu.Lock()
				failed = true
				mu.Unlock()
			}
		})
		if failed {
			return
		}
		remaining = remaining[batch:]
	}
}

// adoptAndRelease carries out the plan's adoptions and releases, each with one strategic merge patch bound
// to the workload's UID that adds or removes only the YurtAppDaemon's reference. Before the first adoption
// the YurtAppDaemon is read again from the API server; if it is being deleted (or was replaced) nothing is
// adopted. Workloads that are gone or were replaced meanwhile are skipped: the next plan decides again.
func (c *Controller) adoptAndRelease(ctx context.Context, yad *v1alpha1.YurtAppDaemon, plan *policy.Plan, record func(*failure, bool)) {
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
	ref := metav1.OwnerReference{APIVersion: policy.ControllerKind.GroupVersion().String(), Kind: policy.ControllerKind.Kind, Name: yad.Name, UID: yad.UID}
	yes := true
	ref.Controller, ref.BlockOwnerDeletion = &yes, &yes
	workqueue.ParallelizeUntil(ctx, maxParallel, len(plan.Adoptions), func(i int) {
		a := plan.Adoptions[i]
		if err := recheck(ctx); err != nil {
			if !errors.Is(err, ownership.ErrOwnerDeleting) {
				record(&failure{reason: ReasonFailedAdopt, message: err.Error(), retry: true}, false)
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
			record(&failure{reason: ReasonFailedAdopt, message: msg, retry: true}, false)
		}
	})
	workqueue.ParallelizeUntil(ctx, maxParallel, len(plan.Releases), func(i int) {
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
			record(&failure{reason: ReasonFailedRelease, message: msg, retry: true}, false)
		}
	})
	klog.FromContext(ctx).V(2).Info("Ownership", "adoptions", len(plan.Adoptions), "releases", len(plan.Releases))
}

func (c *Controller) deleteChild(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, d policy.Delete) (*failure, bool) {
	ref := childRef{kind: d.Kind, name: d.Name}
	uid := d.UID
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background}
	c.expectations.expect(key, ref, write{kind: expectDelete, uid: uid})
	var err error
	if d.Kind == policy.StatefulSetKind {
		err = c.kubeClient.AppsV1().StatefulSets(yad.Namespace).Delete(ctx, d.Name, opts)
	} else {
		err = c.kubeClient.AppsV1().Deployments(yad.Namespace).Delete(ctx, d.Name, opts)
	}
	metrics.CountAction("delete", err)
	if err != nil {
		c.expectations.lower(key, ref)
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil, false // already gone, or the name now holds another object: the next plan decides
		}
		msg := fmt.Sprintf("delete %s %s of pool %s (%s): %v", d.Kind, d.Name, describePool(d.Pool), d.Reason, err)
		c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedDelete, msg)
		return &failure{reason: ReasonFailedDelete, message: msg, retry: true}, false
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

func (c *Controller) updateChild(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, u policy.Update) (*failure, bool) {
	ref := childRef{kind: u.Kind, name: u.Name}
	var err error
	if u.StatefulSet != nil {
		c.expectations.expect(key, ref, write{kind: expectUpdate, resourceVersion: u.StatefulSet.ResourceVersion})
		_, err = c.kubeClient.AppsV1().StatefulSets(yad.Namespace).Update(ctx, u.StatefulSet, metav1.UpdateOptions{FieldManager: fieldManager})
	} else {
		c.expectations.expect(key, ref, write{kind: expectUpdate, resourceVersion: u.Deployment.ResourceVersion})
		_, err = c.kubeClient.AppsV1().Deployments(yad.Namespace).Update(ctx, u.Deployment, metav1.UpdateOptions{FieldManager: fieldManager})
	}
	metrics.CountAction("update", err)
	reasons := make([]string, len(u.Reasons))
	for i, r := range u.Reasons {
		reasons[i] = string(r)
	}
	if err != nil {
		c.expectations.lower(key, ref)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			klog.FromContext(ctx).V(2).Info("Child changed since the cache saw it, syncing again", "kind", u.Kind, "name", u.Name, "err", err)
			return &failure{reason: "Conflict", message: err.Error(), retry: true, hidden: true, err: apierrors.NewConflict(
				appsResource(u.Kind), u.Name, err)}, false
		}
		msg := fmt.Sprintf("update %s %s of pool %s (%s): %v", u.Kind, u.Name, u.Pool, strings.Join(reasons, ", "), err)
		c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedUpdate, msg)
		return &failure{reason: ReasonFailedUpdate, message: msg, retry: true}, false
	}
	c.recorder.Eventf(yad, corev1.EventTypeNormal, ReasonSuccessfulUpdate, "Updated %s %s of pool %s (%s)", u.Kind, u.Name, u.Pool, strings.Join(reasons, ", "))
	return nil, true
}

func (c *Controller) createChild(ctx context.Context, key string, yad *v1alpha1.YurtAppDaemon, cr policy.Create) (*failure, bool) {
	kind, name := policy.DeploymentKind, ""
	if cr.StatefulSet != nil {
		kind, name = policy.StatefulSetKind, cr.StatefulSet.Name
	} else {
		name = cr.Deployment.Name
	}
	ref := childRef{kind: kind, name: name}
	c.expectations.expect(key, ref, write{kind: expectCreate})
	var err error
	if cr.StatefulSet != nil {
		_, err = c.kubeClient.AppsV1().StatefulSets(yad.Namespace).Create(ctx, cr.StatefulSet, metav1.CreateOptions{FieldManager: fieldManager})
	} else {
		_, err = c.kubeClient.AppsV1().Deployments(yad.Namespace).Create(ctx, cr.Deployment, metav1.CreateOptions{FieldManager: fieldManager})
	}
	metrics.CountAction("create", err)
	if err != nil {
		c.expectations.lower(key, ref)
		if apierrors.IsAlreadyExists(err) {
			// The cache is behind (ours) or someone took the name (a conflict the next plan reports).
			c.queue.AddAfter(key, alreadyExistsRetry)
			return nil, false
		}
		msg := fmt.Sprintf("create %s %s for pool %s: %v", kind, name, cr.Pool, err)
		c.recorder.Event(yad, corev1.EventTypeWarning, ReasonFailedCreate, msg)
		return &failure{reason: ReasonFailedCreate, message: msg, retry: true}, false
	}
	c.recorder.Eventf(yad, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created %s %s for pool %s", kind, name, cr.Pool)
	return nil, true
}
