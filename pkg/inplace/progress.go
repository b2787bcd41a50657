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
		res.Message = pending
	}
	return res
}
