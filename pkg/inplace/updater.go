package inplace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

var (
	// ErrNotBegun is returned by Apply when images would change on a pod that has the readiness gate but whose
	// gate condition is not False yet: call Begin first (and pass Apply the pod Begin returned).
	ErrNotBegun = errors.New("in-place update not begun: readiness gate condition is not False")
	// ErrInProgress is returned by EnsureReadinessGateTrue when the pod has an in-place update in progress;
	// use Check and Complete for such a pod.
	ErrInProgress = errors.New("in-place update in progress")
	// ErrStateChanged is returned by Complete when the pod's in-place update state is no longer the one it was
	// asked to complete; requeue and look again.
	ErrStateChanged = errors.New("in-place update state changed since the pod was read")
	// ErrPodReplaced is returned by Apply when the pod was deleted and another of the same name created.
	ErrPodReplaced = errors.New("pod was replaced by another of the same name")
	// ErrResizeInfeasible is returned by Apply when the API server refuses the resize because the pod's node
	// cannot hold the new requests (kube-apiserver >= 1.36 checks the node's allocatable on pods/resize, as
	// the kubelet does with PodResizePending reason Infeasible): the caller should recreate the pod.
	ErrResizeInfeasible = errors.New("resize infeasible on the pod's node")
)

// Updater performs the API writes of in-place updates. Every write is a patch built from a deep copy; the pods
// passed in (typically informer cache objects) are never modified.
//
// The gate writes of Begin and InitReadinessGate are bound to the pod's UID and set only the ReadinessGate
// condition; EnsureReadinessGateTrue, which must not race an update being begun, carries the resourceVersion
// of the pod it was computed from and, on Conflict, re-reads the pod and retries a few times. Apply carries the
// pod's UID (see SpecPatch) and does not retry; Complete's single status write is bound to the UID and to the
// state annotation it saw.
//
// The caller must not run two updates of one pod at once, nor compute one from a view older than its own last
// write (a controller's expectations do this): Apply's patch does not detect a concurrent change of images.
type Updater struct {
	Client kubernetes.Interface
	// StatusClient, if set, makes the readiness-gate condition writes and their re-reads, so that they can
	// have a rate limit of their own (as a kubelet's status writes do); nil means Client.
	StatusClient kubernetes.Interface
	// Clock stamps the state annotation and condition transitions; nil means the real clock.
	Clock clock.PassiveClock
	// FieldManager is the field manager of every write (the controller's own, so that its writes of a pod
	// share one managedFields entry per subresource with its create); empty means the client's user agent.
	FieldManager string
}

func (u *Updater) patchOptions() metav1.PatchOptions {
	return metav1.PatchOptions{FieldManager: u.FieldManager}
}

func (u *Updater) statusClient() kubernetes.Interface {
	if u.StatusClient != nil {
		return u.StatusClient
	}
	return u.Client
}

func (u *Updater) now() time.Time {
	if u.Clock == nil {
		return time.Now()
	}
	return u.Clock.Now()
}

// Begin sets the pod's ReadinessGate condition to False (reason InPlaceUpdating) so that the kubelet marks the
// pod not Ready and endpoints drop it before its containers restart. It writes nothing else (in particular not
// the Ready condition) and nothing at all if the condition is already False with that reason. A pod without the
// readiness gate is returned unchanged. It returns the pod as written, to be passed to Apply.
//
// The write is one strategic merge patch of pods/status that sets only that condition (conditions merge by
// type), bound to the pod's UID rather than its resourceVersion: setting the condition False is right whatever
// else changed since the pod was read, so the kubelet's and the scheduler's status writes cannot make it fail
// and it needs no re-read. If another pod now has the name, an error wrapping ErrPodReplaced is returned.
func (u *Updater) Begin(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return u.MarkNotReady(ctx, pod, ReasonUpdating, "container images are being updated in place")
}

