//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// Helpers of the TApp controller's end-to-end tests (tapp_controller_test.go).

const (
	// ctrlTimeout bounds one wait for the controller (and the cluster around it) to converge.
	ctrlTimeout = 90 * time.Second
	// ctrlPoll is the polling interval of those waits.
	ctrlPoll = 250 * time.Millisecond
	// ctrlHold is how long a state that must not change (a killed pod staying away) is watched.
	ctrlHold = 3 * time.Second
)

// pollUntil calls f every ctrlPoll until it returns nil, and fails the test with f's last error after timeout.
func pollUntil(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done within %s: %v", what, timeout, err)
		}
		time.Sleep(ctrlPoll)
	}
}

// holdsFor calls f every ctrlPoll for d and fails the test as soon as it returns an error.
func holdsFor(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(ctrlPoll)
	}
}

// tutorialTApp returns a tutorial manifest of artifacts/examples/tutorial (the TApp tutorial's
// examples, unchanged) without its metadata.namespace, to be applied with -n.
func tutorialTApp(t testing.TB, file string) string {
	t.Helper()
	raw, err := os.ReadFile(repoPath("artifacts", "examples", "tutorial", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(namespaceLineRE.ReplaceAll(raw, nil))
}

// nginxTApp is a TApp of replicas pods with one container "nginx" running image, labelled app=<name>;
// maxUnavailable, when not empty, is the YAML value of spec.updateStrategy.maxUnavailable.
func nginxTApp(name string, replicas int, image, maxUnavailable string) string {
	m := fmt.Sprintf(`apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: %[1]s
spec:
  replicas: %[2]d
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: nginx
        image: %[3]s
`, name, replicas, image)
	if maxUnavailable != "" {
		m += "  updateStrategy:\n    maxUnavailable: " + maxUnavailable + "\n"
	}
	return m
}

// podName is the name of the pod of instance id.
func podName(tapp string, id int) string { return tapp + "-" + strconv.Itoa(id) }

// getTApp reads a TApp with client-go.
func getTApp(t testing.TB, ns, name string) *tkestackv1.TApp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tapp, err := tappClient.TKEStackAppsV1().TApps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tapp
}

// getPod reads a pod; nil if it does not exist.
func getPod(t testing.TB, ns, name string) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod, err := kubeClient.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// instancePods returns the pods of the namespace that belong to the TApp called tapp by name (<tapp>-<id>)
// or by controller reference, keyed by instance id; pods named like an instance with a non-numeric id
// are an error.
func instancePods(ctx context.Context, ns, tapp string) (map[int]*corev1.Pod, error) {
	list, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods := map[int]*corev1.Pod{}
	for i := range list.Items {
		pod := &list.Items[i]
		ref := metav1.GetControllerOf(pod)
		controlled := ref != nil && ref.Kind == "TApp" && ref.Name == tapp
		suffix, named := strings.CutPrefix(pod.Name, tapp+"-")
		if !controlled && !named {
			continue
		}
		id, err := strconv.Atoi(suffix)
		if !named || err != nil || strconv.Itoa(id) != suffix {
			if controlled {
				return nil, fmt.Errorf("pod %s is controlled by TApp %s but is not named %s-<id>", pod.Name, tapp, tapp)
			}
			continue // another TApp's pod whose name starts like ours
		}
		pods[id] = pod
	}
	return pods, nil
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// podReady reports whether a pod is Running, Ready and not being deleted.
func podReady(pod *corev1.Pod) bool {
	if pod == nil || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	c := podCondition(pod, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// containerStatus returns the status of the container called name.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// describePod is a one-line summary of a pod for failure messages.
func describePod(pod *corev1.Pod) string {
	if pod == nil {
		return "<none>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s uid=%s phase=%s ready=%v", pod.Name, pod.UID, pod.Status.Phase, podReady(pod))
	if pod.DeletionTimestamp != nil {
		b.WriteString(" deleting")
	}
	if pod.Spec.NodeName == "" {
		b.WriteString(" unscheduled")
		if c := podCondition(pod, corev1.PodScheduled); c != nil {
			fmt.Fprintf(&b, "(%s: %s)", c.Reason, c.Message)
		}
	}
	if c := podCondition(pod, policy.InPlaceUpdateGate); c != nil {
		fmt.Fprintf(&b, " gate=%s", c.Status)
	} else {
		b.WriteString(" gate=<unset>")
	}
	for _, c := range pod.Spec.Containers {
		fmt.Fprintf(&b, " %s=%s", c.Name, c.Image)
		if s := containerStatus(pod, c.Name); s != nil {
			fmt.Fprintf(&b, "(status %s restarts=%d)", s.Image, s.RestartCount)
		}
	}
	fmt.Fprintf(&b, " hash=%s/%s", pod.Labels[tkestack.TemplateHashLabel], pod.Labels[tkestack.UniqHashLabel])
	return b.String()
}

func describePods(pods map[int]*corev1.Pod) string {
	ids := make([]int, 0, len(pods))
	for id := range pods {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var lines []string
	for _, id := range ids {
		lines = append(lines, "  "+describePod(pods[id]))
	}
	if len(lines) == 0 {
		return "  (no pods)"
	}
	return strings.Join(lines, "\n")
}

// describeStatus is a one-line summary of a TApp's status for failure messages.
func describeStatus(tapp *tkestackv1.TApp) string {
	s := tapp.Status
	var conditions []string
	for _, c := range s.Conditions {
		conditions = append(conditions, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return fmt.Sprintf("generation=%d observedGeneration=%d replicas=%d ready=%d updated=%d updatedReady=%d appStatus=%s statuses=%v conditions=%v",
		tapp.Generation, s.ObservedGeneration, s.Replicas, s.ReadyReplicas, s.UpdatedReplicas, s.UpdatedReadyReplicas,
		s.AppStatus, s.Statuses, conditions)
}

// checkInstances compares the TApp's pods and status with want (instance id → image of the first
// container): exactly the pods of want exist, each Running and Ready with that image in its spec and in
// its container status, and the status has caught up with the spec (observedGeneration, readyReplicas,
// updatedReplicas, statuses[id]=Running, appStatus Running).
func checkInstances(ctx context.Context, ns, name string, want map[int]string) (map[int]*corev1.Pod, *tkestackv1.TApp, error) {
	tapp, err := tappClient.TKEStackAppsV1().TApps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	pods, err := instancePods(ctx, ns, name)
	if err != nil {
		return nil, nil, err
	}
	problem := func(format string, args ...interface{}) (map[int]*corev1.Pod, *tkestackv1.TApp, error) {
		return pods, tapp, fmt.Errorf("%s\npods:\n%s\nstatus: %s", fmt.Sprintf(format, args...), describePods(pods), describeStatus(tapp))
	}
	for id := range pods {
		if _, ok := want[id]; !ok {
			return problem("pod %s exists, want only the instances %v", podName(name, id), sortedIDs(want))
		}
	}
	for _, id := range sortedIDs(want) {
		pod, image := pods[id], want[id]
		if pod == nil {
			return problem("no pod %s", podName(name, id))
		}
		if !podReady(pod) {
			return problem("pod %s is not Running and Ready", pod.Name)
		}
		c := pod.Spec.Containers[0]
		if c.Image != image {
			return problem("pod %s: container %s has image %s, want %s", pod.Name, c.Name, c.Image, image)
		}
		s := containerStatus(pod, c.Name)
		if s == nil || s.Image != image || !s.Ready {
			return problem("pod %s: container status of %s does not report %s ready yet", pod.Name, c.Name, image)
		}
	}
	s := tapp.Status
	n := int32(len(want))
	switch {
	case s.ObservedGeneration != tapp.Generation:
		return problem("status.observedGeneration %d != generation %d", s.ObservedGeneration, tapp.Generation)
	case s.ReadyReplicas != n:
		return problem("status.readyReplicas %d, want %d", s.ReadyReplicas, n)
	case s.UpdatedReplicas != n:
		return problem("status.updatedReplicas %d, want %d", s.UpdatedReplicas, n)
	case s.UpdatedReadyReplicas != n:
		return problem("status.updatedReadyReplicas %d, want %d", s.UpdatedReadyReplicas, n)
	case n > 0 && s.AppStatus != policy.AppRunning:
		return problem("status.appStatus %q, want Running", s.AppStatus)
	}
	for id := range want {
		if got := s.Statuses[strconv.Itoa(id)]; got != policy.StatusRunning {
			return problem("status.statuses[%d] = %q, want Running", id, got)
		}
	}
	return pods, tapp, nil
}

// waitInstances waits until checkInstances is satisfied and returns the pods and the TApp.
func waitInstances(t testing.TB, ns, name string, want map[int]string) (map[int]*corev1.Pod, *tkestackv1.TApp) {
	t.Helper()
	ctx := testContext(t, ctrlTimeout+30*time.Second)
	var pods map[int]*corev1.Pod
	var tapp *tkestackv1.TApp
	pollUntil(t, ctrlTimeout, fmt.Sprintf("TApp %s/%s runs %v", ns, name, want), func() error {
		var err error
		pods, tapp, err = checkInstances(ctx, ns, name, want)
		return err
	})
	return pods, tapp
}

// images returns want for ids 0..n-1 all running image.
func images(n int, image string) map[int]string {
	m := map[int]string{}
	for id := 0; id < n; id++ {
		m[id] = image
	}
	return m
}

func sortedIDs[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// checkIdentity checks what the controller writes on the pod of instance id: its labels (template labels,
// instance id, the hashes of the instance's template), the controller reference to the TApp, and the
// in-place readiness gate with its condition True.
func checkIdentity(t testing.TB, tapp *tkestackv1.TApp, id int, pod *corev1.Pod) {
	t.Helper()
	sid := strconv.Itoa(id)
	if pod.Name != podName(tapp.Name, id) {
		t.Errorf("pod of instance %d is called %s, want %s", id, pod.Name, podName(tapp.Name, id))
	}
	templateName := policy.TemplateNameFor(tapp, sid)
	tmpl, err := policy.TemplateFor(tapp, templateName)
	if err != nil {
		t.Fatalf("template of instance %d: %v", id, err)
	}
	for k, v := range tmpl.Labels {
		if pod.Labels[k] != v {
			t.Errorf("pod %s: label %s=%q, want %q (from template %s)", pod.Name, k, pod.Labels[k], v, templateName)
		}
	}
	wantLabels := map[string]string{
		tkestack.InstanceIDLabel:   sid,
		tkestack.TemplateHashLabel: tapppod.TemplateHash(tmpl),
		tkestack.UniqHashLabel:     tapppod.UniqHash(tmpl),
	}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("pod %s: label %s=%q, want %q (template %s)", pod.Name, k, pod.Labels[k], v, templateName)
		}
	}
	ref := metav1.GetControllerOf(pod)
	switch {
	case ref == nil:
		t.Errorf("pod %s has no controller reference: %v", pod.Name, pod.OwnerReferences)
	case ref.APIVersion != "apps.tkestack.io/v1" || ref.Kind != "TApp" || ref.Name != tapp.Name || ref.UID != tapp.UID:
		t.Errorf("pod %s: controller reference %s %s %s (uid %s), want apps.tkestack.io/v1 TApp %s (uid %s)",
			pod.Name, ref.APIVersion, ref.Kind, ref.Name, ref.UID, tapp.Name, tapp.UID)
	case ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion:
		t.Errorf("pod %s: controller reference without blockOwnerDeletion", pod.Name)
	}
	gate := false
	for _, g := range pod.Spec.ReadinessGates {
		gate = gate || g.ConditionType == policy.InPlaceUpdateGate
	}
	if !gate {
		t.Errorf("pod %s has no readiness gate %s: %v", pod.Name, policy.InPlaceUpdateGate, pod.Spec.ReadinessGates)
	}
	if c := podCondition(pod, policy.InPlaceUpdateGate); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("pod %s: condition %s = %v, want True", pod.Name, policy.InPlaceUpdateGate, c)
	}
}

// checkInPlace checks that after is before updated in place to image: same UID, the new image in the spec
// and the container status, a new imageID and one more restart of the container.
func checkInPlace(t testing.TB, before, after *corev1.Pod, image string) {
	t.Helper()
	if after.UID != before.UID {
		t.Errorf("pod %s was recreated (uid %s → %s), want an in-place update", before.Name, before.UID, after.UID)
		return
	}
	c := before.Spec.Containers[0].Name
	old, cur := containerStatus(before, c), containerStatus(after, c)
	if old == nil || cur == nil {
		t.Errorf("pod %s: no container status of %s before (%v) or after (%v)", before.Name, c, old, cur)
		return
	}
	if after.Spec.Containers[0].Image != image || cur.Image != image {
		t.Errorf("pod %s: image %s (status %s), want %s", after.Name, after.Spec.Containers[0].Image, cur.Image, image)
	}
	if cur.ImageID == old.ImageID {
		t.Errorf("pod %s: imageID unchanged (%s) after the in-place update", after.Name, cur.ImageID)
	}
	if cur.RestartCount != old.RestartCount+1 {
		t.Errorf("pod %s: restartCount %d → %d, want one restart", after.Name, old.RestartCount, cur.RestartCount)
	}
}

// checkUntouched checks that after is before with its container neither changed nor restarted.
func checkUntouched(t testing.TB, before, after *corev1.Pod) {
	t.Helper()
	if after.UID != before.UID {
		t.Errorf("pod %s was recreated (uid %s → %s), want it untouched", before.Name, before.UID, after.UID)
		return
	}
	c := before.Spec.Containers[0].Name
	old, cur := containerStatus(before, c), containerStatus(after, c)
	if old == nil || cur == nil {
		t.Errorf("pod %s: no container status of %s before (%v) or after (%v)", before.Name, c, old, cur)
		return
	}
	if after.Spec.Containers[0].Image != before.Spec.Containers[0].Image || cur.ContainerID != old.ContainerID || cur.RestartCount != old.RestartCount {
		t.Errorf("pod %s was touched: image %s → %s, container %s → %s, restarts %d → %d", after.Name,
			before.Spec.Containers[0].Image, after.Spec.Containers[0].Image, old.ContainerID, cur.ContainerID, old.RestartCount, cur.RestartCount)
	}
}

// finishPod reports the pod's containers as exited, the way a kubelet would (the local cluster's pod
// simulator never finishes pods and leaves finished ones alone): phase Succeeded (exit 0) or Failed (exit 1).
func finishPod(t testing.TB, ns, name string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	ctx := testContext(t, 30*time.Second)
	pods := kubeClient.CoreV1().Pods(ns)
	var finished *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		exit, reason := int32(0), "Completed"
		if phase == corev1.PodFailed {
			exit, reason = 1, "Error"
		}
		now := metav1.Now()
		pod.Status.Phase = phase
		for i := range pod.Status.ContainerStatuses {
			s := &pod.Status.ContainerStatuses[i]
			started := now
			if s.State.Running != nil {
				started = s.State.Running.StartedAt
			}
			s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exit, Reason: reason, StartedAt: started, FinishedAt: now, ContainerID: s.ContainerID,
			}}
			s.Ready, s.Started = false, ptr.To(false)
		}
		for i := range pod.Status.Conditions {
			c := &pod.Status.Conditions[i]
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "PodCompleted", now
			}
		}
		finished, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("reporting pod %s as %s: %v", name, phase, err)
	}
	return finished
}

// podWatch keeps the pods of a namespace, from one list and then one watch, and calls onChange after the list
// and after every event with the pods' lock held: a single watch delivers the changes in the order of the
// store, so what onChange sees are the states the namespace went through.
type podWatch struct {
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	mu      sync.Mutex
	pods    map[string]*corev1.Pod
	deleted map[string][]types.UID // UIDs of the pods deleted, by name
	events  int
	err     error
}

func newPodWatch() *podWatch {
	return &podWatch{done: make(chan struct{}), pods: map[string]*corev1.Pod{}, deleted: map[string][]types.UID{}}
}

// start lists and watches the pods of ns; the watch stops with the test.
func (pw *podWatch) start(t testing.TB, ns string, onChange func(event string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pw.cancel = cancel
	client := kubeClient.CoreV1().Pods(ns)
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pw.mu.Lock()
	for i := range list.Items {
		pw.pods[list.Items[i].Name] = &list.Items[i]
	}
	onChange("list")
	pw.mu.Unlock()
	go func() {
		defer close(pw.done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					pw.fail(fmt.Errorf("the pod watch ended early"))
					return
				}
				switch ev.Type {
				case watch.Added, watch.Modified, watch.Deleted:
					pod, ok := ev.Object.(*corev1.Pod)
					if !ok {
						pw.fail(fmt.Errorf("watch event %s carries %T", ev.Type, ev.Object))
						return
					}
					pw.mu.Lock()
					pw.events++
					if ev.Type == watch.Deleted {
						delete(pw.pods, pod.Name)
						pw.deleted[pod.Name] = append(pw.deleted[pod.Name], pod.UID)
					} else {
						pw.pods[pod.Name] = pod
					}
					onChange(fmt.Sprintf("%s %s", ev.Type, pod.Name))
					pw.mu.Unlock()
				case watch.Error:
					pw.fail(apierrors.FromObject(ev.Object))
					return
				}
			}
		}
	}()
	t.Cleanup(pw.stop)
}

