package chaos

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSlope(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		{"flat", []float64{0, 1, 2, 3}, []float64{5, 5, 5, 5}, 0},
		{"a line", []float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}, 2},
		{"falling", []float64{1, 2, 3}, []float64{9, 6, 3}, -3},
		// y = x with noise +1, -1, +1, -1: the least-squares line has slope 1 - 0.4 = 0.6.
		{"noisy", []float64{0, 1, 2, 3}, []float64{1, 0, 3, 2}, 0.6},
		{"one point", []float64{1}, []float64{7}, 0},
		{"no points", nil, nil, 0},
		{"the same x", []float64{2, 2, 2}, []float64{1, 5, 9}, 0},
		{"ys shorter", []float64{0, 1, 2, 3}, []float64{0, 10}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Slope(tc.xs, tc.ys); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Slope = %v, want %v", got, tc.want)
			}
		})
	}
}

// soakSamples are a start, samples under load every 5 minutes with goroutines from gs (and the other
// figures growing by grow per sample), the end and after.
func soakSamples(gs []int64, grow int64) []SoakSample {
	const mib = 1 << 20
	out := []SoakSample{{Label: "start", RSS: 100 * mib, HeapInuse: 40 * mib, Goroutines: 300, FDs: 50}}
	for i, g := range gs {
		at := time.Duration(i+1) * 5 * time.Minute
		label := fmtAt(at)
		if i == len(gs)-1 {
			label = "end"
		}
		out = append(out, SoakSample{Label: label, At: at, Load: true, Goroutines: g,
			RSS: (150 + grow*int64(i)) * mib, HeapInuse: (60 + grow*int64(i)) * mib, FDs: 70 + grow*int64(i)})
	}
	last := gs[len(gs)-1]
	return append(out, SoakSample{Label: "after", At: time.Duration(len(gs)) * 5 * time.Minute, Goroutines: 300 + last%10, FDs: 52,
		RSS: 150 * mib, HeapInuse: 45 * mib})
}

func TestSoakSlopePerHour(t *testing.T) {
	samples := soakSamples([]int64{400, 410, 420, 430, 440, 450}, 2)
	steady := SteadySamples(samples, 5*time.Minute)
	if len(steady) != 6 || steady[0].Label != "5m" || steady[5].Label != "end" {
		t.Fatalf("steady samples: %+v", steady)
	}
	// 10 goroutines per 5 minutes is 120 per hour; 2 MiB per 5 minutes is 24 MiB per hour.
	if got := SlopePerHour(steady, FigureGoroutines); math.Abs(got-120) > 1e-6 {
		t.Errorf("goroutines: %v/h, want 120", got)
	}
	if got := SlopePerHour(steady, FigureHeap); math.Abs(got-24*(1<<20)) > 1 {
		t.Errorf("heap: %v B/h, want 24 MiB", got)
	}
	if got := SlopePerHour(SteadySamples(samples, 10*time.Minute), FigureFDs); math.Abs(got-24) > 1e-6 {
		t.Errorf("open files after a 10m warm-up: %v/h, want 24", got)
	}
}

