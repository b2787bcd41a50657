//go:build e2e

package e2e

// End-to-end test of spec.volumeClaimUpdateStrategy on the local cluster's storage (pkg/localcluster
// storage.go: the default class "standard" allows volume expansion, "standard-fixed" does not): existing
// claims follow a storage increase without a pod restart, within the update budget; a class without
// expansion is reported, nothing deleted; a new claim template reaches every instance; a storage class
// change is refused with its field.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// claimsTApp is a TApp of replicas nginx instances mounting claim template data of size in class (the
// default class when empty), whose claims follow their template on the rolling update (maxUnavailable 1).
func claimsTApp(name string, replicas int, class, size string) string {
	m := nginxTApp(name, replicas, "nginx:1.7.9", "1")
	m = strings.Replace(m, "        image: nginx:1.7.9\n", `        image: nginx:1.7.9
        volumeMounts:
        - name: data
          mountPath: /data
`, 1)
	m += "  volumeClaimUpdateStrategy:\n    type: OnPodRollingUpdate\n"
	m += "  volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n      accessModes: [ReadWriteOnce]\n"
	m += "      resources:\n        requests:\n          storage: " + size + "\n"
	if class != "" {
		m += "      storageClassName: " + class + "\n"
	}
	return m
}

// podIdentity is what must not change when claims are expanded online: the pod's UID and restart count.
type podIdentity struct {
	uid      types.UID
	restarts int32
}

func podIdentities(t *testing.T, ns, name string) map[int]podIdentity {
	t.Helper()
	pods, err := instancePods(testContext(t, 30*time.Second), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]podIdentity{}
	for id, pod := range pods {
		var restarts int32
		for _, s := range pod.Status.ContainerStatuses {
			restarts += s.RestartCount
		}
		out[id] = podIdentity{pod.UID, restarts}
	}
	return out
}

// instanceClaims returns the claims of template of TApp name's instances 0..replicas-1, by id (missing ones
// absent).
func instanceClaims(ctx context.Context, ns, name, template string, replicas int) (map[int]*corev1.PersistentVolumeClaim, error) {
	out := map[int]*corev1.PersistentVolumeClaim{}
	for id := 0; id < replicas; id++ {
		c, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, fmt.Sprintf("%s-%s-%d", template, name, id), metav1.GetOptions{})
		if err != nil {
			continue
		}
		out[id] = c
	}
	return out, nil
}

// describeClaims is one line per claim: name, phase, request, capacity, resize status and conditions.
func describeClaims(claims map[int]*corev1.PersistentVolumeClaim) string {
	var b strings.Builder
	for _, id := range sortedIDs(claims) {
		c := claims[id]
		request, capacity := c.Spec.Resources.Requests[corev1.ResourceStorage], c.Status.Capacity[corev1.ResourceStorage]
		var conds []string
		for _, cond := range c.Status.Conditions {
			conds = append(conds, string(cond.Type))
		}
		fmt.Fprintf(&b, "  %s %s request=%s capacity=%s resize=%s conditions=%v\n", c.Name, c.Status.Phase, request.String(), capacity.String(),
			c.Status.AllocatedResourceStatuses[corev1.ResourceStorage], conds)
	}
	return b.String()
}

// resizing reports whether a claim's expansion is under way: its request is above its capacity.
func resizing(c *corev1.PersistentVolumeClaim) bool {
	request, capacity := c.Spec.Resources.Requests[corev1.ResourceStorage], c.Status.Capacity[corev1.ResourceStorage]
	return request.Cmp(capacity) > 0
}

// resizeMonitor counts, from a watch of the namespace's claims (whose events come in resourceVersion order),
// the most claims whose names start with prefix that were resizing at once.
type resizeMonitor struct {
	mu       sync.Mutex
	resizing map[string]bool
	most     int
	stop     context.CancelFunc
	done     chan struct{}
}

