package tapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

var fieldManager = actions.FieldManager(Name)

// execute carries out plan and claimPlan for tapp. pods is the snapshot the plan was computed from.
func (c *Controller) execute(ctx context.Context, key string, tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *policy.Plan, claimPlan policy.ClaimPlan) []actions.Failure {
	var failures actions.Failures
	byName := make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		byName[pod.Name] = pod
	}

	failures.Add(c.adoptAndRelease(ctx, tapp, plan, claimPlan)...)
	// Claim owner references before the deletions: a pod scaled away is deleted only once its claims
	// carry the references whenScaled: Delete asks for.
	retentionFailed := c.changeClaimOwners(ctx, tapp, claimPlan.OwnerChanges, &failures)
	for _, conflict := range plan.Conflicts {
		msg := fmt.Sprintf("pod %s for instance %s exists and is controlled by %s; delete it to let the TApp create its instance", conflict.PodName, conflict.ID, conflict.Owner)
		c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonInstanceConflict, msg)
		failures.Add(actions.Failure{Reason: ReasonInstanceConflict, Message: msg})
	}
	for _, e := range plan.Errors {
		msg := fmt.Sprintf("instance %s: %s", e.ID, e.Message)
		c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonTemplateNotFound, msg)
		failures.Add(actions.Failure{Reason: ReasonTemplateNotFound, Message: msg})
	}

	// Claims first: an expansion is independent of the pods, and the claims of instances to create are
	// expanded before their pods exist.
	failures.Add(c.expandClaims(ctx, key, tapp, plan.ClaimExpansions)...)
	failures.Add(c.deleteClaims(ctx, tapp, plan.ClaimDeletes)...)
	failures.Add(c.markLifecycle(ctx, key, tapp, pods, plan)...)

	// Deletions first: they free names that creations of the same instance need later.
	deletes := make([]deletion, 0, len(plan.Deletes)+len(plan.ForceDeletes)+len(plan.Recreates))
	for _, d := range plan.Deletes {
		if d.Reason == policy.ReasonScaleDown && retentionFailed[d.ID] {
			continue
		}
		deletes = append(deletes, deletion{podName: d.PodName, uid: d.UID, reason: string(d.Reason), id: d.ID})
	}
	for _, d := range plan.ForceDeletes {
		deletes = append(deletes, deletion{podName: d.PodName, uid: d.UID, reason: string(d.Reason), id: d.ID, force: true})
	}
	for _, r := range plan.Recreates {
		deletes = append(deletes, deletion{podName: r.PodName, uid: r.UID, reason: "Recreate", id: r.ID, template: r.Template, why: r.Reason,
			claimWhy: r.ClaimReason, claims: r.DeleteClaims})
	}
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(deletes), func(i int) {
		if f := c.deletePod(ctx, key, tapp, deletes[i]); f != nil {
			failures.Add(*f)
		}
	})

	updates := append(append([]policy.InPlaceUpdate{}, plan.InPlaceUpdates...), plan.Relabels...)
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(updates), func(i int) {
		u := updates[i]
		if f := c.updateInPlace(ctx, key, tapp, byName[u.PodName], u, i >= len(plan.InPlaceUpdates)); f != nil {
			failures.Add(*f)
		}
	})

	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.RevisionLabels), func(i int) {
		u := plan.RevisionLabels[i]
		if f := c.relabelRevision(ctx, key, tapp, byName[u.PodName], u); f != nil {
			failures.Add(*f)
		}
	})

	failures.Add(c.createInstances(ctx, key, tapp, plan)...)
	return failures.List()
}

// relabelRevision sets the controller-revision-hash label of a pod that runs its template already: a
// label-only patch bound to the pod's UID, which restarts nothing.
func (c *Controller) relabelRevision(ctx context.Context, key string, tapp *tkestackv1.TApp, pod *corev1.Pod, u policy.InPlaceUpdate) *actions.Failure {
	if pod == nil {
		return nil
	}
	revision := u.Labels[tkestack.ControllerRevisionHashLabel]
	c.expectations.Raise(key, podObject(pod.Name), expectations.UpdateTo(tkestack.ControllerRevisionHashLabel, revision))
	_, err := c.updater.Apply(ctx, pod, u.Update)
	metrics.CountAction("relabel-revision", err)
	if err != nil {
		c.expectations.Lower(key, podObject(pod.Name))
		return c.updateFailed(tapp, pod, err)
	}
	klog.FromContext(ctx).V(4).Info("Relabelled pod with its revision", "pod", pod.Name, "revision", revision)
	return nil
}

