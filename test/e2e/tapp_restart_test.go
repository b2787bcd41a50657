//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// TestTAppRestartDuringRollingUpdate: restarting tapp-apiserver in the middle of a rolling update finishes
// the roll with no duplicate or missing pod. Its embedded etcd keeps the TApp, and the controller of the new
// process picks the roll up from the pods as they are (some updated, some held by the in-place readiness
// gate, some not yet touched): every pod ends up updated in place, none is recreated, deleted or added, and
// the status counts all of them.
//
// It does not call t.Parallel: the restart takes the TApp API and the controllers away from every test. go
// test runs the top-level tests that do not call t.Parallel one after another and resumes the parallel ones
// (every other test of the package, each of which calls t.Parallel first thing) only once all of those have
// returned, so no other test is under way while tapp-apiserver restarts.
func TestTAppRestartDuringRollingUpdate(t *testing.T) {
	const (
		name     = "restart"
		replicas = 8
		oldImage = "nginx:1.7.9"
		newImage = "nginx:1.8.1"
	)
	ns := controllerNamespace(t, "tapp-restart")
	mustKubectlIn(t, nginxTApp(name, replicas, oldImage, "2"), "apply", "-n", ns, "-f", "-")
	before, _ := waitInstances(t, ns, name, images(replicas, oldImage))

	var names []string
	for _, id := range sortedIDs(before) {
		names = append(names, before[id].Name)
	}
	availability := monitorAvailability(t, ns, names...)
	pods := watchRollPods(t, ns, before, newImage)

	oldPID := cluster.PID("tapp-apiserver")
	if oldPID == 0 {
		t.Fatal("tapp-apiserver is not running")
	}
	mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type=merge", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"`+newImage+`"}]}}}}`)
	select {
	case <-pods.firstUpdated:
	case <-time.After(ctrlTimeout):
		t.Fatalf("no pod was updated to %s within %s:\n%s", newImage, ctrlTimeout, describePods(podsByID(t, ns, name)))
	}

	// Restart as soon as the first pod runs the new image, and note how far the roll had got once the old
	// process was gone: the test only means something if the new process had to finish it.
	atTrigger := pods.updated()
	var restartErr error
	restarted := make(chan struct{})
	restartStart := time.Now()
	eventsBefore := pods.eventCount()
	go func() {
		defer close(restarted)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		restartErr = cluster.RestartTAppAPIServer(ctx)
	}()
	// Even if the test fails on the way, the restart is over before the next test (or Stop) uses the cluster.
	t.Cleanup(func() { <-restarted })
	// The restart kills the old process if it has not exited a few seconds after SIGTERM.
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(oldPID, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tapp-apiserver (pid %d) is still running %s after the restart began", oldPID, time.Since(restartStart))
		}
	}
	atExit, heldAtExit := pods.updated(), pods.held()
	t.Logf("restarting tapp-apiserver (pid %d) with %d of %d pods on %s; %d when it had exited (after %s), %d pods held by the in-place readiness gate",
		oldPID, atTrigger, replicas, newImage, atExit, time.Since(restartStart).Round(time.Millisecond), heldAtExit)
	<-restarted
	if restartErr != nil {
		t.Fatalf("restarting tapp-apiserver: %v", restartErr)
	}
	newPID := cluster.PID("tapp-apiserver")
	t.Logf("tapp-apiserver restarted as pid %d in %s, %d of %d pods on %s by then",
		newPID, time.Since(restartStart).Round(time.Millisecond), pods.updated(), replicas, newImage)
	if newPID == 0 || newPID == oldPID {
		t.Errorf("Cluster.PID(tapp-apiserver) = %d after the restart, want a new process (was %d)", newPID, oldPID)
	}
	if atExit < 1 || atExit >= replicas {
		t.Fatalf("%d of %d pods ran %s when the old tapp-apiserver exited; the restart did not interrupt the roll", atExit, replicas, newImage)
	}
	// Later tests apply the tutorial's manifests, which kubectl validates on the server only while the
	// aggregated OpenAPI v3 document lists the groups again.
	waitOpenAPIGroups(t, "apis/apps.tkestack.io/v1", "apis/apps.openyurt.io/v1alpha1")

	after, tapp := waitInstances(t, ns, name, images(replicas, newImage))
	// The finished roll stays as it is: the new controller does not go on to recreate anything.
	ctx := testContext(t, ctrlTimeout)
	holdsFor(t, ctrlHold, "the finished roll", func() error {
		_, _, err := checkInstances(ctx, ns, name, images(replicas, newImage))
		return err
	})

	for _, id := range sortedIDs(before) {
		checkInPlace(t, before[id], after[id], newImage)
		checkIdentity(t, tapp, id, after[id])
	}
	if s := tapp.Status; s.Replicas != replicas || s.ReadyReplicas != replicas || s.UpdatedReplicas != replicas || s.UpdatedReadyReplicas != replicas {
		t.Errorf("status: %s; want replicas, readyReplicas, updatedReplicas and updatedReadyReplicas %d", describeStatus(tapp), replicas)
	}
	seen := pods.result(t)
	if seen.events == eventsBefore {
		t.Errorf("the pod watch saw no event after the restart began; it did not span the restart")
	}
	if len(seen.problems) > 0 {
		t.Errorf("the pod watch saw the TApp's pods other than exactly %s-0..%d with their original UIDs:\n%s",
			name, replicas-1, strings.Join(seen.problems, "\n"))
	}
	r := availability.result(t)
	if len(r.Deleted) != 0 {
		t.Errorf("pods were deleted during the roll: %v", r.Deleted)
	}
	if r.Max > 2 {
		t.Errorf("%d pods were unavailable at once across the restart, maxUnavailable is 2; %s", r.Max, r.MaxAt)
	}
	t.Logf("roll across the restart: %d pod events, at most %d of %d pods unavailable at once, order %v", seen.events, r.Max, replicas, r.Order)
}

