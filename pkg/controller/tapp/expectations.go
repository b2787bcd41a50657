package tapp

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// expectationsTTL bounds how long a TApp waits for the informer to show its own writes; after that the
// writes are assumed lost (a watch event was missed) and the TApp is synced from the cache as it is.
const expectationsTTL = 5 * time.Minute

// expectations records, per TApp key, the pod writes the controller made and the informer has not shown
// yet: pods created (by name), pods deleted (by UID) and pods updated in place (by name, with the template
// hash written). While any is pending, the TApp's cache view is stale, so the controller does not act on it:
// that is what keeps a slow informer from causing a second create of the same instance or a missed delete.
type expectations struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	items map[string]*pending
}

type pending struct {
	creates sets.Set[string]
	deletes sets.Set[types.UID]
	updates map[string]string // pod name → template hash written
	since   time.Time
}

func newExpectations(c clock.PassiveClock) *expectations {
	return &expectations{clock: c, items: map[string]*pending{}}
}

func (e *expectations) get(key string) *pending {
	p, ok := e.items[key]
	if !ok {
		p = &pending{creates: sets.New[string](), deletes: sets.New[types.UID](), updates: map[string]string{}}
		e.items[key] = p
	}
	p.since = e.clock.Now()
	return p
}

func (e *expectations) expectCreate(key, podName string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).creates.Insert(podName)
}

func (e *expectations) expectDelete(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).deletes.Insert(uid)
}

func (e *expectations) expectUpdate(key, podName, hash string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).updates[podName] = hash
}

// observeCreate is called when the informer shows pod podName, or when its create failed.
func (e *expectations) observeCreate(key, podName string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.items[key]; ok {
		p.creates.Delete(podName)
		e.cleanup(key, p)
	}
}

// observeDelete is called when the informer shows the pod gone or terminating, or when its delete failed.
func (e *expectations) observeDelete(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.items[key]; ok {
		p.deletes.Delete(uid)
		e.cleanup(key, p)
	}
}

// observeUpdate is called with every version of a pod the informer shows (hash is its template hash label),
// and with an empty hash when the update failed or the pod is gone.
func (e *expectations) observeUpdate(key, podName, hash string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.items[key]; ok {
		if want, ok := p.updates[podName]; ok && (hash == "" || hash == want) {
			delete(p.updates, podName)
			e.cleanup(key, p)
		}
	}
}

func (e *expectations) cleanup(key string, p *pending) {
	if p.creates.Len() == 0 && p.deletes.Len() == 0 && len(p.updates) == 0 {
		delete(e.items, key)
	}
}

// satisfied reports whether the informer has shown every write made for key (or they have expired).
func (e *expectations) satisfied(key string) bool {
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
	return false
}

// forget drops everything recorded for key (the TApp is gone).
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}