type deletion struct {
	podName, reason, id, template string
	// why says why a change applied in place falls back to recreation (policy.Recreate Reason).
	why string
	// claimWhy says why the pod is recreated for its claims, and claims are the claims deleted once the
	// pod's deletion is accepted (policy.Recreate ClaimReason and DeleteClaims).
	claimWhy string
	claims   []policy.ClaimRef
	uid      types.UID
	force    bool
}

func (c *Controller) deletePod(ctx context.Context, key string, tapp *tkestackv1.TApp, d deletion) *actions.Failure {
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &d.uid}}
	if d.force {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	c.expectations.Raise(key, podObject(d.podName), expectations.Delete(d.uid))
	err := c.kubeClient.CoreV1().Pods(tapp.Namespace).Delete(ctx, d.podName, opts)
	metrics.CountAction("delete", err)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		c.expectations.Lower(key, podObject(d.podName))
		msg := fmt.Sprintf("delete pod %s (%s): %v", d.podName, d.reason, err)
		c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedDelete, msg)
		return &actions.Failure{Reason: ReasonFailedDelete, Message: msg, Retry: true}
	}
	if err != nil {
		c.expectations.Lower(key, podObject(d.podName)) // already gone, or replaced by a newer pod of that name
		return nil
	}
	c.hookWaits.forget(d.uid)
	if d.claimWhy != "" {
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonRecreatingForClaims, "Deleted pod %s to recreate it: %s", d.podName, d.claimWhy)
		for _, claim := range d.claims {
			if f := c.deleteClaim(ctx, tapp, d.id, claim, "its pod is recreated with a new claim"); f != nil {
				return f
			}
		}
		return nil
	}
	switch {
	case d.force:
		c.recorder.Eventf(tapp, corev1.EventTypeWarning, ReasonForceDeleted, "Force-deleted pod %s: its node is lost", d.podName)
	case d.reason == string(policy.ReasonKilled):
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonKilling, "Killing instance %s: deleted pod %s", d.id, d.podName)
	case d.reason == "Recreate" && d.why != "":
		c.recorder.Eventf(tapp, corev1.EventTypeWarning, ReasonResizeInfeasible, "Deleted pod %s to recreate it with template %q: %s", d.podName, d.template, d.why)
	case d.reason == "Recreate":
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonRecreating, "Deleted pod %s to recreate it with template %q (the change cannot be applied in place)", d.podName, d.template)
	case d.reason == string(policy.ReasonMigrate):
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonMigrating, "Deleted finished pod %s to recreate it", d.podName)
	default:
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod %s (%s)", d.podName, d.reason)
	}
	return nil
}

// createInstances creates the claims and pods of the plan's Creates in slow-start batches
// (actions.SlowStart), stopping after the first batch with a failure. The readiness gates of the new pods
// are written alongside, by their own workers, so that the creates never wait for them; it returns once
// both are done.
func (c *Controller) createInstances(ctx context.Context, key string, tapp *tkestackv1.TApp, plan *policy.Plan) []actions.Failure {
	ids := plan.Creates
	if len(ids) == 0 {
		return nil
	}
	// The cache may still show a TApp that has just been deleted: the garbage collector deleting its pods
	// wakes this sync before the informer shows the deletion, and the plan then recreates them. Pods are
	// created only for a TApp the server still has, with this UID and not being deleted: one read of this
	// server's own store per sync that creates.
	if err := ownership.Recheck(tapp.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.TKEStackAppsV1().TApps(tapp.Namespace).Get(ctx, tapp.Name, metav1.GetOptions{})
	})(ctx); err != nil {
		if errors.Is(err, ownership.ErrOwnerDeleting) {
			klog.FromContext(ctx).V(2).Info("Not creating instances: the TApp is gone or going", "tapp", key, "reason", err)
			return nil
		}
		return []actions.Failure{{Reason: ReasonFailedCreate, Message: fmt.Sprintf("re-reading the TApp before creating instances: %v", err), Retry: true}}
	}
	created := make(chan *corev1.Pod, len(ids))
	var gates sync.WaitGroup
	for i := 0; i < min(actions.MaxParallel, len(ids)); i++ {
		gates.Add(1)
		go func() {
			defer gates.Done()
			for pod := range created {
				c.initReadinessGate(ctx, pod)
			}
		}()
	}
	defer gates.Wait()
	defer close(created)

	var failures actions.Failures
	actions.SlowStart(ctx, len(ids), func(i int) bool {
		if f := c.createInstance(ctx, key, tapp, plan, ids[i], created); f != nil {
			failures.Add(*f)
			return false
		}
		return true
	})
	return failures.List()
}