func (pw *podWatch) fail(err error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.err == nil {
		pw.err = err
	}
}

func (pw *podWatch) stop() {
	pw.stopOnce.Do(func() {
		pw.cancel()
		<-pw.done
	})
}

// availabilityMonitor counts, at every change of a namespace's pods, how many of the given pod names are
// unavailable (missing, being deleted, or not Running and Ready).
type availabilityMonitor struct {
	*podWatch
	names []string
	max   int
	maxAt string
	order []string // names in the order they first became unavailable
	seen  map[string]bool
}

// monitorAvailability starts an availabilityMonitor for the pods called names in ns; it stops with the test.
func monitorAvailability(t testing.TB, ns string, names ...string) *availabilityMonitor {
	t.Helper()
	m := &availabilityMonitor{podWatch: newPodWatch(), names: names, seen: map[string]bool{}}
	m.start(t, ns, func(string) { m.observe() })
	return m
}

// observe runs with the pods' lock held.
func (m *availabilityMonitor) observe() {
	var unavailable []string
	for _, name := range m.names {
		if !podReady(m.pods[name]) {
			unavailable = append(unavailable, name)
			if !m.seen[name] {
				m.seen[name] = true
				m.order = append(m.order, name)
			}
		}
	}
	if len(unavailable) > m.max {
		m.max = len(unavailable)
		var states []string
		for _, name := range m.names {
			states = append(states, "  "+describePod(m.pods[name]))
		}
		m.maxAt = fmt.Sprintf("unavailable %v after %d events:\n%s", unavailable, m.events, strings.Join(states, "\n"))
	}
}

