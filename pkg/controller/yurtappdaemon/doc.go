// Package yurtappdaemon owns the YurtAppDaemon controller: the informers (YurtAppDaemons, NodePools,
// Deployments, StatefulSets, ControllerRevisions), the workqueue, the expectations that keep a stale cache
// from being acted on, the ControllerRevision history of each YurtAppDaemon, the executor that adopts and
// releases (UID-bound patches of pkg/ownership, after re-reading the YurtAppDaemon from the API
// server), creates, updates and deletes the per-pool child workloads, and the status writes.
//
// What to do is decided by the policy package (policy.ComputePlan) from a snapshot of the caches; this
// package never decides on its own which child to create or delete. Informer cache objects are never
// modified. A NodePool list that fails never leads to a deletion: the sync stops and reports the error in
// the WorkLoadFailure condition.
package yurtappdaemon
