//go:build e2e

package e2e

// End-to-end tests of scaling a TApp: instances, their volume claims, and the order of their creation.

import (
	"context"
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

const dataTApp = `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: data
spec:
  replicas: %d
  template:
    metadata:
      labels:
        app: data
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
      labels:
        app: data
    spec:
      accessModes: [ "ReadWriteOnce" ]
      resources:
        requests:
          storage: 1Gi
`

// creationRecorder records the resourceVersion at which each pod and claim of a namespace was created.
type creationRecorder struct {
	mu      sync.Mutex
	created map[string]uint64 // "pod/<name>" or "pvc/<name>" → resourceVersion of the first ADDED event
	done    chan struct{}
}

// TestTAppScale: kubectl scale and editing spec.replicas add and remove instances; every instance gets its
// claims <claim>-<tapp>-<id> from volumeClaimTemplates before its pod, and claims survive a scale-down and
// are mounted again by the instance that comes back.
func TestTAppScale(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-scale")
	ctx := testContext(t, 6*ctrlTimeout)
	// One pre-bound PersistentVolume per claim (no class: a volume that names its claim binds to it whatever
	// the claim's class) lets the claims bind and the pods schedule, as an administrator's volumes would.
	for id := 0; id < 5; id++ {
		claim := fmt.Sprintf("www-data-%d", id)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim},
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/tapp-e2e/" + ns + "/" + claim},
				},
			},
		}
		if _, err := kubeClient.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		name := pv.Name
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = kubeClient.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
		})
	}

	rec := recordCreations(t, ns)
	out := mustKubectlIn(t, fmt.Sprintf(dataTApp, 2), "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/data created")
	pods, _ := waitInstances(t, ns, "data", images(2, "nginx:1.7.9"))

	claims := func(t *testing.T, ids ...int) map[int]*corev1.PersistentVolumeClaim {
		t.Helper()
		m := map[int]*corev1.PersistentVolumeClaim{}
		for _, id := range ids {
			name := fmt.Sprintf("www-data-%d", id)
			pvc, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("claim %s: %v", name, err)
			}
			if pvc.DeletionTimestamp != nil {
				t.Errorf("claim %s is being deleted", name)
			}
			if pvc.Labels[tkestack.InstanceIDLabel] != strconv.Itoa(id) || pvc.Labels["app"] != "data" {
				t.Errorf("claim %s: labels %v, want app=data and %s=%d", name, pvc.Labels, tkestack.InstanceIDLabel, id)
			}
			m[id] = pvc
		}
		return m
	}
	checkMounts := func(t *testing.T, pods map[int]*corev1.Pod) {
		t.Helper()
		for id, pod := range pods {
			want := fmt.Sprintf("www-data-%d", id)
			found := false
			for _, v := range pod.Spec.Volumes {
				if v.Name == "www" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == want {
					found = true
				}
			}
			if !found {
				t.Errorf("pod %s does not mount the claim %s as volume www: %v", pod.Name, want, pod.Spec.Volumes)
			}
		}
	}
	claims(t, 0, 1)
	checkMounts(t, pods)

	// kubectl scale up.
	out = mustKubectl(t, "scale", "-n", ns, "tapp", "data", "--replicas=5")
	requireContains(t, "kubectl scale", out, "tapp.apps.tkestack.io/data scaled")
	pods, _ = waitInstances(t, ns, "data", images(5, "nginx:1.7.9"))
	checkMounts(t, pods)
	kept := claims(t, 0, 1, 2, 3, 4)
	for id := 0; id < 5; id++ {
		rec.requireBefore(t, "pvc/"+fmt.Sprintf("www-data-%d", id), "pod/"+podName("data", id))
	}
	if got := mustKubectl(t, "get", "pvc", "-n", ns, "-l", "app=data", "-o", "name"); got != "persistentvolumeclaim/www-data-0\npersistentvolumeclaim/www-data-1\npersistentvolumeclaim/www-data-2\npersistentvolumeclaim/www-data-3\npersistentvolumeclaim/www-data-4\n" {
		t.Errorf("kubectl get pvc = %q, want www-data-0..4", got)
	}

	// Scale down by editing spec.replicas in the manifest: pods 2..4 go, their claims stay.
	mustKubectlIn(t, fmt.Sprintf(dataTApp, 2), "apply", "-n", ns, "-f", "-")
	waitInstances(t, ns, "data", images(2, "nginx:1.7.9"))
	pollUntil(t, ctrlTimeout, "kubectl get tapp shows 2 instances", func() error {
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "data"))
		got := []string{tb.cell(t, "data", "DESIRED"), tb.cell(t, "data", "CURRENT"), tb.cell(t, "data", "READY")}
		if strings.Join(got, " ") != "2 2 2" {
			return fmt.Errorf("DESIRED CURRENT READY = %q, want 2 2 2", got)
		}
		return nil
	})
	holdsFor(t, ctrlHold, "claims survive the scale-down", func() error {
		for id := 2; id < 5; id++ {
			name := fmt.Sprintf("www-data-%d", id)
			pvc, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("claim %s after the scale-down: %v", name, err)
			}
			if pvc.UID != kept[id].UID || pvc.DeletionTimestamp != nil {
				return fmt.Errorf("claim %s was deleted or replaced (uid %s → %s, deletionTimestamp %v)", name, kept[id].UID, pvc.UID, pvc.DeletionTimestamp)
			}
		}
		return nil
	})

	// The tutorial's form: kubectl scale with the resourceVersion just read. Instance 3 mounts its old claim.
	rv := mustKubectl(t, "get", "-n", ns, "tapp", "data", "-o", "jsonpath={.metadata.resourceVersion}")
	mustKubectl(t, "scale", "-n", ns, "--replicas=4", "--resource-version="+rv, "tapp/data")
	pods, _ = waitInstances(t, ns, "data", images(4, "nginx:1.7.9"))
	checkMounts(t, pods)
	for id, pvc := range claims(t, 0, 1, 2, 3, 4) {
		if pvc.UID != kept[id].UID {
			t.Errorf("claim %s was replaced (uid %s → %s)", pvc.Name, kept[id].UID, pvc.UID)
		}
	}

	// Killing an instance keeps its claim too.
	mustKubectl(t, "patch", "-n", ns, "tapp", "data", "--type=merge", "-p", `{"spec":{"statuses":{"0":"Killed"}}}`)
	pollUntil(t, ctrlTimeout, "instance 0 is killed", func() error {
		_, tapp, err := checkInstances(ctx, ns, "data", map[int]string{1: "nginx:1.7.9", 2: "nginx:1.7.9", 3: "nginx:1.7.9"})
		if err != nil {
			return err
		}
		if tapp.Status.Statuses["0"] != policy.StatusKilled {
			return fmt.Errorf("instance 0 not Killed yet: %s", describeStatus(tapp))
		}
		return nil
	})
	if pvc := claims(t, 0)[0]; pvc.UID != kept[0].UID {
		t.Errorf("claim %s of the killed instance was replaced (uid %s → %s)", pvc.Name, kept[0].UID, pvc.UID)
	}

	// Claims have no owner: deleting the TApp keeps them (the data outlives the workload, as with a
	// StatefulSet's default retention).
	mustKubectl(t, "delete", "-n", ns, "tapp", "data")
	pollUntil(t, ctrlTimeout, "the pods of the deleted TApp are gone", func() error {
		pods, err := instancePods(ctx, ns, "data")
		if err != nil || len(pods) == 0 {
			return err
		}
		return fmt.Errorf("pods left:\n%s", describePods(pods))
	})
	for id, pvc := range claims(t, 0, 1, 2, 3, 4) {
		if pvc.UID != kept[id].UID || len(pvc.OwnerReferences) != 0 {
			t.Errorf("claim %s after deleting the TApp: uid %s (was %s), owners %v", pvc.Name, pvc.UID, kept[id].UID, pvc.OwnerReferences)
		}
	}
}

