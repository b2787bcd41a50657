package inplace

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Result is the progress of an in-place update as told by the kubelet's container statuses.
type Result struct {
	// Done is true when every changed container runs again after the patch (or no update is in progress).
	Done bool
	// Failed is true when a changed container cannot start with its new image (image pull errors, invalid
	// image name, or a new container that crashes or cannot be created). It is not final: the kubelet keeps
	// retrying and a new template may fix it. The controller should surface Message as an event.
	Failed bool
	// Infeasible is true when the kubelet refuses a resize of the update (condition PodResizePending with
	// reason Infeasible: the node cannot give the pod the resources asked for). Failed is then true too. It
	// will not get better by waiting: the controller should recreate the pod.
	Infeasible bool
	// Message says what is awaited or what failed.
	Message string
}

// pullFailures are the kubelet's waiting reasons of a container whose image cannot be pulled or used.
var pullFailures = map[string]bool{
	"ErrImagePull":      true,
	"ImagePullBackOff":  true,
	"InvalidImageName":  true,
	"ErrImageNeverPull": true,
	"ImageInspectError": true,
}

// startFailures are the kubelet's waiting reasons of a container that was (re)created but cannot run.
var startFailures = map[string]bool{
	"CrashLoopBackOff":           true,
	"CreateContainerError":       true,
	"CreateContainerConfigError": true,
	"RunContainerError":          true,
}

// Finished is Check reduced to its two flags.
func Finished(pod *corev1.Pod) (done bool, failed bool) {
	r := Check(pod)
	return r.Done, r.Failed
}

// Check tells, from the state annotation and the kubelet's container statuses only (never by comparing image
// names), whether the in-place update of pod has finished. For every container recorded in the state:
//
//   - a change is observed when the status reports an imageID other than the recorded one, a higher
//     restartCount, or another containerID (a restart also covers a new tag of the same digest);
//   - the container is done when a change is observed and it is running;
//   - it has failed when it waits on an image pull error that is new (a change is observed, or it was not
//     failing to pull before the patch, or the status observed the patched generation), or when a change is
//     observed and it waits in CrashLoopBackOff or a container creation error.
//
// When the kubelet reports status.observedGeneration and it is not past the generation recorded before the
// patch, the status predates the patch and nothing is concluded. Containers not recorded in the state are
// ignored. A pod with no state is Done. A terminating pod is never Done.
func Check(pod *corev1.Pod) Result {
	state, ok := ParseState(pod)
	if !ok {
		return Result{Done: true, Message: "no in-place update in progress"}
	}
	if pod.DeletionTimestamp != nil {
		return Result{Message: "pod is terminating"}
	}
	observed := pod.Status.ObservedGeneration
	if state.Generation > 0 && observed > 0 && observed <= state.Generation {
		return Result{Message: fmt.Sprintf("waiting for the kubelet to observe generation %d (status is at %d)", state.Generation+1, observed)}
	}
	statusFresh := state.Generation > 0 && observed > state.Generation
	if len(state.Resize) > 0 {
		if c := podCondition(pod, corev1.PodResizePending); c != nil && c.Reason == corev1.PodReasonInfeasible {
			return Result{Failed: true, Infeasible: true, Message: fmt.Sprintf("the kubelet cannot resize the pod in place: %s", c.Message)}
		}
	}

	names := make([]string, 0, len(state.Containers))
	for name := range state.Containers {
		names = append(names, name)
	}
	sort.Strings(names)

	res := Result{Done: true}
	var pending string
	for _, name := range names {
		rec := state.Containers[name]
		cs := containerStatus(pod, name)
		if cs == nil {
			res.Done = false
			if pending == "" {
				pending = fmt.Sprintf("container %q has no status yet", name)
			}
			continue
		}
		changed := (cs.ImageID != "" && cs.ImageID != rec.OldImageID) ||
			cs.RestartCount > rec.OldRestartCount ||
			(cs.ContainerID != "" && cs.ContainerID != rec.OldContainerID)
		if changed && cs.State.Running != nil {
			continue
		}
		res.Done = false
		if w := cs.State.Waiting; w != nil {
			newPullFailure := pullFailures[w.Reason] && (changed || statusFresh || !pullFailures[rec.OldWaitingReason])
			if newPullFailure || (changed && startFailures[w.Reason]) {
				if !res.Failed {
					res.Failed = true
					res.Message = fmt.Sprintf("container %q cannot run image %q: %s: %s", name, rec.NewImage, w.Reason, w.Message)
				}
				continue
			}
		}
		if pending == "" {
			pending = fmt.Sprintf("waiting for container %q to run image %q", name, rec.NewImage)
		}
	}
	if !res.Failed {
		if msg := checkResize(pod, state); msg != "" {
			res.Done = false
			if pending == "" {
				pending = msg
			}
		}
		res.Message = pending
	}
	return res
}

// checkResize returns what the resize recorded in state still waits for, or "" when the kubelet reports it
// done: neither PodResizePending nor PodResizeInProgress is set, and every resized container runs and
// reports (status resources) the cpu and memory requests and limits asked for. A container whose
// resizePolicy is RestartContainer restarts on the way; the kubelet reports its new resources once it runs.
func checkResize(pod *corev1.Pod, state *State) string {
	if len(state.Resize) == 0 {
		return ""
	}
	for _, t := range []corev1.PodConditionType{corev1.PodResizePending, corev1.PodResizeInProgress} {
		if c := podCondition(pod, t); c != nil && c.Status == corev1.ConditionTrue {
			msg := fmt.Sprintf("waiting for the kubelet to resize the pod (%s", t)
			if c.Reason != "" {
				msg += " " + c.Reason
			}
			return msg + ")"
		}
	}
	names := make([]string, 0, len(state.Resize))
	for name := range state.Resize {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cs := containerStatus(pod, name)
		if cs == nil || cs.State.Running == nil {
			return fmt.Sprintf("waiting for container %q to run after its resize", name)
		}
		want := state.Resize[name].Resources
		if cs.Resources == nil || !sameComputeResources(want.Requests, cs.Resources.Requests) || !sameComputeResources(want.Limits, cs.Resources.Limits) {
			return fmt.Sprintf("waiting for the kubelet to report the new resources of container %q", name)
		}
	}
	return ""
}

// sameComputeResources compares the cpu and memory of two resource lists, the resources the kubelet
// reports in a container's status.
func sameComputeResources(want, have corev1.ResourceList) bool {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		w, wok := want[name]
		h, hok := have[name]
		if wok != hok || (wok && w.Cmp(h) != 0) {
			return false
		}
	}
	return true
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
