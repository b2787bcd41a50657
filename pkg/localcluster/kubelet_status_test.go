package localcluster

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// simulatorHarness runs the simulator's sync against a fake clientset, feeding its pod cache from the
// fake's objects as the informer would, on a clock the test moves.
type simulatorHarness struct {
	t      *testing.T
	k      *kubelet
	client *fake.Clientset
	clock  time.Time
}

func newSimulatorHarness(t *testing.T, cost *NodeCostModel, pods ...*corev1.Pod) *simulatorHarness {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}}
	client := fake.NewClientset(node)
	h := &simulatorHarness{t: t, client: client, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.k = &kubelet{
		client: client,
		lister: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		costs:  newNodeCosts(cost, func() time.Time { return h.clock }),
	}
	t.Cleanup(h.k.queue.ShutDown)
	for _, pod := range pods {
		if _, err := client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.refresh(pod)
	}
	return h
}

func testPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{
			Name: "c", Image: "nginx:1", Resources: resizeTestResources("100m", "64Mi"),
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}},
	}
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// refresh puts the fake's copy of pod into the simulator's cache.
func (h *simulatorHarness) refresh(pod *corev1.Pod) *corev1.Pod {
	h.t.Helper()
	obj, err := h.client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), pod.Namespace, pod.Name)
	if err != nil {
		h.t.Fatal(err)
	}
	current := obj.(*corev1.Pod)
	if err := h.k.lister.Update(current); err != nil {
		h.t.Fatal(err)
	}
	return current
}

// update changes the pod in the API and in the simulator's cache, as another writer would.
func (h *simulatorHarness) update(pod *corev1.Pod, change func(*corev1.Pod)) *corev1.Pod {
	h.t.Helper()
	current := h.refresh(pod).DeepCopy()
	change(current)
	if err := h.client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), current, current.Namespace); err != nil {
		h.t.Fatal(err)
	}
	return h.refresh(current)
}

// writes syncs pod until a sync writes nothing (at most 10 syncs) and returns the writes made.
func (h *simulatorHarness) writes(pod *corev1.Pod) []clienttesting.Action {
	h.t.Helper()
	var writes []clienttesting.Action
	for i := 0; i < 10; i++ {
		h.client.ClearActions()
		if err := h.k.sync(context.Background(), pod.Namespace+"/"+pod.Name); err != nil {
			h.t.Fatal(err)
		}
		var these []clienttesting.Action
		for _, a := range h.client.Actions() {
			if a.GetVerb() != "get" && a.GetVerb() != "list" {
				these = append(these, a)
			}
		}
		if len(these) == 0 {
			return writes
		}
		writes = append(writes, these...)
		if _, err := h.client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), pod.Namespace, pod.Name); err != nil {
			return writes // deleted
		}
		h.refresh(pod)
	}
	h.t.Fatalf("pod %s never settled: %d writes", pod.Name, len(writes))
	return nil
}

// checkStatusPatches fails unless every write is a strategic merge patch of pods/status carrying the pod's
// UID as precondition, no resourceVersion, and the simulator's field manager.
func checkStatusPatches(t *testing.T, pod *corev1.Pod, writes []clienttesting.Action) {
	t.Helper()
	for _, w := range writes {
		p, ok := w.(clienttesting.PatchActionImpl)
		if !ok {
			t.Fatalf("a status write is a %s of %s/%s, not a patch", w.GetVerb(), w.GetResource().Resource, w.GetSubresource())
		}
		if p.GetSubresource() != "status" || p.GetPatchType() != types.StrategicMergePatchType {
			t.Fatalf("patch of subresource %q with type %s", p.GetSubresource(), p.GetPatchType())
		}
		var patch struct {
			Metadata map[string]interface{} `json:"metadata"`
		}
		if err := json.Unmarshal(p.GetPatch(), &patch); err != nil {
			t.Fatal(err)
		}
		if patch.Metadata["uid"] != string(pod.UID) {
			t.Fatalf("patch without the UID precondition: %s", p.GetPatch())
		}
		if _, ok := patch.Metadata["resourceVersion"]; ok || strings.Contains(string(p.GetPatch()), "resourceVersion") {
			t.Fatalf("patch sends a resourceVersion: %s", p.GetPatch())
		}
		if p.PatchOptions.FieldManager != simulatorFieldManager {
			t.Fatalf("field manager %q", p.PatchOptions.FieldManager)
		}
	}
}

