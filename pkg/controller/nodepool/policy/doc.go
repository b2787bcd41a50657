// Package policy owns the pure decisions of the NodePool controller: which pool a node belongs to, what a
// node looks like once its pool's labels, annotations and taints are applied (or stripped), and the status
// a pool reports. Nothing here talks to the API server; every function is a function of its arguments and
// is tested as tables.
//
// Membership:
//   - a node labelled apps.openyurt.io/desired-nodepool=P belongs to P; the controller then owns the node's
//     apps.openyurt.io/nodepool label and sets it to P;
//   - a node without that label belongs to the pool named by its apps.openyurt.io/nodepool label, unless the
//     controller itself set that label (the node joined through desired-nodepool, and that label is gone:
//     the node leaves its pool);
//   - a node whose pool does not exist belongs to no pool: whatever the controller applied is stripped and it
//     joins when the NodePool is created. spec.selector of a NodePool is informational.
//
// Attributes: the pool's spec.labels and spec.annotations are set on its member nodes (overwriting other
// values) and its spec.taints are set on them (a node taint with the same key and effect is replaced). What
// was applied is recorded in the node annotation AppliedAnnotation, so that a key later removed from the
// pool, or the whole set when the node leaves, is removed from the node again. A label or annotation whose
// value was changed on the node by someone else since it was applied is left alone when stripped; a pool
// never overrides the membership keys themselves.
//
// Leaders (leader.go): with spec.enableLeaderElection, Leaders chooses spec.leaderReplicas leaders among the
// pool's Ready members that have an InternalIP (under the mark strategy, those carrying every label of
// spec.leaderNodeLabelSelector). Current leaders stay while they remain eligible; missing ones are filled
// in order of node name, so the choice is deterministic. The LeaderReady condition says why when no
// leader can be chosen.
package policy
