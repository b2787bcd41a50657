//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// End-to-end tests of the YurtAppDaemon and NodePool controllers on the local cluster: its kwok nodes are
// labelled into the node pools hangzhou and shanghai (see pkg/localcluster), and the tests create the
// NodePool objects of those pools when the cluster has not.

const (
	// yadTimeout bounds one wait for the controllers (and the cluster around them) to converge.
	yadTimeout = 60 * time.Second
	// yadPoll is the polling interval of those waits.
	yadPoll = 250 * time.Millisecond

	// localPoolLabel marks the NodePools of the local cluster's kwok nodes; the tests select them by it.
	localPoolLabel = "e2e.tapp.io/local-pool"
	poolLabel      = "apps.openyurt.io/nodepool"
	desiredLabel   = "apps.openyurt.io/desired-nodepool"
	poolNameLabel  = "apps.openyurt.io/pool-name"
	revisionLabel  = "apps.openyurt.io/controller-revision-hash"
)

// localPools are the node pools of the local cluster's kwok nodes.
var localPools = []string{"hangzhou", "shanghai"}

// yadPollUntil calls f every yadPoll until it returns nil, and fails the test with f's last error after
// timeout.
func yadPollUntil(t testing.TB, timeout time.Duration, what string, f func() error) {
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
		time.Sleep(yadPoll)
	}
}

// ensureLocalPools makes sure the NodePools hangzhou and shanghai exist and carry localPoolLabel. They are
// shared by the tests and never deleted.
func ensureLocalPools(t testing.TB) {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	pools := tappClient.OpenYurtAppsV1alpha1().NodePools()
	for _, name := range localPools {
		_, err := pools.Create(ctx, &v1alpha1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{localPoolLabel: "true"}},
			Spec:       v1alpha1.NodePoolSpec{Type: "Edge"},
		}, metav1.CreateOptions{})
		if err == nil {
			continue
		}
		if !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating NodePool %s: %v", name, err)
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, localPoolLabel)
		if _, err := pools.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("labelling NodePool %s: %v", name, err)
		}
	}
}

// poolNodes returns the names of the nodes labelled into pool.
func poolNodes(ctx context.Context, pool string) (map[string]bool, error) {
	nodes, err := kubeClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: poolLabel + "=" + pool})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range nodes.Items {
		out[n.Name] = true
	}
	return out, nil
}

// yadObject is a YurtAppDaemon named name running image, with a Deployment template of replicas (or a
// StatefulSet template when statefulSet is set), selecting the NodePools labelled poolSelector.
func yadObject(name, image string, replicas int32, statefulSet bool, poolSelector map[string]string) *v1alpha1.YurtAppDaemon {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	meta := metav1.ObjectMeta{Labels: map[string]string{"app": name}}
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "main", Image: image}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	yad := &v1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.YurtAppDaemonSpec{
			Selector:         selector,
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: poolSelector},
		},
	}
	if statefulSet {
		yad.Spec.WorkloadTemplate.StatefulSetTemplate = &v1alpha1.StatefulSetTemplateSpec{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas, ServiceName: name, Template: pod, PodManagementPolicy: appsv1.ParallelPodManagement,
		}}
	} else {
		yad.Spec.WorkloadTemplate.DeploymentTemplate = &v1alpha1.DeploymentTemplateSpec{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Template: pod,
		}}
	}
	return yad
}

func createYAD(t testing.TB, ns string, yad *v1alpha1.YurtAppDaemon) *v1alpha1.YurtAppDaemon {
	t.Helper()
	created, err := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(testContext(t, yadTimeout), yad, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating YurtAppDaemon %s: %v", yad.Name, err)
	}
	return created
}

func getYAD(t testing.TB, ns, name string) *v1alpha1.YurtAppDaemon {
	t.Helper()
	yad, err := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Get(testContext(t, yadTimeout), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting YurtAppDaemon %s: %v", name, err)
	}
	return yad
}

// updateYAD changes the YurtAppDaemon's spec, retrying on conflicts.
func updateYAD(t testing.TB, ns, name string, change func(*v1alpha1.YurtAppDaemon)) {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	client := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		yad, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(yad)
		_, err = client.Update(ctx, yad, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating YurtAppDaemon %s: %v", name, err)
	}
}

