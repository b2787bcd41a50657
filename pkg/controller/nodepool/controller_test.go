package nodepool

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/controllertest"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/nodepool/policy"
	yurtfake "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions"
)

// harness is a NodePool controller over fake clientsets whose informer caches are filled by hand (show),
// so each test decides what the cache holds.
type harness struct {
	t        *testing.T
	ctrl     *Controller
	kube     *kubefake.Clientset
	yurt     *yurtfake.Clientset
	kubeInf  informers.SharedInformerFactory
	yurtInf  externalversions.SharedInformerFactory
	recorder *record.FakeRecorder
}

func newHarness(t *testing.T, pools []*v1beta2.NodePool, nodes []*corev1.Node) *harness {
	var kubeObjs, yurtObjs []runtime.Object
	for _, n := range nodes {
		kubeObjs = append(kubeObjs, n)
	}
	for _, p := range pools {
		yurtObjs = append(yurtObjs, p)
	}
	h := &harness{t: t, kube: kubefake.NewClientset(kubeObjs...), yurt: newYurtClientset(yurtObjs...), recorder: record.NewFakeRecorder(100)}
	controllertest.StampWrites(&h.kube.Fake)
	controllertest.StampWrites(&h.yurt.Fake)
	h.kubeInf = informers.NewSharedInformerFactory(h.kube, 0)
	h.yurtInf = externalversions.NewSharedInformerFactory(h.yurt, 0)
	ctrl, err := NewController(h.kube, h.yurt, h.yurtInf.OpenYurtApps().V1beta2().NodePools(), h.kubeInf.Core().V1().Nodes(), h.recorder,
		clocktesting.NewFakeClock(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctrl.queue.ShutDown)
	h.ctrl = ctrl
	h.show()
	return h
}

// newYurtClientset is the fake clientset of NodePools. It uses the plain object tracker: the fake's
// server-side-apply tracker has no schema for NodePools, and the controller never applies.
func newYurtClientset(objs ...runtime.Object) *yurtfake.Clientset {
	return yurtfake.NewSimpleClientset(objs...) //nolint:staticcheck // see above
}

// show replaces the informer caches with what the fake APIs hold (the caches catching up).
func (h *harness) show() {
	ctx := context.Background()
	nodes, err := h.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	pools, err := h.yurt.OpenYurtAppsV1beta2().NodePools().List(ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var nodeObjs, poolObjs []any
	for i := range nodes.Items {
		nodeObjs = append(nodeObjs, &nodes.Items[i])
	}
	for i := range pools.Items {
		poolObjs = append(poolObjs, &pools.Items[i])
	}
	if err := h.kubeInf.Core().V1().Nodes().Informer().GetIndexer().Replace(nodeObjs, "1"); err != nil {
		h.t.Fatal(err)
	}
	if err := h.yurtInf.OpenYurtApps().V1beta2().NodePools().Informer().GetIndexer().Replace(poolObjs, "1"); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) sync(pool string) error {
	return h.ctrl.sync(context.Background(), pool)
}

func (h *harness) node(name string) *corev1.Node {
	n, err := h.kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) pool(name string) *v1beta2.NodePool {
	p, err := h.yurt.OpenYurtAppsV1beta2().NodePools().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) count(f *clienttesting.Fake, verb, resource, subresource string) int {
	n := 0
	for _, a := range f.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource && a.GetSubresource() == subresource {
			n++
		}
	}
	return n
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func testNode(name string, ready bool, labels map[string]string) *corev1.Node {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, ResourceVersion: "1"},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}},
	}
}

func testPool(name string, labels map[string]string, taints ...corev1.Taint) *v1beta2.NodePool {
	return &v1beta2.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec:       v1beta2.NodePoolSpec{Type: "Edge", Labels: labels, Taints: taints},
	}
}