func TestSimulatorWritesPerTransition(t *testing.T) {
	gated := func(p *corev1.Pod) {
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	}
	withInit := func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init-1", Image: "busybox:1"}, {Name: "init-2", Image: "busybox:1"}}
	}
	h := newSimulatorHarness(t, nil, testPod("plain"), testPod("gated", gated), testPod("init", withInit))

	// A new pod: Pending with its containers waiting, then Running and Ready.
	plain := testPod("plain")
	writes := h.writes(plain)
	checkStatusPatches(t, plain, writes)
	if len(writes) != 2 {
		t.Fatalf("a new pod took %d status writes, want 2", len(writes))
	}
	var first corev1.Pod
	if err := json.Unmarshal(writes[0].(clienttesting.PatchActionImpl).GetPatch(), &first); err != nil {
		t.Fatal(err)
	}
	if (first.Status.Phase != "" && first.Status.Phase != corev1.PodPending) || len(first.Status.ContainerStatuses) != 1 ||
		first.Status.ContainerStatuses[0].State.Waiting == nil || first.Status.ContainerStatuses[0].State.Waiting.Reason != "ContainerCreating" {
		t.Fatalf("first write: %s", writes[0].(clienttesting.PatchActionImpl).GetPatch())
	}
	running := h.refresh(plain)
	if running.Status.Phase != corev1.PodRunning || findCondition(running.Status.Conditions, corev1.PodReady).Status != corev1.ConditionTrue ||
		running.Status.PodIP == "" || running.Status.ContainerStatuses[0].ImageID == "" {
		t.Fatalf("after the start: %+v", running.Status)
	}

	// Two init containers: one more write for each.
	if writes := h.writes(testPod("init", withInit)); len(writes) != 4 {
		t.Fatalf("a pod with two init containers took %d status writes, want 4", len(writes))
	}

	// Nothing changed: nothing written.
	if writes := h.writes(plain); len(writes) != 0 {
		t.Fatalf("a settled pod got %d writes", len(writes))
	}

	// An in-place image change: one write, the container restarted with the new image.
	h.update(plain, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" })
	writes = h.writes(plain)
	checkStatusPatches(t, plain, writes)
	cs := h.refresh(plain).Status.ContainerStatuses[0]
	if len(writes) != 1 || cs.Image != "nginx:2" || cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil {
		t.Fatalf("image change: %d writes, status %+v", len(writes), cs)
	}

	// A readiness gate: Ready False until the gate's condition is True, then one write for Ready.
	gatedPod := testPod("gated", gated)
	h.writes(gatedPod)
	if c := findCondition(h.refresh(gatedPod).Status.Conditions, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "ReadinessGatesNotReady" {
		t.Fatalf("gated pod Ready %+v", c)
	}
	h.update(gatedPod, func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionTrue})
	})
	writes = h.writes(gatedPod)
	checkStatusPatches(t, gatedPod, writes)
	if len(writes) != 1 || findCondition(h.refresh(gatedPod).Status.Conditions, corev1.PodReady).Status != corev1.ConditionTrue {
		t.Fatalf("gate True: %d writes", len(writes))
	}

	// An in-place resize: in progress, then done.
	h.update(plain, func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resizeTestResources("200m", "64Mi") })
	writes = h.writes(plain)
	checkStatusPatches(t, plain, writes)
	if len(writes) != 2 || h.refresh(plain).Status.ContainerStatuses[0].Resources.Requests.Cpu().String() != "200m" {
		t.Fatalf("resize: %d writes", len(writes))
	}

	// A graceful deletion: the terminal status, then the deletion with grace 0 bound to the UID.
	h.update(plain, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: h.clock} })
	writes = h.writes(plain)
	if len(writes) != 2 {
		t.Fatalf("deletion: %d writes %v", len(writes), writes)
	}
	checkStatusPatches(t, plain, writes[:1])
	var terminal corev1.Pod
	if err := json.Unmarshal(writes[0].(clienttesting.PatchActionImpl).GetPatch(), &terminal); err != nil {
		t.Fatal(err)
	}
	if terminal.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("terminal status patch: %s", writes[0].(clienttesting.PatchActionImpl).GetPatch())
	}
	del, ok := writes[1].(clienttesting.DeleteActionImpl)
	if !ok || del.DeleteOptions.GracePeriodSeconds == nil || *del.DeleteOptions.GracePeriodSeconds != 0 ||
		del.DeleteOptions.Preconditions == nil || *del.DeleteOptions.Preconditions.UID != plain.UID {
		t.Fatalf("deletion: %+v", writes[1])
	}
}

