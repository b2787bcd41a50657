// Package workloop owns what the embedded controllers share around their sync functions: a controller's
// rate-limited workqueue and the informers it waits for (New, Watch), the keys its event handlers enqueue
// (Enqueue, Deleted for delete events and their tombstones), the workers that sync the keys (cache sync,
// retries with backoff, conflicts retried quietly) and its sync and action metrics.
package workloop