// MarkNotReady sets the pod's ReadinessGate condition to False with reason and message, as Begin does (one
// status patch bound to the pod's UID, nothing written when the condition is already False with that reason
// and message), without starting an update: a lifecycle hook takes the pod out of endpoints while it is
// drained. EnsureReadinessGateTrue turns it True again.
func (u *Updater) MarkNotReady(ctx context.Context, pod *corev1.Pod, reason, message string) (*corev1.Pod, error) {
	if !HasReadinessGate(pod) {
		return pod, nil
	}
	cond, changed := gateCondition(pod, corev1.ConditionFalse, reason, message, u.now())
	if !changed {
		return pod, nil
	}
	if pod.UID == "" {
		return nil, fmt.Errorf("pod %s/%s has no UID to use as a precondition", pod.Namespace, pod.Name)
	}
	data, err := conditionPatch(map[string]any{"uid": pod.UID}, cond)
	if err != nil {
		return nil, err
	}
	out, err := u.statusClient().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, u.patchOptions(), "status")
	if err != nil {
		if ownership.UIDRefused(err) {
			return nil, fmt.Errorf("setting condition %s=False on pod %s/%s: %w (%v)", ReadinessGate, pod.Namespace, pod.Name, ErrPodReplaced, err)
		}
		return nil, fmt.Errorf("setting condition %s=False on pod %s/%s: %w", ReadinessGate, pod.Namespace, pod.Name, err)
	}
	return out, nil
}

// Apply applies u to the pod in place (see UpdatedPod for exactly what changes): first the resources, if any
// change, with one JSON patch of pods/resize (ResizePatch), then the rest with one strategic merge patch
// carrying the pod's UID (SpecPatch). If the pod was replaced by another of the same name, an error wrapping
// ErrPodReplaced is returned. Nothing is written if nothing changes; the returned pod is then the one passed
// in and must not be modified.
//
// If images change on a pod that has the readiness gate, its gate condition must already be False (Begin),
// otherwise ErrNotBegun is returned. A change of labels/annotations only needs no Begin.
func (u *Updater) Apply(ctx context.Context, pod *corev1.Pod, update Update) (*corev1.Pod, error) {
	updated, err := UpdatedPod(pod, update, u.now())
	if err != nil {
		return nil, err
	}
	imagesChange := false
	for i := range updated.Spec.Containers {
		if updated.Spec.Containers[i].Image != pod.Spec.Containers[i].Image {
			imagesChange = true
		}
	}
	if imagesChange && HasReadinessGate(pod) && GateStatus(pod) != corev1.ConditionFalse {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, ErrNotBegun)
	}
	if equality.Semantic.DeepEqual(updated, pod) {
		return pod, nil
	}
	// The resize goes first: if it is refused, nothing records the pod as moved to the new template.
	resize, err := ResizePatch(pod, updated)
	if err != nil {
		return nil, err
	}
	if resize != nil {
		if _, err := u.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, resize, u.patchOptions(), "resize"); err != nil {
			if ResizeRefusedForCapacity(err) {
				return nil, fmt.Errorf("resizing pod %s/%s: %w: %v", pod.Namespace, pod.Name, ErrResizeInfeasible, err)
			}
			return nil, fmt.Errorf("resizing pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	data, err := SpecPatch(pod, updated)
	if err != nil {
		return nil, err
	}
	out, err := u.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, u.patchOptions())
	if err != nil {
		if ownership.UIDRefused(err) {
			return nil, fmt.Errorf("patching pod %s/%s in place: %w (%v)", pod.Namespace, pod.Name, ErrPodReplaced, err)
		}
		return nil, fmt.Errorf("patching pod %s/%s in place: %w", pod.Namespace, pod.Name, err)
	}
	return out, nil
}

