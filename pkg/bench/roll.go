package bench

import (
	"context"
	"time"
)

// rollMeter measures what a roll of N instances (sections 4, 4b and the modelled rollout) costs the servers:
// the CPU time of the cluster's processes and the write requests each server receives.
type rollMeter struct {
	cpu    *cpuMeter
	writes func(context.Context) (map[string]int, map[string]int)
	start  time.Time
}

// startRoll starts measuring; call it right before the template update.
func (b *bench) startRoll(ctx context.Context, pids map[string]int) *rollMeter {
	writes := b.writeCounter(ctx)
	return &rollMeter{cpu: newCPUMeter(pids), writes: writes, start: time.Now()}
}

// finish records the roll's costs in r, whose Replicas must be set.
func (m *rollMeter) finish(ctx context.Context, r *RollRun) {
	r.ServerCPUSeconds = m.cpu.used("tapp-apiserver")
	r.KubeAPIServerCPUSeconds = m.cpu.used("kube-apiserver")
	r.ControllerManagerCPUSeconds = m.cpu.used("kube-controller-manager")
	r.KubeAPIWrites, r.TAppAPIWrites = m.writes(ctx)
	r.setPerInstanceCosts()
}

// setPerInstanceCosts divides kube-apiserver's CPU time and write requests by the instances rolled.
func (r *RollRun) setPerInstanceCosts() {
	if r.Replicas <= 0 {
		return
	}
	total, _, _ := writesSummary(r.KubeAPIWrites)
	r.KubeAPIWritesPerInstance = round(float64(total)/float64(r.Replicas), 2)
	r.KubeAPIServerCPUMsPerInstance = round(1000*r.KubeAPIServerCPUSeconds/float64(r.Replicas), 2)
}

// setSpeedups sets every run's speed-up over the StatefulSet run among them (StatefulSet's time / its time).
func setSpeedups(runs []*RollRun) {
	var sts float64
	for _, r := range runs {
		if r.Kind == kindStatefulSet {
			sts = r.Seconds
		}
	}
	for _, r := range runs {
		if r.Seconds > 0 {
			r.SpeedupVsStatefulSet = ratio(sts, r.Seconds)
		}
	}
}

// rollsOf returns the RollRun of each rolling update.
func rollsOf(runs []RolloutRun) []*RollRun {
	out := make([]*RollRun, len(runs))
	for i := range runs {
		out[i] = &runs[i].RollRun
	}
	return out
}