// Another writer's condition that the simulator's cache has not seen yet is kept: the patch is made from
// the server's status and carries no resourceVersion, so it neither conflicts nor drops it.
func TestSimulatorKeepsOtherWritersConditions(t *testing.T) {
	pod := testPod("p", func(p *corev1.Pod) {
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	})
	h := newSimulatorHarness(t, nil, pod)
	h.writes(pod)
	stale := h.refresh(pod).DeepCopy()
	h.update(pod, func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionFalse})
		p.Spec.Containers[0].Image = "nginx:2"
	})
	stale.Spec.Containers[0].Image = "nginx:2"
	if err := h.k.lister.Update(stale); err != nil { // the cache has the new image, not the condition
		t.Fatal(err)
	}
	h.client.ClearActions()
	if err := h.k.sync(context.Background(), "ns/p"); err != nil {
		t.Fatal(err)
	}
	got := h.refresh(pod)
	if c := findCondition(got.Status.Conditions, "example.com/gate"); c == nil {
		t.Fatalf("the other writer's condition was dropped: %+v", got.Status.Conditions)
	}
	if got.Status.ContainerStatuses[0].Image != "nginx:2" {
		t.Fatalf("image %s", got.Status.ContainerStatuses[0].Image)
	}
}

// TestSimulatorReadsOnlyToWrite: once a pod's status is what the simulator would report, syncing it again
// (the watch events of its own writes, of another writer's condition) makes no request at all, as a kubelet's
// status manager ignores a status equal to the one it knows; a change it must report is read and written.
func TestSimulatorReadsOnlyToWrite(t *testing.T) {
	pod := testPod("p", func(p *corev1.Pod) {
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	})
	h := newSimulatorHarness(t, nil, pod)
	if w := h.writes(pod); len(w) == 0 {
		t.Fatal("the pod was never started")
	}
	sync := func() []clienttesting.Action {
		t.Helper()
		h.client.ClearActions()
		if err := h.k.sync(context.Background(), "ns/p"); err != nil {
			t.Fatal(err)
		}
		return h.client.Actions()
	}
	if got := sync(); len(got) != 0 {
		t.Fatalf("a sync of a settled pod made %d requests, first %s %s", len(got), got[0].GetVerb(), got[0].GetResource().Resource)
	}
	// Another writer's condition that does not change what the kubelet reports: nothing to read.
	h.update(pod, func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "example.com/other", Status: corev1.ConditionTrue})
	})
	if got := sync(); len(got) != 0 {
		t.Fatalf("a sync after another writer's condition made %d requests, first %s", len(got), got[0].GetVerb())
	}
	// The gate turns True: the pod becomes Ready, which the simulator reads the pod for and writes.
	h.update(pod, func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionTrue})
	})
	got := sync()
	if len(got) != 2 || got[0].GetVerb() != "get" || got[1].GetVerb() != "patch" {
		t.Fatalf("the sync after the gate turned True made %v, want a get and a patch", verbs(got))
	}
	if c := findCondition(h.refresh(pod).Status.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("Ready after the gate turned True: %+v", c)
	}
}

