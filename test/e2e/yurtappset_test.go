//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// End-to-end tests of the YurtAppSet (apps.openyurt.io/v1beta1) controller on the local cluster, through
// kubectl: workloads as yurt-manager renders them (generateName <yas>-<pool>-, the pool, revision and
// owner labels, the pool's nodeSelector), tweaks per pool, pools joining and leaving the selection.

const refYurtAppSetLabel = "apps.openyurt.io/ref-yurtappset"

// yasWorkload is a YurtAppSet's Deployment or StatefulSet seen through what the tests check.
type yasWorkload struct {
	name, uid, image     string
	replicas             int32
	labels, podLabels    map[string]string
	nodeSelector         map[string]string
	generateName         string
	ownerKind, ownerName string
}

// yasWorkloads returns the workloads of ns controlled by the YurtAppSet with UID owner, by pool.
func yasWorkloads(ctx context.Context, ns string, owner types.UID, statefulSet bool) (map[string]yasWorkload, error) {
	out := map[string]yasWorkload{}
	add := func(meta metav1.ObjectMeta, replicas *int32, image string, podLabels, nodeSelector map[string]string) {
		ref := metav1.GetControllerOf(&meta)
		if ref == nil || ref.UID != owner || meta.DeletionTimestamp != nil {
			return
		}
		out[meta.Labels[poolNameLabel]] = yasWorkload{name: meta.Name, uid: string(meta.UID), image: image, replicas: ptr.Deref(replicas, 1),
			labels: meta.Labels, podLabels: podLabels, nodeSelector: nodeSelector, generateName: meta.GenerateName,
			ownerKind: ref.Kind, ownerName: ref.Name}
	}
	if statefulSet {
		list, err := kubeClient.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, s := range list.Items {
			add(s.ObjectMeta, s.Spec.Replicas, s.Spec.Template.Spec.Containers[0].Image, s.Spec.Template.Labels, s.Spec.Template.Spec.NodeSelector)
		}
		return out, nil
	}
	list, err := kubeClient.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, d := range list.Items {
		add(d.ObjectMeta, d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.Spec.Template.Labels, d.Spec.Template.Spec.NodeSelector)
	}
	return out, nil
}

// yasWant is what one pool's workload must look like.
type yasWant struct {
	image    string
	replicas int32
}

// waitYASWorkloads waits until the YurtAppSet ns/name has exactly one workload per pool of want, each
// rendered as yurt-manager renders it with the expected image and replicas, and returns them by pool.
func waitYASWorkloads(t testing.TB, ns, name string, statefulSet bool, want map[string]yasWant) map[string]yasWorkload {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	var got map[string]yasWorkload
	yadPollUntil(t, yadTimeout, fmt.Sprintf("workloads of YurtAppSet %s in pools %v", name, sortedKeys(want)), func() error {
		yas, err := tappClient.OpenYurtAppsV1beta1().YurtAppSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got, err = yasWorkloads(ctx, ns, yas.UID, statefulSet); err != nil {
			return err
		}
		if keys, wantKeys := sortedKeys(got), sortedKeys(want); strings.Join(keys, ",") != strings.Join(wantKeys, ",") {
			return fmt.Errorf("workloads in pools %v, want %v", keys, wantKeys)
		}
		for pool, w := range got {
			switch {
			case !strings.HasPrefix(w.name, name+"-"+pool+"-") || w.generateName != name+"-"+pool+"-":
				return fmt.Errorf("workload of pool %s is named %s (generateName %q)", pool, w.name, w.generateName)
			case w.labels[poolNameLabel] != pool || w.labels[refYurtAppSetLabel] != name || w.labels[revisionLabel] != yas.Status.CurrentRevision:
				return fmt.Errorf("workload %s: labels %v, currentRevision %q", w.name, w.labels, yas.Status.CurrentRevision)
			case w.podLabels[poolNameLabel] != pool || w.nodeSelector[poolLabel] != pool:
				return fmt.Errorf("workload %s: pod labels %v, nodeSelector %v", w.name, w.podLabels, w.nodeSelector)
			case w.ownerKind != "YurtAppSet" || w.ownerName != name:
				return fmt.Errorf("workload %s: controller %s %s", w.name, w.ownerKind, w.ownerName)
			case w.image != want[pool].image || w.replicas != want[pool].replicas:
				return fmt.Errorf("workload %s: image %s replicas %d, want %+v", w.name, w.image, w.replicas, want[pool])
			}
		}
		return nil
	})
	return got
}

