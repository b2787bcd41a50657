package bench

import (
	"reflect"
	"strings"
	"testing"
)

func TestMedianWorkloadRun(t *testing.T) {
	runs := []WorkloadRun{
		{Kind: kindTApp, Seconds: 25, AllCreatedSeconds: 9, AllSeenSeconds: 12, PodsPerSecond: 40, Completed: true, ServerCPUSeconds: 1},
		{Kind: kindTApp, Seconds: 19, AllCreatedSeconds: 14, AllSeenSeconds: 10, PodsPerSecond: 52, Completed: true, ServerCPUSeconds: 2},
		{Kind: kindTApp, Seconds: 21, AllCreatedSeconds: 11, AllSeenSeconds: 15, PodsPerSecond: 47, Completed: false, ServerCPUSeconds: 3},
	}
	got := medianWorkloadRun(runs)
	// The round of the median time (21 s) is recorded, with the medians of the created time and throughput.
	if got.Seconds != 21 || got.ServerCPUSeconds != 3 || got.AllCreatedSeconds != 11 || got.AllSeenSeconds != 12 || got.PodsPerSecond != 47 {
		t.Errorf("median run = %+v", got)
	}
	if got.Completed {
		t.Error("a kind with a round that did not complete is reported completed")
	}
	if !reflect.DeepEqual(got.RoundSeconds, []float64{25, 19, 21}) {
		t.Errorf("round seconds = %v, want every round's in the order run", got.RoundSeconds)
	}
	// Even count: the lower middle; one round: that round, without a list of rounds.
	if got := medianWorkloadRun(runs[:2]); got.Seconds != 19 {
		t.Errorf("median of two = %v s, want the lower middle", got.Seconds)
	}
	if got := medianWorkloadRun(runs[:1]); got.Seconds != 25 || got.RoundSeconds != nil {
		t.Errorf("single round = %+v", got)
	}
}

func TestMedianRolloutRunAndNote(t *testing.T) {
	roll := func(seconds, cpu, writes float64) RolloutRun {
		return RolloutRun{RollRun: RollRun{Kind: kindTApp, Seconds: seconds, KubeAPIServerCPUMsPerInstance: cpu, KubeAPIWritesPerInstance: writes, Completed: true}}
	}
	got := medianRolloutRun([]RolloutRun{roll(24, 36, 5.4), roll(30, 29, 5.2), roll(27, 31, 5.3)})
	if got.Seconds != 27 || got.KubeAPIServerCPUMsPerInstance != 31 || got.KubeAPIWritesPerInstance != 5.3 || !got.Completed {
		t.Errorf("median roll = %+v", got.RollRun)
	}
	if !reflect.DeepEqual(got.RoundCPUMsPerInstance, []float64{36, 29, 31}) {
		t.Errorf("round CPU = %v", got.RoundCPUMsPerInstance)
	}
	note := roundsNote([]RolloutRun{got}, func(r RolloutRun) []float64 { return r.RoundCPUMsPerInstance }, "CPU")
	if !strings.Contains(note, "Medians of 3 rounds") || !strings.Contains(note, "TApp 36.00, 29.00, 31.00") {
		t.Errorf("note = %q", note)
	}
	if note := roundsNote([]RolloutRun{roll(1, 1, 1)}, func(r RolloutRun) []float64 { return r.RoundSeconds }, "time"); note != "" {
		t.Errorf("note of a single round = %q, want none", note)
	}
}
