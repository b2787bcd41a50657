package chaos

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// SoakHeading is the heading of the part of the Chaos section that SoakMarkdown renders; WriteSoakSection
// replaces that part only.
const SoakHeading = "### Soak"

// ChaosRan says whether the run had a scenario of the single-replica form other than the soak: then the
// Chaos section (its part before HAHeading and SoakHeading) is rewritten.
func (r *Results) ChaosRan() bool {
	return r.Controllers != nil || r.Server != nil || r.KubeAPIServer != nil || r.Storage != nil
}

// WriteSoakSection replaces the soak part of the Chaos section (from SoakHeading to the next heading of level
// 3 or less), appending it at the end of the Chaos section when there is none; the rest is kept as it is.
func WriteSoakSection(path, section string) error {
	return writeBlock(path, SoakHeading, section, func(line string) bool {
		return strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ")
	})
}

// SoakMarkdown renders the soak part of the Chaos section.
func (r *Results) SoakMarkdown() string {
	var b strings.Builder
	p := func(format string, args ...interface{}) { fmt.Fprintf(&b, format, args...) }
	s := r.Soak
	p("%s\n\n", SoakHeading)
	p("`make chaos` ends its single-replica run with a soak (`tapp-chaos --scenarios=soak`, `--soak-duration`,\n")
	p("`--soak-interval`; it rewrites this part only): TApps of %d instances each, kept by the controllers, then a\n", soakFleetSize)
	p("mixed load through kube-apiserver's aggregator, every loop paced and ended when the load's time is up:\n")
	p("creates, merge patches and deletes of TApps without instances (one step every 0.4 s); reads and writes back\n")
	p("of TApps of the fleet with an annotation changed (PUT, two clients, every 0.3 s); server-side apply from %d\n", len(soakManagers))
	p("field managers (a label each and one annotation all of them set, forced every fourth time, every 0.5 s\n")
	p("each); the scale subresource (read, then write one instance more or less, every 2 s); an in-place image\n")
	p("update of one TApp every 20 s; status writes (a condition of its own, every 1 s); lists and reads (every\n")
	p("0.5 s); NodePool creates and deletes (every 3 s); and up to %d watches at a time of TApps, TApps by label,\n", soakMaxWatches)
	p("NodePools and YurtAppDaemons (list, then watch from its resourceVersion), each ended by the server after\n")
	p("5–30 s or stopped by the client after 1–10 s. tapp-apiserver is read from outside at the start, every\n")
	p("sampling interval and at the end: RSS (VmRSS of /proc/<pid>/status), open files (/proc/<pid>/fd), and from\n")
	p("its /metrics the Go heap in use (go_memstats_heap_inuse_bytes, after a garbage collection forced through\n")
	p("/debug/pprof/heap?gc=1) and goroutines (go_goroutines). Errors are counted by kind of request; a 409 from\n")
	p("optimistic concurrency (a resourceVersion overtaken) and a server-side apply conflict are expected and\n")
	p("counted apart. The end-to-end variant (test/e2e/soak_test.go, TestSoak) runs the same code for 2 minutes\n")
	p("(40 instances, a sample every 15 s, 30 s of warm-up) and asserts the same targets, with the heap and the RSS\n")
	p("bounded at %.0f× (in its first minutes under writes the heap grows by design with the entries the embedded\n", QuickSoakBounds().HeapRatio)
	p("etcd keeps in memory until its next snapshot, every 10,000 writes, and with the watch cache's window of\n")
	p("events).\n\n")
	if s == nil {
		p("Not run.\n\n")
		return b.String()
	}
	r.writeRunSummary(&b, s.Took, s.misses())
	if r.Note != "" {
		p("%s\n\n", r.Note)
	}
	p("%d TApps of %d instances (%d instances), %s of load, a sample every %s; the first %s is warm-up.\n\n",
		s.Fleet, soakFleetSize, s.Instances, s.Duration, s.Interval, s.Warmup)

	split := false
	for _, x := range s.Samples {
		split = split || x.RSSAnon+x.RSSFile > 0
	}
	if split {
		p("| sample | RSS | RSS anonymous / file | Go heap in use | Go heap allocated | goroutines | open files |\n|---|---:|---:|---:|---:|---:|---:|\n")
	} else {
		p("| sample | RSS | Go heap in use | Go heap allocated | goroutines | open files |\n|---|---:|---:|---:|---:|---:|\n")
	}
	for _, x := range s.Samples {
		label := x.Label
		switch x.Label {
		case "start":
			label = "start (before the load)"
		case "end":
			label = fmt.Sprintf("end (%s, last moment of the load)", fmtAt(x.At))
		case "after":
			label = fmt.Sprintf("after (load stopped, fleet ready, then %s to quiet)", s.QuietAfter.Round(time.Second))
		default:
			if x.At < s.Warmup {
				label += " (warm-up)"
			}
		}
		rss := FigureRSS.format(float64(x.RSS))
		if split {
			rss += fmt.Sprintf(" | %.1f / %.1f MiB", float64(x.RSSAnon)/(1<<20), float64(x.RSSFile)/(1<<20))
		}
		p("| %s | %s | %s | %s | %d | %d |\n", label, rss, FigureHeap.format(float64(x.HeapInuse)),
			FigureHeap.format(float64(x.HeapAlloc)), x.Goroutines, x.FDs)
	}
	p("\n")

	steady := SteadySamples(s.Samples, s.Warmup)
	if len(steady) >= 2 {
		first, last := steady[0], steady[len(steady)-1]
		p("Under load after the warm-up (%d samples, %s to %s): least-squares slope per hour of load, and the bound.\n\n",
			len(steady), fmtAt(first.At), fmtAt(last.At))
		p("| figure | first | last | min – max | slope | slope / mean | bound |\n|---|---:|---:|---:|---:|---:|---|\n")
		for _, f := range SoakFigures {
			lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
			for _, x := range steady {
				v := x.Value(f)
				lo, hi, mean = math.Min(lo, v), math.Max(hi, v), mean+v/float64(len(steady))
			}
			slope := SlopePerHour(steady, f)
			rel := "–"
			if mean > 0 {
				rel = fmt.Sprintf("%+.0f%%/h", 100*slope/mean)
			}
			p("| %s | %s | %s | %s – %s | %s | %s | %s |\n", f, f.format(first.Value(f)), f.format(last.Value(f)), f.format(lo), f.format(hi),
				f.formatRate(slope), rel, s.Bounds.describe(f))
		}
		p("\n")
	}
	if start, after := findSample(s.Samples, "start"), findSample(s.Samples, "after"); start != nil && after != nil {
		p("Once the load stopped: goroutines %+d against the start (bound +%d), open files %+d (bound +%d).\n\n",
			after.Goroutines-start.Goroutines, s.Bounds.QuietGoroutineMargin, after.FDs-start.FDs, s.Bounds.QuietFDMargin)
	}

	p("| request | sent | 409 optimistic concurrency | 409 server-side apply conflict | unexpected errors |\n|---|---:|---:|---:|---:|\n")
	for _, kind := range requestKinds(s.Requests) {
		c := s.Requests[kind]
		p("| %s | %d | %d | %d | %d |\n", kind, c.Sent, c.Conflicts, c.ApplyConflicts, c.Errors)
	}
	t := s.Totals()
	p("| **all** | %d | %d | %d | **%d** (target 0) |\n\n", t.Sent, t.Conflicts, t.ApplyConflicts, t.Errors)
	p("Watches: %d opened, %d ended by the server, %d stopped by the client, %d events. tapp-apiserver's own count of\n",
		s.WatchesOpened, s.WatchesTimedUp, s.WatchesStopped, s.WatchEvents)
	p("its answers during the load (apiserver_request_total; every client, the controllers and kube-apiserver's\n")
	p("own included): %d 2xx, %d 409, %d other 4xx, %d 5xx (target 0). Restarts of tapp-apiserver: %d (target 0). The fleet\n",
		s.ServerCodes["2xx"], s.ServerCodes["409"], s.ServerCodes["other 4xx"], s.ServerCodes["5xx"], s.Restarts)
	p("ready at its size on its image after the load: %s.\n", yesNo(s.Converged))
	return b.String()
}

// describe states the bound of figure f.
func (b SoakBounds) describe(f SoakFigure) string {
	switch f {
	case FigureRSS:
		return fmt.Sprintf("≤ %.1f× first", b.RSSRatio)
	case FigureHeap:
		return fmt.Sprintf("≤ %.1f× first", b.HeapRatio)
	case FigureGoroutines:
		return fmt.Sprintf("≤ first + %d", b.GoroutineMargin)
	case FigureFDs:
		return fmt.Sprintf("≤ first + %d", b.FDMargin)
	}
	return ""
}
