//go:build e2e

package e2e

// End-to-end tests of spec.progressDeadlineSeconds (a rollout on an image the pod simulator never pulls
// reports ProgressDeadlineExceeded; kubectl wait and kubectl tapp rollout status see it) and of the default
// spread of a TApp's instances over the nodes.

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// TestTAppProgressDeadline: an image update to an image that is never pulled stops the rollout; once
// spec.progressDeadlineSeconds passed without progress, Progressing is False with ProgressDeadlineExceeded
// (kubectl wait --for=condition=Progressing=False returns), status.lastProgressTime says since when, and
// kubectl tapp rollout status exits non-zero at once, naming the deadline. An image that runs makes progress
// again and the rollout completes.
func TestTAppProgressDeadline(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-deadline")
	const name = "stuck"
	manifest := nginxTApp(name, 2, "nginx:1.7.9", "1") + "  progressDeadlineSeconds: 15\n"
	mustKubectlIn(t, manifest, "apply", "-n", ns, "-f", "-")
	waitPodsRun(t, ns, name, images(2, "nginx:1.7.9"))

	never := localcluster.NeverPulledRegistry + "nginx:1.7.9"
	mustKubectl(t, "patch", "tapp", name, "-n", ns, "--type=merge",
		"-p", fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%q}]}}}}`, never))
	mustKubectl(t, "wait", "tapp/"+name, "-n", ns, "--for=condition=Progressing=False", "--timeout=90s")
	tapp := getTApp(t, ns, name)
	c := meta.FindStatusCondition(tapp.Status.Conditions, tkestackv1.TAppProgressing)
	if c == nil || c.Reason != "ProgressDeadlineExceeded" || c.ObservedGeneration != tapp.Generation {
		t.Fatalf("Progressing %+v, want False/ProgressDeadlineExceeded for generation %d\n%s", c, tapp.Generation, describeStatus(tapp))
	}
	if tapp.Status.LastProgressTime == nil || !c.LastTransitionTime.After(tapp.Status.LastProgressTime.Time.Add(14*time.Second)) {
		t.Errorf("lastProgressTime %v, Progressing turned False at %v: want the deadline between them", tapp.Status.LastProgressTime, c.LastTransitionTime)
	}
	out, err := kubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=60s")
	if err == nil || !strings.Contains(out, `TApp "stuck" exceeded its progress deadline`) || strings.Contains(err.Error(), "timed out") {
		t.Fatalf("kubectl tapp rollout status = %q, %v; want a non-zero exit on the progress deadline", out, err)
	}

	// An image that runs: the rollout progresses again and completes.
	mustKubectl(t, "patch", "tapp", name, "-n", ns, "--type=merge",
		"-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.7.10"}]}}}}`)
	if _, err := kubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=90s"); err != nil {
		t.Fatal(err)
	}
	tapp = getTApp(t, ns, name)
	if c := meta.FindStatusCondition(tapp.Status.Conditions, tkestackv1.TAppProgressing); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Progressing %+v after the rollout completed, want True", c)
	}
}

// TestTAppSpreadByDefault: nine instances of a TApp whose template sets no topology spread constraints land
// three on each of the three nodes, each pod carrying the soft constraint over kubernetes.io/hostname on the
// TApp's selector; with spreadPolicy None the pods carry none.
func TestTAppSpreadByDefault(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-spread")
	// The pods may run on the local cluster's three nodes only, whatever taints other tests put on them.
	placement := `      tolerations:
      - operator: Exists
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: kubernetes.io/hostname
                operator: In
                values: [node-0, node-1, node-2]
`
	mustKubectlIn(t, nginxTApp("spread", 9, "nginx:1.7.9", "")+placement, "apply", "-n", ns, "-f", "-")
	mustKubectlIn(t, nginxTApp("packed", 1, "nginx:1.7.9", "")+placement+"  spreadPolicy: None\n", "apply", "-n", ns, "-f", "-")
	waitPodsRun(t, ns, "spread", images(9, "nginx:1.7.9"))
	waitPodsRun(t, ns, "packed", images(1, "nginx:1.7.9"))

	ctx := testContext(t, time.Minute)
	pods, err := instancePods(ctx, ns, "spread")
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, id := range sortedIDs(pods) {
		pod := pods[id]
		perNode[pod.Spec.NodeName]++
		want := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
		if got := pod.Spec.TopologySpreadConstraints; len(got) != 1 || got[0].TopologyKey != want[0].TopologyKey || got[0].MaxSkew != 1 ||
			got[0].WhenUnsatisfiable != corev1.ScheduleAnyway || got[0].LabelSelector == nil || got[0].LabelSelector.MatchLabels["app"] != "spread" {
			t.Errorf("pod %s: constraints %+v, want %+v", pod.Name, got, want)
		}
	}
	var counts []string
	for node, n := range perNode {
		counts = append(counts, fmt.Sprintf("%s=%d", node, n))
	}
	sort.Strings(counts)
	if got := strings.Join(counts, " "); got != "node-0=3 node-1=3 node-2=3" {
		t.Errorf("instances per node: %s, want 3 on each of node-0, node-1, node-2\n%s", got, describePods(pods))
	}
	packed, err := instancePods(ctx, ns, "packed")
	if err != nil {
		t.Fatal(err)
	}
	if pod := packed[0]; pod == nil || len(pod.Spec.TopologySpreadConstraints) > 0 {
		t.Errorf("spreadPolicy None: pod %+v, want no topology spread constraints", pod)
	}
}
