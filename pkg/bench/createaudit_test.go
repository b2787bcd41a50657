package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPodCreatesDone: only completed, successful, non-dry-run pod creates (not a subresource) of the namespace
// within the window count, and the last of them is returned.
func TestPodCreatesDone(t *testing.T) {
	ev := func(stage, verb, resource, sub, ns, uri string, code int, at string) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"x","stage":"` + stage +
			`","requestURI":"` + uri + `","verb":"` + verb + `","objectRef":{"resource":"` + resource + `","subresource":"` + sub +
			`","namespace":"` + ns + `","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":` + strconv.Itoa(code) +
			`},"requestReceivedTimestamp":"` + at + `","stageTimestamp":"` + at + `"}`
	}
	lines := []string{
		ev("ResponseComplete", "create", "pods", "", "wl", "/api/v1/namespaces/wl/pods", 201, "2026-11-27T02:00:01.100000Z"),
		ev("ResponseComplete", "create", "pods", "", "wl", "/api/v1/namespaces/wl/pods", 201, "2026-11-27T02:00:03.250000Z"),
		ev("ResponseComplete", "create", "pods", "", "wl", "/api/v1/namespaces/wl/pods?dryRun=All", 201, "2026-11-27T02:00:04Z"),
		ev("ResponseComplete", "create", "pods", "binding", "wl", "/api/v1/namespaces/wl/pods/a/binding", 201, "2026-11-27T02:00:05Z"),
		ev("ResponseComplete", "create", "pods", "", "other", "/api/v1/namespaces/other/pods", 201, "2026-11-27T02:00:06Z"),
		ev("ResponseComplete", "create", "pods", "", "wl", "/api/v1/namespaces/wl/pods", 409, "2026-11-27T02:00:07Z"),
		ev("ResponseComplete", "create", "pods", "", "wl", "/api/v1/namespaces/wl/pods", 201, "2026-11-27T01:59:59Z"),
		ev("ResponseComplete", "create", "pods", "", "wl", "/api/v1/namespaces/wl/pods", 201, "2026-11-27T02:01:00Z"),
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	count, last, err := podCreatesDone(path, 0, "wl", from, from.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if want := from.Add(3250 * time.Millisecond); count != 2 || !last.Equal(want) {
		t.Errorf("got %d creates, last at %s; want 2, last at %s", count, last, want)
	}
	// From the second line on: the first create is not read.
	count, last, err = podCreatesDone(path, int64(len(lines[0])+1), "wl", from, from.Add(30*time.Second))
	if want := from.Add(3250 * time.Millisecond); err != nil || count != 1 || !last.Equal(want) {
		t.Errorf("from the second line: got %d creates, last at %s, %v; want 1, last at %s", count, last, err, want)
	}
}
