// Package controller is the root of the controllers embedded in tapp-apiserver: manager (which controllers
// run, leader election, clients and shared informers), the TApp, YurtAppDaemon and NodePool controllers, each
// with a pure policy package that plans and a controller that acts on the plans, and what they share:
//   - workloop: the workqueue, the informer handlers' registration and keys, the workers and the metrics,
//     and the controller's one clock (given to NewController: the real clock outside tests), which its
//     queue, its expectations and the in-place updater share;
//   - expectations: the writes a controller made that its caches have not shown yet (one model, one
//     timeout), which hold a sync back;
//   - actions: how an executor makes its API calls (MaxParallel at a time, creations in slow-start batches,
//     the controller's field manager) and reports what failed (the errors to retry, one bounded condition
//     message);
//   - statuswrite: the one way they write status (only on change, retried on a fresh read after a
//     conflict);
//   - history: their ControllerRevisions (hash and name after collisions, create or reuse the newest,
//     prune beyond the history limit);
//   - controllertest, for their unit tests only: fake APIs that stamp writes, draining a queue, stepping a
//     controller's fake clock until its queue's delayed keys are there, running a controller.
//
// Below them, shared with the admission plugin and the in-place engine: pkg/stablehash (template hashes),
// pkg/tapppod (the pod of a TApp instance), pkg/ownership (adoption and release by controller reference,
// and controller references matched by group and kind) and pkg/inplace (the in-place update engine).
package controller
