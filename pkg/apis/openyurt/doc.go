// +k8s:deepcopy-gen=package
// +groupName=apps.openyurt.io

// Package openyurt holds the internal (hub) types of the apps.openyurt.io API group: YurtAppDaemon, YurtAppSet and NodePool.
package openyurt