func monitorResizes(t *testing.T, ns, prefix string) *resizeMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	m := &resizeMonitor{resizing: map[string]bool{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			c, ok := ev.Object.(*corev1.PersistentVolumeClaim)
			if !ok || !strings.HasPrefix(c.Name, prefix) {
				continue
			}
			m.mu.Lock()
			m.resizing[c.Name] = ev.Type != watch.Deleted && resizing(c)
			n := 0
			for _, r := range m.resizing {
				if r {
					n++
				}
			}
			m.most = max(m.most, n)
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() { m.result() })
	return m
}

// result stops the monitor and returns the most claims resizing at once.
func (m *resizeMonitor) result() int {
	m.stop()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.most
}

// waitClaimsAt waits until the claims of template of every instance are bound with capacity size.
func waitClaimsAt(t *testing.T, ns, name, template string, replicas int, size string) {
	t.Helper()
	want := resource.MustParse(size)
	ctx := testContext(t, 2*time.Minute)
	pollUntil(t, 90*time.Second, fmt.Sprintf("the %s claims of %s/%s at %s", template, ns, name, size), func() error {
		claims, err := instanceClaims(ctx, ns, name, template, replicas)
		if err != nil {
			return err
		}
		if len(claims) != replicas {
			return fmt.Errorf("%d claims, want %d:\n%s", len(claims), replicas, describeClaims(claims))
		}
		for _, c := range claims {
			capacity := c.Status.Capacity[corev1.ResourceStorage]
			if c.Status.Phase != corev1.ClaimBound || capacity.Cmp(want) != 0 || resizing(c) {
				return fmt.Errorf("not all at %s:\n%s", size, describeClaims(claims))
			}
		}
		return nil
	})
}

// claimsPlugin runs `kubectl tapp args...` with the plugin in a directory of this test's own (ownKubectlTApp:
// the shared one goes when TestKubectlTAppPlugin ends, which may come first) and fails the test on an error.
func claimsPlugin(t *testing.T, args ...string) string {
	t.Helper()
	out, err := ownKubectlTApp(t, args...)
	if err != nil {
		t.Fatalf("kubectl tapp %v: %v\n%s", args, err, out)
	}
	return out
}

// claimStatus returns status.volumeClaims[template] as "compatible/ready", or "" when absent.
func claimStatus(tapp *tkestackv1.TApp, template string) string {
	for _, s := range tapp.Status.VolumeClaims {
		if s.VolumeClaimName == template {
			return fmt.Sprintf("%d/%d", s.CompatibleReplicas, s.CompatibleReadyReplicas)
		}
	}
	return ""
}

