//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestDiscovery checks that both groups are registered with the aggregator and discovered by kubectl with
// their short names, scope and kinds.
func TestDiscovery(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"v1.apps.tkestack.io", "v1alpha1.apps.openyurt.io", "v1beta1.apps.openyurt.io", "v1beta2.apps.openyurt.io"} {
		// The local cluster waits for every one; they share one backend.
		if out, err := kubectl(t, "wait", "--for=condition=Available", "--timeout=60s", "apiservice/"+name); err != nil {
			t.Errorf("APIService %s is not Available: %v\n%s", name, err, out)
		}
	}

	tb := parseTable(t, mustKubectl(t, "api-resources"))
	tb.requireHeader(t, "NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND")
	for _, want := range [][]string{
		{"tapps", "tapp", "apps.tkestack.io/v1", "true", "TApp"},
		{"yurtappdaemons", "yad", "apps.openyurt.io/v1alpha1", "true", "YurtAppDaemon"},
		{"nodepools", "np", "apps.openyurt.io/v1beta2", "false", "NodePool"}, // the group's preferred version
	} {
		var got []string
		for _, r := range tb.rows {
			if r[0] == want[0] && r[2] == want[2] {
				got = r
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("api-resources row for %s = %q, want %q", want[0], got, want)
		}
	}

	// The category "all" holds tapps and yurtappdaemons, not nodepools.
	out := mustKubectl(t, "api-resources", "--categories=all", "-o", "name")
	for _, want := range []string{"tapps.apps.tkestack.io", "yurtappdaemons.apps.openyurt.io"} {
		requireContains(t, "api-resources --categories=all", out, want+"\n")
	}
	if strings.Contains(out, "nodepools") {
		t.Errorf("nodepools are in the category all:\n%s", out)
	}
}
