// Package nodepool owns the NodePool controller: the informers (NodePools, nodes), the workqueue of pool
// names and the executor that writes nodes and NodePool status. It keeps every node in the pool it asks
// for, with that pool's labels, annotations and taints, and reports each pool's ready and not-ready nodes.
//
// What a node should look like and what a pool reports are decided by the policy package; this package
// only reads caches, calls policy.SyncNode and policy.Status, and writes the results. Informer cache
// objects are never modified.
package nodepool