func TestSyncJoinsNodesAndWritesStatusOnce(t *testing.T) {
	taint := corev1.Taint{Key: "edge", Value: "a", Effect: corev1.TaintEffectNoSchedule}
	h := newHarness(t,
		[]*v1beta2.NodePool{testPool("a", map[string]string{"zone": "east"}, taint)},
		[]*corev1.Node{
			testNode("n2", true, map[string]string{policy.DesiredPoolLabel: "a"}),
			testNode("n1", false, map[string]string{policy.DesiredPoolLabel: "a"}),
			testNode("n3", true, map[string]string{policy.DesiredPoolLabel: "b"}),
			testNode("n4", true, nil),
		})
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"n1", "n2"} {
		n := h.node(name)
		if n.Labels[policy.PoolLabel] != "a" || n.Labels["zone"] != "east" {
			t.Errorf("node %s labels = %v, want pool a and zone east", name, n.Labels)
		}
		if !reflect.DeepEqual(n.Spec.Taints, []corev1.Taint{taint}) {
			t.Errorf("node %s taints = %v", name, n.Spec.Taints)
		}
		if n.Annotations[policy.AppliedAnnotation] == "" {
			t.Errorf("node %s has no record of what was applied", name)
		}
	}
	if n := h.node("n3"); len(n.Labels) != 1 {
		t.Errorf("node n3 of another (missing) pool was changed: %v", n.Labels)
	}
	if got := h.count(&h.kube.Fake, "patch", "nodes", ""); got != 2 {
		t.Errorf("%d node patches, want 2", got)
	}
	want := v1beta2.NodePoolStatus{ReadyNodeNum: 1, UnreadyNodeNum: 1, Nodes: []string{"n1", "n2"}}
	if got := h.pool("a").Status; !reflect.DeepEqual(got, want) {
		t.Errorf("status = %+v, want %+v", got, want)
	}
	events := strings.Join(h.events(), "\n")
	if !strings.Contains(events, "NodeJoined Node n1 joined pool a") || !strings.Contains(events, "NodeJoined Node n2 joined pool a") {
		t.Errorf("events = %q, want NodeJoined for n1 and n2", events)
	}

	// Once the cache shows the writes, a sync writes nothing.
	h.show()
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	if got := h.count(&h.kube.Fake, "patch", "nodes", ""); got != 2 {
		t.Errorf("%d node patches after a no-op sync, want 2", got)
	}
	if got := h.count(&h.yurt.Fake, "update", "nodepools", "status"); got != 1 {
		t.Errorf("%d status writes, want 1 (written only on change)", got)
	}
}

