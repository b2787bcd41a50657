package tapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

// hookWaits remembers, by pod UID, the last hook wait reported for the pod (state and what held it), so that
// a WaitingFor…Hook Event is recorded once per change, not on every sync. It is safe for concurrent use.
type hookWaits struct {
	byUID sync.Map // types.UID → string
}

// changed records wait for uid and reports whether it differs from the last one recorded.
func (h *hookWaits) changed(uid types.UID, wait string) bool {
	prev, loaded := h.byUID.Swap(uid, wait)
	return !loaded || prev.(string) != wait
}

// forget drops what is remembered of uid.
func (h *hookWaits) forget(uid types.UID) { h.byUID.Delete(uid) }

// markLifecycle carries out the plan's lifecycle marks (policy.LifecycleMark): one patch of the pod's state
// label, bound to its UID, then, with NotReady, its readiness gate condition False (reason: the state), so that
// the pod leaves its Services' endpoints while it is drained. Each pod that its hook holds gets a
// WaitingForPreDeleteHook or WaitingForInPlaceUpdateHook Event, also for the plan's waits, once per change of
// what holds it.
func (c *Controller) markLifecycle(ctx context.Context, key string, tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *policy.Plan) []actions.Failure {
	byName := make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		byName[pod.Name] = pod
	}
	var failures actions.Failures
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.LifecycleMarks), func(i int) {
		m := plan.LifecycleMarks[i]
		pod := byName[m.PodName]
		if pod == nil {
			return
		}
		if f := c.markPod(ctx, key, tapp, pod, m); f != nil {
			failures.Add(*f)
			return
		}
		c.reportWait(tapp, pod.UID, m.PodName, m.Hook, m.State, m.HeldBy)
	})
	for _, w := range plan.LifecycleWaits {
		c.reportWait(tapp, w.UID, w.PodName, w.Hook, w.State, w.HeldBy)
	}
	return failures.List()
}

// markPod writes one mark.
func (c *Controller) markPod(ctx context.Context, key string, tapp *tkestackv1.TApp, pod *corev1.Pod, m policy.LifecycleMark) *actions.Failure {
	logger := klog.FromContext(ctx)
	if pod.Labels[tkestack.LifecycleStateLabel] != m.State {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"uid":    pod.UID,
			"labels": map[string]string{tkestack.LifecycleStateLabel: m.State},
		}})
		if err != nil {
			return &actions.Failure{Reason: ReasonFailedUpdate, Message: err.Error()}
		}
		c.expectations.Raise(key, podObject(pod.Name), expectations.UpdateTo(tkestack.LifecycleStateLabel, m.State))
		_, err = c.kubeClient.CoreV1().Pods(tapp.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		metrics.CountAction("lifecycle-state", err)
		if err != nil {
			c.expectations.Lower(key, podObject(pod.Name))
			if ownership.Gone(err) {
				return nil // gone or replaced: the next snapshot decides
			}
			msg := fmt.Sprintf("set %s=%s on pod %s: %v", tkestack.LifecycleStateLabel, m.State, pod.Name, err)
			c.recorder.Event(tapp, corev1.EventTypeWarning, ReasonFailedUpdate, msg)
			return &actions.Failure{Reason: ReasonFailedUpdate, Message: msg, Retry: true}
		}
		logger.V(2).Info("Lifecycle state", "pod", pod.Name, "state", m.State, "hook", m.Hook)
		if m.Hook == "" {
			c.hookWaits.forget(pod.UID)
		}
	}
	if !m.NotReady {
		return nil
	}
	_, err := c.updater.MarkNotReady(ctx, pod, m.State, fmt.Sprintf("the pod waits for its %s lifecycle hook (markPodNotReady)", m.Hook))
	metrics.CountAction("readiness-gate", err)
	if err != nil && !apierrors.IsNotFound(err) {
		return c.updateFailed(tapp, pod, err)
	}
	return nil
}

// reportWait records the Event of a pod held by its hook, when what holds it changed since the last one.
func (c *Controller) reportWait(tapp *tkestackv1.TApp, uid types.UID, podName, hook, state string, heldBy []string) {
	if hook == "" || len(heldBy) == 0 {
		return
	}
	holds := strings.Join(heldBy, ", ")
	if !c.hookWaits.changed(uid, state+" "+holds) {
		return
	}
	reason := ReasonWaitingForInPlaceUpdateHook
	if hook == policy.HookPreDelete {
		reason = ReasonWaitingForPreDeleteHook
	}
	c.recorder.Eventf(tapp, corev1.EventTypeNormal, reason, "Pod %s (%s) waits for its %s hook: held by %s", podName, state, hook, holds)
}

// removePreDeleteFinalizer removes tkestack.PreDeleteFinalizer from the TApp being deleted, as the plan says
// (policy.FinalizerRemoval), with a merge patch conditional on the resourceVersion the plan was computed from.
// Foreground deletion gets a warning Event: the garbage collector deletes the pods itself, so the hooks are not
// honoured.
func (c *Controller) removePreDeleteFinalizer(ctx context.Context, tapp *tkestackv1.TApp, why policy.FinalizerRemoval) error {
	var keep []string
	for _, f := range tapp.Finalizers {
		if f != tkestack.PreDeleteFinalizer {
			keep = append(keep, f)
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": tapp.ResourceVersion, "finalizers": keep}})
	if err != nil {
		return err
	}
	_, err = c.client.TKEStackAppsV1().TApps(tapp.Namespace).Patch(ctx, tapp.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	metrics.CountAction("remove-finalizer", err)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing finalizer %s: %w", tkestack.PreDeleteFinalizer, err)
	}
	switch why {
	case policy.FinalizerForeground:
		c.recorder.Eventf(tapp, corev1.EventTypeWarning, ReasonPreDeleteHookSkipped,
			"Foreground deletion: the garbage collector deletes the pods itself, so their preDelete hook is not honoured; delete with propagation Background to honour it")
	case policy.FinalizerOrphan:
		c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonPreDeleteHookSkipped, "Orphan deletion: the pods are kept, no preDelete hook runs")
	default:
		klog.FromContext(ctx).V(2).Info("Removed the preDelete finalizer", "tapp", tapp.Name, "why", why)
	}
	return nil
}

// executeDeletion carries out the plan of a TApp being deleted with tkestack.PreDeleteFinalizer (policy
// tappDeletion, through ApplyLifecycle): the lifecycle marks, the deletions of the pods the hook released, and
// the finalizer's removal. It reports whether the finalizer was removed.
func (c *Controller) executeDeletion(ctx context.Context, key string, tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *policy.Plan) ([]actions.Failure, bool, error) {
	failures := c.markLifecycle(ctx, key, tapp, pods, plan)
	var mu sync.Mutex
	workqueue.ParallelizeUntil(ctx, actions.MaxParallel, len(plan.Deletes), func(i int) {
		d := plan.Deletes[i]
		if f := c.deletePod(ctx, key, tapp, deletion{podName: d.PodName, uid: d.UID, reason: string(d.Reason), id: d.ID}); f != nil {
			mu.Lock()
			failures = append(failures, *f)
			mu.Unlock()
		}
	})
	if plan.RemoveFinalizer == "" {
		return failures, false, nil
	}
	err := c.removePreDeleteFinalizer(ctx, tapp, plan.RemoveFinalizer)
	return failures, err == nil, err
}
