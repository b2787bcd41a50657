// Package workloop owns what the embedded controllers share around their sync functions: a controller's
// rate-limited workqueue and the informers it waits for (New, Watch), the keys its event handlers enqueue
// (Enqueue, Deleted for delete events and their tombstones), the workers that sync the keys (cache sync,
// retries with backoff, conflicts retried quietly) and its sync and action metrics.
//
// A controller has one clock, which it gives to New: the loop times its syncs with it and the queue its
// delays (AddAfter) and backoff, and the controller gives the same clock to everything else of its own that
// reads the time (its expectations, the TApp controller's in-place updater). Outside tests it is the real
// clock; a test steps a fake one (k8s.io/utils/clock/testing) to pass a delay.
package workloop