// createInstance creates the claims and the pod of instance id, and sends the pod to created.
func (c *Controller) createInstance(ctx context.Context, key string, tapp *tkestackv1.TApp, plan *policy.Plan, id string, created chan<- *corev1.Pod) *actions.Failure {
	for _, claim := range policy.NewInstanceClaims(tapp, id) {
		_, err := c.kubeClient.CoreV1().PersistentVolumeClaims(tapp.Namespace).Create(ctx, claim, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			// Claims outlive their pods: an instance coming back mounts its old claim, whoever created
			// it, unless another object controls it.
			if f := c.claimConflict(ctx, tapp, id, claim.Name); f != nil {
				return f
			}
			continue
		}
		metrics.CountAction("create-claim", err)
		if err != nil {
			msg := fmt.Sprintf("create claim %s for instance %s: %v", claim.Name, id, err)
			c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedCreate, msg)
			return &actions.Failure{Reason: ReasonFailedCreate, Message: msg, Retry: true}
		}
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created claim %s for instance %s", claim.Name, id)
	}
	pod, err := plan.NewPod(id)
	if err != nil {
		return &actions.Failure{Reason: ReasonTemplateNotFound, Message: err.Error()}
	}
	c.expectations.Raise(key, podObject(pod.Name), expectations.Create())
	out, err := c.kubeClient.CoreV1().Pods(tapp.Namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: fieldManager})
	metrics.CountAction("create", err)
	if err != nil {
		c.expectations.Lower(key, podObject(pod.Name))
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache will show it; the next plan decides
		}
		msg := fmt.Sprintf("create pod %s: %v", pod.Name, err)
		c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedCreate, msg)
		return &actions.Failure{Reason: ReasonFailedCreate, Message: msg, Retry: true}
	}
	c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod %s", pod.Name)
	c.gateWrites.started(out)
	created <- out
	return nil
}

// claimConflict returns a failure if the existing claim name of instance id is controlled by an object
// other than the TApp: the instance's pod is then not created, since it would mount a claim someone else
// manages. A claim without controller (created by this controller, or by the original one and orphaned
// by a migration) is the instance's claim. The claim is read from the API server.
func (c *Controller) claimConflict(ctx context.Context, tapp *tkestackv1.TApp, id, name string) *actions.Failure {
	claim, err := c.kubeClient.CoreV1().PersistentVolumeClaims(tapp.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return &actions.Failure{Reason: ReasonFailedCreate, Message: fmt.Sprintf("read claim %s for instance %s: %v", name, id, err), Retry: true}
	}
	ref := metav1.GetControllerOfNoCopy(claim)
	if ref == nil || ref.UID == tapp.UID {
		return nil
	}
	msg := fmt.Sprintf("claim %s for instance %s exists and is controlled by %s %s (uid %s); delete it or remove its controller reference to let the TApp create its instance", name, id, ref.Kind, ref.Name, ref.UID)
	c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonInstanceConflict, msg)
	return &actions.Failure{Reason: ReasonInstanceConflict, Message: msg}
}

// ownershipChange is one adoption or release of a pod or claim.
type ownershipChange struct {
	adopt    bool
	resource string // "pod" or "claim"
	id       string
	name     string
	uid      types.UID
}