func TestSyncPoolChangeAndNodeLeaving(t *testing.T) {
	h := newHarness(t,
		[]*v1beta2.NodePool{testPool("a", map[string]string{"zone": "east", "tier": "gold"})},
		[]*corev1.Node{
			testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"}),
			testNode("n2", true, map[string]string{policy.DesiredPoolLabel: "a"}),
		})
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	h.show()

	// The pool drops label tier: it is removed from both nodes.
	p := h.pool("a")
	delete(p.Spec.Labels, "tier")
	if _, err := h.yurt.OpenYurtAppsV1beta2().NodePools().Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// n2 leaves the pool.
	n2 := h.node("n2")
	delete(n2.Labels, policy.DesiredPoolLabel)
	if _, err := h.kube.CoreV1().Nodes().Update(context.Background(), n2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.show()
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	if got := h.node("n1").Labels; !reflect.DeepEqual(got, map[string]string{policy.DesiredPoolLabel: "a", policy.PoolLabel: "a", "zone": "east"}) {
		t.Errorf("n1 labels = %v, want tier removed", got)
	}
	n2 = h.node("n2")
	if len(n2.Labels) != 0 || len(n2.Annotations) != 0 {
		t.Errorf("n2 left the pool but keeps labels %v annotations %v", n2.Labels, n2.Annotations)
	}
	want := v1beta2.NodePoolStatus{ReadyNodeNum: 1, Nodes: []string{"n1"}}
	if got := h.pool("a").Status; !reflect.DeepEqual(got, want) {
		t.Errorf("status = %+v, want %+v", got, want)
	}
	if events := strings.Join(h.events(), "\n"); !strings.Contains(events, "NodeLeft Node n2 left its pool") {
		t.Errorf("events = %q, want NodeLeft for n2", events)
	}
}

func TestSyncDeletedPoolStripsNodes(t *testing.T) {
	h := newHarness(t, []*v1beta2.NodePool{testPool("a", map[string]string{"zone": "east"})},
		[]*corev1.Node{testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"})})
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	if err := h.yurt.OpenYurtAppsV1beta2().NodePools().Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.show()
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	if got := h.node("n1").Labels; !reflect.DeepEqual(got, map[string]string{policy.DesiredPoolLabel: "a"}) {
		t.Errorf("labels = %v, want only the desired label once the pool is gone", got)
	}
}

func TestSyncNodePatchConflictIsRequeued(t *testing.T) {
	h := newHarness(t, []*v1beta2.NodePool{testPool("a", nil)},
		[]*corev1.Node{testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"})})
	h.kube.PrependReactor("patch", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(corev1.Resource("nodes"), "n1", nil)
	})
	err := h.sync("a")
	if err == nil || !strings.Contains(err.Error(), "Operation cannot be fulfilled") {
		t.Fatalf("sync error = %v, want a conflict (requeued with backoff)", err)
	}
	if got := h.count(&h.kube.Fake, "patch", "nodes", ""); got != 5 {
		t.Errorf("%d patches, want 5 (retry.DefaultRetry)", got)
	}
	if got := h.count(&h.kube.Fake, "get", "nodes", ""); got != 4 {
		t.Errorf("%d fresh reads, want one before each retry (4)", got)
	}
	if events := h.events(); len(events) != 0 {
		t.Errorf("a conflict produced events %q", events)
	}
	// The status is still written from the cache's view.
	if got := h.pool("a").Status.Nodes; !reflect.DeepEqual(got, []string{"n1"}) {
		t.Errorf("status nodes = %v, want [n1]", got)
	}
}

// TestSyncNodePatch: the node is written with a JSON patch of what the pool manages, never a full update.
func TestSyncNodePatch(t *testing.T) {
	h := newHarness(t, []*v1beta2.NodePool{testPool("a", map[string]string{"zone": "east"})},
		[]*corev1.Node{testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"})})
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	var patches []clienttesting.PatchAction
	for _, a := range h.kube.Actions() {
		if a.GetVerb() == "update" && a.GetResource().Resource == "nodes" {
			t.Errorf("node written with a full update: %v", a)
		}
		if p, ok := a.(clienttesting.PatchAction); ok && a.GetResource().Resource == "nodes" {
			patches = append(patches, p)
		}
	}
	if len(patches) != 1 {
		t.Fatalf("%d node patches, want 1", len(patches))
	}
	if got := patches[0].GetPatchType(); got != types.JSONPatchType {
		t.Errorf("patch type = %s, want %s", got, types.JSONPatchType)
	}
	want := `[{"op":"add","path":"/metadata/labels/apps.openyurt.io~1nodepool","value":"a"},` +
		`{"op":"add","path":"/metadata/labels/zone","value":"east"},` +
		`{"op":"add","path":"/metadata/annotations","value":{"nodepool.openyurt.io/previous-attributes":"{\"pool\":\"a\",\"poolLabel\":true,\"labels\":{\"zone\":\"east\"}}"}}]`
	want = `[{"op":"test","path":"/metadata/resourceVersion","value":"1"},` + want[1:]
	if got := string(patches[0].GetPatch()); got != want {
		t.Errorf("patch =\n%s\nwant\n%s", got, want)
	}
}

// TestSyncNodePatchRereadsAfterAFailedTest: a patch refused because the node changed since the cache saw it
// (a failed test, 422) is recomputed from a fresh read and not reported.
func TestSyncNodePatchRereadsAfterAFailedTest(t *testing.T) {
	h := newHarness(t, []*v1beta2.NodePool{testPool("a", map[string]string{"zone": "east"})},
		[]*corev1.Node{testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"})})
	// The kubelet writes the node after the cache saw it.
	n := h.node("n1")
	n.Labels["kubelet"] = "x"
	if _, err := h.kube.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.kube.PrependReactor("patch", "nodes", func(action clienttesting.Action) (bool, runtime.Object, error) {
		p := string(action.(clienttesting.PatchAction).GetPatch())
		obj, err := h.kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", "n1") // not h.node: the fake is locked
		if err != nil {
			return true, nil, err
		}
		if !strings.Contains(p, `"path":"/metadata/resourceVersion","value":"`+obj.(*corev1.Node).ResourceVersion+`"`) {
			return true, nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Node").GroupKind(), "n1", nil)
		}
		return false, nil, nil
	})
	if err := h.sync("a"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got := h.count(&h.kube.Fake, "patch", "nodes", ""); got != 2 {
		t.Errorf("%d patches, want 2 (one refused, one from a fresh read)", got)
	}
	got := h.node("n1").Labels
	if got["kubelet"] != "x" || got["zone"] != "east" || got[policy.PoolLabel] != "a" {
		t.Errorf("labels = %v, want the kubelet's label kept and the pool's applied", got)
	}
	if events := strings.Join(h.events(), "\n"); !strings.Contains(events, "NodeJoined Node n1 joined pool a") || strings.Contains(events, "Warning") {
		t.Errorf("events = %q, want only NodeJoined", events)
	}
}

func TestSyncFailedNodeUpdateIsReported(t *testing.T) {
	h := newHarness(t, []*v1beta2.NodePool{testPool("a", nil)},
		[]*corev1.Node{testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"})})
	h.kube.PrependReactor("patch", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("nodes"), "n1", nil)
	})
	if err := h.sync("a"); err == nil {
		t.Fatal("a failed node patch must fail the sync")
	}
	if got := h.count(&h.kube.Fake, "patch", "nodes", ""); got != 1 {
		t.Errorf("%d patches, want 1 (a refusal is not retried)", got)
	}
	if events := strings.Join(h.events(), "\n"); !strings.Contains(events, "Warning FailedUpdateNode") {
		t.Errorf("events = %q, want FailedUpdateNode", events)
	}
}

func TestHandlersEnqueueOnlyAffectedPools(t *testing.T) {
	h := newHarness(t, nil, nil)
	drain := func() []string { return controllertest.Drain(h.ctrl.queue) }
	sameSet := func(got []string, want ...string) bool {
		g := map[string]bool{}
		for _, k := range got {
			g[k] = true
		}
		if len(g) != len(want) {
			return false
		}
		for _, w := range want {
			if !g[w] {
				return false
			}
		}
		return true
	}

	n := testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"})
	h.ctrl.nodeAdded(n)
	if got := drain(); !sameSet(got, "a") {
		t.Errorf("node added: enqueued %v, want [a]", got)
	}
	moved := n.DeepCopy()
	moved.ResourceVersion = "2"
	moved.Labels[policy.DesiredPoolLabel] = "b"
	h.ctrl.nodeUpdated(n, moved)
	if got := drain(); !sameSet(got, "a", "b") {
		t.Errorf("node moved: enqueued %v, want [a b]", got)
	}
	heartbeat := moved.DeepCopy()
	heartbeat.ResourceVersion = "3"
	heartbeat.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Now())
	h.ctrl.nodeUpdated(moved, heartbeat)
	if got := drain(); len(got) != 0 {
		t.Errorf("heartbeat: enqueued %v, want nothing", got)
	}
	h.ctrl.nodeDeleted(cache.DeletedFinalStateUnknown{Key: "n1", Obj: heartbeat})
	if got := drain(); !sameSet(got, "b") {
		t.Errorf("node deleted: enqueued %v, want [b]", got)
	}

	p := testPool("a", map[string]string{"x": "y"})
	statusWrite := p.DeepCopy()
	statusWrite.ResourceVersion = "2"
	statusWrite.Status.ReadyNodeNum = 4
	h.ctrl.poolUpdated(p, statusWrite)
	if got := drain(); len(got) != 0 {
		t.Errorf("pool status write: enqueued %v, want nothing", got)
	}
	relabelled := statusWrite.DeepCopy()
	relabelled.ResourceVersion = "3"
	relabelled.Spec.Labels["x"] = "z"
	h.ctrl.poolUpdated(statusWrite, relabelled)
	if got := drain(); !sameSet(got, "a") {
		t.Errorf("pool labels changed: enqueued %v, want [a]", got)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	h := newHarness(t, []*v1beta2.NodePool{testPool("a", nil)},
		[]*corev1.Node{testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"})})
	// A harness with real informers: start them and let Run sync the pool.
	h.kube = kubefake.NewClientset(testNode("n1", true, map[string]string{policy.DesiredPoolLabel: "a"}))
	h.yurt = newYurtClientset(testPool("a", nil))
	h.kubeInf = informers.NewSharedInformerFactory(h.kube, 0)
	h.yurtInf = externalversions.NewSharedInformerFactory(h.yurt, 0)
	// Running, the controller retries with backoff: it runs on the real clock, as outside tests.
	ctrl, err := NewController(h.kube, h.yurt, h.yurtInf.OpenYurtApps().V1beta2().NodePools(), h.kubeInf.Core().V1().Nodes(), h.recorder,
		clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	controllertest.RunUntil(t, func(ctx context.Context) { ctrl.Run(ctx, 2) }, func() (bool, string) {
		return h.node("n1").Labels[policy.PoolLabel] == "a", "n1 is not in pool a"
	}, h.kubeInf, h.yurtInf)
}

// TestSyncElectsLeaders: with leader election enabled, the sync writes the first Ready node with an
// InternalIP as leader, keeps it while it stays Ready (no write), and moves to another Ready node when it
// turns NotReady, with LeaderReady False once none is Ready.
func TestSyncElectsLeaders(t *testing.T) {
	withIP := func(n *corev1.Node, ip string) *corev1.Node {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		return n
	}
	pool := testPool("a", nil)
	pool.Spec.EnableLeaderElection, pool.Spec.LeaderElectionStrategy, pool.Spec.LeaderReplicas = true, v1beta2.ElectionStrategyRandom, 1
	h := newHarness(t, []*v1beta2.NodePool{pool}, []*corev1.Node{
		withIP(testNode("n1", true, map[string]string{policy.PoolLabel: "a"}), "10.0.0.1"),
		withIP(testNode("n2", true, map[string]string{policy.PoolLabel: "a"}), "10.0.0.2"),
	})
	leaderOf := func() (string, v1beta2.NodePoolCondition) {
		t.Helper()
		st := h.pool("a").Status
		if len(st.Conditions) != 1 || st.LeaderNum != int32(len(st.LeaderEndpoints)) {
			t.Fatalf("status = %+v", st)
		}
		if len(st.LeaderEndpoints) == 0 {
			return "", st.Conditions[0]
		}
		return st.LeaderEndpoints[0].NodeName + "=" + st.LeaderEndpoints[0].Address, st.Conditions[0]
	}
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	if leader, cond := leaderOf(); leader != "n1=10.0.0.1" || cond.Status != corev1.ConditionTrue {
		t.Fatalf("leader %q, condition %+v; want n1 and LeaderReady True", leader, cond)
	}
	h.show()
	writes := h.count(&h.yurt.Fake, "update", "nodepools", "status")
	if err := h.sync("a"); err != nil {
		t.Fatal(err)
	}
	if got := h.count(&h.yurt.Fake, "update", "nodepools", "status"); got != writes {
		t.Errorf("a sync with nothing changed wrote status %d times", got-writes)
	}

	setReady := func(name string, ready bool) {
		n := h.node(name)
		n.Status = testNode(name, ready, nil).Status
		n.Status.Addresses = h.node(name).Status.Addresses
		if _, err := h.kube.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.show()
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		h.show()
	}
	setReady("n1", false)
	if leader, cond := leaderOf(); leader != "n2=10.0.0.2" || cond.Status != corev1.ConditionTrue {
		t.Fatalf("after n1 NotReady: leader %q, condition %+v; want n2", leader, cond)
	}
	setReady("n1", true)
	if leader, _ := leaderOf(); leader != "n2=10.0.0.2" {
		t.Fatalf("after n1 Ready again: leader %q, want n2 kept", leader)
	}
	setReady("n1", false)
	setReady("n2", false)
	if leader, cond := leaderOf(); leader != "" || cond.Status != corev1.ConditionFalse || cond.Reason != "NoReadyNodes" {
		t.Fatalf("no Ready node: leader %q, condition %+v; want none and LeaderReady False NoReadyNodes", leader, cond)
	}
}
