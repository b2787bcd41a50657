package yurtappdaemon

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// expectationsTTL bounds how long a YurtAppDaemon waits for the caches to show its own writes; after that
// they are assumed lost and the YurtAppDaemon is synced from the caches as they are.
const expectationsTTL = 2 * time.Minute

// childRef names a child workload in the YurtAppDaemon's namespace.
type childRef struct {
	kind v1alpha1.TemplateType
	name string
}

type writeKind int

const (
	expectCreate writeKind = iota
	expectUpdate
	expectDelete
)

// write is a child write whose result the cache has not shown yet.
type write struct {
	kind writeKind
	// uid is the UID deleted (expectDelete).
	uid types.UID
	// resourceVersion is the version the update was made from (expectUpdate): the cache has shown the
	// update once it holds any other version.
	resourceVersion string
}

// expectations records, per YurtAppDaemon key, the child writes the caches have not shown yet. They are
// checked against the cache state (not counted from events), so a missed or coalesced event cannot leave
// one pending: a create is shown when the cache holds the name, a delete when the UID is gone or
// terminating, an update when the cached resourceVersion moved on. While any is pending the cache is
// behind the controller's own writes and the YurtAppDaemon is not acted on.
type expectations struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	items map[string]*pendingWrites
}

type pendingWrites struct {
	since  time.Time
	writes map[childRef]write
}

func newExpectations(c clock.PassiveClock) *expectations {
	return &expectations{clock: c, items: map[string]*pendingWrites{}}
}

// expect records a write about to be made.
func (e *expectations) expect(key string, ref childRef, w write) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.items[key]
	if !ok {
		p = &pendingWrites{writes: map[childRef]write{}}
		e.items[key] = p
	}
	p.since = e.clock.Now()
	p.writes[ref] = w
}

// lower drops the expectation of ref: the write failed, or its result is already known.
func (e *expectations) lower(key string, ref childRef) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.items[key]; ok {
		delete(p.writes, ref)
		if len(p.writes) == 0 {
			delete(e.items, key)
		}
	}
}

// satisfied reports whether the cache (lookup) shows every write recorded for key, forgetting those it
// shows, or whether they expired.
func (e *expectations) satisfied(key string, lookup func(childRef) metav1.Object) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.items[key]
	if !ok {
		return true
	}
	if e.clock.Since(p.since) > expectationsTTL {
		delete(e.items, key)
		return true
	}
	for ref, w := range p.writes {
		obj := lookup(ref)
		var shown bool
		switch w.kind {
		case expectCreate:
			shown = obj != nil
		case expectDelete:
			shown = obj == nil || obj.GetUID() != w.uid || obj.GetDeletionTimestamp() != nil
		case expectUpdate:
			shown = obj == nil || obj.GetResourceVersion() != w.resourceVersion
		}
		if shown {
			delete(p.writes, ref)
		}
	}
	if len(p.writes) == 0 {
		delete(e.items, key)
		return true
	}
	return false
}

// forget drops everything recorded for key (the YurtAppDaemon is gone).
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}
