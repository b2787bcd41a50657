// Package yurtappdaemon owns the YurtAppDaemon controller: the informers (YurtAppDaemons, NodePools,
// Deployments, StatefulSets, ControllerRevisions) and the workqueue (pkg/controller/workloop), the
// ControllerRevision history of each YurtAppDaemon, the executor that adopts and releases (UID-bound
// patches of pkg/ownership, after re-reading the YurtAppDaemon from the API server), creates (in
// slow-start batches), updates and deletes the per-pool child workloads, and the status writes. A child
// belongs to the YurtAppDaemon its controller reference names by group, kind, name and UID.
//
// What to do is decided by the policy package (policy.ComputePlan) from a snapshot of the caches; this
// package never decides on its own which child to create or delete. Each child write raises an
// expectation (pkg/controller/expectations, by kind and name); while the caches have not shown one, the
// YurtAppDaemon is not synced. Informer cache objects are never modified. A NodePool list that fails never
// leads to a deletion: the sync stops and reports the error in the WorkLoadFailure condition.
package yurtappdaemon
