package chaos

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// identityWatch follows objects that stand for stable identities (a TApp's pods, one per instance id; a
// YurtAppDaemon's children, one per pool) through a watch, and counts against what the driver asked for:
//   - unexpected deletions: an object going away (deletionTimestamp, deletion, or a pod finishing) while
//     its identity was wanted;
//   - gaps: identities that had an object, lost it while still wanted, and so had none for a while;
//   - recreations: a new UID for an identity whose previous object went away unexpectedly, or that still
//     had a live object (same name, new UID: recreated instead of updated in place).
//
// wanted is set by the driver: before a write that wants fewer identities, after one that wants more, so
// that a deletion the spec asked for is never counted and a deletion it did not ask for always is.
type identityWatch struct {
	mu     sync.Mutex
	key    func(metav1.Object) (string, bool)
	wanted func(string) bool
	live   map[string]types.UID
	// lost marks identities whose last object went away while wanted.
	lost        map[string]bool
	gaps        map[string]bool
	deletions   []string
	recreations []string
	seenGone    map[types.UID]bool
	events      int
	stop        context.CancelFunc
}

func newIdentityWatch(key func(metav1.Object) (string, bool)) *identityWatch {
	return &identityWatch{
		key: key, wanted: func(string) bool { return false },
		live: map[string]types.UID{}, lost: map[string]bool{}, gaps: map[string]bool{}, seenGone: map[types.UID]bool{},
	}
}

// setWanted replaces the wanted predicate.
func (w *identityWatch) setWanted(wanted func(string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wanted = wanted
}

func (w *identityWatch) observe(obj metav1.Object, gone bool) {
	key, ok := w.key(obj)
	if !ok {
		return
	}
	uid := obj.GetUID()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if !gone {
		if w.seenGone[uid] {
			return
		}
		if cur, ok := w.live[key]; ok && cur != uid {
			w.recreations = append(w.recreations, fmt.Sprintf("%s: %s while %s was live", key, uid, cur))
		} else if !ok && w.lost[key] {
			w.recreations = append(w.recreations, fmt.Sprintf("%s: recreated as %s after an unexpected deletion", key, uid))
		}
		w.live[key] = uid
		delete(w.lost, key)
		return
	}
	if w.seenGone[uid] {
		return
	}
	w.seenGone[uid] = true
	if w.live[key] == uid {
		delete(w.live, key)
	}
	if w.wanted(key) {
		w.deletions = append(w.deletions, fmt.Sprintf("%s (%s, %s)", key, obj.GetName(), uid))
		w.lost[key] = true
		w.gaps[key] = true
	}
}

// watchCounts are the counts of an identityWatch.
type watchCounts struct {
	Events      int      `json:"events"`
	Gaps        int      `json:"gaps"`
	Deletions   []string `json:"unexpectedDeletions,omitempty"`
	Recreations []string `json:"recreations,omitempty"`
}

func (w *identityWatch) counts() watchCounts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return watchCounts{
		Events: w.events, Gaps: len(w.gaps),
		Deletions: append([]string(nil), w.deletions...), Recreations: append([]string(nil), w.recreations...),
	}
}

// liveUIDs returns the live object of every identity.
func (w *identityWatch) liveUIDs() map[string]types.UID {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]types.UID, len(w.live))
	for k, v := range w.live {
		out[k] = v
	}
	return out
}

// podGone says whether a pod no longer stands for its identity.
func podGone(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

// startPodWatch feeds the pods of namespace to w until ctx ends.
func startPodWatch(ctx context.Context, client kubernetes.Interface, namespace string, w *identityWatch) error {
	return startWatch(ctx, client, namespace, w, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().Pods().Informer()
	}, func(obj interface{}) (metav1.Object, bool) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, false
		}
		return pod, podGone(pod)
	})
}

// startDeploymentWatch feeds the Deployments of namespace to w until ctx ends.
func startDeploymentWatch(ctx context.Context, client kubernetes.Interface, namespace string, w *identityWatch) error {
	return startWatch(ctx, client, namespace, w, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Apps().V1().Deployments().Informer()
	}, func(obj interface{}) (metav1.Object, bool) {
		o, ok := obj.(metav1.Object)
		if !ok {
			return nil, false
		}
		return o, o.GetDeletionTimestamp() != nil
	})
}

func startWatch(ctx context.Context, client kubernetes.Interface, namespace string, w *identityWatch,
	informer func(informers.SharedInformerFactory) cache.SharedIndexInformer, state func(interface{}) (metav1.Object, bool)) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	inf := informer(factory)
	feed := func(obj interface{}, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o, gone := state(obj)
		if o != nil {
			w.observe(o, gone || deleted)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { feed(obj, false) },
		UpdateFunc: func(_, obj interface{}) { feed(obj, false) },
		DeleteFunc: func(obj interface{}) { feed(obj, true) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("the watch of %s did not sync", namespace)
	}
	return nil
}

// sortedKeys returns the keys of a set in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
