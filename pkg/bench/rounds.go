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

// medianRound returns the round of runs whose seconds is the median, and every round's seconds in the order
// run; completed tells whether every round completed.
func medianRound[R any](runs []R, seconds func(R) float64, completed func(R) bool) (R, []float64, bool) {
	all, done := make([]float64, len(runs)), true
	for i, r := range runs {
		all[i], done = seconds(r), done && completed(r)
	}
	return runs[medianIndex(all)], all, done
}

// medianOf is the median over runs of what f gives.
func medianOf[R any](runs []R, f func(R) float64) float64 {
	values := make([]float64, len(runs))
	for i, r := range runs {
		values[i] = f(r)
	}
	return median(values)
}

// medianWorkloadRun returns the round of runs (one kind's scale-ups or scale-downs) whose time is the median,
// with AllCreatedSeconds, AllSeenSeconds and PodsPerSecond the medians over the rounds, Completed only if every round
// completed, and every round's time in RoundSeconds (when there was more than one).
func medianWorkloadRun(runs []WorkloadRun) WorkloadRun {
	if len(runs) == 0 {
		return WorkloadRun{}
	}
	out, seconds, completed := medianRound(runs, func(r WorkloadRun) float64 { return r.Seconds }, func(r WorkloadRun) bool { return r.Completed })
	out.Completed = completed
	out.AllCreatedSeconds = medianOf(runs, func(r WorkloadRun) float64 { return r.AllCreatedSeconds })
	out.AllSeenSeconds = medianOf(runs, func(r WorkloadRun) float64 { return r.AllSeenSeconds })
	out.PodsPerSecond = medianOf(runs, func(r WorkloadRun) float64 { return r.PodsPerSecond })
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
	cpu := func(r RolloutRun) float64 { return r.KubeAPIServerCPUMsPerInstance }
	out, seconds, completed := medianRound(rolls, func(r RolloutRun) float64 { return r.Seconds }, func(r RolloutRun) bool { return r.Completed })
	out.Completed = completed
	out.KubeAPIServerCPUMsPerInstance = medianOf(rolls, cpu)
	out.KubeAPIWritesPerInstance = medianOf(rolls, func(r RolloutRun) float64 { return r.KubeAPIWritesPerInstance })
	if len(rolls) > 1 {
		out.RoundSeconds = seconds
		out.RoundCPUMsPerInstance = make([]float64, len(rolls))
		for i, r := range rolls {
			out.RoundCPUMsPerInstance[i] = cpu(r)
		}
	}
	return out
}

func (r WorkloadRun) kindName() string { return r.Kind }
func (r RolloutRun) kindName() string  { return r.Kind }
