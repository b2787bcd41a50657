//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestYurtAppDaemonAndNodePool applies the example NodePool and YurtAppDaemon with kubectl and reads their
// table columns.
func TestYurtAppDaemonAndNodePool(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "openyurt")

	out := mustKubectl(t, "apply", "-f", repoPath("artifacts", "examples", "nodepool.yaml"))
	requireContains(t, "kubectl apply nodepool.yaml", out, "nodepool.apps.openyurt.io/hangzhou created")
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "nodepool", "hangzhou", "--ignore-not-found") })

	tb := parseTable(t, mustKubectl(t, "get", "np", "hangzhou"))
	tb.requireHeader(t, "NAME", "TYPE", "READYNODES", "NOTREADYNODES", "AGE")
	if got := tb.cell(t, "hangzhou", "TYPE"); got != "Edge" {
		t.Errorf("TYPE = %q, want Edge", got)
	}
	for _, col := range []string{"READYNODES", "NOTREADYNODES"} {
		if got := tb.cell(t, "hangzhou", col); got != "0" {
			t.Errorf("%s = %q, want 0", col, got)
		}
	}
	tb = parseTable(t, mustKubectl(t, "get", "nodepools.apps.openyurt.io", "-o", "wide"))
	if got := tb.cell(t, "hangzhou", "SELECTOR"); got != "apps.openyurt.io/nodepool=hangzhou" {
		t.Errorf("wide SELECTOR = %q, want apps.openyurt.io/nodepool=hangzhou", got)
	}
	// Defaults and the type label.
	if got := mustKubectl(t, "get", "np", "hangzhou", "-o", `jsonpath={.metadata.labels.nodepool\.openyurt\.io/type} {.spec.selector.matchLabels}`); got != `edge {"apps.openyurt.io/nodepool":"hangzhou"}` {
		t.Errorf("type label and selector = %q", got)
	}
	// A cluster-scoped resource ignores -n.
	if _, err := kubectl(t, "get", "np", "hangzhou", "-n", ns); err != nil {
		t.Errorf("get np -n: %v", err)
	}

	out = mustKubectl(t, "apply", "-n", ns, "-f", repoPath("artifacts", "examples", "yurtappdaemon.yaml"))
	requireContains(t, "kubectl apply yurtappdaemon.yaml", out, "yurtappdaemon.apps.openyurt.io/coredns created")
	tb = parseTable(t, mustKubectl(t, "get", "yad", "-n", ns))
	tb.requireHeader(t, "NAME", "WORKLOADTEMPLATE", "NODEPOOLS", "AGE")
	if got := tb.cell(t, "coredns", "WORKLOADTEMPLATE"); got != "Deployment" {
		t.Errorf("WORKLOADTEMPLATE = %q, want Deployment", got)
	}
	// The controller finds the one pool the nodePoolSelector matches, hangzhou.
	eventually(t, 30*time.Second, "NODEPOOLS of coredns to be 1", func() error {
		tb := parseTable(t, mustKubectl(t, "get", "yad", "-n", ns))
		if got := tb.cell(t, "coredns", "NODEPOOLS"); got != "1" {
			return fmt.Errorf("NODEPOOLS = %q", got)
		}
		return nil
	})
	tb = parseTable(t, mustKubectl(t, "get", "yurtappdaemons", "-n", ns, "-o", "wide"))
	if got := tb.cell(t, "coredns", "SELECTOR"); got != "app=coredns" {
		t.Errorf("wide SELECTOR = %q, want app=coredns", got)
	}
	if got := tb.cell(t, "coredns", "NODEPOOLSELECTOR"); got != "region=hangzhou" {
		t.Errorf("wide NODEPOOLSELECTOR = %q, want region=hangzhou", got)
	}
	// Defaults.
	if got := mustKubectl(t, "get", "yad", "coredns", "-n", ns, "-o", "jsonpath={.spec.revisionHistoryLimit} {.spec.workloadTemplate.deploymentTemplate.spec.selector.matchLabels.app}"); got != "10 coredns" {
		t.Errorf("revisionHistoryLimit and workload selector = %q, want %q", got, "10 coredns")
	}
	out = mustKubectl(t, "describe", "yad", "coredns", "-n", ns)
	requireContains(t, "kubectl describe yad", out, "coredns", "Workload Template:")

	// Strict field validation refuses an unknown field.
	_, err := kubectlIn(t, []byte(strings.Replace(yadWithUnknownField, "NAME", "bad", 1)), "apply", "-n", ns, "-f", "-")
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.bogus"`) {
		t.Errorf("applying a YurtAppDaemon with an unknown field: err = %v, want strict decoding error on spec.bogus", err)
	}
	out = mustKubectl(t, "delete", "yad", "coredns", "-n", ns)
	requireContains(t, "kubectl delete yad", out, `yurtappdaemon.apps.openyurt.io "coredns" deleted`)
	out = mustKubectl(t, "delete", "np", "hangzhou")
	requireContains(t, "kubectl delete np", out, `nodepool.apps.openyurt.io "hangzhou" deleted`)
}

const yadWithUnknownField = `apiVersion: apps.openyurt.io/v1alpha1
kind: YurtAppDaemon
metadata:
  name: NAME
spec:
  bogus: true
  selector:
    matchLabels:
      app: x
  workloadTemplate:
    deploymentTemplate:
      metadata:
        labels:
          app: x
      spec:
        template:
          metadata:
            labels:
              app: x
          spec:
            containers:
            - name: x
              image: x
`
