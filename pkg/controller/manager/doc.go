// Package manager owns running the controllers embedded in tapp-apiserver: which ones run (--controllers),
// the shared informer factories they watch through, leader election with a Lease in the cluster, and the
// event broadcaster. Each controller lives in its own package and knows nothing of this one.
package manager