// Complete ends an in-place update: it sets the ReadinessGate condition to True (reason InPlaceUpdated), after
// which the kubelet sets Ready from the containers' readiness, and removes the state annotation (whatever its
// value, including the legacy "true"). The annotation is removed rather than kept so that its presence always
// means "update in progress" and the pod does not keep stale data; the revision lives in the pod's hash labels.
//
// On a pod with the readiness gate both happen in one JSON patch of pods/status (that subresource may change
// annotations), so there is no moment at which the gate is True with the update still recorded, and the write
// costs one request of the status client's budget instead of two. Its preconditions are test operations on
// the pod's UID, the annotation's value and the position of the gate condition, not a resourceVersion: the
// kubelet's own status writes, which follow every container restart, do not make it fail.
//
// Complete does not check progress itself: call it when Check reports Done. If the pod's state annotation is
// no longer the one of the pod passed in (a newer update was applied), nothing is written and an error
// wrapping ErrStateChanged is returned.
func (u *Updater) Complete(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	seen, found := pod.Annotations[StateAnnotation]
	if !HasReadinessGate(pod) {
		if !found {
			return pod, nil
		}
		return u.removeState(ctx, pod, seen)
	}
	client := u.statusClient()
	cur := pod
	for attempt := 1; ; attempt++ {
		cond, changed := gateCondition(cur, corev1.ConditionTrue, ReasonUpdated, "", u.now())
		if !changed && !found {
			return cur, nil
		}
		data, err := completePatch(cur, cond, seen, found)
		if err != nil {
			return nil, err
		}
		out, err := client.CoreV1().Pods(cur.Namespace).Patch(ctx, cur.Name, types.JSONPatchType, data, u.patchOptions(), "status")
		if err == nil {
			return out, nil
		}
		if !apierrors.IsInvalid(err) || attempt == retry.DefaultRetry.Steps {
			return nil, fmt.Errorf("completing the in-place update of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		// A test failed: look at the pod as it is now. If an earlier Complete removed the record meanwhile, only
		// the gate may be left to write.
		klog.FromContext(ctx).V(4).Info("Completion refused, reading the pod again", "pod", klog.KObj(pod), "resourceVersion", cur.ResourceVersion, "err", err)
		if cur, found, err = recheckState(ctx, client, pod, seen, found); err != nil {
			return nil, err
		}
	}
}

// recheckState re-reads pod after a failed test operation and tells whether its state annotation is still
// there. It fails with ErrPodReplaced if another pod now has the name, and with ErrStateChanged if the
// annotation holds anything but seen (or appeared when it was not found before).
func recheckState(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, seen string, found bool) (*corev1.Pod, bool, error) {
	fresh, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	switch {
	case err != nil:
		return nil, false, err
	case pod.UID != "" && fresh.UID != pod.UID:
		return nil, false, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, ErrPodReplaced)
	}
	v, ok := fresh.Annotations[StateAnnotation]
	if ok && (!found || v != seen) {
		return nil, false, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, ErrStateChanged)
	}
	return fresh, ok, nil
}

// stateOps are the JSON patch operations that bind a write to the pod's UID and, when found, remove the state
// annotation only if it still holds seen.
func stateOps(pod *corev1.Pod, seen string, found bool) []map[string]any {
	var ops []map[string]any
	if pod.UID != "" {
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/uid", "value": pod.UID})
	}
	if found {
		path := "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(StateAnnotation)
		ops = append(ops,
			map[string]any{"op": "test", "path": path, "value": seen},
			map[string]any{"op": "remove", "path": path})
	}
	return ops
}

// completePatch is the JSON patch of pods/status that sets the gate condition to cond and removes the state
// annotation (when found, only if it still holds seen), bound to the pod's UID.
func completePatch(pod *corev1.Pod, cond corev1.PodCondition, seen string, found bool) ([]byte, error) {
	ops := stateOps(pod, seen, found)
	i := gateConditionIndex(pod)
	switch {
	case i >= 0:
		path := "/status/conditions/" + strconv.Itoa(i)
		ops = append(ops,
			map[string]any{"op": "test", "path": path + "/type", "value": ReadinessGate},
			map[string]any{"op": "replace", "path": path, "value": cond})
	case len(pod.Status.Conditions) > 0:
		ops = append(ops, map[string]any{"op": "add", "path": "/status/conditions/-", "value": cond})
	default:
		// Adding the list replaces any the kubelet wrote since pod was read: only if nothing was written since.
		ops = append(ops,
			map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": pod.ResourceVersion},
			map[string]any{"op": "add", "path": "/status/conditions", "value": []corev1.PodCondition{cond}})
	}
	return json.Marshal(ops)
}

// removeState removes the state annotation of a pod without the readiness gate if it still has the value
// seen, with a JSON patch whose test operations are the precondition: unlike a resourceVersion, they do not
// fail on the kubelet's status writes.
func (u *Updater) removeState(ctx context.Context, pod *corev1.Pod, seen string) (*corev1.Pod, error) {
	data, err := json.Marshal(stateOps(pod, seen, true))
	if err != nil {
		return nil, err
	}
	out, err := u.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, data, u.patchOptions())
	if err == nil {
		return out, nil
	}
	if !apierrors.IsInvalid(err) {
		return nil, fmt.Errorf("removing %s from pod %s/%s: %w", StateAnnotation, pod.Namespace, pod.Name, err)
	}
	// A test failed: see why on the pod as it is now.
	fresh, recorded, rerr := recheckState(ctx, u.Client, pod, seen, true)
	switch {
	case rerr != nil:
		return nil, rerr
	case !recorded:
		return fresh, nil // already removed
	}
	return nil, fmt.Errorf("removing %s from pod %s/%s: %w", StateAnnotation, pod.Namespace, pod.Name, err)
}