// adoptAndRelease carries out the adoptions and releases of pods (plan) and claims (claimPlan), each with
// one patch bound to the object's UID that adds or removes only the TApp's reference. Before the first
// adoption the TApp is read again from the API server: if it is being deleted (or was replaced), nothing is
// adopted. Objects that are gone or were replaced meanwhile are skipped; the next snapshot decides again.
func (c *Controller) adoptAndRelease(ctx context.Context, tapp *tkestackv1.TApp, plan *policy.Plan, claimPlan policy.ClaimPlan) []actions.Failure {
	var changes []ownershipChange
	for _, a := range plan.Adoptions {
		changes = append(changes, ownershipChange{adopt: true, resource: "pod", id: a.ID, name: a.PodName, uid: a.UID})
	}
	for _, a := range claimPlan.Adoptions {
		changes = append(changes, ownershipChange{adopt: true, resource: "claim", id: a.ID, name: a.Name, uid: a.UID})
	}
	for _, r := range plan.Releases {
		changes = append(changes, ownershipChange{resource: "pod", name: r.PodName, uid: r.UID})
	}
	for _, r := range claimPlan.Releases {
		changes = append(changes, ownershipChange{resource: "claim", name: r.Name, uid: r.UID})
	}
	if len(changes) == 0 {
		return nil
	}
	logger := klog.FromContext(ctx)
	recheck := ownership.Recheck(tapp.UID, func(ctx context.Context) (metav1.Object, error) {
		return c.client.TKEStackAppsV1().TApps(tapp.Namespace).Get(ctx, tapp.Name, metav1.GetOptions{})
	})
	var failures actions.Failures
	var mu sync.Mutex
	done := map[string]int{}
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(changes), func(i int) {
		ch := changes[i]
		verb := "release"
		var data []byte
		var err error
		if ch.adopt {
			verb = "adopt"
			if err := recheck(ctx); err != nil {
				if !errors.Is(err, ownership.ErrOwnerDeleting) {
					failures.Add(actions.Failure{Reason: ReasonFailedAdopt, Message: err.Error(), Retry: true})
				}
				return
			}
			data, err = ownership.AdoptPatch(policy.OwnerReference(tapp), ch.uid)
		} else {
			data, err = ownership.ReleasePatch(tapp.UID, ch.uid)
		}
		if err == nil {
			opts := metav1.PatchOptions{FieldManager: fieldManager}
			if ch.resource == "claim" {
				_, err = c.kubeClient.CoreV1().PersistentVolumeClaims(tapp.Namespace).Patch(ctx, ch.name, types.StrategicMergePatchType, data, opts)
			} else {
				_, err = c.kubeClient.CoreV1().Pods(tapp.Namespace).Patch(ctx, ch.name, types.StrategicMergePatchType, data, opts)
			}
			metrics.CountAction(verb+"-"+ch.resource, err)
		}
		switch {
		case err == nil:
			mu.Lock()
			done[verb+" "+ch.resource]++
			mu.Unlock()
			if ch.adopt {
				c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonAdopted, "Adopted orphan %s %s (uid %s) of instance %s", ch.resource, ch.name, ch.uid, ch.id)
			} else {
				c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonReleased, "Released %s %s (uid %s): spec.selector no longer matches its labels", ch.resource, ch.name, ch.uid)
			}
		case ownership.Gone(err):
		default:
			reason := ReasonFailedRelease
			if ch.adopt {
				reason = ReasonFailedAdopt
			}
			msg := fmt.Sprintf("%s %s %s: %v", verb, ch.resource, ch.name, err)
			c.recorder.Event(tapp, corev1.EventTypeWarning, reason, msg)
			failures.Add(actions.Failure{Reason: reason, Message: msg, Retry: true})
		}
	})
	if len(plan.Adoptions)+len(claimPlan.Adoptions) > 0 {
		if err := recheck(ctx); errors.Is(err, ownership.ErrOwnerDeleting) {
			logger.V(2).Info("Not adopting", "reason", err.Error())
		}
	}
	logger.V(2).Info("Ownership changes", "adoptedPods", done["adopt pod"], "adoptedClaims", done["adopt claim"],
		"releasedPods", done["release pod"], "releasedClaims", done["release claim"], "planned", len(changes))
	return failures.List()
}

