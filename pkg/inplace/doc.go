// Package inplace owns updating a running pod's container images in place and telling when the kubelet has
// finished.
//
// The package has pure parts (CanUpdateInPlace, UpdatedPod, SpecPatch, Check/Finished, the condition helpers)
// and one API-using part, Updater, which talks to the cluster through a kubernetes.Interface. Nothing in the
// package mutates the pods or templates it is given: every write starts from a deep copy, so informer cache
// objects can be passed in directly.
//
// An in-place update of one pod goes through these steps, driven by the controller:
//
//  1. CanUpdateInPlace(previous, desired) decides whether only container images (and template metadata)
//     changed. previous is the template the pod was created from (the one whose hash the pod carries), not the
//     live pod spec, so fields added by the API server, admission or the scheduler never count as changes.
//  2. If images change, Updater.Begin sets the pod condition of the readiness gate tkestack.io/InPlaceUpdate
//     to False. The kubelet then derives Ready=False from the gate; this package never writes Ready.
//  3. Updater.Apply patches the images (by container name), the labels and annotations, and writes the state
//     annotation tkestack.io/inplace-update-state recording, per changed container, what the kubelet reported
//     before the patch (imageID, containerID, restartCount).
//  4. Finished/Check compares the kubelet's container statuses with that record: a container is updated when
//     its imageID differs from the recorded one, or a restart is observed (restartCount grew or containerID
//     changed, which covers a new tag pointing at the same digest), and it is running again.
//  5. Updater.Complete sets the gate condition back to True and removes the state annotation, in one write
//     of pods/status.
//
// A change of template labels/annotations only (no image change) is applied by Apply alone: no Begin, no state
// annotation and no Complete, so the pod never becomes unready for it.
//
// What the controller must do:
//
//   - When building a pod, call AddReadinessGate on its spec; once it observes the pod, call
//     EnsureReadinessGateTrue (the pod cannot become Ready before). Call it too for any pod with the gate whose
//     condition is not True, that is not InProgress and that it does not intend to update now (e.g. after a
//     Begin whose Apply failed and is no longer wanted).
//   - Keep the template each pod was created from or last updated to (the one whose hash label it carries), to
//     pass as Target.Previous; if it is unknown, recreate the pod.
//   - If CanUpdateInPlace is false, recreate. Otherwise, if ChangedImages is empty, just Apply (metadata only).
//     Else Begin, then Apply with the pod Begin returned (optionally after TrafficDrained, to let endpoints
//     drop the pod first). Put the instance and hash labels in Target.Labels.
//   - Never run two updates of one pod at once, and never compute one from a cache older than its own last
//     write (expectations): Apply's patch is bound to the pod's UID, not to its resourceVersion, so that the
//     kubelet's status writes do not make it fail. On ErrPodReplaced or any error, requeue and decide again
//     from a fresh cache.
//   - Count a pod for which InProgress is true as unavailable/updating. On each sync of such a pod, call Check:
//     when Done, call Complete; when Failed, record Message as a warning event (once per distinct message) and
//     keep waiting; a newer template may be applied in place over it.
//   - Never modify cache objects. The Updater may return the very pod it was given when it writes nothing, so
//     treat every pod it returns as read-only too.
package inplace
