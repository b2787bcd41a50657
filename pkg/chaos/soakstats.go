package chaos

import (
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// SoakSample is one reading of tapp-apiserver's process: RSS and open files from /proc/<pid>, the Go heap
// (after a forced garbage collection) and goroutines from its /metrics.
type SoakSample struct {
	// Label says when it was taken: "start" (before the load), the time into the load, "end" (the last
	// moment of the load) or "after" (the load stopped and the server quiet again).
	Label string `json:"label"`
	// At is the time since the load began (0 for start; the load's duration for end and after).
	At  time.Duration `json:"at"`
	PID int           `json:"pid"`
	// Load says whether the sample was taken under load.
	Load bool  `json:"load"`
	RSS  int64 `json:"rssBytes"`
	// RSSAnon and RSSFile split the RSS (RssAnon and RssFile of /proc/<pid>/status): the Go heap and stacks
	// against file pages mapped, such as the binary and the embedded etcd's database.
	RSSAnon    int64 `json:"rssAnonBytes,omitempty"`
	RSSFile    int64 `json:"rssFileBytes,omitempty"`
	HeapInuse  int64 `json:"heapInuseBytes"`
	HeapAlloc  int64 `json:"heapAllocBytes"`
	Goroutines int64 `json:"goroutines"`
	FDs        int64 `json:"openFiles"`
}

// SoakFigure names one figure of a sample.
type SoakFigure string

// The figures a soak follows.
const (
	FigureRSS        SoakFigure = "RSS"
	FigureHeap       SoakFigure = "Go heap in use"
	FigureGoroutines SoakFigure = "goroutines"
	FigureFDs        SoakFigure = "open files"
)

// SoakFigures are the figures in the order the report lists them.
var SoakFigures = []SoakFigure{FigureRSS, FigureHeap, FigureGoroutines, FigureFDs}

// Value returns figure f of s.
func (s SoakSample) Value(f SoakFigure) float64 {
	switch f {
	case FigureRSS:
		return float64(s.RSS)
	case FigureHeap:
		return float64(s.HeapInuse)
	case FigureGoroutines:
		return float64(s.Goroutines)
	case FigureFDs:
		return float64(s.FDs)
	}
	return 0
}

// format renders a value of figure f: bytes in MiB, counts as they are.
func (f SoakFigure) format(v float64) string {
	switch f {
	case FigureRSS, FigureHeap:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	}
	return fmt.Sprintf("%.0f", v)
}

// formatRate renders a slope of figure f per hour.
func (f SoakFigure) formatRate(v float64) string {
	switch f {
	case FigureRSS, FigureHeap:
		return fmt.Sprintf("%+.1f MiB/h", v/(1<<20))
	}
	return fmt.Sprintf("%+.1f/h", v)
}

// Slope is the least-squares slope of ys over xs (the line y = a + b·x that minimises the squared
// residuals; b is returned). It is 0 for fewer than two points or when every x is the same.
func Slope(xs, ys []float64) float64 {
	n := len(xs)
	if len(ys) < n {
		n = len(ys)
	}
	if n < 2 {
		return 0
	}
	var mx, my float64
	for i := 0; i < n; i++ {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx float64
	for i := 0; i < n; i++ {
		dx := xs[i] - mx
		sxy += dx * (ys[i] - my)
		sxx += dx * dx
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// SteadySamples are the samples under load taken at or after warmup: the ones the slope and the growth
// bounds look at.
func SteadySamples(samples []SoakSample, warmup time.Duration) []SoakSample {
	var out []SoakSample
	for _, s := range samples {
		if s.Load && s.At >= warmup {
			out = append(out, s)
		}
	}
	return out
}

// SlopePerHour is the least-squares slope of figure f over samples, per hour of load.
func SlopePerHour(samples []SoakSample, f SoakFigure) float64 {
	xs, ys := make([]float64, len(samples)), make([]float64, len(samples))
	for i, s := range samples {
		xs[i], ys[i] = s.At.Hours(), s.Value(f)
	}
	return Slope(xs, ys)
}

// SoakBounds are the growth a soak tolerates. Under load, every sample after the warm-up is compared with
// the first one after it; after the load, the quiet server is compared with the start.
type SoakBounds struct {
	// GoroutineMargin and FDMargin bound the growth of goroutines and open files under load (watches and
	// requests in flight come and go); QuietGoroutineMargin and QuietFDMargin bound them once the load has
	// stopped, against the start.
	GoroutineMargin, FDMargin           int64
	QuietGoroutineMargin, QuietFDMargin int64
	// HeapRatio and RSSRatio bound the Go heap in use and the RSS under load, as a multiple of the first
	// sample after the warm-up.
	HeapRatio, RSSRatio float64
}

// DefaultSoakBounds are the bounds of the soak of `make chaos`.
func DefaultSoakBounds() SoakBounds {
	return SoakBounds{
		GoroutineMargin: 150, FDMargin: 60,
		QuietGoroutineMargin: 40, QuietFDMargin: 25,
		HeapRatio: 1.5, RSSRatio: 1.5,
	}
}

// QuickSoakBounds are the bounds of the short variant. The heap and the RSS get twice their value after the
// warm-up: in its first minutes under writes, tapp-apiserver's heap grows by design with the entries its
// embedded etcd keeps in memory until its next snapshot (every 10,000 writes) and with the watch cache's
// window of events (about 25 MiB in 2 minutes of this load on the 2-core machine); the long soak runs past
// them.
func QuickSoakBounds() SoakBounds {
	b := DefaultSoakBounds()
	b.HeapRatio, b.RSSRatio = 2, 2
	return b
}

// Check returns the bounds samples exceed; warmup is when the steady samples begin. It needs a start, an
// after and at least two steady samples, and says so when they are missing.
func (b SoakBounds) Check(samples []SoakSample, warmup time.Duration) []string {
	var misses []string
	steady := SteadySamples(samples, warmup)
	if len(steady) < 2 {
		return []string{fmt.Sprintf("%d samples under load after the %s warm-up; at least 2 are needed", len(steady), warmup)}
	}
	first := steady[0]
	for _, s := range steady[1:] {
		if d := s.Goroutines - first.Goroutines; d > b.GoroutineMargin {
			misses = append(misses, fmt.Sprintf("goroutines at %s: %d, %d more than at %s (bound %d)", s.Label, s.Goroutines, d, first.Label, b.GoroutineMargin))
		}
		if d := s.FDs - first.FDs; d > b.FDMargin {
			misses = append(misses, fmt.Sprintf("open files at %s: %d, %d more than at %s (bound %d)", s.Label, s.FDs, d, first.Label, b.FDMargin))
		}
		if r := ratio(s.HeapInuse, first.HeapInuse); r > b.HeapRatio {
			misses = append(misses, fmt.Sprintf("Go heap in use at %s: %s, %.2f× that at %s (bound %.2f×)", s.Label, FigureHeap.format(float64(s.HeapInuse)), r, first.Label, b.HeapRatio))
		}
		if r := ratio(s.RSS, first.RSS); r > b.RSSRatio {
			misses = append(misses, fmt.Sprintf("RSS at %s: %s, %.2f× that at %s (bound %.2f×)", s.Label, FigureRSS.format(float64(s.RSS)), r, first.Label, b.RSSRatio))
		}
	}
	start, after := findSample(samples, "start"), findSample(samples, "after")
	if start == nil || after == nil {
		return append(misses, "no sample before or after the load")
	}
	if d := after.Goroutines - start.Goroutines; d > b.QuietGoroutineMargin {
		misses = append(misses, fmt.Sprintf("goroutines after the load: %d, %d more than at the start (bound %d)", after.Goroutines, d, b.QuietGoroutineMargin))
	}
	if d := after.FDs - start.FDs; d > b.QuietFDMargin {
		misses = append(misses, fmt.Sprintf("open files after the load: %d, %d more than at the start (bound %d)", after.FDs, d, b.QuietFDMargin))
	}
	return misses
}

// QuietWithin says whether a sample taken after the load is within the quiet bounds of the start.
func (b SoakBounds) QuietWithin(start, now SoakSample) bool {
	return now.Goroutines-start.Goroutines <= b.QuietGoroutineMargin && now.FDs-start.FDs <= b.QuietFDMargin
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return float64(a) / float64(b)
}

func findSample(samples []SoakSample, label string) *SoakSample {
	for i := range samples {
		if samples[i].Label == label {
			return &samples[i]
		}
	}
	return nil
}

// Outcome is the class of a request's result.
type Outcome int

const (
	// OutcomeOK is a success.
	OutcomeOK Outcome = iota
	// OutcomeConflict is a 409 from optimistic concurrency: the resourceVersion the write was based on was
	// no longer the object's.
	OutcomeConflict
	// OutcomeApplyConflict is a 409 of server-side apply: another field manager owns a field the apply sets
	// to another value.
	OutcomeApplyConflict
	// OutcomeError is any other error: the soak's target is none.
	OutcomeError
)

// Classify sorts a request's error: nil is OK; a 409 Conflict is an apply conflict when the request was a
// server-side apply (or the answer names conflicting field managers), an optimistic-concurrency conflict
// otherwise; everything else (other codes, timeouts, broken connections) is an error.
func Classify(err error, apply bool) Outcome {
	if err == nil {
		return OutcomeOK
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != 409 || status.Status().Reason != metav1.StatusReasonConflict {
		return OutcomeError
	}
	if apply {
		return OutcomeApplyConflict
	}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			if c.Type == metav1.CauseTypeFieldManagerConflict {
				return OutcomeApplyConflict
			}
		}
	}
	return OutcomeConflict
}

// errorKind is a short name of an unexpected error for the report: its HTTP code and reason, or what broke.
func errorKind(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return fmt.Sprintf("%d %s", s.Code, s.Reason)
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return "client timeout"
	}
	return "no answer"
}

// RequestCount is what one kind of request got during the soak.
type RequestCount struct {
	Sent           int `json:"sent"`
	Conflicts      int `json:"conflicts"`
	ApplyConflicts int `json:"applyConflicts"`
	Errors         int `json:"errors"`
	// ErrorKinds counts the unexpected errors by errorKind, and Examples keeps the first few messages.
	ErrorKinds map[string]int `json:"errorKinds,omitempty"`
	Examples   []string       `json:"examples,omitempty"`
}

// maxExamples bounds the error messages kept per kind of request.
const maxExamples = 5

// record adds one request's outcome.
func (c *RequestCount) record(err error, apply bool) Outcome {
	c.Sent++
	o := Classify(err, apply)
	switch o {
	case OutcomeConflict:
		c.Conflicts++
	case OutcomeApplyConflict:
		c.ApplyConflicts++
	case OutcomeError:
		c.Errors++
		if c.ErrorKinds == nil {
			c.ErrorKinds = map[string]int{}
		}
		c.ErrorKinds[errorKind(err)]++
		if len(c.Examples) < maxExamples {
			c.Examples = append(c.Examples, err.Error())
		}
	}
	return o
}

// requestKinds returns the kinds of requests of counts in order.
func requestKinds(counts map[string]*RequestCount) []string {
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// SoakResult are the figures of the soak scenario.
type SoakResult struct {
	Namespace string `json:"namespace"`
	// Instances is the number of TApp instances the controllers keep (Fleet TApps of equal size).
	Instances int `json:"instances"`
	Fleet     int `json:"fleet"`
	// Duration, Interval and Warmup are the load's length, the sampling interval and the warm-up whose
	// samples the slope and the bounds leave out.
	Duration time.Duration `json:"duration"`
	Interval time.Duration `json:"interval"`
	Warmup   time.Duration `json:"warmup"`
	Bounds   SoakBounds    `json:"bounds"`
	Samples  []SoakSample  `json:"samples"`
	// Requests are the clients' requests by kind ("create tapps", "apply tapps", ...).
	Requests map[string]*RequestCount `json:"requests"`
	// Watches opened, ended by the server (timeoutSeconds), stopped by the client, and their events.
	WatchesOpened  int `json:"watchesOpened"`
	WatchesTimedUp int `json:"watchesTimedUp"`
	WatchesStopped int `json:"watchesStopped"`
	WatchEvents    int `json:"watchEvents"`
	// ServerCodes are tapp-apiserver's own counts of its answers during the load (apiserver_request_total,
	// every client, the controllers included), by class: "2xx", "409", "other 4xx", "5xx".
	ServerCodes map[string]int `json:"serverCodes,omitempty"`
	// Restarts are the times the server's PID changed during the soak (target 0).
	Restarts int `json:"restarts"`
	// Converged says whether every TApp of the fleet was ready at its size after the load; Problem says why
	// not.
	Converged bool   `json:"converged"`
	Problem   string `json:"problem,omitempty"`
	// QuietAfter is how long the server took to be within the quiet bounds once the load had stopped and the
	// fleet was ready.
	QuietAfter time.Duration `json:"quietAfter"`
	Started    time.Time     `json:"started"`
	Took       time.Duration `json:"took"`
}

// Totals sums the requests of every kind.
func (s *SoakResult) Totals() RequestCount {
	var t RequestCount
	for _, c := range s.Requests {
		t.Sent += c.Sent
		t.Conflicts += c.Conflicts
		t.ApplyConflicts += c.ApplyConflicts
		t.Errors += c.Errors
	}
	return t
}

// misses are the soak's missed targets, nil for a soak not run.
func (s *SoakResult) misses() []string {
	if s == nil {
		return nil
	}
	var misses []string
	for _, kind := range requestKinds(s.Requests) {
		if c := s.Requests[kind]; c.Errors > 0 {
			misses = append(misses, fmt.Sprintf("soak: %d unexpected errors on %s: %v (first: %s)", c.Errors, kind, c.ErrorKinds, strings.Join(c.Examples, "; ")))
		}
	}
	if n := s.ServerCodes["5xx"]; n > 0 {
		misses = append(misses, fmt.Sprintf("soak: tapp-apiserver answered 5xx %d times", n))
	}
	if s.Restarts > 0 {
		misses = append(misses, fmt.Sprintf("soak: tapp-apiserver restarted %d times", s.Restarts))
	}
	if !s.Converged {
		misses = append(misses, "soak: the fleet did not converge after the load: "+s.Problem)
	}
	for _, m := range s.Bounds.Check(s.Samples, s.Warmup) {
		misses = append(misses, "soak: "+m)
	}
	return misses
}

// watchError turns a watch's error event into the error its Status stands for.
func watchError(ev watch.Event) error {
	return apierrors.FromObject(ev.Object)
}
