// Package yurtconvert owns the conversion of a YurtAppDaemon (apps.openyurt.io/v1alpha1) into a YurtAppSet
// (apps.openyurt.io/v1beta1) that renders the same workloads, and the handover of the YurtAppDaemon's
// Deployments or StatefulSets to it without recreating them: the upgrade path OpenYurt never offered when
// it removed YurtAppDaemon.
//
// YurtAppSet builds the YurtAppSet; Check proves, before anything changes, that the YurtAppSet controller
// would keep every live workload's pods (rendering each selected pool with both controllers' render
// functions, and planning the YurtAppSet over the live workloads as if adopted); Converter runs the steps
// against the API (label the workloads for adoption, delete the YurtAppDaemon with orphaning, create the
// YurtAppSet, wait for the adoptions), resumable from a backup file of the YurtAppDaemon.
package yurtconvert
