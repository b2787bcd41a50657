package bench

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
)

func TestGrowthExponent(t *testing.T) {
	for _, tc := range []struct {
		small, large   float64
		nSmall, nLarge int
		want           float64
	}{
		{2, 20, 1000, 10000, 1},     // linear
		{2, 200, 1000, 10000, 2},    // quadratic
		{5, 5, 1000, 10000, 0},      // constant
		{1, 10, 20, 200, 1},         // a scaled run: the sizes' ratio, not 10, is the base
		{1, 4, 10, 20, 2},           // not a power of ten
		{10, 31.62, 100, 1000, 0.5}, // square root
		{0, 5, 1000, 10000, 0},      // not measured
		{5, 0, 1000, 10000, 0},
		{1, 2, 1000, 1000, 0}, // one size
	} {
		if got := growthExponent(tc.small, tc.large, tc.nSmall, tc.nLarge); got != tc.want {
			t.Errorf("growthExponent(%v, %v, %d, %d) = %v, want %v", tc.small, tc.large, tc.nSmall, tc.nLarge, got, tc.want)
		}
	}
}

func TestGrowthNodesAndTimeouts(t *testing.T) {
	for n, want := range map[int]int{20: 3, 1000: 3, 4800: 3, 4801: 4, 10000: 7} {
		if got := growthNodes(n); got != want {
			t.Errorf("growthNodes(%d) = %d, want %d", n, got, want)
		}
		if got := growthNodes(n); got*2000 < n {
			t.Errorf("growthNodes(%d) = %d nodes of 2000 pods", n, got)
		}
	}
	for n, want := range map[int]time.Duration{20: 6 * time.Minute, 2000: 6 * time.Minute, 2001: 12 * time.Minute, 10000: 30 * time.Minute} {
		if got := timeoutFor(scaleTimeout, n); got != want {
			t.Errorf("timeoutFor(6m, %d) = %s, want %s", n, got, want)
		}
	}
}

func TestStatusBytes(t *testing.T) {
	small, large := &tkestackv1.TApp{}, &tkestackv1.TApp{}
	small.Status.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Running"}
	large.Status.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Running", "1": "Running"}
	if s, l := statusBytes(small), statusBytes(large); s <= 0 || l-s != len(`,"1":"Running"`) {
		t.Errorf("status bytes %d and %d: one more instance should add its entry", s, l)
	}
}

// growthResults: every one-TApp figure and the memory grow linearly, the list super-linearly, the watch
// fan-out is constant, the resync grows linearly.
func growthResults() *Results {
	g := &GrowthResult{
		Instances: []GrowthInstances{
			{Instances: 1000, ScaleUpSeconds: 9, ScaleUpCompleted: true, RollSeconds: 19, RollCompleted: true, StatusBytes: 30000,
				ScaleUpKubeAPIWrites: 3000, ScaleUpTAppAPIWrites: 80, RollKubeAPIWrites: 4000, RollTAppAPIWrites: 120,
				ScaleUpAllCreatedSeconds: 8, ScaleUpCPUSeconds: map[string]float64{"tapp-apiserver": 2, "kube-apiserver": 9, "kube-scheduler": 1, "benchmark": 3},
				RollCPUSeconds: map[string]float64{"tapp-apiserver": 3, "kube-apiserver": 20}, Syncs: 100, SyncSeconds: 2},
			{Instances: 10000, ScaleUpSeconds: 90, ScaleUpCompleted: true, RollSeconds: 190, RollCompleted: true, StatusBytes: 300000,
				ScaleUpKubeAPIWrites: 30000, ScaleUpTAppAPIWrites: 800, RollKubeAPIWrites: 40000, RollTAppAPIWrites: 1200,
				ScaleUpAllCreatedSeconds: 80, ScaleUpCPUSeconds: map[string]float64{"tapp-apiserver": 200, "kube-apiserver": 90, "kube-scheduler": 10, "benchmark": 30},
				RollCPUSeconds: map[string]float64{"tapp-apiserver": 30, "kube-apiserver": 200}, Syncs: 1000, SyncSeconds: 200},
		},
		TApps: []GrowthTApps{
			{TApps: 1000, FirstSyncSeconds: 4, RSSGrowthBytes: 10 << 20, HeapGrowthBytes: 8 << 20, ListSeconds: 0.05, Watchers: 50, WatchFanOutSeconds: 0.01, ResyncSeconds: 1, RestartSeconds: 0.5},
			{TApps: 10000, FirstSyncSeconds: 36, RSSGrowthBytes: 100 << 20, HeapGrowthBytes: 80 << 20, ListSeconds: 5, Watchers: 50, WatchFanOutSeconds: 0.01, ResyncSeconds: 10, RestartSeconds: 0.5},
		},
	}
	g.Figures = growthFigures(g)
	res := &Results{Growth: g}
	res.Targets = evaluateTargets(res)
	return res
}

