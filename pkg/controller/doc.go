// Package controller is the root of the controllers embedded in tapp-apiserver: manager (which controllers
// run, leader election, clients and shared informers), the TApp, YurtAppDaemon and NodePool controllers, each
// with a pure policy package that plans and a controller that acts on the plans, the work loop they all run
// in (workloop: workqueue, workers, metrics) and the one way they write status (statuswrite: only on change,
// retried on a fresh read after a conflict).
// Below them, shared with the admission plugin and the in-place engine: pkg/stablehash (template hashes),
// pkg/ownership (adoption and release by controller reference) and pkg/inplace (the in-place update engine).
package controller
