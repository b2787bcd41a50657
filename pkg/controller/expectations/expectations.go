// Package expectations holds back a controller's sync while its informer caches have not shown the
// controller's own writes yet, with the semantics of Kubernetes' ControllerExpectations: expectations are
// raised before each write, lowered when the write fails, observed when the caches show its result, and
// they expire after TTL on the clock given to New, the controller's (a missed watch event must not stall
// an object for good). While any is pending for a key, the caches are behind the controller's writes for
// that key and acting on them could, say, create the same object twice.
//
// Unlike ControllerExpectations, which counts adds and deletes, each expected write is remembered by the
// name of the object written (as UIDTrackingControllerExpectations remembers deletions by UID), together
// with what the cache must show for it: an object of that name (Create), no object of that UID or a
// terminating one (Delete), another version than the one updated, or none (UpdateFrom), a label value
// (UpdateTo), or a claim requesting at least the storage written, or none of that UID (StorageRequest).
// They are observed by looking the objects up in the cache when the sync asks whether they are satisfied,
// so a missed or coalesced event cannot leave one pending.
package expectations

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// TTL bounds how long a key waits for the caches to show the writes made for it (Kubernetes'
// ExpectationsTimeout): after that they are assumed lost and the key is synced from the caches as they are.
const TTL = 5 * time.Minute

type writeKind int

const (
	create writeKind = iota
	del
	updateFrom
	updateTo
	storageRequest
)

// Write is a write about to be made, and what the cache must show to have observed it.
type Write struct {
	kind writeKind
	// uid is the UID deleted (Delete).
	uid types.UID
	// resourceVersion is the version an update was made from (UpdateFrom).
	resourceVersion string
	// label and value are written by an update (UpdateTo).
	label, value string
	// storage is the storage request written to a claim (StorageRequest).
	storage resource.Quantity
}

// Create is a create: observed once the cache holds an object of that name.
func Create() Write { return Write{kind: create} }

// Delete is the delete of the object with UID uid: observed once the cache holds no object of that name
// with that UID, or holds it terminating.
func Delete(uid types.UID) Write { return Write{kind: del, uid: uid} }

// UpdateFrom is an update made from version resourceVersion of the cached object: observed once the cache
// holds another version, or no object.
func UpdateFrom(resourceVersion string) Write {
	return Write{kind: updateFrom, resourceVersion: resourceVersion}
}

// UpdateTo is an update that sets label to value: observed once the cached object carries it, or the cache
// holds no object. It serves updates made from an object newer than the cache's.
func UpdateTo(label, value string) Write { return Write{kind: updateTo, label: label, value: value} }

// StorageRequest is an update that raises the storage request of the claim with UID uid to storage:
// observed once the cache holds a claim of that name whose request is at least storage, or none with that
// UID (the claim is gone or was replaced).
func StorageRequest(uid types.UID, storage resource.Quantity) Write {
	return Write{kind: storageRequest, uid: uid, storage: storage}
}

// observedIn reports whether obj, the cache's object of the write's name (nil for none), shows the write.
func (w Write) observedIn(obj metav1.Object) bool {
	switch w.kind {
	case create:
		return obj != nil
	case del:
		return obj == nil || obj.GetUID() != w.uid || obj.GetDeletionTimestamp() != nil
	case updateFrom:
		return obj == nil || obj.GetResourceVersion() != w.resourceVersion
	case storageRequest:
		if obj == nil || obj.GetUID() != w.uid {
			return true
		}
		claim, ok := obj.(*corev1.PersistentVolumeClaim)
		if !ok {
			return true // not a claim: nothing can show the write
		}
		request := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		return request.Cmp(w.storage) >= 0
	default:
		return obj == nil || obj.GetLabels()[w.label] == w.value
	}
}

// Counts are the writes pending for a key, by kind.
type Counts struct {
	Creates, Deletes, Updates int
}

// Expectations records, per controller key (the synced object's), the writes whose result the caches
// have not shown yet, by the name N of the object written. It is safe for concurrent use.
type Expectations[N comparable] struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	items map[string]*pending[N]
}

type pending[N comparable] struct {
	// since is when the last write was expected; TTL counts from it.
	since  time.Time
	writes map[N]Write
}

// New returns empty expectations timed by clock.
func New[N comparable](clock clock.PassiveClock) *Expectations[N] {
	return &Expectations[N]{clock: clock, items: map[string]*pending[N]{}}
}

// Raise records that write w of object name is about to be made for key, replacing what was expected of
// name. Call it before the write, so that the cache cannot show the result before it is expected.
func (e *Expectations[N]) Raise(key string, name N, w Write) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.items[key]
	if !ok {
		p = &pending[N]{writes: map[N]Write{}}
		e.items[key] = p
	}
	p.since = e.clock.Now()
	p.writes[name] = w
}

// Lower drops the expectation of name for key: the write failed, or its result is known otherwise.
func (e *Expectations[N]) Lower(key string, name N) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.items[key]; ok {
		delete(p.writes, name)
		if len(p.writes) == 0 {
			delete(e.items, key)
		}
	}
}

// Satisfied reports whether the cache shows every write expected for key, or they expired. lookup returns
// the cached object of a name, nil when there is none; the writes it shows are observed (forgotten).
func (e *Expectations[N]) Satisfied(key string, lookup func(N) metav1.Object) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.items[key]
	if !ok {
		return true
	}
	if e.clock.Since(p.since) > TTL {
		delete(e.items, key)
		return true
	}
	for name, w := range p.writes {
		if w.observedIn(lookup(name)) {
			delete(p.writes, name)
		}
	}
	if len(p.writes) == 0 {
		delete(e.items, key)
		return true
	}
	return false
}

// Pending counts the writes still expected for key, for logs.
func (e *Expectations[N]) Pending(key string) Counts {
	e.mu.Lock()
	defer e.mu.Unlock()
	var c Counts
	if p, ok := e.items[key]; ok {
		for _, w := range p.writes {
			switch w.kind {
			case create:
				c.Creates++
			case del:
				c.Deletes++
			default:
				c.Updates++
			}
		}
	}
	return c
}

// Forget drops everything expected for key (its object is gone).
func (e *Expectations[N]) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}