// changeClaimOwners adds and removes the claim owner references of changes (PlanClaimRetention), each with
// one patch bound to the claim's UID. It returns the instances whose claims could not be changed; claims
// gone or replaced meanwhile are skipped, the next snapshot decides again.
func (c *Controller) changeClaimOwners(ctx context.Context, tapp *tkestackv1.TApp, changes []policy.ClaimOwnerChange, failures *actions.Failures) map[string]bool {
	var mu sync.Mutex
	failed := map[string]bool{}
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(changes), func(i int) {
		ch := changes[i]
		var data []byte
		var err error
		verb := "remove"
		if ch.Add != nil {
			verb = "add"
			data, err = ownership.AdoptPatch(*ch.Add, ch.UID)
		} else {
			data, err = ownership.ReleasePatch(ch.Remove, ch.UID)
		}
		if err == nil {
			_, err = c.kubeClient.CoreV1().PersistentVolumeClaims(tapp.Namespace).Patch(ctx, ch.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager})
			metrics.CountAction("claim-owner", err)
		}
		switch {
		case err == nil:
			if ch.Add != nil {
				c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonClaimOwnerAdded, "Claim %s of instance %s is now owned by %s %s (persistentVolumeClaimRetentionPolicy)", ch.Name, ch.ID, ch.Add.Kind, ch.Add.Name)
			} else {
				klog.FromContext(ctx).V(2).Info("Removed a claim owner reference", "claim", ch.Name, "instance", ch.ID, "owner", ch.Remove)
			}
		case ownership.Gone(err):
		default:
			msg := fmt.Sprintf("%s owner reference of claim %s of instance %s: %v", verb, ch.Name, ch.ID, err)
			c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedClaimOwner, msg)
			failures.Add(actions.Failure{Reason: ReasonFailedClaimOwner, Message: msg, Retry: true})
			mu.Lock()
			failed[ch.ID] = true
			mu.Unlock()
		}
	})
	return failed
}

// initReadinessGate writes the readiness gate of a pod just created: it cannot become Ready before, and
// writing it now rather than in a later sync saves that sync's delay. If this fails, progressInPlace writes
// it once the pod is observed.
func (c *Controller) initReadinessGate(ctx context.Context, pod *corev1.Pod) {
	out, err := c.updater.InitReadinessGate(ctx, pod)
	metrics.CountAction("readiness-gate", err)
	if err != nil {
		c.gateWrites.forget(pod.UID) // the next sync that sees the pod writes it
		klog.FromContext(ctx).V(2).Info("Readiness gate of a new pod not written; retried when the pod is observed", "pod", pod.Name, "err", err)
		return
	}
	c.gateWrites.done(pod, out)
}

// updateInPlace carries out one in-place update of the plan, as the plan computed it: readiness gate False
// first when images change, then one patch of images, labels and annotations. relabel says the update is a
// Relabel of the plan: a pod with foreign hashes that runs its template gets the current hashes.
func (c *Controller) updateInPlace(ctx context.Context, key string, tapp *tkestackv1.TApp, pod *corev1.Pod, u policy.InPlaceUpdate, relabel bool) *actions.Failure {
	if pod == nil {
		return nil
	}
	cur := pod
	var err error
	if len(u.Images) > 0 {
		if cur, err = c.updater.Begin(ctx, pod); err != nil {
			metrics.CountAction("inplace-begin", err)
			return c.updateFailed(tapp, pod, err)
		}
	}
	c.expectations.Raise(key, podObject(pod.Name), expectations.UpdateTo(tkestack.TemplateHashLabel, u.Revision))
	_, err = c.updater.Apply(ctx, cur, u.Update)
	metrics.CountAction("inplace-update", err)
	if errors.Is(err, inplace.ErrResizeInfeasible) {
		// The API server refuses the resize for the node's capacity: fall back to recreation, in the budget
		// slot the update already holds.
		c.expectations.Lower(key, podObject(pod.Name))
		return c.deletePod(ctx, key, tapp, deletion{podName: pod.Name, uid: pod.UID, reason: "Recreate", id: u.ID, template: u.Template, why: err.Error()})
	}
	if err != nil {
		c.expectations.Lower(key, podObject(pod.Name))
		return c.updateFailed(tapp, pod, err)
	}
	switch {
	case relabel:
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonRelabelled, "Pod %s runs template %q: gave it the current hash labels %s=%s, %s=%s without restarting it",
			pod.Name, u.Template, tkestack.TemplateHashLabel, u.Labels[tkestack.TemplateHashLabel], tkestack.UniqHashLabel, u.Labels[tkestack.UniqHashLabel])
	case len(u.Images) > 0 || len(u.Resources) > 0:
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonInPlaceUpdate, "Updating pod %s in place to template %q: %s", pod.Name, u.Template, describeChanges(u.Images, u.Resources))
	default:
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonInPlaceUpdate, "Updated labels and annotations of pod %s to template %q", pod.Name, u.Template)
	}
	return nil
}

