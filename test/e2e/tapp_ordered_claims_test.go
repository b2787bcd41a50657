//go:build e2e

package e2e

// End-to-end tests of spec.persistentVolumeClaimRetentionPolicy (owner references on the instance claims
// that kube-controller-manager's garbage collector follows) and of spec.podManagementPolicy OrderedReady.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// retentionTApp is a TApp "keep" of replicas instances with one claim "www" each (of the local cluster's
// default StorageClass, provisioned and bound; a released volume is deleted) and the given retention policy.
const retentionTApp = `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: keep
spec:
  replicas: %d
  persistentVolumeClaimRetentionPolicy:
    whenDeleted: %s
    whenScaled: %s
  template:
    metadata:
      labels:
        app: keep
    spec:
      containers:
      - name: nginx
        image: nginx:1.7.9
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ "ReadWriteOnce" ]
      resources:
        requests:
          storage: 1Gi
`

// TestTAppClaimRetention: with whenScaled: Delete a scale-down removes the claims of the removed instances
// (owned by their pods, deleted once the pods are gone) and keeps the others, ownerless; whenDeleted:
// Delete makes the TApp an owner of the remaining claims, which go with it; unknown values are refused
// with their field paths and kubectl explain describes the field.
func TestTAppClaimRetention(t *testing.T) {
	ns := controllerNamespace(t, "claim-retention")
	ctx := context.Background()

	_, stderr, err := kubectlOutputs(t, []byte(fmt.Sprintf(retentionTApp, 1, "Keep", "delete")), "apply", "-n", ns, "-f", "-")
	if err == nil {
		t.Fatal("kubectl apply of unknown retention values succeeded")
	}
	requireContains(t, "kubectl apply of unknown retention values", stderr,
		`spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep"`,
		`spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "delete"`)
	requireContains(t, "kubectl explain", mustKubectl(t, "explain", "tapp.spec.persistentVolumeClaimRetentionPolicy"),
		"whenDeleted", "whenScaled", "Retain")

	mustKubectlIn(t, fmt.Sprintf(retentionTApp, 3, "Retain", "Delete"), "apply", "-n", ns, "-f", "-")
	waitPodSet(t, ns, "keep", 3)
	claim := func(id int) (*corev1.PersistentVolumeClaim, error) {
		return kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, fmt.Sprintf("www-keep-%d", id), metav1.GetOptions{})
	}
	uids := map[int]types.UID{}
	for id := 0; id < 3; id++ {
		c, err := claim(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.OwnerReferences) != 0 {
			t.Errorf("claim %s of a running instance has owners %v", c.Name, c.OwnerReferences)
		}
		uids[id] = c.UID
	}

	// Scale down to 1: the claims of 1 and 2 go with their pods, the claim of 0 stays.
	mustKubectl(t, "scale", "-n", ns, "tapp", "keep", "--replicas=1")
	waitPodSet(t, ns, "keep", 1)
	pollUntil(t, ctrlTimeout, "the claims of the removed instances are deleted", func() error {
		for _, id := range []int{1, 2} {
			c, err := claim(id)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("claim %s still there (owners %v, deletionTimestamp %v)", c.Name, c.OwnerReferences, c.DeletionTimestamp)
		}
		return nil
	})
	holdsFor(t, 5*time.Second, "the claim of the remaining instance is kept, ownerless", func() error {
		c, err := claim(0)
		if err != nil {
			return err
		}
		if c.UID != uids[0] || c.DeletionTimestamp != nil || len(c.OwnerReferences) != 0 {
			return fmt.Errorf("claim %s: uid %s (was %s), deletionTimestamp %v, owners %v", c.Name, c.UID, uids[0], c.DeletionTimestamp, c.OwnerReferences)
		}
		return nil
	})

	// Scale up again: instance 1 gets a new claim, ownerless.
	mustKubectl(t, "scale", "-n", ns, "tapp", "keep", "--replicas=2")
	waitPodSet(t, ns, "keep", 2)
	if c, err := claim(1); err != nil || c.UID == uids[1] || len(c.OwnerReferences) != 0 {
		t.Errorf("claim of instance 1 after the scale-up: %v, %v", c, err)
	}

	// whenDeleted: Delete: the TApp becomes an owner of every claim, and they go with it.
	mustKubectlIn(t, fmt.Sprintf(retentionTApp, 2, "Delete", "Delete"), "apply", "-n", ns, "-f", "-")
	tapp := getTApp(t, ns, "keep")
	pollUntil(t, ctrlTimeout, "the claims are owned by the TApp", func() error {
		for id := 0; id < 2; id++ {
			c, err := claim(id)
			if err != nil {
				return err
			}
			if len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != tapp.UID || c.OwnerReferences[0].Kind != "TApp" {
				return fmt.Errorf("claim %s owners %v, want the TApp %s", c.Name, c.OwnerReferences, tapp.UID)
			}
		}
		return nil
	})
	mustKubectl(t, "delete", "-n", ns, "tapp", "keep", "--wait=false")
	pollUntil(t, ctrlTimeout, "the claims are deleted with the TApp", func() error {
		list, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var left []string
		for _, c := range list.Items {
			left = append(left, c.Name)
		}
		if len(left) > 0 {
			return fmt.Errorf("claims left: %s", strings.Join(left, ", "))
		}
		return nil
	})
}

