//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestConvertYurtAppDaemonToYurtAppSet converts a running YurtAppDaemon over the two local pools with
// kubectl tapp convert yurtappdaemon: the YurtAppSet then controls the same Deployments (names and UIDs),
// the pods are the same (UIDs, restart counts), the YurtAppDaemon is gone, and an image change through the
// YurtAppSet rolls the pods (it really manages them).
func TestConvertYurtAppDaemonToYurtAppSet(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yad2yas")
	ctx := testContext(t, 5*yadTimeout)
	yad := createYAD(t, ns, yadObject("web", "nginx:1.25", 1, false, map[string]string{localPoolLabel: "true"}))
	before := waitChildren(t, ns, yad, false, "nginx:1.25", localPools...)
	waitPoolPods(t, ns, "web", "nginx:1.25", 1, localPools...)
	pods := func() map[string]int32 {
		t.Helper()
		list, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int32{}
		for _, p := range list.Items {
			var restarts int32
			for _, c := range p.Status.ContainerStatuses {
				restarts += c.RestartCount
			}
			out[p.Name+"/"+string(p.UID)] = restarts
		}
		return out
	}
	podsBefore := pods()

	// A server dry run shows the YurtAppSet and changes nothing.
	backup := filepath.Join(t.TempDir(), "web.yurtappdaemon.yaml")
	out := mustKubectlTApp(t, "convert", "yurtappdaemon", "web", "-n", ns, "--backup-file", backup, "--dry-run=server", "-o", "yaml")
	if !strings.Contains(out, "kind: YurtAppSet") || !strings.Contains(out, "apps.openyurt.io/converted-from-yurtappdaemon: "+string(yad.UID)) {
		t.Errorf("dry run printed:\n%s", out)
	}
	if _, err := tappClient.OpenYurtAppsV1beta1().YurtAppSets(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry run created the YurtAppSet (%v)", err)
	}

	out = mustKubectlTApp(t, "convert", "yurtappdaemon", "web", "-n", ns, "--backup-file", backup)
	for _, line := range []string{"backup: YurtAppDaemon " + ns + "/web written to " + backup,
		"deleted YurtAppDaemon " + ns + "/web (orphan propagation", "created YurtAppSet " + ns + "/web",
		"adopted Deployment " + ns + "/web-hangzhou", "adopted Deployment " + ns + "/web-shanghai", "no workload was recreated"} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q", line)
		}
	}
	if _, err := tappClient.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("YurtAppDaemon still there (%v)", err)
	}
	waitYASStatus(t, ns, "web", 2)
	yas, err := tappClient.OpenYurtAppsV1beta1().YurtAppSets(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := yasWorkloads(ctx, ns, yas.UID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, pool := range localPools {
		if after[pool].name != before[pool].name || after[pool].uid != before[pool].uid || after[pool].image != "nginx:1.25" {
			t.Errorf("pool %s: YurtAppSet workload %+v, YurtAppDaemon's was %s (%s)", pool, after[pool], before[pool].name, before[pool].uid)
		}
	}
	for _, pool := range localPools {
		d, err := kubeClient.AppsV1().Deployments(ns).Get(ctx, before[pool].name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Generation != before[pool].generation {
			t.Errorf("Deployment %s: generation %d, was %d: its spec was rewritten", d.Name, d.Generation, before[pool].generation)
		}
	}
	if got := pods(); fmt.Sprint(got) != fmt.Sprint(podsBefore) {
		t.Errorf("pods (name/uid: restarts) changed across the conversion:\nbefore %v\nafter  %v", podsBefore, got)
	}

	// The YurtAppSet manages them: an image change rolls both pools.
	mustKubectl(t, "patch", "yurtappset", "web", "-n", ns, "--type=json", "-p",
		`[{"op":"replace","path":"/spec/workload/workloadTemplate/deploymentTemplate/spec/template/spec/containers/0/image","value":"nginx:1.26"}]`)
	waitPoolPods(t, ns, "web", "nginx:1.26", 1, localPools...)
	rolled, err := yasWorkloads(ctx, ns, yas.UID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, pool := range localPools {
		if rolled[pool].uid != before[pool].uid {
			t.Errorf("pool %s: the image change recreated the Deployment", pool)
		}
	}
}

// TestConvertYurtAppDaemonStatefulSets converts a YurtAppDaemon with a StatefulSet template: the YurtAppSet
// controls the same StatefulSets (names, UIDs, generations), and their pods are the same.
func TestConvertYurtAppDaemonStatefulSets(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yad2yas-sts")
	ctx := testContext(t, 5*yadTimeout)
	yad := createYAD(t, ns, yadObject("db", "nginx:1.25", 1, true, map[string]string{localPoolLabel: "true"}))
	before := waitChildren(t, ns, yad, true, "nginx:1.25", localPools...)
	waitPoolPods(t, ns, "db", "nginx:1.25", 1, localPools...)
	podUIDs := func() string {
		t.Helper()
		list, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=db"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range list.Items {
			out = append(out, p.Name+"/"+string(p.UID))
		}
		return strings.Join(out, ",")
	}
	podsBefore := podUIDs()

	mustKubectlTApp(t, "convert", "yurtappdaemon", "db", "-n", ns, "--backup-file", filepath.Join(t.TempDir(), "db.yaml"))
	waitYASStatus(t, ns, "db", 2)
	yas, err := tappClient.OpenYurtAppsV1beta1().YurtAppSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := yasWorkloads(ctx, ns, yas.UID, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, pool := range localPools {
		s, err := kubeClient.AppsV1().StatefulSets(ns).Get(ctx, before[pool].name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after[pool].uid != before[pool].uid || s.Generation != before[pool].generation {
			t.Errorf("pool %s: YurtAppSet workload %+v (generation %d), YurtAppDaemon's was %+v", pool, after[pool], s.Generation, before[pool])
		}
	}
	if got := podUIDs(); got != podsBefore {
		t.Errorf("pods changed across the conversion:\nbefore %s\nafter  %s", podsBefore, got)
	}
}
