//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// yasSample is a YurtAppSet shaped as OpenYurt's samples are: a Deployment template, pools by name and
// selector, and a tweak with replicas, an image and a patch.
const yasSample = `apiVersion: apps.openyurt.io/v1beta1
kind: YurtAppSet
metadata:
  name: web
spec:
  pools: [hangzhou]
  nodepoolSelector:
    matchLabels: {zone: east}
  workload:
    workloadTemplate:
      deploymentTemplate:
        metadata:
          labels: {app: web}
        spec:
          selector:
            matchLabels: {app: web}
          template:
            metadata:
              labels: {app: web}
            spec:
              containers:
              - name: nginx
                image: nginx:1.19
    workloadTweaks:
    - pools: [hangzhou]
      tweaks:
        replicas: 3
        containerImages:
        - name: nginx
          targetImage: nginx:1.20
        patches:
        - path: /metadata/labels/tier
          operation: add
          value: edge
`

// TestYurtAppSetThroughKubectl: through the aggregator, kubectl applies a YurtAppSet, lists it by its
// short name and category with OpenYurt's columns, explains its tweak fields, and is refused, naming the
// field, a tweak whose patch cannot apply and a tweak whose rendering the core API refuses.
func TestYurtAppSetThroughKubectl(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "yas-api")
	waitDefaultServiceAccount(t, ns)

	mustKubectlIn(t, yasSample, "apply", "--server-side", "-n", ns, "-f", "-")
	tb := parseTable(t, mustKubectl(t, "get", "yas", "-n", ns))
	tb.requireHeader(t, "NAME", "TOTAL", "READY", "UPDATED", "AGE")
	if got := tb.cell(t, "web", "TOTAL"); got == "" {
		t.Errorf("TOTAL of web is empty")
	}
	parseTable(t, mustKubectl(t, "get", "yurt", "-n", ns)).requireHeader(t, "NAME", "TOTAL", "READY", "UPDATED", "AGE")

	explained := mustKubectl(t, "explain", "yurtappsets.spec.workload.workloadTweaks.tweaks.patches")
	requireContains(t, "kubectl explain of the patches", explained, "operation", "RFC 6902", "{{nodepool-name}}")

	for _, bad := range []struct {
		name, from, to, field string
	}{
		{"patch that cannot apply", "path: /metadata/labels/tier\n          operation: add",
			"path: /spec/template/spec/tolerations/0\n          operation: remove", "spec.workload.workloadTweaks[0].tweaks.patches[0]"},
		{"rendering the core API refuses", "path: /metadata/labels/tier\n          operation: add\n          value: edge",
			"path: /spec/template/spec/tolerations\n          operation: add\n          value: [{key: k, operator: Bogus, effect: NoSchedule}]",
			"spec.workload.workloadTweaks[0].tweaks"},
	} {
		manifest := strings.Replace(strings.Replace(yasSample, bad.from, bad.to, 1), "name: web", "name: bad", 1)
		if manifest == yasSample {
			t.Fatalf("%s: the manifest did not change", bad.name)
		}
		out, err := kubectlIn(t, []byte(manifest), "apply", "--server-side", "-n", ns, "-f", "-")
		if err == nil {
			t.Errorf("%s: applied: %s", bad.name, out)
			continue
		}
		requireContains(t, bad.name, err.Error(), "is invalid", bad.field)
		if _, err := kubectl(t, "get", "yas", "bad", "-n", ns); err == nil {
			t.Errorf("%s: the refused YurtAppSet was stored", bad.name)
		}
	}
}
