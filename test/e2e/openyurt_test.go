//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestYurtAppDaemonAndNodePool applies the example NodePool and YurtAppDaemon with kubectl and reads their
// table columns.
func TestYurtAppDaemonAndNodePool(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "openyurt")

	// The shipped examples, with their pool renamed: on make run's cluster the pool hangzhou takes nodes and
	// taints them, which the other tests of this shared cluster must not see (TestLocalUp runs the examples
	// unchanged on a cluster of its own).
	out := mustKubectlIn(t, examplePoolManifest(t, "nodepool.yaml"), "apply", "-f", "-")
	requireContains(t, "kubectl apply nodepool.yaml", out, "nodepool.apps.openyurt.io/example-zone created")
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "nodepool", "example-zone", "--ignore-not-found") })

	tb := parseTable(t, mustKubectl(t, "get", "np", "example-zone"))
	tb.requireHeader(t, "NAME", "TYPE", "READYNODES", "NOTREADYNODES", "LEADERNODES", "LEADERELECTIONAGE", "AGE")
	if got := tb.cell(t, "example-zone", "TYPE"); got != "Edge" {
		t.Errorf("TYPE = %q, want Edge", got)
	}
	for _, col := range []string{"READYNODES", "NOTREADYNODES"} {
		if got := tb.cell(t, "example-zone", col); got != "0" {
			t.Errorf("%s = %q, want 0", col, got)
		}
	}
	tb = parseTable(t, mustKubectl(t, "get", "nodepools.apps.openyurt.io", "-o", "wide"))
	if got := tb.cell(t, "example-zone", "SELECTOR"); got != "apps.openyurt.io/nodepool=example-zone" {
		t.Errorf("wide SELECTOR = %q, want apps.openyurt.io/nodepool=example-zone", got)
	}
	// Defaults and the type label.
	if got := mustKubectl(t, "get", "np", "example-zone", "-o", `jsonpath={.metadata.labels.nodepool\.openyurt\.io/type} {.spec.selector.matchLabels}`); got != `edge {"apps.openyurt.io/nodepool":"example-zone"}` {
		t.Errorf("type label and selector = %q", got)
	}
	// A cluster-scoped resource ignores -n.
	if _, err := kubectl(t, "get", "np", "example-zone", "-n", ns); err != nil {
		t.Errorf("get np -n: %v", err)
	}

	out = mustKubectlIn(t, examplePoolManifest(t, "yurtappdaemon.yaml"), "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply yurtappdaemon.yaml", out, "yurtappdaemon.apps.openyurt.io/coredns created")
	tb = parseTable(t, mustKubectl(t, "get", "yad", "-n", ns))
	tb.requireHeader(t, "NAME", "WORKLOADTEMPLATE", "NODEPOOLS", "AGE")
	if got := tb.cell(t, "coredns", "WORKLOADTEMPLATE"); got != "Deployment" {
		t.Errorf("WORKLOADTEMPLATE = %q, want Deployment", got)
	}
	// The controller finds the one pool the nodePoolSelector matches, example-zone.
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
	if got := tb.cell(t, "coredns", "NODEPOOLSELECTOR"); got != "region=example-zone" {
		t.Errorf("wide NODEPOOLSELECTOR = %q, want region=example-zone", got)
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
	out = mustKubectl(t, "delete", "np", "example-zone")
	requireContains(t, "kubectl delete np", out, `nodepool.apps.openyurt.io "example-zone" deleted`)
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

// examplePoolManifest is the example manifest file of artifacts/examples with its node pool hangzhou renamed
// example-zone, a pool without nodes.
func examplePoolManifest(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(repoPath("artifacts", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(raw), "hangzhou", "example-zone")
}
