// Package yurtappset owns the YurtAppSet (apps.openyurt.io/v1beta1) controller: the informers
// (YurtAppSets, NodePools, Deployments, StatefulSets, ControllerRevisions) and the workqueue
// (pkg/controller/workloop), the ControllerRevision history of each YurtAppSet (pkg/controller/history),
// and the executor that adopts and releases (UID-bound patches of pkg/ownership, after re-reading the
// YurtAppSet), creates (in slow-start batches, with generateName), updates and deletes the per-pool
// workloads, and the status writes.
//
// What to do is decided by the policy package (policy.ComputePlan) from a snapshot of the caches. Each
// workload write raises an expectation (pkg/controller/expectations, by kind and name; a create once the
// API server named the workload); while the caches have not shown one, the YurtAppSet is not synced. A
// NodePool list that fails never leads to a deletion.
package yurtappset
