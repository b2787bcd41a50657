package tapp

import (
	"testing"
	"time"
)

// TestStatusPaceGrowsWithInstances: a progress-only status write waits statusPace per statusPaceInstances
// entries since the last write, at least statusPace and at most maxStatusPace.
func TestStatusPaceGrowsWithInstances(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		entries int
		after   time.Duration // since the last write
		want    time.Duration
	}{
		{entries: 0, after: 0, want: time.Second},
		{entries: 3, after: 400 * time.Millisecond, want: 600 * time.Millisecond},
		{entries: 1000, after: time.Second, want: 0},
		{entries: 1001, after: time.Second, want: time.Second},
		{entries: 2500, after: time.Second, want: 2 * time.Second},
		{entries: 10000, after: 4 * time.Second, want: 6 * time.Second},
		{entries: 10000, after: 10 * time.Second, want: 0},
		{entries: 1000000, after: 0, want: maxStatusPace},
	} {
		var p statusPacer
		if got := p.wait("ns/a", tc.entries, start); got != 0 {
			t.Errorf("%d entries, never written: wait %v, want 0", tc.entries, got)
		}
		p.wrote("ns/a", start)
		if got := p.wait("ns/a", tc.entries, start.Add(tc.after)); got != tc.want {
			t.Errorf("%d entries, %v after the last write: wait %v, want %v", tc.entries, tc.after, got, tc.want)
		}
		p.forget("ns/a")
		if got := p.wait("ns/a", tc.entries, start.Add(tc.after)); got != 0 {
			t.Errorf("%d entries, forgotten: wait %v, want 0", tc.entries, got)
		}
	}
}
