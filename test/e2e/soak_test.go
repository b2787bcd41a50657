//go:build e2e

package e2e

import (
	"testing"

	"github.com/tapp-io/tapp-apiserver/pkg/chaos"
)

// TestSoak is the short variant of the soak of `make chaos` (pkg/chaos, `tapp-chaos --scenarios=soak`), on
// the suite's cluster: 2 minutes of mixed load (creates, updates, server-side apply from three field
// managers, scale, status writes, watches coming and going, NodePool churn, in-place updates of 40
// instances) while tapp-apiserver's RSS, Go heap, goroutines and open files are sampled every 15 s. It
// asserts the soak's targets (runChaos): no error but the expected conflicts, no 5xx in the server's own
// count, no restart, the fleet ready afterwards, and growth within chaos.QuickSoakBounds after the 30 s
// warm-up: goroutines within +150 and open files within +60 of the first sample after it, the Go heap in
// use (after a forced garbage collection) and the RSS within 2× of it (the embedded etcd's in-memory log
// and the watch cache's window of events grow the heap by design for longer than 2 minutes); once the load
// stops, goroutines within +40 and open files within +25 of the start. It does not call t.Parallel: the
// figures are the shared server's, and the parallel tests wait while it runs.
func TestSoak(t *testing.T) {
	res := runChaos(t, chaos.ScenarioSoak)
	s := res.Soak
	if s == nil {
		t.Fatal("the soak did not run")
	}
	t.Log("\n" + res.SoakMarkdown())
	// The figures mean something only if the load and the sampling happened as planned.
	if steady := chaos.SteadySamples(s.Samples, s.Warmup); len(steady) < 4 {
		t.Errorf("%d samples under load after the warm-up, want at least 4", len(steady))
	}
	for _, kind := range []string{"create tapps", "patch tapps", "delete tapps", "update tapps", "apply tapps", "update tapps/scale",
		"patch tapps (image)", "patch tapps/status", "list tapps", "create nodepools"} {
		if c := s.Requests[kind]; c == nil || c.Sent == 0 {
			t.Errorf("no %s request was sent", kind)
		}
	}
	t.Logf("requests: %+v", s.Totals())
	// Three managers applying one annotation, one forcing now and then: conflicts must have been met and
	// counted as such, not as errors.
	if c := s.Requests["apply tapps"]; c == nil || c.ApplyConflicts == 0 {
		t.Errorf("no server-side apply conflict among the applies: %+v", c)
	}
	if s.WatchesOpened < 10 || s.WatchesTimedUp == 0 || s.WatchesStopped == 0 || s.WatchEvents == 0 {
		t.Errorf("watches: %d opened, %d ended by the server, %d stopped by the client, %d events; the watches did not come and go",
			s.WatchesOpened, s.WatchesTimedUp, s.WatchesStopped, s.WatchEvents)
	}
}
