//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// TestNodePoolLeaders applies OpenYurt's own v1beta2 NodePool (the shape kubectl get np -o yaml prints on
// OpenYurt v1.7, leader election on) unchanged with kubectl, puts two kwok nodes of its own in the pool
// (tainted, so no other test's pods land there), and follows the leader: the first node by name leads;
// once kwok turns it NotReady the other one leads; once both are NotReady LeaderReady is False, saying why.
// kubectl get np shows the leader columns, and v1alpha1 reads the leaders in their annotation.
func TestNodePoolLeaders(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*yadTimeout)
	const pool = "yurt-pool2"
	nodes := []string{"np-leader-a", "np-leader-b"}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, name := range nodes {
			_ = kubeClient.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		}
		_ = tappClient.OpenYurtAppsV1beta2().NodePools().Delete(ctx, pool, metav1.DeleteOptions{})
	})
	for _, name := range nodes {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": name, desiredLabel: pool}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "e2e.tapp.io/leader-test", Effect: corev1.TaintEffectNoSchedule}}},
		}
		if _, err := kubeClient.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating node %s: %v", name, err)
		}
		// A node kept from an interrupted run may still be marked not ready.
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, localcluster.NotReadyLabel)
		if _, err := kubeClient.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("unmarking node %s: %v", name, err)
		}
	}
	manifest, err := os.ReadFile(repoPath("test", "e2e", "testdata", "openyurt", "nodepool-v1beta2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mustKubectlIn(t, string(manifest), "apply", "-f", "-")

	leaderIs := func(want string, ready corev1.ConditionStatus, reason string) func() error {
		return func() error {
			p, err := tappClient.OpenYurtAppsV1beta2().NodePools().Get(ctx, pool, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var got []string
			for _, l := range p.Status.LeaderEndpoints {
				got = append(got, l.NodeName+"="+l.Address)
			}
			var cond *v1beta2.NodePoolCondition
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == v1beta2.LeaderReady {
					cond = &p.Status.Conditions[i]
				}
			}
			if strings.Join(got, ",") != want || cond == nil || cond.Status != ready || cond.Reason != reason ||
				int(p.Status.LeaderNum) != len(got) || (want != "" && p.Status.LeaderLastElectedTime == nil) {
				return fmt.Errorf("leaders %v, leaderNum %d, condition %+v; want %q, LeaderReady %s %s", got, p.Status.LeaderNum, cond, want, ready, reason)
			}
			return nil
		}
	}
	yadPollUntil(t, 2*yadTimeout, "the first node leads", leaderIs("np-leader-a=127.0.0.1", corev1.ConditionTrue, "LeadersElected"))
	tb := parseTable(t, mustKubectl(t, "get", "np", pool))
	tb.requireHeader(t, "NAME", "TYPE", "READYNODES", "NOTREADYNODES", "LEADERNODES", "LEADERELECTIONAGE", "AGE")
	if got := tb.cell(t, pool, "LEADERNODES"); got != "1" {
		t.Errorf("kubectl get np: LEADERNODES = %q, want 1", got)
	}
	alpha := mustKubectl(t, "get", "nodepools.v1alpha1.apps.openyurt.io", pool,
		"-o", `jsonpath={.metadata.annotations.nodepool\.tapp\.io/leaderEndpoints}`)
	if alpha != `[{"nodeName":"np-leader-a","address":"127.0.0.1"}]` {
		t.Errorf("v1alpha1 leaderEndpoints annotation = %q", alpha)
	}

	setNotReady := func(name string) {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, localcluster.NotReadyLabel)
		if _, err := kubeClient.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("marking node %s not ready: %v", name, err)
		}
	}
	setNotReady("np-leader-a")
	yadPollUntil(t, 2*yadTimeout, "the leader moves off the NotReady node", leaderIs("np-leader-b=127.0.0.1", corev1.ConditionTrue, "LeadersElected"))
	setNotReady("np-leader-b")
	yadPollUntil(t, 2*yadTimeout, "no leader without a Ready node", leaderIs("", corev1.ConditionFalse, "NoReadyNodes"))
	msg := mustKubectl(t, "get", "np", pool, "-o", `jsonpath={.status.conditions[?(@.type=="LeaderReady")].message}`)
	requireContains(t, "LeaderReady message", msg, "no leader can be elected", "0 of the pool's 2 nodes are Ready")
}
