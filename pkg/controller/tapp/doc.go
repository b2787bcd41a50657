// Package tapp owns the TApp controller: the informers, the workqueue and the expectations that decide when
// a TApp is synced, and the executor that carries out the plan computed by the policy package (adoption
// and release of pods with UID-bound patches of pkg/ownership, after re-reading the TApp from the
// API server; pod and claim creation, deletion, relabelling and in-place updates through the inplace
// package) and writes the TApp's status.
//
// The controller never decides what to do itself: policy.ComputePlan does, from the TApp and a snapshot of
// its pods. Informer cache objects are never modified.
package tapp