func TestGrowthFiguresAndTargets(t *testing.T) {
	res := growthResults()
	if len(res.Growth.Figures) != 22 {
		t.Fatalf("%d figures, want 22: %+v", len(res.Growth.Figures), res.Growth.Figures)
	}
	want := map[string]float64{
		"one TApp: scale-up time":                                1,
		"one TApp: status size":                                  1,
		"one TApp: kube-apiserver writes, scale-up":              1,
		"one TApp: scale-up, all pods created":                   1,
		"one TApp: tapp-apiserver CPU, scale-up":                 2,
		"one TApp: kube-apiserver CPU, rolling update":           1,
		"TApps: tapp-apiserver RSS growth":                       1,
		"TApps: tapp-apiserver Go heap growth":                   1,
		"one TApp: controller syncs, scale-up to scale-down":     1,
		"one TApp: controller sync time, scale-up to scale-down": 2,
		"TApps: list of all":                                     2,
		"TApps: 50 watchers see an update":                       0,
		"TApps: restart until the controller has resynced":       1,
	}
	for _, f := range res.Growth.Figures {
		if e, ok := want[f.Name]; ok && f.Exponent != e {
			t.Errorf("%s: exponent %v, want %v", f.Name, f.Exponent, e)
		}
		delete(want, f.Name)
	}
	if len(want) > 0 {
		t.Errorf("figures missing: %v", want)
	}
	met := map[string]bool{}
	for _, target := range res.Targets {
		met[target.Name] = target.Met
	}
	for name, m := range map[string]bool{
		"growth 1000→10000: one TApp: scale-up time, exponent":                true,
		"growth 1000→10000: TApps: list of all, exponent":                     false,
		"growth 1000→10000: TApps: 50 watchers see an update, exponent":       true,
		"growth 1000→10000: TApps: tapp-apiserver RSS growth, exponent":       true,
		"growth 1000→10000: one TApp: in-place rolling update time, exponent": true,
		"growth 1000→10000: one TApp: tapp-apiserver CPU, scale-up, exponent": false,
		"growth 1000→10000: one TApp: kube-apiserver CPU, scale-up, exponent": true,
	} {
		if got, ok := met[name]; !ok || got != m {
			t.Errorf("target %q: present %v, met %v, want met %v", name, ok, got, m)
		}
	}
}

func TestGrowthFiguresNeedBothSizes(t *testing.T) {
	g := &GrowthResult{Instances: []GrowthInstances{{Instances: 1000, ScaleUpSeconds: 9}}}
	if f := growthFigures(g); len(f) != 0 {
		t.Errorf("one size gave figures: %+v", f)
	}
}

func TestRenderGrowth(t *testing.T) {
	md := renderMarkdown(growthResults())
	for _, s := range []string{
		"### 6. Growth",
		"| one TApp: scale-up time | 9.000 s at 1000 | 90.000 s at 10000 | 1.00 | 1 |",
		"| TApps: list of all | 0.050 s at 1000 | 5.000 s at 10000 | 2.00 | 1 |",
		"| TApps: tapp-apiserver RSS growth | 10.0MiB at 1000 | 100.0MiB at 10000 | 1.00 | 1 |",
		"| one TApp: status size | 30000 B at 1000 | 300000 B at 10000 | 1.00 | 1 |",
		"| 10000 | 90.00 | 190.00 | 300000 | 3.00 / 4.00 | 800 / 1200 |",
		"| 1000 | 4.00 | 10.0MiB (8.0MiB) | 0.050 | 0.010 (50 watchers) | 1.00, 0.50 |",
		"| one TApp: controller syncs, scale-up to scale-down | 100 at 1000 | 1000 at 10000 | 1.00 | 1 |",
		"| growth 1000→10000: TApps: list of all, exponent | ≤ 1.2 |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("results.md has no %q:\n%s", s, md)
		}
	}
}

// TestWatchFanOutStartsAtTheNamespaceVersion: the fan-out's watches start at the resource version of a
// list of the namespace, not at the TApp's own (older) version, from which a real server replays every
// event since; and every watcher must see the update.
func TestWatchFanOutStartsAtTheNamespaceVersion(t *testing.T) {
	const ns, name, listVersion = "growth-tapps", "g-00000", "9999"
	tapp := &tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "5"}}
	client := fake.NewSimpleClientset(tapp)
	client.PrependReactor("list", "tapps", func(action clienttesting.Action) (bool, runtime.Object, error) {
		return true, &tkestackv1.TAppList{ListMeta: metav1.ListMeta{ResourceVersion: listVersion}}, nil
	})
	var mu sync.Mutex
	var versions []string
	client.PrependWatchReactor("tapps", func(action clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		versions = append(versions, action.(clienttesting.WatchActionImpl).WatchRestrictions.ResourceVersion)
		mu.Unlock()
		return false, nil, nil
	})
	seconds, err := medianWatchFanOut(context.Background(), client, ns, name, 3)
	if err != nil {
		t.Fatalf("watch fan-out: %v", err)
	}
	if seconds < 0 {
		t.Errorf("fan-out took %v s", seconds)
	}
	if len(versions) != 3*growthFanOutRepeats {
		t.Fatalf("%d watches opened, want %d", len(versions), 3*growthFanOutRepeats)
	}
	for _, v := range versions {
		if v != listVersion {
			t.Errorf("a watch started at resource version %q, want the namespace's %q", v, listVersion)
		}
	}
}

func TestMergeWrites(t *testing.T) {
	got := mergeWrites(map[string]int{"create pods": 10, "patch pods/status": 20}, map[string]int{"update tapps/status": 3})
	want := map[string]int{"create pods": 10, "patch pods/status": 20, "tapp-apiserver update tapps/status": 3}
	if len(got) != len(want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: %d, want %d", k, got[k], v)
		}
	}
}

// TestLabelsMatch: a sample is summed when it carries every label asked for, with its value.
func TestLabelsMatch(t *testing.T) {
	for _, tc := range []struct {
		labels, match map[string]string
		want          bool
	}{
		{map[string]string{"name": "tapp"}, nil, true},
		{map[string]string{"name": "tapp", "x": "y"}, map[string]string{"name": "tapp"}, true},
		{map[string]string{"name": "yurtappset"}, map[string]string{"name": "tapp"}, false},
		{map[string]string{}, map[string]string{"name": "tapp"}, false},
	} {
		if got := labelsMatch(tc.labels, tc.match); got != tc.want {
			t.Errorf("labelsMatch(%v, %v) = %v, want %v", tc.labels, tc.match, got, tc.want)
		}
	}
}
