package tapp

import (
	"sync"
	"time"
)

const (
	// podEventBatch is the shortest time the sync of a TApp waits after one of its pods is added or changes,
	// so that the events of many pods make one sync: each sync plans over every instance, and a thousand
	// pods being created, scheduled and started send thousands of events within seconds. A deletion or a
	// release is synced at once.
	podEventBatch = 50 * time.Millisecond
	// podEventBatchPerPlan is how many times its last planning took a TApp's pod-event sync waits, when that
	// is longer than podEventBatch. A TApp's planning grows with its instances (ComputePlan alone: 2 ms for
	// 1000, 33 ms for 10,000), and so does the rest of its sync (the status, the in-place progress); a large
	// TApp whose pods change all the time would otherwise be synced back to back, and the controller's CPU
	// would grow with the square of its instances. Waiting ten plannings keeps such a TApp's syncs to a
	// bounded share of a worker's time whatever its size, up to maxPodEventBatch.
	podEventBatchPerPlan = 10
	// maxPodEventBatch bounds the wait, so that a TApp's pods are never more than this behind their events.
	maxPodEventBatch = time.Second
)

// planCosts remembers how long the last planning of each TApp took (reading its pods, revisions and claims
// from the caches and computing the plan), to set how long its pod events are batched. It is safe for
// concurrent use.
type planCosts struct {
	mu   sync.Mutex
	last map[string]time.Duration
}

// observe records that planning key took d.
func (p *planCosts) observe(key string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]time.Duration{}
	}
	p.last[key] = d
}

// batch returns how long a pod event of key waits before the TApp is synced: podEventBatchPerPlan times its
// last planning, between podEventBatch and maxPodEventBatch.
func (p *planCosts) batch(key string) time.Duration {
	p.mu.Lock()
	d := p.last[key]
	p.mu.Unlock()
	return min(max(podEventBatch, podEventBatchPerPlan*d), maxPodEventBatch)
}

// forget drops what is remembered of key: call it when the TApp is deleted.
func (p *planCosts) forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}