// result stops the monitor and returns what it saw.
func (m *availabilityMonitor) result(t testing.TB) availabilityResult {
	t.Helper()
	m.stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		t.Fatalf("watching pods: %v", m.err)
	}
	deleted := map[string][]types.UID{}
	for k, v := range m.deleted {
		deleted[k] = v
	}
	return availabilityResult{
		Max: m.max, MaxAt: m.maxAt, Order: append([]string(nil), m.order...), Deleted: deleted, Events: m.events,
	}
}

type availabilityResult struct {
	// Max is the largest number of watched pods unavailable at once; MaxAt describes that moment.
	Max   int
	MaxAt string
	// Order lists the watched pods in the order they first became unavailable.
	Order []string
	// Deleted holds the UIDs of the pods deleted while watching, by name.
	Deleted map[string][]types.UID
	Events  int
}

// statusRecorder watches a TApp and records every state its status.statuses reported for each instance.
type statusRecorder struct {
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	mu   sync.Mutex
	seen map[string][]tkestackv1.InstanceStatus // id → distinct states in the order first reported
	err  error
}

// recordInstanceStatuses starts a statusRecorder for the TApp ns/name; it stops with the test.
func recordInstanceStatuses(t testing.TB, ns, name string) *statusRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tapps := tappClient.TKEStackAppsV1().TApps(ns)
	opts := metav1.ListOptions{FieldSelector: "metadata.name=" + name}
	list, err := tapps.List(ctx, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	opts.ResourceVersion = list.ResourceVersion
	w, err := tapps.Watch(ctx, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &statusRecorder{cancel: cancel, done: make(chan struct{}), seen: map[string][]tkestackv1.InstanceStatus{}}
	for i := range list.Items {
		r.record(&list.Items[i])
	}
	go func() {
		defer close(r.done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					r.mu.Lock()
					r.err = fmt.Errorf("the TApp watch ended early")
					r.mu.Unlock()
					return
				}
				if tapp, ok := ev.Object.(*tkestackv1.TApp); ok {
					r.record(tapp)
				}
			}
		}
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *statusRecorder) record(tapp *tkestackv1.TApp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, s := range tapp.Status.Statuses {
		known := false
		for _, k := range r.seen[id] {
			known = known || k == s
		}
		if !known {
			r.seen[id] = append(r.seen[id], s)
		}
	}
}

