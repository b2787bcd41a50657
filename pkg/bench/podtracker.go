package bench

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// podTracker follows the pods of one namespace through a watch and keeps the counts the workload
// benchmarks wait on, the first time each pod was seen Ready (on an image and, for a resize, reporting the
// marked resources), and the largest number of unavailable replicas seen while tracking it.
type podTracker struct {
	mu   sync.Mutex
	pods map[types.UID]podState
	// Counters over pods without a deletionTimestamp.
	live, ready int
	// all counts every pod, terminating ones included.
	all int
	// readyAt is when a pod name was first seen Ready on readyImage, since the tracker's mark.
	readyAt    map[string]time.Time
	readyImage string
	// readyResources, when set, is the resourcesKey a pod's spec and reported status must have as well.
	readyResources string
	// createdAt is when each pod name was first seen, since the tracker's mark; stamped is its
	// creationTimestamp (a second's resolution: tells a slow create from a slow watch).
	createdAt, stamped map[string]time.Time
	// goneAt is when each pod was seen deleted.
	goneAt []time.Time
	// desired is the replica count for maxUnavailable; negative while not measuring.
	desired, maxUnavailable int
	stop                    context.CancelFunc
}

type podState struct {
	name     string
	ready    bool
	deleting bool
	image    string // spec image of the first container
	running  string // image the (simulated) kubelet reports for the first container
	// resources and reported are the resourcesKey of the first container's spec and of what the kubelet
	// reports for it; restarts is its restartCount.
	resources, reported string
	restarts            int32
}

// resourcesKey names the cpu and memory requests and limits of a container, whatever the quantities' format.
func resourcesKey(r corev1.ResourceRequirements) string {
	cpu := func(q *resource.Quantity) string {
		return resource.NewMilliQuantity(q.MilliValue(), resource.DecimalSI).String()
	}
	memory := func(q *resource.Quantity) string { return resource.NewQuantity(q.Value(), resource.BinarySI).String() }
	return fmt.Sprintf("requests cpu %s memory %s, limits cpu %s memory %s",
		cpu(r.Requests.Cpu()), memory(r.Requests.Memory()), cpu(r.Limits.Cpu()), memory(r.Limits.Memory()))
}

// onTarget says whether a pod runs what the tracker's mark waits for.
func (t *podTracker) onTarget(s podState) bool {
	if t.readyImage == "" || s.image != t.readyImage || s.running != t.readyImage {
		return false
	}
	return t.readyResources == "" || (s.resources == t.readyResources && s.reported == t.readyResources)
}