// waitYASStatus waits until the YurtAppSet counts total workloads, all ready and updated, at its generation.
func waitYASStatus(t testing.TB, ns, name string, total int32) {
	t.Helper()
	ctx := testContext(t, yadTimeout)
	yadPollUntil(t, yadTimeout, "status of YurtAppSet "+name, func() error {
		yas, err := tappClient.OpenYurtAppsV1beta1().YurtAppSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s := yas.Status
		if s.ObservedGeneration != yas.Generation || s.TotalWorkloads != total || s.ReadyWorkloads != total || s.UpdatedWorkloads != total {
			return fmt.Errorf("status %+v at generation %d", s, yas.Generation)
		}
		return nil
	})
}

// yasManifest is a YurtAppSet named name whose pods run image: spec.pools and a nodepoolSelector on
// selectorLabel, a replicas tweak for the hangzhou pool and an image tweak for the shanghai pool.
func yasManifest(ns, name, kind string, pools []string, selectorLabel string) string {
	extra := ""
	if kind == "statefulSetTemplate" {
		extra = "\n          serviceName: " + name + "\n          podManagementPolicy: Parallel"
	}
	return fmt.Sprintf(`apiVersion: apps.openyurt.io/v1beta1
kind: YurtAppSet
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  pools: [%[3]s]
  nodepoolSelector:
    matchLabels:
      %[4]s: "true"
  workload:
    workloadTemplate:
      %[5]s:
        metadata:
          labels:
            app: %[1]s
        spec:
          replicas: 1%[6]s
          selector:
            matchLabels:
              app: %[1]s
          template:
            metadata:
              labels:
                app: %[1]s
            spec:
              terminationGracePeriodSeconds: 0
              containers:
              - name: main
                image: nginx:1.25
    workloadTweaks:
    - pools: [hangzhou]
      tweaks:
        replicas: 2
    - nodepoolSelector:
        matchLabels:
          e2e.tapp.io/yas-image: %[2]s
      pools: [shanghai]
      tweaks:
        containerImages:
        - name: main
          targetImage: nginx:1.26
`, name, ns, strings.Join(pools, ", "), selectorLabel, kind, extra)
}

// TestYurtAppSetTweaksAndPools: a YurtAppSet over the hangzhou pool (spec.pools) gets one Deployment with
// its replicas tweak; the shanghai pool labelled to match nodepoolSelector gets one with its image tweak,
// and loses it when the label goes; spec.pools edited moves the workload; pods run on their pool's nodes.
func TestYurtAppSetTweaksAndPools(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yas")
	ctx := testContext(t, 5*yadTimeout)
	selectorLabel := "e2e.tapp.io/yas-" + ns
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), yadTimeout)
		defer cancel()
		_ = patchPoolLabels(ctx, "shanghai", map[string]*string{selectorLabel: nil})
	})
	mustKubectlIn(t, yasManifest(ns, "web", "deploymentTemplate", []string{"hangzhou"}, selectorLabel), "apply", "-f", "-")

	first := waitYASWorkloads(t, ns, "web", false, map[string]yasWant{"hangzhou": {"nginx:1.25", 2}})
	waitPoolPods(t, ns, "web", "nginx:1.25", 2, "hangzhou")
	waitYASStatus(t, ns, "web", 1)
	out := mustKubectl(t, "get", "yas", "web", "-n", ns)
	if got := parseTable(t, out).cell(t, "web", "TOTAL"); got != "1" {
		t.Errorf("kubectl get yas: TOTAL = %q, want 1\n%s", got, out)
	}

	// The shanghai pool joins through nodepoolSelector: its workload carries the image tweak.
	if err := patchPoolLabels(ctx, "shanghai", map[string]*string{selectorLabel: ptr.To("true")}); err != nil {
		t.Fatal(err)
	}
	both := waitYASWorkloads(t, ns, "web", false, map[string]yasWant{"hangzhou": {"nginx:1.25", 2}, "shanghai": {"nginx:1.26", 1}})
	waitPoolPods(t, ns, "web", "nginx:1.26", 1, "shanghai")
	waitYASStatus(t, ns, "web", 2)
	if both["hangzhou"].uid != first["hangzhou"].uid {
		t.Errorf("the hangzhou workload was replaced when shanghai joined")
	}

	// It leaves: its workload is deleted, hangzhou's untouched.
	if err := patchPoolLabels(ctx, "shanghai", map[string]*string{selectorLabel: nil}); err != nil {
		t.Fatal(err)
	}
	waitYASWorkloads(t, ns, "web", false, map[string]yasWant{"hangzhou": {"nginx:1.25", 2}})

	// spec.pools edited: hangzhou leaves, shanghai joins by name.
	mustKubectl(t, "patch", "yas", "web", "-n", ns, "--type=merge", "-p", `{"spec":{"pools":["shanghai"]}}`)
	moved := waitYASWorkloads(t, ns, "web", false, map[string]yasWant{"shanghai": {"nginx:1.26", 1}})
	waitPoolPods(t, ns, "web", "nginx:1.26", 1, "shanghai")
	waitPoolPods(t, ns, "web", "nginx:1.25", 0, "hangzhou")
	if moved["shanghai"].uid == both["shanghai"].uid {
		t.Errorf("the shanghai workload deleted earlier is still there")
	}
}

