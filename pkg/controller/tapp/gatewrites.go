package tapp

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// gateWrites remembers, by pod UID, the readiness-gate writes of this controller (the first gate of a new pod,
// the completion of an in-place update, the repair of a gate left False) that the pod cache may not show yet.
// The gate writes are made by every sync, whether or not the expectations are satisfied, from the cache's
// copy of the pod; a sync that ran on a copy older than such a write would make it a second time: refused
// (a completion's test of the state annotation it removed, a repair's stale resourceVersion), and followed
// by a read of the pod. It is safe for concurrent use.
type gateWrites struct {
	byUID sync.Map // types.UID → gateWrite
}

// gateWrite is one gate write: from is the resourceVersion of the pod it was made from, to the one it
// returned, once it has (returned).
type gateWrite struct {
	from, to string
	returned bool
}

// started records a gate write about to be made on pod, or under way.
func (g *gateWrites) started(pod *corev1.Pod) {
	g.byUID.Store(pod.UID, gateWrite{from: pod.ResourceVersion})
}

// done records the pod a gate write of pod returned.
func (g *gateWrites) done(pod, out *corev1.Pod) {
	g.byUID.Store(pod.UID, gateWrite{from: pod.ResourceVersion, to: out.ResourceVersion, returned: true})
}

// forget drops what is remembered of the pod with uid: its write failed, or the pod is gone.
func (g *gateWrites) forget(uid types.UID) {
	g.byUID.Delete(uid)
}

// pending reports whether pod, a copy of a pod from the cache, may not show the last gate write made on it.
// A write under way is pending until it returns or a copy shows the gate True; one that returned, until a
// copy has its resourceVersion or a newer one (if the versions are not numbers, another version than the one
// it was made from). A write is forgotten once a copy asked about shows it, not when the cache does: a sync
// may ask about the copies of its snapshot, taken before the cache showed the write.
func (g *gateWrites) pending(pod *corev1.Pod) bool {
	v, ok := g.byUID.Load(pod.UID)
	if !ok {
		return false
	}
	w := v.(gateWrite)
	var shown bool
	switch cmp, err := resourceversion.CompareResourceVersion(pod.ResourceVersion, w.to); {
	case !w.returned:
		shown = inplace.GateStatus(pod) == corev1.ConditionTrue
	case err == nil:
		shown = cmp >= 0
	default:
		shown = pod.ResourceVersion != w.from
	}
	if shown {
		g.byUID.CompareAndDelete(pod.UID, w)
	}
	return !shown
}