func (r *statusRecorder) stop() {
	r.stopOnce.Do(func() {
		r.cancel()
		<-r.done
	})
}

// result stops the recorder and returns the states seen per instance id.
func (r *statusRecorder) result(t testing.TB) map[string][]tkestackv1.InstanceStatus {
	t.Helper()
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		t.Fatalf("watching the TApp: %v", r.err)
	}
	out := map[string][]tkestackv1.InstanceStatus{}
	for id, s := range r.seen {
		out[id] = append([]tkestackv1.InstanceStatus(nil), s...)
	}
	return out
}

// waitServiceAccount waits for the default ServiceAccount of a new namespace, without which pods cannot be
// created yet.
func waitServiceAccount(t testing.TB, ns string) {
	t.Helper()
	ctx := testContext(t, ctrlTimeout+30*time.Second)
	pollUntil(t, ctrlTimeout, "the default ServiceAccount of "+ns, func() error {
		_, err := kubeClient.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

var (
	openAPIOnce sync.Once
	openAPIErr  error
)

// waitTAppOpenAPI waits, once per run, until kube-apiserver publishes the OpenAPI v3 document of
// apps.tkestack.io/v1. Until then kubectl cannot tell that the group supports server-side field validation
// and validates manifests on the client against the OpenAPI v2 schema, which lists spec.defaultTemplateName
// as required, so that the tutorial's manifests (which leave it out) are refused right after the cluster
// starts.
func waitTAppOpenAPI(t testing.TB) {
	t.Helper()
	openAPIOnce.Do(func() {
		start := time.Now()
		deadline := start.Add(ctrlTimeout)
		for {
			paths, err := kubeClient.Discovery().OpenAPIV3().Paths()
			if err == nil {
				if _, ok := paths["apis/apps.tkestack.io/v1"]; ok {
					openAPIErr = nil
					t.Logf("/openapi/v3 lists apis/apps.tkestack.io/v1 after %s", time.Since(start).Round(time.Millisecond))
					return
				}
				err = fmt.Errorf("/openapi/v3 does not list apis/apps.tkestack.io/v1 yet")
			}
			openAPIErr = err
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(ctrlPoll)
		}
	})
	if openAPIErr != nil {
		t.Fatalf("the OpenAPI v3 document of apps.tkestack.io/v1: %v", openAPIErr)
	}
}

// controllerNamespace creates a namespace for a controller test, deleted when the test ends, once kubectl
// can validate TApps on the server and pods can be created in it (its default ServiceAccount exists).
func controllerNamespace(t testing.TB, prefix string) string {
	t.Helper()
	waitTAppOpenAPI(t)
	ns := newNamespace(t, prefix)
	waitServiceAccount(t, ns)
	return ns
}