// recordCreations starts watching the pods and claims of ns; it stops with the test.
func recordCreations(t *testing.T, ns string) *creationRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	podList, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pods, err := kubeClient.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: podList.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	claimList, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	claims, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: claimList.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &creationRecorder{created: map[string]uint64{}, done: make(chan struct{})}
	events := make(chan string, 1000)
	forward := func(prefix string, w watch.Interface) {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			if obj, ok := ev.Object.(metav1.Object); ok {
				select {
				case events <- prefix + obj.GetName() + " " + obj.GetResourceVersion():
				case <-ctx.Done():
					return
				}
			}
		}
	}
	go forward("pod/", pods)
	go forward("pvc/", claims)
	go func() {
		defer close(r.done)
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-events:
				name, rv, _ := strings.Cut(e, " ")
				n, err := strconv.ParseUint(rv, 10, 64)
				if err != nil {
					continue
				}
				r.mu.Lock()
				if _, ok := r.created[name]; !ok {
					r.created[name] = n
				}
				r.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		pods.Stop()
		claims.Stop()
		cancel()
		<-r.done
	})
	return r
}

// requireBefore fails unless first was created before second. Both live in kube-apiserver's one etcd, whose
// revisions (the resourceVersions of the ADDED events) order them.
func (r *creationRecorder) requireBefore(t *testing.T, first, second string) {
	t.Helper()
	var a, b uint64
	pollUntil(t, 10*time.Second, "the creations of "+first+" and "+second+" are seen", func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		var okA, okB bool
		a, okA = r.created[first]
		b, okB = r.created[second]
		if !okA || !okB {
			return fmt.Errorf("seen: %v", r.created)
		}
		return nil
	})
	if a >= b {
		t.Errorf("%s was created at resourceVersion %d, after %s at %d", first, a, second, b)
	}
}