// waitPodSet waits until the TApp's pods are exactly those of instances 0..n-1, none terminating, whether
// they run or not.
func waitPodSet(t testing.TB, ns, name string, n int) map[int]*corev1.Pod {
	t.Helper()
	var pods map[int]*corev1.Pod
	pollUntil(t, ctrlTimeout, fmt.Sprintf("TApp %s/%s has the pods of instances 0..%d", ns, name, n-1), func() error {
		var err error
		if pods, err = instancePods(context.Background(), ns, name); err != nil {
			return err
		}
		if len(pods) != n {
			return fmt.Errorf("pods %s", describePods(pods))
		}
		for id := 0; id < n; id++ {
			if pod := pods[id]; pod == nil || pod.DeletionTimestamp != nil {
				return fmt.Errorf("pods %s", describePods(pods))
			}
		}
		return nil
	})
	return pods
}

// podEvents records, in order, when each pod of a namespace was added, became Ready, started terminating
// and was deleted, as "added <pod>", "ready <pod>", "terminating <pod>" and "deleted <pod>" (each once).
type podEvents struct {
	mu     sync.Mutex
	events []string
	seen   map[string]bool
}

func watchPodEvents(t *testing.T, ns string) *podEvents {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := kubeClient.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pe := &podEvents{seen: map[string]bool{}}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			pe.mu.Lock()
			add := func(e string) {
				if !pe.seen[e] {
					pe.seen[e] = true
					pe.events = append(pe.events, e)
				}
			}
			add("added " + pod.Name)
			if podReady(pod) {
				add("ready " + pod.Name)
			}
			if pod.DeletionTimestamp != nil {
				add("terminating " + pod.Name)
			}
			if ev.Type == watch.Deleted {
				add("terminating " + pod.Name)
				add("deleted " + pod.Name)
			}
			pe.mu.Unlock()
		}
	}()
	return pe
}

// index returns the position of event e, or -1.
func (pe *podEvents) index(e string) int {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	for i, x := range pe.events {
		if x == e {
			return i
		}
	}
	return -1
}

func (pe *podEvents) String() string {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return strings.Join(pe.events, ", ")
}

// requireBefore fails unless event a was seen before event b.
func (pe *podEvents) requireBefore(t *testing.T, a, b string) {
	t.Helper()
	i, j := pe.index(a), pe.index(b)
	if i < 0 || j < 0 || i >= j {
		t.Errorf("%q (at %d) does not come before %q (at %d): %s", a, i, b, j, pe)
	}
}

// TestTAppOrderedReady: with podManagementPolicy OrderedReady instance n is created only once 0..n-1 are
// Running and Ready (the watch sees "ready <n-1>" before "added <n>"), a scale-down removes the highest
// instance first and the next only once it is gone, and an unknown value is refused with its field path.
func TestTAppOrderedReady(t *testing.T) {
	ns := controllerNamespace(t, "ordered")
	manifest := func(replicas int, policy string) string {
		m := nginxTApp("ordered", replicas, "nginx:1.7.9", "")
		return strings.Replace(m, "spec:\n", "spec:\n  podManagementPolicy: "+policy+"\n", 1)
	}
	_, stderr, err := kubectlOutputs(t, []byte(manifest(1, "Ordered")), "apply", "-n", ns, "-f", "-")
	if err == nil {
		t.Fatal("kubectl apply of an unknown podManagementPolicy succeeded")
	}
	requireContains(t, "kubectl apply of an unknown podManagementPolicy", stderr, `spec.podManagementPolicy: Unsupported value: "Ordered"`)
	requireContains(t, "kubectl explain", mustKubectl(t, "explain", "tapp.spec.podManagementPolicy"), "OrderedReady", "Parallel")

	events := watchPodEvents(t, ns)
	mustKubectlIn(t, manifest(4, "OrderedReady"), "apply", "-n", ns, "-f", "-")
	waitInstances(t, ns, "ordered", images(4, "nginx:1.7.9"))
	for id := 1; id < 4; id++ {
		events.requireBefore(t, "ready "+podName("ordered", id-1), "added "+podName("ordered", id))
	}
	if got := getTApp(t, ns, "ordered").Spec.PodManagementPolicy; got != "OrderedReady" {
		t.Errorf("podManagementPolicy = %q", got)
	}

	mustKubectl(t, "scale", "-n", ns, "tapp", "ordered", "--replicas=1")
	waitInstances(t, ns, "ordered", images(1, "nginx:1.7.9"))
	pollUntil(t, ctrlTimeout, "the watch saw the deletions", func() error {
		if events.index("deleted "+podName("ordered", 1)) < 0 {
			return fmt.Errorf("events: %s", events)
		}
		return nil
	})
	events.requireBefore(t, "deleted "+podName("ordered", 3), "terminating "+podName("ordered", 2))
	events.requireBefore(t, "deleted "+podName("ordered", 2), "terminating "+podName("ordered", 1))
	t.Logf("pod events: %s", events)
}
