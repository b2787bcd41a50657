// Package registry holds the pieces every resource's REST storage shares: the REST wrapper that adds
// short names and categories to a generic store, and the table printer behind kubectl get.
package registry