// TestTAppVolumeClaimUpdates: 2Gi→4Gi on a TApp of 3 with claims: every claim reports 4Gi, at most one
// resizing at a time (maxUnavailable 1), the pods' UIDs and restart counts unchanged, status.volumeClaims
// and VolumeClaimsUpdated say so and kubectl tapp instances shows the sizes; the same on the class without
// expansion: an ExpansionNotAllowed Event and condition, nothing deleted; a new claim template reaches every
// instance; a storage class change is refused (422 naming the field).
func TestTAppVolumeClaimUpdates(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-claims")
	mustKubectlIn(t, claimsTApp("vol", 3, "", "2Gi"), "apply", "-n", ns, "-f", "-")
	mustKubectlIn(t, claimsTApp("fixed", 2, localcluster.StorageClassFixed, "1Gi"), "apply", "-n", ns, "-f", "-")
	waitPodsRun(t, ns, "vol", images(3, "nginx:1.7.9"))
	waitPodsRun(t, ns, "fixed", images(2, "nginx:1.7.9"))
	waitClaimsAt(t, ns, "vol", "data", 3, "2Gi")
	waitClaimsAt(t, ns, "fixed", "data", 2, "1Gi")
	mustKubectl(t, "wait", "tapp/vol", "tapp/fixed", "-n", ns, "--for=condition=VolumeClaimsUpdated", "--timeout=60s")

	t.Run("a storage increase expands every claim online within the budget", func(t *testing.T) {
		before := podIdentities(t, ns, "vol")
		monitor := monitorResizes(t, ns, "data-vol-")
		mustKubectl(t, "patch", "tapp", "vol", "-n", ns, "--type=json",
			"-p", `[{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/storage","value":"4Gi"}]`)
		waitClaimsAt(t, ns, "vol", "data", 3, "4Gi")
		if most := monitor.result(); most != 1 {
			t.Errorf("%d claims resizing at once, want 1 (maxUnavailable 1)", most)
		}
		mustKubectl(t, "wait", "tapp/vol", "-n", ns, "--for=condition=VolumeClaimsUpdated", "--timeout=60s")
		after := podIdentities(t, ns, "vol")
		for id, b := range before {
			if after[id] != b {
				t.Errorf("instance %d: pod %+v, was %+v: want the same pod, not restarted", id, after[id], b)
			}
		}
		if got := claimStatus(getTApp(t, ns, "vol"), "data"); got != "3/3" {
			t.Errorf("status.volumeClaims data = %q, want 3/3", got)
		}
		tb := parseTable(t, claimsPlugin(t, "instances", "vol", "-n", ns))
		for _, id := range []string{"0", "1", "2"} {
			if got := tb.cell(t, id, "CLAIMS"); got != "data=4Gi" {
				t.Errorf("kubectl tapp instances: instance %s CLAIMS %q, want data=4Gi", id, got)
			}
		}
	})

	t.Run("a class without expansion: an Event and a condition, nothing deleted", func(t *testing.T) {
		before := podIdentities(t, ns, "fixed")
		mustKubectl(t, "patch", "tapp", "fixed", "-n", ns, "--type=json",
			"-p", `[{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/storage","value":"2Gi"}]`)
		mustKubectl(t, "wait", "tapp/fixed", "-n", ns, "--for=condition=VolumeClaimsUpdated=False", "--timeout=60s")
		tapp := getTApp(t, ns, "fixed")
		c := meta.FindStatusCondition(tapp.Status.Conditions, tkestackv1.TAppVolumeClaimsUpdated)
		if c == nil || c.Reason != "ExpansionNotAllowed" || !strings.Contains(c.Message, localcluster.StorageClassFixed) {
			t.Fatalf("VolumeClaimsUpdated %+v, want ExpansionNotAllowed naming %s", c, localcluster.StorageClassFixed)
		}
		eventually(t, 30*time.Second, "an ExpansionNotAllowed event", func() error {
			out := mustKubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=fixed,reason=ExpansionNotAllowed", "-o", "name")
			if strings.TrimSpace(out) == "" {
				return fmt.Errorf("none yet")
			}
			return nil
		})
		claims, _ := instanceClaims(testContext(t, 30*time.Second), ns, "fixed", "data", 2)
		for id := 0; id < 2; id++ {
			c := claims[id]
			if c == nil || c.DeletionTimestamp != nil || c.Spec.Resources.Requests.Storage().String() != "1Gi" {
				t.Errorf("instance %d claim %+v, want it kept at 1Gi:\n%s", id, c, describeClaims(claims))
			}
		}
		if after := podIdentities(t, ns, "fixed"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("pods %v, were %v: want them untouched", after, before)
		}
	})

	t.Run("a new claim template reaches every instance", func(t *testing.T) {
		mustKubectl(t, "patch", "tapp", "vol", "-n", ns, "--type=json", "-p",
			`[{"op":"add","path":"/spec/volumeClaimTemplates/-","value":{"metadata":{"name":"logs"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}]`)
		waitClaimsAt(t, ns, "vol", "logs", 3, "1Gi")
		ctx := testContext(t, 2*time.Minute)
		pollUntil(t, 90*time.Second, "every pod of vol mounts its logs claim", func() error {
			pods, err := instancePods(ctx, ns, "vol")
			if err != nil {
				return err
			}
			for id := 0; id < 3; id++ {
				pod := pods[id]
				if pod == nil || !podReady(pod) || pod.DeletionTimestamp != nil {
					return fmt.Errorf("pod %d not ready:\n%s", id, describePods(pods))
				}
				mounted := false
				for _, v := range pod.Spec.Volumes {
					mounted = mounted || (v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == fmt.Sprintf("logs-vol-%d", id))
				}
				if !mounted {
					return fmt.Errorf("pod %d does not mount logs-vol-%d yet", id, id)
				}
			}
			return nil
		})
		mustKubectl(t, "wait", "tapp/vol", "-n", ns, "--for=condition=VolumeClaimsUpdated", "--timeout=60s")
		if got := claimStatus(getTApp(t, ns, "vol"), "logs"); got != "3/3" {
			t.Errorf("status.volumeClaims logs = %q, want 3/3", got)
		}
		tb := parseTable(t, claimsPlugin(t, "instances", "vol", "-n", ns))
		if got := tb.cell(t, "2", "CLAIMS"); got != "data=4Gi,logs=1Gi" {
			t.Errorf("kubectl tapp instances: instance 2 CLAIMS %q, want data=4Gi,logs=1Gi", got)
		}
	})

	t.Run("a failed resize is reported, nothing deleted, and recovers", func(t *testing.T) {
		before := podIdentities(t, ns, "vol")
		mustKubectl(t, "annotate", "pvc", "data-vol-2", "-n", ns, localcluster.ResizeFailureAnnotation+"="+localcluster.ResizeFailureController)
		mustKubectl(t, "patch", "tapp", "vol", "-n", ns, "--type=json",
			"-p", `[{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/storage","value":"5Gi"}]`)
		pollUntil(t, 90*time.Second, "VolumeClaimsUpdated ResizeFailed naming data-vol-2", func() error {
			c := meta.FindStatusCondition(getTApp(t, ns, "vol").Status.Conditions, tkestackv1.TAppVolumeClaimsUpdated)
			if c == nil || c.Reason != "ResizeFailed" || !strings.Contains(c.Message, "data-vol-2") {
				return fmt.Errorf("condition %+v", c)
			}
			return nil
		})
		eventually(t, 30*time.Second, "a ClaimResizeFailed event", func() error {
			out := mustKubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=vol,reason=ClaimResizeFailed", "-o", "name")
			if strings.TrimSpace(out) == "" {
				return fmt.Errorf("none yet")
			}
			return nil
		})
		claims, _ := instanceClaims(testContext(t, 30*time.Second), ns, "vol", "data", 3)
		if len(claims) != 3 {
			t.Errorf("claims %s, want all 3 kept", describeClaims(claims))
		}
		if after := podIdentities(t, ns, "vol"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("pods %v, were %v: want them untouched", after, before)
		}
		mustKubectl(t, "annotate", "pvc", "data-vol-2", "-n", ns, localcluster.ResizeFailureAnnotation+"-")
		waitClaimsAt(t, ns, "vol", "data", 3, "5Gi")
		mustKubectl(t, "wait", "tapp/vol", "-n", ns, "--for=condition=VolumeClaimsUpdated", "--timeout=60s")
	})

	t.Run("a storage class change is refused with its field", func(t *testing.T) {
		out, err := kubectl(t, "patch", "tapp", "vol", "-n", ns, "--type=json",
			"-p", `[{"op":"add","path":"/spec/volumeClaimTemplates/0/spec/storageClassName","value":"`+localcluster.StorageClassFixed+`"}]`)
		if err == nil || !strings.Contains(out+err.Error(), "spec.volumeClaimTemplates[0].spec.storageClassName") || !strings.Contains(out+err.Error(), "is invalid") {
			t.Fatalf("kubectl patch = %q, %v; want a 422 naming spec.volumeClaimTemplates[0].spec.storageClassName", out, err)
		}
	})
}