func TestSoakBounds(t *testing.T) {
	b := SoakBounds{GoroutineMargin: 100, FDMargin: 20, QuietGoroutineMargin: 20, QuietFDMargin: 5, HeapRatio: 1.5, RSSRatio: 1.5}
	for _, tc := range []struct {
		name    string
		samples []SoakSample
		warmup  time.Duration
		want    []string
	}{
		{"flat", soakSamples([]int64{400, 450, 380, 420}, 0), 5 * time.Minute, nil},
		{"goroutines growing past the margin", soakSamples([]int64{400, 450, 500, 501}, 0), 5 * time.Minute,
			[]string{"goroutines at end: 501, 101 more than at 5m (bound 100)"}},
		{"a warm-up that leaves the growth out", soakSamples([]int64{200, 400, 450, 480}, 0), 10 * time.Minute, nil},
		{"the growth in the warm-up counts when there is none", soakSamples([]int64{200, 400, 450, 480}, 0), 0,
			[]string{"goroutines at 10m: 400, 200 more than at 5m", "goroutines at 15m: 450", "goroutines at end: 480"}},
		{"heap, RSS and files growing", soakSamples([]int64{400, 400, 400}, 40), 5 * time.Minute,
			[]string{"open files at end: 150, 80 more than at 5m (bound 20)", "Go heap in use at end: 140.0 MiB, 2.33× that at 5m",
				"RSS at end: 230.0 MiB, 1.53× that at 5m", "open files at 10m: 110"}},
		{"too few samples", soakSamples([]int64{400, 400}, 0), 10 * time.Minute, []string{"1 samples under load after the 10m0s warm-up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := b.Check(tc.samples, tc.warmup)
			if len(got) != len(tc.want) && !(len(tc.want) > 0 && len(got) > len(tc.want)) {
				t.Fatalf("misses %q, want %q", got, tc.want)
			}
			all := strings.Join(got, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("misses %q lack %q", got, w)
				}
			}
			if len(tc.want) == 0 && len(got) > 0 {
				t.Errorf("misses %q, want none", got)
			}
		})
	}
	quiet := soakSamples([]int64{400, 400}, 0)
	quiet[len(quiet)-1].Goroutines, quiet[len(quiet)-1].FDs = 321, 56
	got := strings.Join(b.Check(quiet, 0), "\n")
	for _, w := range []string{"goroutines after the load: 321, 21 more than at the start (bound 20)", "open files after the load: 56, 6 more than at the start (bound 5)"} {
		if !strings.Contains(got, w) {
			t.Errorf("misses %q lack %q", got, w)
		}
	}
	if !b.QuietWithin(quiet[0], SoakSample{Goroutines: 320, FDs: 55}) || b.QuietWithin(quiet[0], quiet[len(quiet)-1]) {
		t.Errorf("QuietWithin does not follow the quiet margins")
	}
}

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "apps.tkestack.io", Resource: "tapps"}
	optimistic := apierrors.NewConflict(gr, "a", errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	applyConflict := apierrors.NewApplyConflict([]metav1.StatusCause{{Type: metav1.CauseTypeFieldManagerConflict, Field: ".metadata.annotations.x"}}, "conflict with \"soak-apply-a\"")
	for _, tc := range []struct {
		name  string
		err   error
		apply bool
		want  Outcome
	}{
		{"success", nil, false, OutcomeOK},
		{"optimistic concurrency", optimistic, false, OutcomeConflict},
		{"optimistic concurrency, wrapped", fmt.Errorf("update: %w", optimistic), false, OutcomeConflict},
		{"apply conflict", applyConflict, true, OutcomeApplyConflict},
		{"apply conflict named by its causes", applyConflict, false, OutcomeApplyConflict},
		{"a 409 of an apply", optimistic, true, OutcomeApplyConflict},
		{"already exists is a 409 but no conflict", apierrors.NewAlreadyExists(gr, "a"), false, OutcomeError},
		{"not found", apierrors.NewNotFound(gr, "a"), false, OutcomeError},
		{"invalid", apierrors.NewBadRequest("no"), true, OutcomeError},
		{"server error", apierrors.NewInternalError(errors.New("boom")), false, OutcomeError},
		{"unavailable", apierrors.NewServiceUnavailable("down"), false, OutcomeError},
		{"timeout", apierrors.NewTimeoutError("slow", 1), false, OutcomeError},
		{"no answer", errors.New("connection reset by peer"), false, OutcomeError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err, tc.apply); got != tc.want {
				t.Errorf("Classify = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRequestCountRecord(t *testing.T) {
	gr := schema.GroupResource{Resource: "tapps"}
	var c RequestCount
	c.record(nil, false)
	c.record(apierrors.NewConflict(gr, "a", errors.New("modified")), false)
	c.record(apierrors.NewConflict(gr, "a", errors.New("modified")), true)
	for i := 0; i < maxExamples+2; i++ {
		c.record(apierrors.NewInternalError(errors.New("boom")), false)
	}
	c.record(errors.New("EOF"), false)
	if c.Sent != maxExamples+6 || c.Conflicts != 1 || c.ApplyConflicts != 1 || c.Errors != maxExamples+3 {
		t.Errorf("counts %+v", c)
	}
	if c.ErrorKinds["500 InternalError"] != maxExamples+2 || c.ErrorKinds["no answer"] != 1 || len(c.Examples) != maxExamples {
		t.Errorf("error kinds %v, %d examples", c.ErrorKinds, len(c.Examples))
	}
}

func TestParseMetrics(t *testing.T) {
	const text = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 412
go_memstats_heap_inuse_bytes 6.4135168e+07
go_memstats_heap_inuse_bytes_total{x="y"} 1
apiserver_request_total{code="200",component="apiserver",group="apps.tkestack.io",resource="tapps",verb="GET",version="v1"} 10
apiserver_request_total{code="201",component="apiserver",group="apps.tkestack.io",resource="tapps",verb="POST",version="v1"} 5
apiserver_request_total{code="409",component="apiserver",group="apps.tkestack.io",resource="tapps",verb="PUT",version="v1"} 3
apiserver_request_total{code="404",component="apiserver",group="apps.tkestack.io",resource="tapps",verb="GET",version="v1"} 2
apiserver_request_total{code="422",component="apiserver",group="apps.tkestack.io",resource="tapps",verb="PATCH",version="v1"} 1
apiserver_request_total{code="503",component="apiserver",group="",resource="",verb="GET",version=""} 4
apiserver_request_total{code="0",component="apiserver",group="",resource="",verb="WATCH",version=""} 1
`
	got := ParseMetrics(text, "go_goroutines", "go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes")
	if len(got) != 2 || got["go_goroutines"] != 412 || got["go_memstats_heap_inuse_bytes"] != 64135168 {
		t.Errorf("ParseMetrics = %v", got)
	}
	codes := RequestCodeClasses(text)
	want := map[string]float64{"2xx": 15, "409": 3, "other 4xx": 3, "5xx": 4, "other": 1}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("RequestCodeClasses = %v, want %v", codes, want)
	}
}

func TestParseProcStatus(t *testing.T) {
	const status = "Name:\ttapp-apiserver\nVmPeak:\t 2000000 kB\nVmRSS:\t  267212 kB\nRssAnon:\t  146832 kB\nRssFile:\t  120380 kB\nRssShmem:\t       0 kB\nThreads:\t12\n"
	got, err := ParseProcStatus(strings.NewReader(status), "VmRSS:", "RssAnon:", "RssFile:", "Threads:")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"VmRSS:": 267212 << 10, "RssAnon:": 146832 << 10, "RssFile:": 120380 << 10}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ParseProcStatus = %v, want %v", got, want)
	}
	if _, err := ParseProcStatus(strings.NewReader("VmRSS:\t 12x kB\n"), "VmRSS:"); err == nil {
		t.Errorf("a value that is no number was accepted")
	}
}

func TestFmtAt(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Minute: "5m", 15 * time.Second: "15s", 90 * time.Second: "1m30s", time.Hour: "1h", 65 * time.Minute: "1h5m",
	} {
		if got := fmtAt(d); got != want {
			t.Errorf("fmtAt(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestSoakMarkdown(t *testing.T) {
	gr := schema.GroupResource{Resource: "tapps"}
	s := &SoakResult{
		Fleet: 20, Instances: 200, Duration: 20 * time.Minute, Interval: 5 * time.Minute, Warmup: 5 * time.Minute,
		Bounds: DefaultSoakBounds(), Samples: soakSamples([]int64{400, 410, 405, 412}, 1),
		Requests:    map[string]*RequestCount{"update tapps": {}, "apply tapps": {}, "create tapps": {}},
		ServerCodes: map[string]int{"2xx": 1000, "409": 12}, Converged: true, QuietAfter: 4 * time.Second, Took: 22 * time.Minute,
		WatchesOpened: 30, WatchesTimedUp: 14, WatchesStopped: 16, WatchEvents: 700,
	}
	s.Requests["update tapps"].record(nil, false)
	s.Requests["update tapps"].record(apierrors.NewConflict(gr, "a", errors.New("modified")), false)
	s.Requests["apply tapps"].record(apierrors.NewConflict(gr, "a", errors.New("owned")), true)
	s.Requests["create tapps"].record(nil, false)
	r := &Results{Options: Options{Seed: 1}, Soak: s, Command: "make chaos", Note: "The machine was shared.",
		Started: time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)}
	md := r.SoakMarkdown()
	for _, want := range []string{
		SoakHeading + "\n",
		"Latest run: `make chaos`, 2026-11-27 11:00 UTC, took 22m0s (seed 1).",
		"**Every target was met.**",
		"The machine was shared.",
		"| start (before the load) | 100.0 MiB | 40.0 MiB | 0.0 MiB | 300 | 50 |",
		"| 5m | 150.0 MiB | 60.0 MiB |",
		"| end (20m, last moment of the load) |",
		"| after (load stopped, fleet ready, then 4s to quiet) |",
		"Under load after the warm-up (4 samples, 5m to 20m)",
		"| goroutines | 400 | 412 | 400 – 412 | +37.2/h | +9%/h | ≤ first + 150 |",
		"| open files | 70 | 73 | 70 – 73 | +12.0/h | +17%/h | ≤ first + 60 |",
		"| update tapps | 2 | 1 | 0 | 0 |",
		"| apply tapps | 1 | 0 | 1 | 0 |",
		"| **all** | 4 | 1 | 1 | **0** (target 0) |",
		"Watches: 30 opened, 14 ended by the server, 16 stopped by the client, 700 events.",
		"1000 2xx, 12 409, 0 other 4xx, 0 5xx (target 0)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the soak part lacks %q:\n%s", want, md)
		}
	}
	if len(r.Targets()) != 0 {
		t.Errorf("targets missed: %v", r.Targets())
	}
	s.Samples[0].RSSAnon, s.Samples[0].RSSFile = 60<<20, 40<<20
	if md := r.SoakMarkdown(); !strings.Contains(md, "| start (before the load) | 100.0 MiB | 60.0 / 40.0 MiB | 40.0 MiB |") ||
		!strings.Contains(md, "| 5m | 150.0 MiB | 0.0 / 0.0 MiB |") {
		t.Errorf("the soak part lacks the RSS split:\n%s", md)
	}
	s.Samples[0].RSSAnon, s.Samples[0].RSSFile = 0, 0

	// An unexpected error is a missed target, named with its kind.
	s.Requests["create tapps"].record(apierrors.NewInternalError(errors.New("boom")), false)
	s.ServerCodes["5xx"] = 1
	misses := strings.Join(r.Targets(), "\n")
	for _, want := range []string{"soak: 1 unexpected errors on create tapps: map[500 InternalError:1]", "soak: tapp-apiserver answered 5xx 1 times"} {
		if !strings.Contains(misses, want) {
			t.Errorf("misses %q lack %q", misses, want)
		}
	}
	if md := r.SoakMarkdown(); !strings.Contains(md, "**Targets missed:**") || !strings.Contains(md, "| **all** | 5 | 1 | 1 | **1** (target 0) |") {
		t.Errorf("the soak part does not show the missed targets:\n%s", md)
	}
	// The other scenarios' summary is not the soak's.
	if strings.Contains(r.Markdown(), "soak:") {
		t.Errorf("the Chaos section lists the soak's misses")
	}
}

func TestWriteSoakSection(t *testing.T) {
	const doc = "# R\n\n## Chaos\n\nchaos\n\n### Notes\n\nnotes\n\n### HA topology\n\nha\n\n## Hostile and careless clients\n\ntheirs\n"
	path := filepath.Join(t.TempDir(), "reliability.md")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	// A first soak part goes at the end of the Chaos section.
	if err := WriteSoakSection(path, SoakHeading+"\n\nsoak 1\n"); err != nil {
		t.Fatal(err)
	}
	want := "# R\n\n## Chaos\n\nchaos\n\n### Notes\n\nnotes\n\n### HA topology\n\nha\n\n### Soak\n\nsoak 1\n\n## Hostile and careless clients\n\ntheirs\n"
	if got := read(); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	// A later one replaces it only.
	if err := WriteSoakSection(path, SoakHeading+"\n\nsoak 2\n"); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != strings.Replace(want, "soak 1", "soak 2", 1) {
		t.Fatalf("got\n%q", got)
	}
	// The single-replica part and the HA part leave it as it is.
	if err := WriteSection(path, "## Chaos\n\nchaos 2\n\n### Notes\n\nnotes 2\n"); err != nil {
		t.Fatal(err)
	}
	if err := WriteHASection(path, HAHeading+"\n\nha 2\n"); err != nil {
		t.Fatal(err)
	}
	want = "# R\n\n## Chaos\n\nchaos 2\n\n### Notes\n\nnotes 2\n\n### HA topology\n\nha 2\n\n### Soak\n\nsoak 2\n\n## Hostile and careless clients\n\ntheirs\n"
	if got := read(); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}
