// Package controller is the root of the controllers embedded in tapp-apiserver: manager (which controllers
// run, leader election, clients and shared informers), the TApp, YurtAppDaemon and NodePool controllers, each
// with a pure policy package that plans and a controller that acts on the plans, the stable hashes the
// policies share (stablehash), adoption and release of the objects they control (ownership), and the work
// loop they all run in (workloop: workqueue, workers, metrics) and the one way they write status
// (statuswrite: only on change, retried on a fresh read after a conflict).
// The in-place update engine the TApp controller uses is pkg/inplace.
package controller