func (c *Controller) updateFailed(tapp *tkestackv1.TApp, pod *corev1.Pod, err error) *actions.Failure {
	if apierrors.IsConflict(err) {
		return &actions.Failure{Reason: actions.ReasonConflict, Message: err.Error(), Retry: true, Err: err}
	}
	if apierrors.IsNotFound(err) || errors.Is(err, inplace.ErrPodReplaced) {
		return &actions.Failure{Reason: actions.ReasonConflict, Message: err.Error(), Retry: true}
	}
	msg := fmt.Sprintf("update pod %s in place: %v", pod.Name, err)
	c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedUpdate, msg)
	return &actions.Failure{Reason: ReasonFailedUpdate, Message: msg, Retry: true}
}

func describeChanges(images map[string]string, resources map[string]corev1.ResourceRequirements) string {
	names := make([]string, 0, len(images))
	for name := range images {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names)+len(resources))
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("container %s image %s", name, images[name]))
	}
	names = names[:0]
	for name := range resources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := resources[name]
		parts = append(parts, fmt.Sprintf("container %s resize requests %s limits %s", name, describeList(r.Requests), describeList(r.Limits)))
	}
	return strings.Join(parts, ", ")
}

func describeList(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "{}"
	}
	names := make([]string, 0, len(l))
	for name := range l {
		names = append(names, string(name))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		q := l[corev1.ResourceName(name)]
		parts = append(parts, name+"="+q.String())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// progressInPlace carries out the plan's readiness gate writes (policy.ComputeGates): it completes the
// in-place updates the kubelet has finished, reports those that fail, and sets the gate condition True on
// pods that have none (new pods) or were left False without an update in progress.
func (c *Controller) progressInPlace(ctx context.Context, tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *policy.Plan) []actions.Failure {
	byName := make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		byName[pod.Name] = pod
	}
	var failures actions.Failures
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Gates), func(i int) {
		g := plan.Gates[i]
		pod := byName[g.PodName]
		if g.Action != policy.GateFailed && c.gateWrites.pending(pod) {
			// The cache does not show this controller's last gate write of the pod yet (a new pod's first,
			// a completion): what the plan asks was planned from an older copy, and may be done already.
			return
		}
		var out *corev1.Pod
		var err error
		switch g.Action {
		case policy.GateComplete:
			out, err = c.updater.Complete(ctx, pod)
			metrics.CountAction("inplace-complete", err)
			if err == nil {
				c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonInPlaceUpdated, "Pod %s runs its new images", pod.Name)
			}
		case policy.GateFailed:
			c.recorder.Eventf(tapp, corev1.EventTypeWarning, ReasonInPlaceUpdateFailed, "Pod %s: %s", pod.Name, g.Message)
		case policy.GateTrue:
			out, err = c.updater.EnsureReadinessGateTrue(ctx, pod)
			metrics.CountAction("readiness-gate", err)
		}
		if err == nil && out != nil && out != pod {
			c.gateWrites.done(pod, out)
		}
		if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, inplace.ErrInProgress) && !errors.Is(err, inplace.ErrStateChanged) {
			klog.FromContext(ctx).V(2).Info("Readiness gate write failed", "pod", pod.Name, "err", err)
			failures.Add(actions.Failure{Reason: ReasonFailedUpdate, Message: fmt.Sprintf("pod %s readiness gate: %v", pod.Name, err), Retry: true})
		}
	})
	return failures.List()
}