// patchPoolLabels merge-patches the labels of a NodePool (a nil value removes the label).
func patchPoolLabels(ctx context.Context, pool string, set map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": set}})
	if err != nil {
		return err
	}
	_, err = tappClient.OpenYurtAppsV1alpha1().NodePools().Patch(ctx, pool, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// child is a Deployment or StatefulSet seen through what the tests check.
type child struct {
	name, uid, revision, image string
	generation                 int64
	owner                      *metav1.OwnerReference
	podLabels, nodeSelector    map[string]string
	tolerations                []corev1.Toleration
}

// children returns the workloads of kind (Deployment or StatefulSet) in ns controlled by the YurtAppDaemon
// with UID owner, by pool.
func children(ctx context.Context, ns string, owner types.UID, statefulSet bool) (map[string]child, error) {
	out := map[string]child{}
	add := func(meta metav1.ObjectMeta, tmpl corev1.PodTemplateSpec) {
		ref := metav1.GetControllerOf(&meta)
		if ref == nil || ref.UID != owner || meta.DeletionTimestamp != nil {
			return
		}
		out[meta.Labels[poolNameLabel]] = child{
			name: meta.Name, uid: string(meta.UID), revision: meta.Labels[revisionLabel], image: tmpl.Spec.Containers[0].Image,
			generation: meta.Generation, owner: ref, podLabels: tmpl.Labels, nodeSelector: tmpl.Spec.NodeSelector, tolerations: tmpl.Spec.Tolerations,
		}
	}
	if statefulSet {
		list, err := kubeClient.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, s := range list.Items {
			add(s.ObjectMeta, s.Spec.Template)
		}
		return out, nil
	}
	list, err := kubeClient.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, d := range list.Items {
		add(d.ObjectMeta, d.Spec.Template)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// waitChildren waits until the YurtAppDaemon has exactly one child per pool of pools, each named
// <yad>-<pool>, labelled with its pool and pinned to it, running image, and returns them by pool.
func waitChildren(t testing.TB, ns string, yad *v1alpha1.YurtAppDaemon, statefulSet bool, image string, pools ...string) map[string]child {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	var got map[string]child
	sort.Strings(pools)
	yadPollUntil(t, yadTimeout, fmt.Sprintf("children of %s in pools %v", yad.Name, pools), func() error {
		var err error
		if got, err = children(ctx, ns, yad.UID, statefulSet); err != nil {
			return err
		}
		if keys := sortedKeys(got); !reflect.DeepEqual(keys, pools) && !(len(keys) == 0 && len(pools) == 0) {
			return fmt.Errorf("children in pools %v", keys)
		}
		for pool, c := range got {
			switch {
			case c.name != yad.Name+"-"+pool:
				return fmt.Errorf("child of pool %s is named %s", pool, c.name)
			case c.nodeSelector[poolLabel] != pool || c.podLabels[poolNameLabel] != pool:
				return fmt.Errorf("child %s: nodeSelector %v, pod labels %v", c.name, c.nodeSelector, c.podLabels)
			case c.image != image:
				return fmt.Errorf("child %s runs %s, want %s", c.name, c.image, image)
			case c.owner.Kind != "YurtAppDaemon" || c.owner.BlockOwnerDeletion == nil || !*c.owner.BlockOwnerDeletion:
				return fmt.Errorf("child %s: controller reference %+v", c.name, c.owner)
			}
		}
		return nil
	})
	return got
}

// waitPoolPods waits until every pool of pools runs exactly replicas Ready pods of app with image, all on
// nodes of that pool.
func waitPoolPods(t testing.TB, ns, app, image string, replicas int, pools ...string) {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	yadPollUntil(t, yadTimeout, fmt.Sprintf("%d ready %s pods of %s per pool %v", replicas, image, app, pools), func() error {
		for _, pool := range pools {
			nodes, err := poolNodes(ctx, pool)
			if err != nil {
				return err
			}
			sel := labels.SelectorFromSet(labels.Set{"app": app, poolNameLabel: pool}).String()
			list, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return err
			}
			if len(list.Items) != replicas {
				return fmt.Errorf("pool %s: %d pods (%s), want %d", pool, len(list.Items), describeYADPods(list.Items), replicas)
			}
			for i := range list.Items {
				pod := &list.Items[i]
				switch {
				case !yadPodReady(pod) || pod.Spec.Containers[0].Image != image:
					return fmt.Errorf("pool %s: pods %s", pool, describeYADPods(list.Items))
				case !nodes[pod.Spec.NodeName]:
					return fmt.Errorf("pod %s of pool %s runs on node %s, outside the pool's nodes %v", pod.Name, pool, pod.Spec.NodeName, sortedKeys(nodes))
				}
			}
		}
		return nil
	})
}

// yadPodReady reports whether a pod is Running, Ready and not being deleted.
func yadPodReady(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describeYADPods(pods []corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		parts = append(parts, fmt.Sprintf("%s[%s node=%s ready=%v deleting=%v]", p.Name, p.Spec.Containers[0].Image, p.Spec.NodeName, yadPodReady(&p), p.DeletionTimestamp != nil))
	}
	return strings.Join(parts, " ")
}

// waitYADStatus waits until the YurtAppDaemon reports the pools, observed its generation and says its
// workloads are provisioned and at the current revision, and returns it.
func waitYADStatus(t testing.TB, ns, name string, kind v1alpha1.TemplateType, pools ...string) *v1alpha1.YurtAppDaemon {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	sort.Strings(pools)
	var yad *v1alpha1.YurtAppDaemon
	yadPollUntil(t, yadTimeout, "status of YurtAppDaemon "+name, func() error {
		var err error
		if yad, err = tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		s := yad.Status
		if s.ObservedGeneration != yad.Generation || s.TemplateType != kind || !reflect.DeepEqual(s.NodePools, pools) && len(pools)+len(s.NodePools) > 0 {
			return fmt.Errorf("status %+v", s)
		}
		for _, c := range s.Conditions {
			want := corev1.ConditionTrue
			if c.Type == "WorkLoadFailure" {
				want = corev1.ConditionFalse
			}
			if c.Status != want {
				return fmt.Errorf("condition %s is %s: %s: %s", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		if len(s.Conditions) < 2 || s.CurrentRevision == "" {
			return fmt.Errorf("status %+v", s)
		}
		return nil
	})
	return yad
}

// waitGone waits until the YurtAppDaemon's children of kind and ControllerRevisions are gone (garbage
// collected).
func waitGone(t testing.TB, ns string, uid types.UID, statefulSet bool) {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	yadPollUntil(t, yadTimeout, "garbage collection of the children and revisions", func() error {
		got, err := children(ctx, ns, uid, statefulSet)
		if err != nil {
			return err
		}
		if len(got) > 0 {
			return fmt.Errorf("children left in pools %v", sortedKeys(got))
		}
		revs, err := kubeClient.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, r := range revs.Items {
			if ref := metav1.GetControllerOf(&r); ref != nil && ref.UID == uid {
				return fmt.Errorf("ControllerRevision %s left", r.Name)
			}
		}
		return nil
	})
}

func ownedRevisions(ctx context.Context, ns string, uid types.UID) ([]string, error) {
	revs, err := kubeClient.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range revs.Items {
		if ref := metav1.GetControllerOf(&r); ref != nil && ref.UID == uid {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// TestNodePoolMembership checks that the NodePool controller keeps the kwok nodes in hangzhou and shanghai
// and reports them in the pools' status.
func TestNodePoolMembership(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ctx := testContext(t, yadTimeout)
	for _, pool := range localPools {
		yadPollUntil(t, yadTimeout, "status of NodePool "+pool, func() error {
			desired, err := kubeClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: desiredLabel + "=" + pool})
			if err != nil {
				return err
			}
			var want []string
			for _, n := range desired.Items {
				if n.Labels[poolLabel] != pool {
					return fmt.Errorf("node %s asks for %s but is labelled %q", n.Name, pool, n.Labels[poolLabel])
				}
				if n.Annotations["nodepool.openyurt.io/previous-attributes"] == "" {
					return fmt.Errorf("node %s was not synced by the NodePool controller", n.Name)
				}
				want = append(want, n.Name)
			}
			sort.Strings(want)
			if len(want) == 0 {
				return fmt.Errorf("no node asks for pool %s", pool)
			}
			p, err := tappClient.OpenYurtAppsV1alpha1().NodePools().Get(ctx, pool, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(p.Status.Nodes, want) || int(p.Status.ReadyNodeNum) != len(want) || p.Status.UnreadyNodeNum != 0 {
				return fmt.Errorf("status %+v, want %d ready nodes %v", p.Status, len(want), want)
			}
			return nil
		})
	}
	tb := parseTable(t, mustKubectl(t, "get", "np", "hangzhou"))
	if got := tb.cell(t, "hangzhou", "READYNODES"); got == "0" || got == "" {
		t.Errorf("kubectl get np hangzhou: READYNODES = %q", got)
	}
}

// TestYurtAppDaemonDeployments: one Deployment per pool whose pods run only on that pool's nodes; an
// image change rolls every pool; a child deleted by hand comes back; deleting the YurtAppDaemon garbage
// collects its children and revisions.
func TestYurtAppDaemonDeployments(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yad-deploy")
	ctx := testContext(t, 5*yadTimeout)
	yad := createYAD(t, ns, yadObject("web", "nginx:1.25", 2, false, map[string]string{localPoolLabel: "true"}))

	kids := waitChildren(t, ns, yad, false, "nginx:1.25", localPools...)
	waitPoolPods(t, ns, "web", "nginx:1.25", 2, localPools...)
	status := waitYADStatus(t, ns, "web", "Deployment", localPools...)
	for pool, c := range kids {
		if c.revision != status.Status.CurrentRevision {
			t.Errorf("child of %s at revision %s, status.currentRevision %s", pool, c.revision, status.Status.CurrentRevision)
		}
	}
	out := mustKubectl(t, "get", "yad", "web", "-n", ns)
	if got := parseTable(t, out).cell(t, "web", "NODEPOOLS"); got != "2" {
		t.Errorf("kubectl get yad: NODEPOOLS = %q, want 2", got)
	}

	// Changing the image rolls every pool.
	first := status.Status.CurrentRevision
	updateYAD(t, ns, "web", func(y *v1alpha1.YurtAppDaemon) {
		y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	})
	kids = waitChildren(t, ns, yad, false, "nginx:1.26", localPools...)
	waitPoolPods(t, ns, "web", "nginx:1.26", 2, localPools...)
	status = waitYADStatus(t, ns, "web", "Deployment", localPools...)
	if status.Status.CurrentRevision == first || kids["hangzhou"].revision != status.Status.CurrentRevision {
		t.Errorf("after the image change: currentRevision %s (was %s), child revision %s", status.Status.CurrentRevision, first, kids["hangzhou"].revision)
	}
	if revs, err := ownedRevisions(ctx, ns, yad.UID); err != nil || len(revs) != 2 {
		t.Errorf("ControllerRevisions = %v (%v), want 2", revs, err)
	}

	// A child deleted by hand is recreated.
	gone := kids["shanghai"]
	if err := kubeClient.AppsV1().Deployments(ns).Delete(ctx, gone.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	yadPollUntil(t, yadTimeout, "recreation of "+gone.name, func() error {
		got, err := children(ctx, ns, yad.UID, false)
		if err != nil {
			return err
		}
		if c, ok := got["shanghai"]; !ok || c.uid == gone.uid {
			return fmt.Errorf("not recreated yet")
		}
		return nil
	})
	waitPoolPods(t, ns, "web", "nginx:1.26", 2, "shanghai")

	// Deleting the YurtAppDaemon garbage-collects its children.
	if err := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ns, yad.UID, false)
}

// TestYurtAppDaemonStatefulSets is TestYurtAppDaemonDeployments for a StatefulSet template.
func TestYurtAppDaemonStatefulSets(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yad-sts")
	ctx := testContext(t, 5*yadTimeout)
	yad := createYAD(t, ns, yadObject("db", "redis:7.0", 1, true, map[string]string{localPoolLabel: "true"}))

	kids := waitChildren(t, ns, yad, true, "redis:7.0", localPools...)
	waitPoolPods(t, ns, "db", "redis:7.0", 1, localPools...)
	waitYADStatus(t, ns, "db", "StatefulSet", localPools...)
	for pool, c := range kids {
		if _, err := kubeClient.CoreV1().Pods(ns).Get(ctx, c.name+"-0", metav1.GetOptions{}); err != nil {
			t.Errorf("pool %s: pod %s-0: %v", pool, c.name, err)
		}
	}

	updateYAD(t, ns, "db", func(y *v1alpha1.YurtAppDaemon) {
		y.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Image = "redis:7.2"
	})
	waitChildren(t, ns, yad, true, "redis:7.2", localPools...)
	waitPoolPods(t, ns, "db", "redis:7.2", 1, localPools...)
	waitYADStatus(t, ns, "db", "StatefulSet", localPools...)

	if err := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ns, yad.UID, true)
}

// TestYurtAppDaemonPoolLifecycle: a third pool formed from a new kwok node (labelled with
// desired-nodepool) gets a child whose pods tolerate the pool's taints and run on that node; a taint added
// to the pool reaches its child only; the pool leaving the selection deletes its child; the node leaving
// the pool loses the pool's labels and taints.
func TestYurtAppDaemonPoolLifecycle(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yad-pools")
	ctx := testContext(t, 6*yadTimeout)
	suffix := ns[strings.LastIndex(ns, "-")+1:]
	selectKey := "lifecycle.e2e.tapp.io/" + suffix
	poolC, nodeName := "e2e-pool-c-"+suffix, "e2e-yad-node-"+suffix
	yes := "yes"

	// hangzhou joins the selection of this test.
	if err := patchPoolLabels(ctx, "hangzhou", map[string]*string{selectKey: &yes}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = patchPoolLabels(context.Background(), "hangzhou", map[string]*string{selectKey: nil})
	})
	// The node is tainted from its creation so that no other test's pods land on it; the YurtAppDaemon
	// tolerates that taint in its template (merged with the pool's tolerations).
	private := corev1.Taint{Key: "e2e.tapp.io/private", Value: suffix, Effect: corev1.TaintEffectNoSchedule}
	yadObj := yadObject("edge", "busybox:1.36", 1, false, map[string]string{selectKey: yes})
	yadObj.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Tolerations = []corev1.Toleration{
		{Key: private.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	yad := createYAD(t, ns, yadObj)
	kids := waitChildren(t, ns, yad, false, "busybox:1.36", "hangzhou")
	webA := kids["hangzhou"]

	// The third pool: a NodePool and a node asking to join it.
	poolTaint := corev1.Taint{Key: "e2e.tapp.io/pool-c", Value: "c", Effect: corev1.TaintEffectNoSchedule}
	_, err := tappClient.OpenYurtAppsV1alpha1().NodePools().Create(ctx, &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: poolC, Labels: map[string]string{selectKey: yes}},
		Spec: v1alpha1.NodePoolSpec{Type: "Edge", Labels: map[string]string{"e2e.tapp.io/zone": "c"},
			Taints: []corev1.Taint{poolTaint}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tappClient.OpenYurtAppsV1alpha1().NodePools().Delete(context.Background(), poolC, metav1.DeleteOptions{})
	})
	_, err = kubeClient.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        nodeName,
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{"kubernetes.io/hostname": nodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok", desiredLabel: poolC},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{private}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kubeClient.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{})
	})

	// The NodePool controller puts the node into the pool with the pool's label and taint.
	yadPollUntil(t, yadTimeout, "node "+nodeName+" joining "+poolC, func() error {
		n, err := kubeClient.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Labels[poolLabel] != poolC || n.Labels["e2e.tapp.io/zone"] != "c" || !hasTaint(n.Spec.Taints, poolTaint) || !hasTaint(n.Spec.Taints, private) {
			return fmt.Errorf("labels %v taints %v", n.Labels, n.Spec.Taints)
		}
		p, err := tappClient.OpenYurtAppsV1alpha1().NodePools().Get(ctx, poolC, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(p.Status.Nodes, []string{nodeName}) || p.Status.ReadyNodeNum != 1 {
			return fmt.Errorf("pool status %+v", p.Status)
		}
		return nil
	})

	// The YurtAppDaemon adds a workload for the new pool, tolerating its taint; its pod runs on the node.
	kids = waitChildren(t, ns, yad, false, "busybox:1.36", "hangzhou", poolC)
	wantTol := corev1.Toleration{Key: poolTaint.Key, Operator: corev1.TolerationOpEqual, Value: "c", Effect: corev1.TaintEffectNoSchedule}
	if tols := kids[poolC].tolerations; !hasToleration(tols, wantTol) || !hasToleration(tols, yadObj.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Tolerations[0]) {
		t.Errorf("tolerations of %s = %v, want the template's and %v", kids[poolC].name, tols, wantTol)
	}
	waitPoolPods(t, ns, "edge", "busybox:1.36", 1, "hangzhou", poolC)
	waitYADStatus(t, ns, "edge", "Deployment", "hangzhou", poolC)

	// A taint added to the pool: a toleration on its child only.
	extra := corev1.Taint{Key: "e2e.tapp.io/extra", Effect: corev1.TaintEffectPreferNoSchedule}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := tappClient.OpenYurtAppsV1alpha1().NodePools().Get(ctx, poolC, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.Taints = append(p.Spec.Taints, extra)
		_, err = tappClient.OpenYurtAppsV1alpha1().NodePools().Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wantExtra := corev1.Toleration{Key: extra.Key, Operator: corev1.TolerationOpExists, Effect: extra.Effect}
	yadPollUntil(t, yadTimeout, "toleration of the new taint", func() error {
		got, err := children(ctx, ns, yad.UID, false)
		if err != nil {
			return err
		}
		if !hasToleration(got[poolC].tolerations, wantExtra) {
			return fmt.Errorf("tolerations of %s: %v", got[poolC].name, got[poolC].tolerations)
		}
		n, err := kubeClient.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !hasTaint(n.Spec.Taints, extra) {
			return fmt.Errorf("node taints %v", n.Spec.Taints)
		}
		return nil
	})
	if got, err := children(ctx, ns, yad.UID, false); err != nil || got["hangzhou"].generation != webA.generation {
		t.Errorf("the child of hangzhou changed for a taint of %s: generation %d, was %d (%v)", poolC, got["hangzhou"].generation, webA.generation, err)
	}

	// The pool leaves the selection: its workload is deleted, hangzhou's stays.
	if err := patchPoolLabels(ctx, poolC, map[string]*string{selectKey: nil}); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, ns, yad, false, "busybox:1.36", "hangzhou")
	waitYADStatus(t, ns, "edge", "Deployment", "hangzhou")

	// The node leaves the pool: the pool's label, labels and taints are removed, its own taint stays.
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, desiredLabel)
	if _, err := kubeClient.CoreV1().Nodes().Patch(ctx, nodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	yadPollUntil(t, yadTimeout, "node "+nodeName+" leaving "+poolC, func() error {
		n, err := kubeClient.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := n.Labels[poolLabel]; ok || n.Labels["e2e.tapp.io/zone"] != "" || hasTaint(n.Spec.Taints, poolTaint) || hasTaint(n.Spec.Taints, extra) || !hasTaint(n.Spec.Taints, private) {
			return fmt.Errorf("labels %v taints %v", n.Labels, n.Spec.Taints)
		}
		p, err := tappClient.OpenYurtAppsV1alpha1().NodePools().Get(ctx, poolC, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.Status.Nodes) != 0 || p.Status.ReadyNodeNum != 0 {
			return fmt.Errorf("pool status %+v", p.Status)
		}
		return nil
	})
}

func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for _, x := range taints {
		if x.Key == t.Key && x.Value == t.Value && x.Effect == t.Effect {
			return true
		}
	}
	return false
}

func hasToleration(tols []corev1.Toleration, t corev1.Toleration) bool {
	for _, x := range tols {
		if x.Key == t.Key && x.Operator == t.Operator && x.Value == t.Value && x.Effect == t.Effect {
			return true
		}
	}
	return false
}