// EnsureReadinessGateTrue sets the ReadinessGate condition to True (reason NotUpdating) on a pod that has the
// gate and no in-place update in progress: a freshly created pod (which stays not Ready until then), or a pod
// left with the condition False by a Begin whose update was not applied. It writes nothing if the condition is
// already True and returns ErrInProgress if an update is in progress.
func (u *Updater) EnsureReadinessGateTrue(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if !HasReadinessGate(pod) {
		return pod, nil
	}
	if GateStatus(pod) == corev1.ConditionTrue {
		return pod, nil
	}
	guard := func(p *corev1.Pod) error {
		if InProgress(p) {
			return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, ErrInProgress)
		}
		return nil
	}
	return u.setGate(ctx, pod, corev1.ConditionTrue, ReasonNotUpdating, "", guard)
}

// InitReadinessGate sets the ReadinessGate condition True (reason NotUpdating) on a pod the caller has just
// created, as the Create call returned it: such a pod cannot have an in-place update in progress. The status
// patch is bound to the pod's UID rather than its resourceVersion, so the scheduler's and the kubelet's first
// status writes cannot make it fail, and it is not retried: EnsureReadinessGateTrue, once the pod is observed,
// remains the way to repair a failure. A pod without the readiness gate is returned unchanged.
func (u *Updater) InitReadinessGate(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if !HasReadinessGate(pod) || GateStatus(pod) == corev1.ConditionTrue {
		return pod, nil
	}
	if pod.UID == "" {
		return nil, fmt.Errorf("pod %s/%s has no UID to use as a precondition", pod.Namespace, pod.Name)
	}
	cond, _ := gateCondition(pod, corev1.ConditionTrue, ReasonNotUpdating, "", u.now())
	data, err := conditionPatch(map[string]any{"uid": pod.UID}, cond)
	if err != nil {
		return nil, err
	}
	out, err := u.statusClient().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, u.patchOptions(), "status")
	if err != nil {
		return nil, fmt.Errorf("setting condition %s=True on new pod %s/%s: %w", ReadinessGate, pod.Namespace, pod.Name, err)
	}
	return out, nil
}

// setGate writes the ReadinessGate condition through pods/status, retrying on Conflict from a fresh read.
// guard, if set, is checked on every version of the pod before writing.
func (u *Updater) setGate(ctx context.Context, pod *corev1.Pod, status corev1.ConditionStatus, reason, message string, guard func(*corev1.Pod) error) (*corev1.Pod, error) {
	client := u.statusClient()
	return u.retry(ctx, client, pod, func(p *corev1.Pod) (*corev1.Pod, error) {
		if guard != nil {
			if err := guard(p); err != nil {
				return nil, err
			}
		}
		cond, changed := gateCondition(p, status, reason, message, u.now())
		if !changed {
			return p, nil
		}
		data, err := conditionPatch(map[string]any{"resourceVersion": p.ResourceVersion}, cond)
		if err != nil {
			return nil, err
		}
		out, err := client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, data, u.patchOptions(), "status")
		if err != nil {
			return nil, fmt.Errorf("setting condition %s=%s on pod %s/%s: %w", ReadinessGate, status, p.Namespace, p.Name, err)
		}
		return out, nil
	})
}

// retry runs write on pod and, while it fails with Conflict, on a fresh copy read through client. It stops
// if the pod was replaced by another one of the same name.
func (u *Updater) retry(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, write func(*corev1.Pod) (*corev1.Pod, error)) (*corev1.Pod, error) {
	cur := pod
	var result *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		out, err := write(cur)
		if err == nil {
			result = out
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh, gerr := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		if pod.UID != "" && fresh.UID != pod.UID {
			return fmt.Errorf("pod %s/%s was replaced (uid %s, now %s)", pod.Namespace, pod.Name, pod.UID, fresh.UID)
		}
		cur = fresh
		return err
	})
	if err != nil {
		return nil, err
	}
	if result == nil {
		// retry.OnError returns its last retriable error, nil when there was none, for any error that
		// wait.Interrupted matches: a write that failed with the context's cancellation ends here.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("pod %s/%s: write not carried out", pod.Namespace, pod.Name)
	}
	return result, nil
}

// ResizeRefusedForCapacity reports whether err is the API server's refusal of a pods/resize request whose
// requests exceed the allocatable of the pod's node (403 Forbidden, "node didn't have enough allocatable
// resources"), as opposed to an authorization refusal or a validation error.
func ResizeRefusedForCapacity(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "enough allocatable resources")
}
