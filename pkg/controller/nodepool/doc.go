// Package nodepool owns the NodePool controller: the informers (NodePools, nodes), the workqueue of pool
// names and the executor that patches nodes and writes NodePool status. It keeps every node in the pool it asks
// for, with that pool's labels, annotations and taints, reports each pool's ready and not-ready nodes, and
// elects the leaders of pools with leader election enabled (status.leaderEndpoints, LeaderReady). It reads
// and writes NodePools in apps.openyurt.io/v1beta2.
//
// What a node should look like and what a pool reports are decided by the policy package; this package
// only reads caches, calls policy.SyncNode and policy.Status, and writes the results. Informer cache
// objects are never modified. A node is also written by its kubelet and the node lifecycle controller, so
// it is never updated whole: it gets a JSON patch of exactly the labels, annotations and taints the pool
// manages (policy.NodePatch), whose tests refuse it when what it replaces changed since it was read; the
// node is then read again and the patch recomputed, and after a few refusals the pool is requeued.
package nodepool