// expandClaims raises the storage request of the plan's claims (policy.ClaimExpansions), each with one patch
// bound to the claim's UID. Each patch is expected until the claim cache shows the raised request (or the
// claim gone or replaced): until then the TApp's syncs plan from a cache that still shows the old request,
// and are not executed (sync), so that a claim is not patched again. A refusal of the API server (403: its
// PersistentVolumeClaimResize admission refuses a class that does not allow expansion; 422 when the claim's
// class or volume refuses it) is told by an Event and not retried: the claim is left as it is, the
// condition reports it. Claims gone or replaced meanwhile are skipped.
func (c *Controller) expandClaims(ctx context.Context, key string, tapp *tkestackv1.TApp, expansions []policy.ClaimExpansion) []actions.Failure {
	var failures actions.Failures
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(expansions), func(i int) {
		e := expansions[i]
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"uid": e.UID},
			"spec":     map[string]any{"resources": map[string]any{"requests": map[string]any{string(corev1.ResourceStorage): e.Storage.String()}}},
		})
		if err == nil {
			c.expectations.Raise(key, claimObject(e.Name), expectations.StorageRequest(e.UID, e.Storage))
			_, err = c.kubeClient.CoreV1().PersistentVolumeClaims(tapp.Namespace).Patch(ctx, e.Name, types.StrategicMergePatchType, patch,
				metav1.PatchOptions{FieldManager: fieldManager})
			metrics.CountAction("expand-claim", err)
			if err != nil {
				c.expectations.Lower(key, claimObject(e.Name))
			}
		}
		switch {
		case err == nil:
			c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonClaimExpanding, "Expanding claim %s of instance %s from %s to %s (claim template %s)",
				e.Name, e.ID, e.From.String(), e.Storage.String(), e.Template)
		case ownership.Gone(err):
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			c.recorder.Eventf(tapp, corev1.EventTypeWarning, ReasonExpansionNotAllowed, "Claim %s of instance %s cannot be expanded to %s; it is left as it is: %v",
				e.Name, e.ID, e.Storage.String(), err)
		default:
			msg := fmt.Sprintf("expand claim %s of instance %s to %s: %v", e.Name, e.ID, e.Storage.String(), err)
			c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedClaimExpansion, msg)
			failures.Add(actions.Failure{Reason: ReasonFailedClaimExpansion, Message: msg, Retry: true})
		}
	})
	return failures.List()
}

// deleteClaims deletes the plan's claims of instances without a pod that are recreated
// (onIncompatibleChange: Recreate).
func (c *Controller) deleteClaims(ctx context.Context, tapp *tkestackv1.TApp, deletes []policy.ClaimDelete) []actions.Failure {
	var failures actions.Failures
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(deletes), func(i int) {
		d := deletes[i]
		if f := c.deleteClaim(ctx, tapp, d.ID, d.ClaimRef, d.Field+" differs from its template"); f != nil {
			failures.Add(*f)
		}
	})
	return failures.List()
}

// deleteClaim deletes one claim of instance id with a UID precondition, so that a newer claim of the same
// name is never hit, and tells why with an Event.
func (c *Controller) deleteClaim(ctx context.Context, tapp *tkestackv1.TApp, id string, claim policy.ClaimRef, why string) *actions.Failure {
	uid := claim.UID
	err := c.kubeClient.CoreV1().PersistentVolumeClaims(tapp.Namespace).Delete(ctx, claim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	metrics.CountAction("delete-claim", err)
	switch {
	case err == nil:
		c.recorder.Eventf(tapp, corev1.EventTypeWarning, ReasonClaimRecreating,
			"Deleted claim %s of instance %s to create it again from its template (%s; spec.volumeClaimUpdateStrategy.onIncompatibleChange: Recreate): its data is lost", claim.Name, id, why)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil
	default:
		msg := fmt.Sprintf("delete claim %s of instance %s: %v", claim.Name, id, err)
		c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedClaimDelete, msg)
		return &actions.Failure{Reason: ReasonFailedClaimDelete, Message: msg, Retry: true}
	}
}