// podsByID lists the TApp's pods for a failure message.
func podsByID(t testing.TB, ns, name string) map[int]*corev1.Pod {
	t.Helper()
	pods, err := instancePods(testContext(t, 30*time.Second), ns, name)
	if err != nil {
		t.Logf("listing the pods of %s: %v", name, err)
	}
	return pods
}

// waitOpenAPIGroups waits until kube-apiserver's aggregated /openapi/v3 lists every one of paths.
func waitOpenAPIGroups(t testing.TB, paths ...string) {
	t.Helper()
	pollUntil(t, ctrlTimeout, "/openapi/v3 lists "+strings.Join(paths, ", "), func() error {
		got, err := kubeClient.Discovery().OpenAPIV3().Paths()
		if err != nil {
			return err
		}
		for _, p := range paths {
			if _, ok := got[p]; !ok {
				return fmt.Errorf("/openapi/v3 does not list %s yet", p)
			}
		}
		return nil
	})
}

// rollPodWatch keeps one watch of a namespace's pods (through kube-apiserver, so it is not interrupted by
// a restart of tapp-apiserver) and checks at every event that the namespace holds exactly the pods it
// started with, under the same names and UIDs: a pod deleted, being deleted, recreated under its name or
// added (a duplicate instance or a stray pod) is recorded as a problem. It also counts the pods whose spec
// runs image.
type rollPodWatch struct {
	*podWatch
	want         map[string]types.UID
	image        string
	firstUpdated chan struct{}
	problems     []string
}

// watchRollPods starts a rollPodWatch of ns expecting exactly the pods of want; it stops with the test.
func watchRollPods(t testing.TB, ns string, want map[int]*corev1.Pod, image string) *rollPodWatch {
	t.Helper()
	w := &rollPodWatch{podWatch: newPodWatch(), want: map[string]types.UID{}, image: image, firstUpdated: make(chan struct{})}
	for _, pod := range want {
		w.want[pod.Name] = pod.UID
	}
	w.start(t, ns, w.check)
	return w
}

// check records what is wrong with the pods after an event, and signals firstUpdated. It runs with the
// pods' lock held.
func (w *rollPodWatch) check(event string) {
	var wrong []string
	for name, pod := range w.pods {
		uid, ok := w.want[name]
		switch {
		case !ok:
			wrong = append(wrong, fmt.Sprintf("extra pod %s (uid %s)", name, pod.UID))
		case pod.UID != uid:
			wrong = append(wrong, fmt.Sprintf("pod %s recreated (uid %s, was %s)", name, pod.UID, uid))
		case pod.DeletionTimestamp != nil:
			wrong = append(wrong, fmt.Sprintf("pod %s is being deleted", name))
		}
	}
	for name := range w.want {
		if w.pods[name] == nil {
			wrong = append(wrong, fmt.Sprintf("pod %s is missing", name))
		}
	}
	if len(wrong) > 0 && len(w.problems) < 20 {
		w.problems = append(w.problems, fmt.Sprintf("  after event %d (%s): %s", w.events, event, strings.Join(wrong, "; ")))
	}
	if w.updatedLocked() > 0 {
		select {
		case <-w.firstUpdated:
		default:
			close(w.firstUpdated)
		}
	}
}

func (w *rollPodWatch) updatedLocked() int {
	n := 0
	for name := range w.want {
		if pod := w.pods[name]; pod != nil && len(pod.Spec.Containers) > 0 && pod.Spec.Containers[0].Image == w.image {
			n++
		}
	}
	return n
}

// updated returns how many of the pods run the image in their spec right now.
func (w *rollPodWatch) updated() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.updatedLocked()
}

// held returns how many of the pods have the in-place update readiness gate's condition False right now.
func (w *rollPodWatch) held() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for name := range w.want {
		if pod := w.pods[name]; pod != nil {
			if c := podCondition(pod, policy.InPlaceUpdateGate); c != nil && c.Status == corev1.ConditionFalse {
				n++
			}
		}
	}
	return n
}

// eventCount returns the number of events seen so far.
func (w *rollPodWatch) eventCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.events
}

type rollPodWatchResult struct {
	events   int
	problems []string
}

// result stops the watch and returns what it saw; it fails the test if the watch broke.
func (w *rollPodWatch) result(t testing.TB) rollPodWatchResult {
	t.Helper()
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Fatalf("watching pods: %v", w.err)
	}
	return rollPodWatchResult{events: w.events, problems: append([]string(nil), w.problems...)}
}