func startPodTracker(ctx context.Context, client kubernetes.Interface, namespace string) (*podTracker, error) {
	ctx, cancel := context.WithCancel(ctx)
	t := &podTracker{pods: map[types.UID]podState{}, readyAt: map[string]time.Time{}, createdAt: map[string]time.Time{}, stamped: map[string]time.Time{}, desired: -1, stop: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	if err := observeInformer(ctx, factory, inf, fmt.Sprintf("pod watch of %s", namespace), t.observe); err != nil {
		cancel()
		return nil, err
	}
	return t, nil
}

func (t *podTracker) close() { t.stop() }

func (t *podTracker) observe(obj interface{}, deleted bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	s := podState{name: pod.Name, deleting: pod.DeletionTimestamp != nil}
	if len(pod.Spec.Containers) > 0 {
		s.image = pod.Spec.Containers[0].Image
		s.resources = resourcesKey(pod.Spec.Containers[0].Resources)
	}
	if len(pod.Status.ContainerStatuses) > 0 {
		cs := pod.Status.ContainerStatuses[0]
		s.running, s.restarts = cs.Image, cs.RestartCount
		if cs.Resources != nil {
			s.reported = resourcesKey(*cs.Resources)
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			s.ready = true
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.pods[pod.UID]; ok {
		t.all--
		if !old.deleting {
			t.live--
			if old.ready {
				t.ready--
			}
		}
	}
	if deleted {
		delete(t.pods, pod.UID)
		t.goneAt = append(t.goneAt, now)
	} else {
		t.pods[pod.UID] = s
		t.all++
		if !s.deleting {
			t.live++
			if _, seen := t.createdAt[s.name]; !seen {
				t.createdAt[s.name] = now
				t.stamped[s.name] = pod.CreationTimestamp.Time
			}
			if s.ready {
				t.ready++
				if t.onTarget(s) {
					if _, seen := t.readyAt[s.name]; !seen {
						t.readyAt[s.name] = now
					}
				}
			}
		}
	}
	if t.desired >= 0 {
		if u := t.desired - t.ready; u > t.maxUnavailable {
			t.maxUnavailable = u
		}
	}
}

// mark starts a measurement: pods are timed when Ready on image, and unavailability is measured against
// desired (negative: not measured).
func (t *podTracker) mark(image string, desired int) { t.markResources(image, "", desired) }

// markResources is mark for pods that must also run with the resources of resourcesKey (empty: any).
func (t *podTracker) markResources(image, resources string, desired int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.readyImage, t.readyResources = image, resources
	t.readyAt = map[string]time.Time{}
	t.createdAt = map[string]time.Time{}
	t.stamped = map[string]time.Time{}
	t.goneAt = nil
	t.desired, t.maxUnavailable = desired, 0
	// Pods that exist count from the mark, and those already Ready on the image are Ready from it.
	now := time.Now()
	for _, s := range t.pods {
		if s.deleting {
			continue
		}
		t.createdAt[s.name] = now
		t.stamped[s.name] = now
		if s.ready && t.onTarget(s) {
			t.readyAt[s.name] = now
		}
	}
}

type trackerSnapshot struct {
	live, ready, all, readyOnImage, maxUnavailable int
}

func (t *podTracker) snapshot() trackerSnapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := trackerSnapshot{live: t.live, ready: t.ready, all: t.all, maxUnavailable: t.maxUnavailable}
	for _, p := range t.pods {
		if !p.deleting && p.ready && t.onTarget(p) {
			s.readyOnImage++
		}
	}
	return s
}

func (t *podTracker) uids() map[types.UID]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[types.UID]bool{}
	for uid, p := range t.pods {
		if !p.deleting {
			out[uid] = true
		}
	}
	return out
}

// restartCounts are the restartCount of the first container of every pod not being deleted.
// comparePods compares two restartCounts snapshots: the pods of after that were in before (kept), their
// container restarts since, and the pods of after that were not (recreated).
func comparePods(before, after map[types.UID]int32) (kept, restarts, recreated int) {
	for uid, n := range after {
		if n0, ok := before[uid]; ok {
			kept++
			restarts += int(n - n0)
		} else {
			recreated++
		}
	}
	return kept, restarts, recreated
}

func (t *podTracker) restartCounts() map[types.UID]int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[types.UID]int32{}
	for uid, p := range t.pods {
		if !p.deleting {
			out[uid] = p.restarts
		}
	}
	return out
}

// readyLatencies are the times from start to each pod's first Ready on the marked image.
func (t *podTracker) readyLatencies(start time.Time) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sinceStart(maps.Values(t.readyAt), start)
}

// createdLatencies are the times from start to each pod's first sighting since the mark.
func (t *podTracker) createdLatencies(start time.Time) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sinceStart(maps.Values(t.createdAt), start)
}

// stampedLatencies are the times from start to each pod's creationTimestamp, for the pods of createdLatencies.
func (t *podTracker) stampedLatencies(start time.Time) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sinceStart(maps.Values(t.stamped), start)
}

// goneLatencies are the times from start to each pod's deletion.
func (t *podTracker) goneLatencies(start time.Time) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sinceStart(slices.Values(t.goneAt), start)
}

// sinceStart is the time from start to each of times.
func sinceStart(times iter.Seq[time.Time], start time.Time) []time.Duration {
	var out []time.Duration
	for at := range times {
		out = append(out, at.Sub(start))
	}
	return out
}

// waitFor polls the tracker until cond holds or timeout passes; it returns whether cond held and when.
func (t *podTracker) waitFor(ctx context.Context, timeout time.Duration, cond func(trackerSnapshot) bool) (bool, time.Time) {
	deadline := time.Now().Add(timeout)
	for {
		if cond(t.snapshot()) {
			return true, time.Now()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}
