package bench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseBudgets(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Budget
		ok   bool
	}{
		{"100/200,2000/2500", []Budget{{100, 200}, {2000, 2500}}, true},
		{" 50/100 ", []Budget{{50, 100}}, true},
		{"2.5/5", []Budget{{2.5, 5}}, true},
		{"100", nil, false},
		{"100/0", nil, false},
		{"0/200", nil, false},
		{"100/200,", nil, false},
		{"a/b", nil, false},
	} {
		got, err := parseBudgets(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSetPerInstanceCosts(t *testing.T) {
	r := RollRun{Replicas: 100, KubeAPIServerCPUSeconds: 2.5, KubeAPIWrites: map[string]int{
		"PATCH pods": 100, "PUT pods/status (409)": 20, "POST events": 500, "PUT leases": 40, "PUT endpoints": 3,
	}}
	r.setPerInstanceCosts()
	if r.KubeAPIServerCPUMsPerInstance != 25 || r.KubeAPIWritesPerInstance != 1.2 {
		t.Errorf("per instance: %.2f ms and %.2f writes, want 25 and 1.2 (events, leases and endpoints left out)",
			r.KubeAPIServerCPUMsPerInstance, r.KubeAPIWritesPerInstance)
	}
}

// benchResults is a run at two budgets: at 100/200 TApp meets every target, at 2000/2500 it misses each.
func benchResults() *Results {
	low, high := Budget{100, 200}, Budget{2000, 2500}
	up := func(kind string, b Budget, seconds, created, timeRatio, limitRatio float64) WorkloadRun {
		return WorkloadRun{Kind: kind, Budget: b, Replicas: 1000, Seconds: seconds, AllCreatedSeconds: created, Completed: true,
			TimeRatioToStatefulSet: timeRatio, ThroughputRatioToLimit: limitRatio}
	}
	roll := func(kind string, b Budget, seconds, cpuMs, writes float64, recreated, unavailable int) RolloutRun {
		return RolloutRun{Budget: b, RollRun: RollRun{Kind: kind, Replicas: 1000, MaxUnavailable: "25%", Seconds: seconds, Completed: true,
			KubeAPIServerCPUMsPerInstance: cpuMs, KubeAPIWritesPerInstance: writes, PodsRecreated: recreated, MaxUnavailableObserved: unavailable}}
	}
	return &Results{
		SchemaVersion: 2,
		ScaleUp: []WorkloadRun{
			up(kindTApp, low, 9, 8, 0.95, 0.92), up(kindStatefulSet, low, 9.5, 8.5, 1, 0.9), up(kindLimit, low, 8.3, 8.1, 0.87, 1),
			up(kindTApp, high, 7.5, 6.9, 1.3, 0.64), up(kindStatefulSet, high, 5.75, 3.15, 1, 0.84), up(kindLimit, high, 4.8, 3.8, 0.84, 1),
		},
		RollingUpdate: []RolloutRun{
			roll(kindTApp, low, 19, 15, 4, 0, 250), roll(kindStatefulSet, low, 19.4, 18, 5.5, 1000, 250),
			roll(kindTApp, high, 15, 19, 6, 3, 251), roll(kindStatefulSet, high, 11, 11, 5.5, 1000, 250),
		},
		RolloutModelled: &ModelledRollout{
			NodeCost:      NodeCostMs{SandboxCreate: 500, ImagePull: 3000, ContainerStart: 200, VolumeAttach: 10000},
			RollingUpdate: []RolloutRun{roll(kindTApp, low, 30, 10, 4, 0, 250), roll(kindStatefulSet, low, 60, 20, 5.5, 1000, 250)},
		},
	}
}

func TestTargetsPerBudget(t *testing.T) {
	targets := evaluateTargets(benchResults())
	want := []string{
		"scale-up at %s: TApp time / StatefulSet time",
		"scale-up at %s: TApp throughput / bare-client limit",
		"scale-up at %s: TApp all pods created",
		"rolling update at %s: TApp time / StatefulSet time",
		"rolling update at %s: TApp kube-apiserver CPU per updated instance",
		"rolling update at %s: TApp kube-apiserver writes per updated instance",
		"rolling update at %s: TApp pods recreated",
		"rolling update at %s: TApp max unavailable observed",
	}
	if len(targets) != 2*len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(targets), 2*len(want), targets)
	}
	for i, budget := range []string{"100/200", "2000/2500"} {
		for j, name := range want {
			got := targets[i*len(want)+j]
			if got.Name != strings.Replace(name, "%s", budget, 1) {
				t.Errorf("target %d: %q, want %q", i*len(want)+j, got.Name, strings.Replace(name, "%s", budget, 1))
			}
			if !got.Measured {
				t.Errorf("%s: not measured", got.Name)
			}
			// The low budget meets every target, the high one none.
			if got.Met != (i == 0) {
				t.Errorf("%s: met=%v (value %.2f, goal %s)", got.Name, got.Met, got.Value, got.Goal)
			}
		}
	}
}

func TestRenderMarkdownBudgets(t *testing.T) {
	res := benchResults()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	// The rolls' fields are flat in results.json, the budget recorded with each.
	for _, field := range []string{`"kubeAPIServerCPUMsPerInstance":15`, `"budget":{"qps":2000,"burst":2500}`, `"imagePullMs":3000`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("results.json has no %s", field)
		}
	}
	// The first TApp scale-up: its processes' CPU, and what tapp-apiserver received.
	tappUp := &res.ScaleUp[0]
	tappUp.ServerCPUSeconds, tappUp.KubeAPIServerCPUSeconds, tappUp.EtcdCPUSeconds = 3, 12, 3
	tappUp.TAppAPIWrites = map[string]int{"PUT tapps/status": 80, "PUT tapps/status (409)": 2, "PUT tapps/scale": 1}
	md := renderMarkdown(res)
	for _, s := range []string{
		"| 3.0 / 12.0 / 0.0 / 0.0 / 3.0 / 0.0 | 18.0 / 2.00 |",
		"**Write requests tapp-apiserver received, controller client budget 100/200 (QPS/burst)**",
		"| TApp | scale-up | 83 | 2 | PUT tapps/status 80, PUT tapps/status (409) 2, PUT tapps/scale 1 |",
		"### 3. Scale-up and scale-down, controller client budget 100/200",
		"### 3. Scale-up and scale-down, controller client budget 2000/2500",
		"### 4. Rolling image update (maxUnavailable 25%), controller client budget 2000/2500",
		"| TApp | 15.00 | 0.00× | 3 | 251 | 0.00 / 0.00 | 19.00 | 6.00 |",
		"### 4c. Modelled node cost",
		"image pull 3000 ms",
		"#### Rolling image update (maxUnavailable 25%), modelled node cost",
		"| StatefulSet | 60.00 | 0.00× | 1000 | 250 | 0.00 / 0.00 | 20.00 | 5.50 |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("results.md has no %q:\n%s", s, md)
		}
	}
}

// TestAllowedUnavailable: the target's budget resolves maxUnavailable as the TApp controller does (a
// percentage rounded up), not as Deployment's (rounded down).
func TestAllowedUnavailable(t *testing.T) {
	for _, tc := range []struct {
		max      string
		replicas int
		want     int
	}{{"25%", 1000, 250}, {"25%", 50, 13}, {"3", 50, 3}} {
		if got := allowedUnavailable(tc.max, tc.replicas); got != tc.want {
			t.Errorf("allowedUnavailable(%s, %d) = %d, want %d", tc.max, tc.replicas, got, tc.want)
		}
	}
}