func verbs(actions []clienttesting.Action) []string {
	out := make([]string, 0, len(actions))
	for _, a := range actions {
		out = append(out, a.GetVerb())
	}
	return out
}

func TestSimulatorNodeCost(t *testing.T) {
	model := &NodeCostModel{SandboxCreate: time.Second, ImagePull: 10 * time.Second, ContainerStart: 100 * time.Millisecond, VolumeAttach: 5 * time.Second}
	withClaim := func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	}
	a, b, c := testPod("a"), testPod("b"), testPod("c", withClaim)
	h := newSimulatorHarness(t, model, a, b, c)

	// The first write (Pending, waiting) is not delayed; the start waits for sandbox, pull and start.
	if writes := h.writes(a); len(writes) != 1 {
		t.Fatalf("before the node's work: %d writes, want 1", len(writes))
	}
	if p := h.refresh(a); p.Status.Phase != corev1.PodPending || p.Status.ContainerStatuses[0].State.Waiting == nil {
		t.Fatalf("during the node's work: %+v", p.Status)
	}
	if h.k.queue.Len() != 0 {
		t.Fatal("the pod was queued at once instead of after the wait")
	}
	h.clock = h.clock.Add(11 * time.Second) // 11.1 s needed
	if writes := h.writes(a); len(writes) != 0 {
		t.Fatalf("started before the modelled wait: %d writes", len(writes))
	}
	h.clock = h.clock.Add(100 * time.Millisecond)
	if writes := h.writes(a); len(writes) != 1 || h.refresh(a).Status.Phase != corev1.PodRunning {
		t.Fatalf("after the wait: %d writes", len(writes))
	}

	// A second pod on the node: the image is cached, 1.1 s.
	h.writes(b)
	h.clock = h.clock.Add(1100 * time.Millisecond)
	if writes := h.writes(b); len(writes) != 1 {
		t.Fatalf("cached image: %d writes after 1.1 s", len(writes))
	}
	// A claim adds its attach: 6.1 s.
	h.writes(c)
	h.clock = h.clock.Add(6 * time.Second)
	if writes := h.writes(c); len(writes) != 0 {
		t.Fatal("started before the volume was attached")
	}
	h.clock = h.clock.Add(100 * time.Millisecond)
	if writes := h.writes(c); len(writes) != 1 {
		t.Fatalf("claim: %d writes after 6.1 s", len(writes))
	}

	// An in-place change to a new image: pull and start before the restart is reported; to an image the
	// node has, only the start.
	h.update(a, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" })
	if writes := h.writes(a); len(writes) != 0 {
		t.Fatal("restart reported before the pull")
	}
	h.clock = h.clock.Add(10100 * time.Millisecond)
	if writes := h.writes(a); len(writes) != 1 || h.refresh(a).Status.ContainerStatuses[0].RestartCount != 1 {
		t.Fatal("restart not reported after pull and start")
	}
	h.update(b, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" })
	h.writes(b)
	h.clock = h.clock.Add(100 * time.Millisecond)
	if writes := h.writes(b); len(writes) != 1 || h.refresh(b).Status.ContainerStatuses[0].Image != "nginx:2" {
		t.Fatal("restart to a cached image waited for a pull")
	}
	if len(h.k.costs.doneAt) != 0 {
		t.Fatalf("steps kept after they were reported: %v", h.k.costs.doneAt)
	}
}

func TestNodeCostBounded(t *testing.T) {
	n := newNodeCosts(&NodeCostModel{ImagePull: time.Hour}, time.Now)
	if w := n.until(testPod("p"), "start", true, testPod("p").Spec.Containers); w > maxNodeCostWait {
		t.Fatalf("wait %s beyond the bound", w)
	}
}
