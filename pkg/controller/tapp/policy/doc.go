// Package policy owns the pure decisions of the TApp controller.
//
// The TApp controller follows the layering of the Kubernetes StatefulSet controller:
//
//	controller (informers, workqueue, expectations)
//	  → policy (this package): given a TApp and its pods, decide what should happen
//	  → executor: create, delete and patch pods and claims through the API
//
// Nothing in this package talks to the API server, reads a clock or keeps state: every function is a
// function of its arguments, so the whole behaviour of a TApp (which instances exist, which template each
// one runs, what is updated in place, what is recreated, what is deleted, and the status the TApp reports)
// is tested as tables.
//
// The entry points are:
//   - TemplateNameFor / TemplateFor / RollingTemplateName: which template an instance runs;
//   - tapppod.TemplateHash / tapppod.UniqHash: stable, JSON based template hashes written to the pod labels;
//   - NewPod / NewPVCs: the objects to create for an instance; Plan.NewPod builds the pods of a plan's
//     Creates from the templates the plan resolved and hashed;
//   - SpreadFor / TopologyOf: the soft topology spread constraints over nodes (and zones, when nodes have
//     them) that spec.spreadPolicy Spread (or unset) adds to new pods whose template has none; they are
//     outside the hashes and every diff, so no existing pod is updated or recreated for them;
//   - ComputePlan: the Plan of actions for one sync, including adoptions, releases, relabels and the
//     readiness gate writes (ComputeGates), and the status to report. Whether a pod is updated in place is
//     decided here, and the diff is computed here, once: each InPlaceUpdate carries the inplace.Update
//     (images, labels and annotations to set and to remove) that the executor hands to the in-place engine
//     (pkg/inplace), which applies it as it is. Each template is resolved and hashed once per plan
//     (tapppod.Prepare): the pods built to judge foreign-hash pods by content, and those the executor
//     creates (Plan.NewPod), reuse its hashes instead of hashing it once per pod;
//   - ComputePlanWithRevisions / RevisionName / RevisionData / HoldsInstance: ComputePlan with the TApp's
//     ControllerRevisions: instances held by spec.updateStrategy.paused or below .partition are not updated
//     and are (re)created from the current revision's templates; pods carry controller-revision-hash;
//     RolloutComplete says when the update revision becomes the current one;
//   - Owner / ClaimOwner / PlanClaims: the TApp as pkg/ownership sees pods and claims (which
//     orphans it adopts, which it releases);
//   - OrderPlan: spec.podManagementPolicy OrderedReady applied to a plan (ordered creation once the lower
//     instances are Running and Ready, removals from the highest id one at a time, one update at a time);
//   - ApplyLifecycle / HookHolds / LifecycleState: spec.lifecycle's preDelete and inPlaceUpdate hooks applied
//     to a plan after OrderPlan (lifecycle state label marks, waits while a hook holds a pod), and the plan of
//     a TApp being deleted with the preDelete finalizer (ComputePlan, RemoveFinalizer);
//   - PlanClaimRetention / NewInstanceClaims: the owner references of instance claims that
//     spec.persistentVolumeClaimRetentionPolicy asks for (the TApp's for whenDeleted Delete, the pod's for
//     the claims of an instance scaled away with whenScaled Delete);
//   - ForeignHashes / CompareToTemplate: how a pod whose hash labels this controller did not write (a pod of
//     the original controller) is judged from its content;
//   - InstanceStatuses / AppStatus / ComputeStatus: the status on its own;
//   - DesiredStatus / ProgressRecheck: the status the TApp reports at the time it is given, with its
//     conditions (transition times from that time) and spec.progressDeadlineSeconds: status.lastProgressTime,
//     Progressing False with ProgressDeadlineExceeded, and when to sync again for the deadline.
//
// Deliberate differences from the original tkestack/tapp controller:
//   - hashes are sha256 over canonical JSON, stable across library upgrades; init container images are
//     part of the uniq hash, so changing them recreates the pod instead of half-applying in place;
//   - pods count only if controlled by the TApp (controllerRef UID) and named <tapp>-<id>; like the
//     built-in controllers the TApp adopts an orphan pod named <tapp>-<id> with tapp_instance_key=<id> for a
//     wanted id that matches spec.selector (not while the TApp is being deleted) and releases a pod that
//     spec.selector no longer matches; pods controlled by another object that hold an instance's name are
//     Conflicts and never touched;
//   - a pod whose hash labels were not written by this controller (decimal fnv values of the original, or
//     none) is judged by content, not by hash: if it runs its instance's template it is relabelled in one
//     patch (no restart, no budget); if only container images differ it is updated in place, else
//     recreated, within the budgets. "Runs its template" (CompareToTemplate): every field that the pod NewPod
//     would build sets has the same value on the pod; fields left empty there are ignored (defaults,
//     admission, scheduler); named list items are matched by name and extra items on the pod are ignored;
//     quantities compare by value; the tkestack.io/InPlaceUpdate readiness gate is ignored;
//   - every budgeted list is processed in ascending id order, and a pod that is already unavailable never
//     consumes budget, so force updates progress when no pod is available;
//   - status is a function of spec and pods only: Failed/Succ are not sticky, a wanted id without a pod is
//     always (re)created, and deleting a finished pod restarts its instance; finished pods that do not
//     migrate are kept, never deleted by the controller;
//   - a running pod held by the in-place readiness gate reports Updating (and counts as alive);
//   - in-place updates carry label/annotation removals, using the keys recorded on the pod by NewPod; they
//     never set nor remove tkestack.io/portmapping, whose value the network plugin writes on the pod;
//   - claims this controller creates from volumeClaimTemplates have no controller reference (they carry
//     tapp_instance_key), and with the default retention policy no owner at all, so they are never deleted;
//     an orphan claim named <claim>-<tapp>-<id> for a wanted id
//     that matches spec.selector and does not carry tapp_instance_key (one the original controller created
//     and owned, orphaned by a migration) is adopted back (PlanClaims), and so again garbage-collected with
//     the TApp as under the original; a claim controlled by another object is never touched, and its
//     instance's pod is not created (conflict);
//   - force deletion waits until the pod's deletion deadline has passed.
package policy
