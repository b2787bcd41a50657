// Package inplace owns updating a running pod's container images, resources, labels and annotations in place
// and telling when the kubelet has finished.
//
// The package decides nothing about templates: whether a pod can be updated in place, and what changes, is
// its caller's decision (for the TApp controller, pkg/controller/tapp/policy), expressed as an Update that the
// engine applies as it is. The package has pure parts (UpdatedPod, SpecPatch, Check/Finished, ParseState, the
// condition helpers) and one API-using part, Updater, which talks to the cluster through a
// kubernetes.Interface. Nothing in the package mutates the pods it is given: every write starts from a deep
// copy, so informer cache objects can be passed in directly.
//
// An in-place update of one pod goes through these steps, driven by the controller:
//
//  1. If the Update changes images, Updater.Begin sets the pod condition of the readiness gate
//     tkestack.io/InPlaceUpdate to False. The kubelet then derives Ready=False from the gate; this package
//     never writes Ready.
//  2. Updater.Apply patches the images (by container name), the labels and annotations, and writes the state
//     annotation tkestack.io/inplace-update-state recording, per container whose image it changes, what the
//     kubelet reported before the patch (imageID, containerID, restartCount).
//  3. Finished/Check compares the kubelet's container statuses with that record: a container is updated when
//     its imageID differs from the recorded one, or a restart is observed (restartCount grew or containerID
//     changed, which covers a new tag pointing at the same digest), and it is running again.
//  4. Updater.Complete sets the gate condition back to True and removes the state annotation, in one write
//     of pods/status.
//
// An Update that changes no image is applied by Apply alone: no Begin, so the pod never becomes unready for
// it. If it changes container resources, Apply first sends them to the pods/resize subresource
// (ResizePatch) and records the resources asked for in the state annotation; Check is Done once the kubelet
// reports them (status resources, no PodResizePending / PodResizeInProgress), and Failed with Infeasible
// when the kubelet refuses the resize (the caller recreates the pod); Complete then removes the record.
// Without resources, no state annotation is written and no Complete is needed.
//
// What the controller must do:
//
//   - When building a pod, call AddReadinessGate on its spec; once it has created the pod, call
//     InitReadinessGate, or EnsureReadinessGateTrue once it observes it (the pod cannot become Ready before).
//     Call EnsureReadinessGateTrue too for any pod with the gate whose condition is not True, that is not
//     InProgress and that it does not update now (e.g. after a Begin whose Apply failed and is no longer
//     wanted).
//   - Decide, from the pod and the template it moves to, whether the pod can be updated in place (only
//     images and resources of regular containers, labels and annotations differ); if not, recreate it.
//     Otherwise compute the Update once: the new images and resources by container name, the labels and
//     annotations to set and those to remove. If it changes images, Begin, then Apply with the pod Begin
//     returned (optionally after TrafficDrained, to let endpoints drop the pod first); else just Apply.
//   - Never run two updates of one pod at once, and never compute one from a cache older than its own last
//     write (expectations): Apply's patch is bound to the pod's UID, not to its resourceVersion, so that the
//     kubelet's status writes do not make it fail. On ErrPodReplaced or any error, requeue and decide again
//     from a fresh cache.
//   - Count a pod for which InProgress is true as unavailable/updating. On each sync of such a pod, call Check:
//     when Done, call Complete; when Failed, record Message as a warning event and keep waiting; a newer
//     Update may be applied in place over it.
//   - Never modify cache objects. The Updater may return the very pod it was given when it writes nothing, so
//     treat every pod it returns as read-only too.
package inplace
