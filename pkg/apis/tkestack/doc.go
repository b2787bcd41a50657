// +k8s:deepcopy-gen=package
// +groupName=apps.tkestack.io

// Package tkestack holds the internal (hub) types of the apps.tkestack.io API group: TApp.
package tkestack