// TestYurtAppSetStatefulSet: a statefulSetTemplate over both local pools, one StatefulSet per pool with
// the tweaks, pods on the pool's nodes.
func TestYurtAppSetStatefulSet(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yas-sts")
	mustKubectlIn(t, yasManifest(ns, "db", "statefulSetTemplate", []string{"hangzhou", "shanghai"}, "e2e.tapp.io/none"), "apply", "-f", "-")
	got := waitYASWorkloads(t, ns, "db", true, map[string]yasWant{"hangzhou": {"nginx:1.25", 2}, "shanghai": {"nginx:1.26", 1}})
	waitPoolPods(t, ns, "db", "nginx:1.25", 2, "hangzhou")
	waitPoolPods(t, ns, "db", "nginx:1.26", 1, "shanghai")
	waitYASStatus(t, ns, "db", 2)
	ctx := testContext(t, yadTimeout)
	for pool, w := range got {
		if _, err := kubeClient.CoreV1().Pods(ns).Get(ctx, w.name+"-0", metav1.GetOptions{}); err != nil {
			t.Errorf("pool %s: pod %s-0: %v", pool, w.name, err)
		}
	}
}

// TestYurtAppSetUpstreamSample applies OpenYurt's own YurtAppSet example (its user manual's
// yurtappset_test.yaml, unchanged: namespace default, pools np1xxxxxx and np2xxxxxx) after creating those
// pools (without nodes: the pods stay Pending): one Deployment per pool, np2xxxxxx's with its tweaks
// (3 replicas, nginx:1.20.1, the patch's label foo=bar), np1xxxxxx's as the template says.
func TestYurtAppSetUpstreamSample(t *testing.T) {
	ctx := testContext(t, 3*yadTimeout)
	manifest, err := os.ReadFile(repoPath("test", "e2e", "testdata", "yurtappset-sample.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"np1xxxxxx", "np2xxxxxx"} {
		if _, err := tappClient.OpenYurtAppsV1alpha1().NodePools().Create(ctx, &v1alpha1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.NodePoolSpec{Type: "Edge"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating NodePool %s: %v", name, err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), yadTimeout)
			defer cancel()
			_ = tappClient.OpenYurtAppsV1alpha1().NodePools().Delete(ctx, name, metav1.DeleteOptions{})
		})
	}
	mustKubectlIn(t, string(manifest), "apply", "-f", "-")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), yadTimeout)
		defer cancel()
		_ = tappClient.OpenYurtAppsV1beta1().YurtAppSets("default").Delete(ctx, "example", metav1.DeleteOptions{})
		_ = kubeClient.AppsV1().Deployments("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: refYurtAppSetLabel + "=example"})
	})
	got := waitYASWorkloads(t, "default", "example", false, map[string]yasWant{"np1xxxxxx": {"nginx:1.19.1", 2}, "np2xxxxxx": {"nginx:1.20.1", 3}})
	if got["np2xxxxxx"].labels["foo"] != "bar" || got["np1xxxxxx"].labels["foo"] != "" {
		t.Errorf("patch tweak: np2xxxxxx labels %v, np1xxxxxx labels %v", got["np2xxxxxx"].labels, got["np1xxxxxx"].labels)
	}
	if got["np1xxxxxx"].labels["app"] != "example" {
		t.Errorf("np1xxxxxx lost the template's labels: %v", got["np1xxxxxx"].labels)
	}
	d, err := kubeClient.AppsV1().Deployments("default").Get(ctx, got["np2xxxxxx"].name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Annotations["apps.openyurt.io/ref-nodepool"] != "np2xxxxxx" || d.Spec.Selector.MatchLabels[poolNameLabel] != "np2xxxxxx" {
		t.Errorf("np2xxxxxx Deployment: annotations %v selector %v", d.Annotations, d.Spec.Selector)
	}
	out := mustKubectl(t, "get", "yas", "example", "-n", "default")
	if got := parseTable(t, out).cell(t, "example", "TOTAL"); got != "2" {
		t.Errorf("kubectl get yas: TOTAL = %q, want 2\n%s", got, out)
	}
	var conds []string
	yas, err := tappClient.OpenYurtAppsV1beta1().YurtAppSets("default").Get(ctx, "example", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range yas.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	sort.Strings(conds)
	if !strings.Contains(strings.Join(conds, " "), "PoolFound=True") {
		t.Errorf("conditions %v, want PoolFound=True", conds)
	}
}

// TestYurtAppSetAdoptsYurtManagerWorkload: a Deployment shaped as yurt-manager makes it (generateName
// <yas>-<pool>-, the pool, owner and revision labels with yurt-manager's revision name, the pool's
// nodeSelector), left without owner as a migration leaves it, with its pods running; the YurtAppSet created
// afterwards adopts it under its name and UID, and no pod is replaced.
func TestYurtAppSetAdoptsYurtManagerWorkload(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yas-adopt")
	ctx := testContext(t, 3*yadTimeout)
	const upstreamRevision = "web-6d4b9c7f5"
	mustKubectlIn(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  generateName: web-hangzhou-
  namespace: %[1]s
  labels:
    app: web
    apps.openyurt.io/pool-name: hangzhou
    apps.openyurt.io/ref-yurtappset: web
    apps.openyurt.io/controller-revision-hash: %[2]s
  annotations:
    apps.openyurt.io/ref-nodepool: hangzhou
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
      apps.openyurt.io/pool-name: hangzhou
  template:
    metadata:
      labels:
        app: web
        apps.openyurt.io/pool-name: hangzhou
        apps.openyurt.io/controller-revision-hash: %[2]s
    spec:
      terminationGracePeriodSeconds: 0
      nodeSelector:
        apps.openyurt.io/nodepool: hangzhou
      containers:
      - name: main
        image: nginx:1.25
`, ns, upstreamRevision), "create", "-f", "-")
	waitPoolPods(t, ns, "web", "nginx:1.25", 2, "hangzhou")
	podUIDs := func() map[string]bool {
		list, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, p := range list.Items {
			out[string(p.UID)] = true
		}
		return out
	}
	before := podUIDs()
	list, err := kubeClient.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("Deployments: %v (%v)", list, err)
	}
	original := list.Items[0]

	mustKubectlIn(t, fmt.Sprintf(`apiVersion: apps.openyurt.io/v1beta1
kind: YurtAppSet
metadata:
  name: web
  namespace: %s
spec:
  pools: [hangzhou]
  workload:
    workloadTemplate:
      deploymentTemplate:
        metadata:
          labels:
            app: web
        spec:
          replicas: 2
          selector:
            matchLabels:
              app: web
          template:
            metadata:
              labels:
                app: web
            spec:
              terminationGracePeriodSeconds: 0
              containers:
              - name: main
                image: nginx:1.25
`, ns), "apply", "-f", "-")
	got := waitYASWorkloads(t, ns, "web", false, map[string]yasWant{"hangzhou": {"nginx:1.25", 2}})
	if w := got["hangzhou"]; w.uid != string(original.UID) || w.name != original.Name {
		t.Errorf("workload %s (%s), want yurt-manager's %s (%s) adopted", w.name, w.uid, original.Name, original.UID)
	}
	waitYASStatus(t, ns, "web", 1)
	d, err := kubeClient.AppsV1().Deployments(ns).Get(ctx, original.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec.Template.Labels[revisionLabel] != upstreamRevision {
		t.Errorf("pod template rewritten: revision label %q", d.Spec.Template.Labels[revisionLabel])
	}
	waitPoolPods(t, ns, "web", "nginx:1.25", 2, "hangzhou")
	if after := podUIDs(); !reflect.DeepEqual(after, before) {
		t.Errorf("pods replaced: before %v, after %v", sortedKeys(before), sortedKeys(after))
	}
}
