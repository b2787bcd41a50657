package bench

import (
	"sort"
)

// Sections 3 and 4 run every kind --rounds times, the kinds taking turns, since one run of a kind varies by a
// third from the next on a machine whose two cores every process shares. Each kind is then reported by the
// round whose time is the median, with the medians over its rounds of the figures the targets compare.

// medianIndex returns the index of the median of values: the lower middle one of an even count.
func medianIndex(values []float64) int {
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return values[order[a]] < values[order[b]] })
	return order[(len(order)-1)/2]
}

func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	return values[medianIndex(values)]
}

// medianWorkloadRun returns the round of runs (one kind's scale-ups or scale-downs) whose time is the median,
// with AllCreatedSeconds and PodsPerSecond the medians over the rounds, Completed only if every round
// completed, and every round's time in RoundSeconds (when there was more than one).
func medianWorkloadRun(runs []WorkloadRun) WorkloadRun {
	if len(runs) == 0 {
		return WorkloadRun{}
	}
	seconds, created, rates := make([]float64, len(runs)), make([]float64, len(runs)), make([]float64, len(runs))
	completed := true
	for i, r := range runs {
		seconds[i], created[i], rates[i] = r.Seconds, r.AllCreatedSeconds, r.PodsPerSecond
		completed = completed && r.Completed
	}
	out := runs[medianIndex(seconds)]
	out.AllCreatedSeconds, out.PodsPerSecond, out.Completed = median(created), median(rates), completed
	if len(runs) > 1 {
		out.RoundSeconds = seconds
	}
	return out
}

// medianRolloutRun returns the round of rolls (one kind's) whose time is the median, with the kube-apiserver
// CPU and writes per instance the medians over the rounds, Completed only if every round completed, and every
// round's time and CPU per instance in RoundSeconds and RoundCPUMsPerInstance (when there was more than one).
func medianRolloutRun(rolls []RolloutRun) RolloutRun {
	if len(rolls) == 0 {
		return RolloutRun{}
	}
	seconds, cpu, writes := make([]float64, len(rolls)), make([]float64, len(rolls)), make([]float64, len(rolls))
	completed := true
	for i, r := range rolls {
		seconds[i], cpu[i], writes[i] = r.Seconds, r.KubeAPIServerCPUMsPerInstance, r.KubeAPIWritesPerInstance
		completed = completed && r.Completed
	}
	out := rolls[medianIndex(seconds)]
	out.KubeAPIServerCPUMsPerInstance, out.KubeAPIWritesPerInstance, out.Completed = median(cpu), median(writes), completed
	if len(rolls) > 1 {
		out.RoundSeconds, out.RoundCPUMsPerInstance = seconds, cpu
	}
	return out
}

func (r WorkloadRun) kindName() string { return r.Kind }
func (r RolloutRun) kindName() string  { return r.Kind }
