// Package tapp owns the TApp controller: the informers and the workqueue (pkg/controller/workloop), and the
// executor that carries out the plan computed by the policy package (adoption and release of pods with
// UID-bound patches of pkg/ownership, after re-reading the TApp from the API server; pod and claim
// creation in slow-start batches, deletion, relabelling and in-place updates through the inplace package)
// and writes the TApp's status. It also keeps the TApp's ControllerRevisions (revisions.go: one per set of
// templates, owned by the TApp, pruned to spec.revisionHistoryLimit) and reports status.currentRevision and
// status.updateRevision. A pod belongs to the TApp its controller reference names by group, kind,
// name and UID.
//
// The controller never decides what to do or what to report itself: policy.ComputePlanWithRevisions decides
// the actions, from the TApp and a snapshot of its pods, and policy.DesiredStatus the status and its
// conditions; the controller adds only the failures of the sync it ran. Each pod write raises an
// expectation (pkg/controller/expectations, by pod name); while the pod cache has not shown one, the plan
// is not executed, so a slow informer never causes a second create of an instance or a missed delete.
// Informer cache objects are never modified.
//
// The TApp of a pod that is added or changes is synced after a batch (batch.go: at least podEventBatch, ten
// times the TApp's last planning, at most maxPodEventBatch), so that the events of many pods make one sync and
// a large TApp is not planned back to back; a deletion or a release is synced at once. Status writes that only report the instances'
// progress are paced (paceFor: statusPace per thousand instances, at most maxStatusPace). Everything of the controller that reads the time (the queue's delays,
// the expectations, the in-place updater, the plan and the status writes) reads the one clock
// NewController is given.
package tapp
