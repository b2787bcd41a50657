// Package controller will hold the embedded, leader-elected controllers that turn TApps into pods and
// YurtAppDaemons into one workload per node pool.
package controller
