// Package workloop owns what the embedded controllers share around their sync functions: running a
// controller's rate-limited workqueue with workers (cache sync, retries with backoff, conflicts retried
// quietly) and recording its sync and action metrics.
package workloop
