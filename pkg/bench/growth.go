package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

// Section 6 ("growth") sizes, before --scale: the small and the large size of each part.
const (
	growthSmall = 1000
	growthLarge = 10000
	// growthWatchers is the number of watchers of the watch fan-out, the same at both sizes.
	growthWatchers = 50
)

// growthExponent is how a figure grows with the size: log(large/small) / log(nLarge/nSmall); 1 is linear,
// 0 constant, 2 quadratic. It is 0 when either figure or size is not positive, or the sizes are equal.
func growthExponent(small, large float64, nSmall, nLarge int) float64 {
	if small <= 0 || large <= 0 || nSmall <= 0 || nLarge <= nSmall {
		return 0
	}
	return round(math.Log(large/small)/math.Log(float64(nLarge)/float64(nSmall)), 2)
}

// newGrowthFigure is a figure measured at both sizes with its exponent and the growth a linear figure
// would have (Expected: 1 for totals, 0 for what should not depend on the size).
func newGrowthFigure(name, unit string, expected float64, nSmall, nLarge int, small, large float64) GrowthFigure {
	return GrowthFigure{Name: name, Unit: unit, Small: small, Large: large, SmallN: nSmall, LargeN: nLarge,
		Exponent: growthExponent(small, large, nSmall, nLarge), ExpectedExponent: expected}
}

// growthNodes is the number of kwok nodes a TApp of n instances needs (2000 pods a node, a quarter spare).
func growthNodes(n int) int {
	nodes := (n*5/4 + 1999) / 2000
	if nodes < 3 {
		return 3
	}
	return nodes
}

// statusBytes is the JSON size of a TApp's status.
func statusBytes(t *tkestackv1.TApp) int {
	raw, err := json.Marshal(t.Status)
	if err != nil {
		return 0
	}
	return len(raw)
}

// growthSection is section 6 on a cluster of its own with the controllers at the first budget: one TApp
// of growthSmall and of growthLarge instances (scale-up, in-place rolling update, its status size, the
// servers' writes), then growthSmall and growthLarge TApps of no replicas in one server (tapp-apiserver's
// memory, a list of all, the watch fan-out, the controller's resync after a restart).
func (b *bench) growthSection(ctx context.Context, budget Budget) error {
	res := &GrowthResult{}
	b.res.Growth = res
	small, large := b.count(growthSmall, 10), b.count(growthLarge, 100)
	tappClient, err := versioned.NewForConfig(b.clientConfig)
	if err != nil {
		return err
	}
	pids := b.processPIDs()
	tag := b.clusterTag
	defer func() { b.clusterTag = tag }()
	direct := directConfig(b.cluster, b.clientConfig)
	scheduler := rest.CopyConfig(b.clientConfig)
	scheduler.Host = b.cluster.SchedulerURL
	for _, n := range []int{small, large} {
		b.clusterTag = fmt.Sprintf("%s-%d", tag, n) // profile names (--profile) tell the sizes apart
		syncsBefore, syncSecondsBefore, syncsErr := tappSyncs(ctx, direct)
		scaleUp := fmt.Sprintf("the scale-up of %d instances", n)
		if n == large {
			b.profileServer(ctx, "tapp-apiserver", direct, fmt.Sprintf("tapp-apiserver-growth-scale-up-%d.pprof", n), b.count(scaleUpProfileSeconds, 5), scaleUp)
		}
		b.profileServer(ctx, "kube-scheduler", scheduler, fmt.Sprintf("kube-scheduler-growth-scale-up-%d.pprof", n), int(createSettle/time.Second)+b.count(scaleUpProfileSeconds*n/large, 2), scaleUp)
		up, roll, _, err := b.runKind(ctx, kindTApp, tappClient, n, true, budget, pids)
		if err != nil {
			return err
		}
		syncsAfter, syncSecondsAfter, err := tappSyncs(ctx, direct)
		p := GrowthInstances{Instances: n, ScaleUpSeconds: up.Seconds, StatusBytes: up.TAppStatusBytes, ScaleUpCompleted: up.Completed,
			ScaleUpAllCreatedSeconds: up.AllCreatedSeconds, ScaleUpCPUSeconds: map[string]float64{
				"tapp-apiserver": up.ServerCPUSeconds, "kube-apiserver": up.KubeAPIServerCPUSeconds,
				"kube-controller-manager": up.ControllerManagerCPUSeconds, "kube-scheduler": up.SchedulerCPUSeconds,
				"etcd": up.EtcdCPUSeconds, "benchmark": up.BenchmarkProcessCPUSeconds}}
		if syncsErr == nil && err == nil {
			p.Syncs, p.SyncSeconds = int(syncsAfter-syncsBefore), round(syncSecondsAfter-syncSecondsBefore, 3)
		} else {
			b.logf("growth: the TApp controller's syncs: %v", errors.Join(syncsErr, err))
		}
		p.ScaleUpWrites = mergeWrites(up.KubeAPIWrites, up.TAppAPIWrites)
		p.ScaleUpKubeAPIWrites, _, _ = writesSummary(up.KubeAPIWrites)
		p.ScaleUpTAppAPIWrites, _, _ = writesSummary(up.TAppAPIWrites)
		if roll != nil {
			p.RollSeconds, p.RollCompleted = roll.Seconds, roll.Completed
			p.RollKubeAPIWrites, _, _ = writesSummary(roll.KubeAPIWrites)
			p.RollTAppAPIWrites, _, _ = writesSummary(roll.TAppAPIWrites)
			p.RollWrites = mergeWrites(roll.KubeAPIWrites, roll.TAppAPIWrites)
			p.RollCPUSeconds = map[string]float64{"tapp-apiserver": roll.ServerCPUSeconds,
				"kube-apiserver": roll.KubeAPIServerCPUSeconds, "kube-controller-manager": roll.ControllerManagerCPUSeconds}
		}
		res.Instances = append(res.Instances, p)
	}
	if err := b.growthTApps(ctx, res, small, large); err != nil {
		b.fail("growth, TApps in one server: %v", err)
	}
	res.Figures = growthFigures(res)
	for _, f := range res.Figures {
		b.logf("growth %-48s %10.3f → %10.3f %-6s exponent %.2f", f.Name, f.Small, f.Large, f.Unit, f.Exponent)
	}
	return nil
}

// mergeWrites is kube-apiserver's write requests with tapp-apiserver's, whose keys are prefixed
// "tapp-apiserver ".
func mergeWrites(kube, tapp map[string]int) map[string]int {
	out := make(map[string]int, len(kube)+len(tapp))
	for k, v := range kube {
		out[k] = v
	}
	for k, v := range tapp {
		out["tapp-apiserver "+k] = v
	}
	return out
}

// growthTApps creates TApps of no replicas directly on tapp-apiserver up to each size and measures the
// server holding them.
func (b *bench) growthTApps(ctx context.Context, res *GrowthResult, small, large int) error {
	const ns = "growth-tapps"
	if err := b.ensureNamespace(ctx, ns); err != nil {
		return err
	}
	direct := directConfig(b.cluster, b.clientConfig)
	client, err := versioned.NewForConfig(protobufConfig(direct))
	if err != nil {
		return err
	}
	tapps := client.TKEStackAppsV1().TApps(ns)
	// The baseline is a fresh process, as every reading after it is (each follows a restart): the process
	// that ran the one-TApp parts still holds the heap its pod informers grew to with 10,000 pods. A profile
	// still being taken would hold the old process's graceful stop past its bound: each restart waits for it.
	b.profiling.Wait()
	if err := b.cluster.RestartTAppAPIServer(ctx); err != nil {
		return err
	}
	b.settle(ctx, direct)
	before, beforeHeap := b.sample(ctx, b.cluster.PID("tapp-apiserver"), direct)
	created := 0
	for _, n := range []int{small, large} {
		b.logf("growth: creating TApps %d to %d", created, n)
		from := created
		_, errs, firstErr, _ := runOps(ctx, n-from, 16, func(ctx context.Context, i int) error {
			t := benchTApp(shapeTutorial, fmt.Sprintf("g-%05d", from+i))
			t.Spec.Replicas = 0
			_, err := tapps.Create(ctx, t, metav1.CreateOptions{})
			return err
		})
		if errs > 0 {
			return fmt.Errorf("%d of %d TApp creates failed, first: %v", errs, n-from, firstErr)
		}
		created = n
		p := GrowthTApps{TApps: n, Watchers: growthWatchers}
		// Every TApp synced once (its status written) before anything is measured: the list and the watches
		// then meet a quiet server, and the resync after the restart is a resync, not the first sync of
		// the TApps the controller had not reached yet.
		if p.FirstSyncSeconds, err = waitFirstSync(ctx, tapps, n); err != nil {
			return err
		}
		if p.ListSeconds, err = medianListSeconds(ctx, tapps, n); err != nil {
			return err
		}
		// Before the restart: watches opened on a process that has just started can end at once, before its
		// watch cache has caught up with the resource version they ask for.
		if p.WatchFanOutSeconds, err = medianWatchFanOut(ctx, client, ns, fmt.Sprintf("g-%05d", 0), growthWatchers); err != nil {
			return err
		}
		// The memory is that of the restarted process holding n TApps with its controller synced, against the
		// fresh process holding none read before the first TApp.
		if p.ResyncSeconds, p.RestartSeconds, err = b.controllerResync(ctx, direct, n); err != nil {
			return err
		}
		b.settle(ctx, direct)
		after, afterHeap := b.sample(ctx, b.cluster.PID("tapp-apiserver"), direct)
		p.RSSGrowthBytes, p.HeapGrowthBytes = after.RSS-before.RSS, afterHeap.Inuse-beforeHeap.Inuse
		b.saveGrowthHeapProfile(ctx, direct, n)
		b.logf("growth: %d TApps: first synced %.2fs after the creates, tapp-apiserver +%s (Go heap +%s), list %.3fs, %d watchers all see an update in %.3fs, restart to controller resynced %.2fs (the restart %.2fs)",
			n, p.FirstSyncSeconds, mib(p.RSSGrowthBytes), mib(p.HeapGrowthBytes), p.ListSeconds, p.Watchers, p.WatchFanOutSeconds, p.ResyncSeconds, p.RestartSeconds)
		res.TApps = append(res.TApps, p)
	}
	b.profiling.Wait() // the resync profiles
	if err := deleteAllTApps(ctx, tapps); err != nil {
		b.logf("growth cleanup of %s: %v", ns, err)
	}
	return nil
}

// medianListSeconds lists every TApp of the namespace three times and returns the median time.
func medianListSeconds(ctx context.Context, tapps interface {
	List(context.Context, metav1.ListOptions) (*tkestackv1.TAppList, error)
}, want int) (float64, error) {
	var times []float64
	for i := 0; i < 3; i++ {
		start := time.Now()
		list, err := tapps.List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		times = append(times, time.Since(start).Seconds())
		if len(list.Items) < want {
			return 0, fmt.Errorf("list returned %d TApps, want %d", len(list.Items), want)
		}
	}
	sort.Float64s(times)
	return round(times[1], 4), nil
}

// growthFanOutRepeats is how many times the watch fan-out is measured at each size (the median is kept).
const growthFanOutRepeats = 3

// medianWatchFanOut measures watchFanOut growthFanOutRepeats times and returns the median.
func medianWatchFanOut(ctx context.Context, client versioned.Interface, ns, name string, watchers int) (float64, error) {
	var times []float64
	for i := 0; i < growthFanOutRepeats; i++ {
		t, err := watchFanOut(ctx, client, ns, name, watchers)
		if err != nil {
			return 0, err
		}
		times = append(times, t)
	}
	sort.Float64s(times)
	return times[len(times)/2], nil
}

// watchFanOut opens watchers watches of the namespace from its current resource version, updates the TApp
// name and returns the time until every watcher has seen the update. The watches start from the
// namespace's resource version (a list of one object, read from etcd), not from the TApp's own: a watch
// from an older version first receives every event since (at 10,000 TApps, the creates of all but the
// first), which is a replay of the history, not the delivery of one event to many watchers.
func watchFanOut(ctx context.Context, client versioned.Interface, ns, name string, watchers int) (float64, error) {
	tapps := client.TKEStackAppsV1().TApps(ns)
	obj, err := tapps.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	current, err := tapps.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 10)
	var wg sync.WaitGroup
	seen := make(chan time.Time, watchers)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i := 0; i < watchers; i++ {
		w, err := tapps.Watch(ctx, metav1.ListOptions{ResourceVersion: current.ResourceVersion})
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func(w watch.Interface) {
			defer wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				if t, ok := ev.Object.(*tkestackv1.TApp); ok && ev.Type == watch.Modified && t.Annotations[sentAnnotation] == stamp {
					seen <- time.Now()
					return
				}
			}
		}(w)
	}
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[sentAnnotation] = stamp
	start := time.Now()
	if _, err := tapps.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		cancel()
		wg.Wait()
		return 0, err
	}
	wg.Wait()
	close(seen)
	var last time.Time
	count := 0
	for t := range seen {
		count++
		if t.After(last) {
			last = t
		}
	}
	if count < watchers {
		return 0, fmt.Errorf("%d of %d watchers saw the update within a minute", count, watchers)
	}
	return round(last.Sub(start).Seconds(), 4), nil
}

// controllerResync restarts tapp-apiserver and returns the time from the restart's start until the TApp
// controller of the new process has taken every TApp from its queue (workqueue_adds_total{name="tapp"}
// reaches n and workqueue_depth{name="tapp"} is 0), and how long the restart itself took (the old process's
// graceful stop, the new one's start until it is ready through the aggregator). The new process usually has
// drained its queue by the time it is ready, so only the whole can be timed; the restart's share is the
// constant part of it.
func (b *bench) controllerResync(ctx context.Context, direct *rest.Config, n int) (total, restart float64, err error) {
	b.profiling.Wait() // the previous size's resync profile, before the restart
	start := time.Now()
	if err := b.cluster.RestartTAppAPIServer(ctx); err != nil {
		return 0, 0, err
	}
	restart = round(time.Since(start).Seconds(), 3)
	b.profileServer(ctx, "tapp-apiserver", direct, fmt.Sprintf("tapp-apiserver-growth-resync-%d.pprof", n), resyncProfileSeconds, fmt.Sprintf("the resync of %d TApps", n))
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		adds, depth, err := tappQueue(ctx, direct)
		if err == nil && adds >= float64(n) && depth == 0 {
			return round(time.Since(start).Seconds(), 3), restart, nil
		}
		sleepCtx(ctx, 250*time.Millisecond) // each read of /metrics costs the server a little
	}
	return 0, restart, fmt.Errorf("the TApp controller did not take %d TApps from its queue within 10 minutes of the restart", n)
}

// waitFirstSync waits until each of the n TApps of the namespace reports its generation observed (bounded by
// 10 minutes), and returns how long that took.
func waitFirstSync(ctx context.Context, tapps interface {
	List(context.Context, metav1.ListOptions) (*tkestackv1.TAppList, error)
}, n int) (float64, error) {
	start := time.Now()
	deadline := start.Add(10 * time.Minute)
	synced := 0
	for time.Now().Before(deadline) && ctx.Err() == nil {
		list, err := tapps.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err == nil {
			synced = 0
			for i := range list.Items {
				if list.Items[i].Status.ObservedGeneration >= list.Items[i].Generation {
					synced++
				}
			}
			if synced >= n {
				return round(time.Since(start).Seconds(), 3), nil
			}
		}
		sleepCtx(ctx, time.Second)
	}
	return 0, fmt.Errorf("%d of %d TApps synced by the controller within 10 minutes", synced, n)
}

// resyncProfileSeconds is the length of the CPU profile of tapp-apiserver taken from the moment the
// restarted process is ready, while its controller resyncs the TApps.
const resyncProfileSeconds = 20

// scaleUpProfileSeconds is the length of the CPU profile of tapp-apiserver taken from the start of the
// large TApp's scale-up (about 180 s on a quiet 2-core machine), before --scale: where its CPU goes as the
// instances grow. kube-scheduler's profile at each size is as long in proportion to the size (its share of
// the scale-up, not the rolling update after it, in which it schedules nothing), from the workload's
// creation (createSettle before the scale-up).
const scaleUpProfileSeconds = 150

// profileServer takes, in the background, a CPU profile of seconds of a server (cfg: its address and the
// admin's credentials) into <out>/profiles/name, during what. The section waits for it before it ends
// (b.profiling).
func (b *bench) profileServer(ctx context.Context, server string, cfg *rest.Config, name string, seconds int, what string) {
	path, err := b.profilePath(name)
	if err != nil {
		b.logf("profile: %v", err)
		return
	}
	b.profiling.Add(1)
	go func() {
		defer b.profiling.Done()
		if err := saveProfile(ctx, cfg, seconds, path); err != nil {
			b.logf("profile of %s during %s: %v", server, what, err)
			return
		}
		b.logf("CPU profile of %s during %s: %s", server, what, path)
	}()
}

// saveGrowthHeapProfile writes the heap profile of tapp-apiserver holding n TApps, its controller synced,
// to <out>/profiles/tapp-apiserver-growth-heap-<n>.pprof: what the memory growth is made of.
func (b *bench) saveGrowthHeapProfile(ctx context.Context, direct *rest.Config, n int) {
	path, err := b.profilePath(fmt.Sprintf("tapp-apiserver-growth-heap-%d.pprof", n))
	if err != nil {
		b.logf("heap profile: %v", err)
		return
	}
	if err := saveHeapProfile(ctx, direct, path); err != nil {
		b.logf("heap profile of tapp-apiserver with %d TApps: %v", n, err)
		return
	}
	b.logf("heap profile of tapp-apiserver with %d TApps: %s", n, path)
}

// profilePath returns <out>/profiles/name, creating the directory.
func (b *bench) profilePath(name string) (string, error) {
	dir := filepath.Join(b.opts.outDir, "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// tappSyncs reads how many syncs the TApp controller has made, and their summed duration in seconds, from
// tapp-apiserver's /metrics (tapp_controller_sync_duration_seconds, every result).
func tappSyncs(ctx context.Context, direct *rest.Config) (count, seconds float64, err error) {
	// Before the first sync the histogram has no sample: that is 0 syncs.
	sums, _, err := scrapeSums(ctx, direct, nil, "tapp_controller_sync_duration_seconds_count", "tapp_controller_sync_duration_seconds_sum")
	if err != nil {
		return 0, 0, err
	}
	return sums[0], sums[1], nil
}

// tappQueue reads the TApp controller's queue adds and depth from tapp-apiserver's /metrics.
func tappQueue(ctx context.Context, direct *rest.Config) (adds, depth float64, err error) {
	sums, missing, err := scrapeSums(ctx, direct, map[string]string{"name": "tapp"}, "workqueue_adds_total", "workqueue_depth")
	if err != nil {
		return 0, 0, err
	}
	if len(missing) > 0 {
		return 0, 0, fmt.Errorf("no %v{name=\"tapp\"}", missing)
	}
	return sums[0], sums[1], nil
}

// growthFigures lists every figure of the section measured at both sizes with its growth exponent.
func growthFigures(res *GrowthResult) []GrowthFigure {
	var out []GrowthFigure
	if len(res.Instances) == 2 {
		s, l := res.Instances[0], res.Instances[1]
		add := func(name, unit string, expected, small, large float64) {
			out = append(out, newGrowthFigure(name, unit, expected, s.Instances, l.Instances, small, large))
		}
		add("one TApp: scale-up time", "s", 1, s.ScaleUpSeconds, l.ScaleUpSeconds)
		add("one TApp: scale-up, all pods created", "s", 1, s.ScaleUpAllCreatedSeconds, l.ScaleUpAllCreatedSeconds)
		for _, proc := range []string{"tapp-apiserver", "kube-apiserver", "kube-scheduler", "benchmark"} {
			add("one TApp: "+proc+" CPU, scale-up", "s", 1, s.ScaleUpCPUSeconds[proc], l.ScaleUpCPUSeconds[proc])
		}
		if s.Syncs > 0 && l.Syncs > 0 {
			add("one TApp: controller syncs, scale-up to scale-down", "syncs", 1, float64(s.Syncs), float64(l.Syncs))
			add("one TApp: controller sync time, scale-up to scale-down", "s", 1, s.SyncSeconds, l.SyncSeconds)
		}
		add("one TApp: in-place rolling update time", "s", 1, s.RollSeconds, l.RollSeconds)
		add("one TApp: status size", "bytes", 1, float64(s.StatusBytes), float64(l.StatusBytes))
		add("one TApp: kube-apiserver writes, scale-up", "writes", 1, float64(s.ScaleUpKubeAPIWrites), float64(l.ScaleUpKubeAPIWrites))
		add("one TApp: kube-apiserver writes, rolling update", "writes", 1, float64(s.RollKubeAPIWrites), float64(l.RollKubeAPIWrites))
		add("one TApp: tapp-apiserver writes, scale-up", "writes", 1, float64(s.ScaleUpTAppAPIWrites), float64(l.ScaleUpTAppAPIWrites))
		add("one TApp: tapp-apiserver writes, rolling update", "writes", 1, float64(s.RollTAppAPIWrites), float64(l.RollTAppAPIWrites))
		for _, proc := range []string{"tapp-apiserver", "kube-apiserver"} {
			add("one TApp: "+proc+" CPU, rolling update", "s", 1, s.RollCPUSeconds[proc], l.RollCPUSeconds[proc])
		}
	}
	if len(res.TApps) == 2 {
		s, l := res.TApps[0], res.TApps[1]
		add := func(name, unit string, expected, small, large float64) {
			out = append(out, newGrowthFigure(name, unit, expected, s.TApps, l.TApps, small, large))
		}
		add("TApps: tapp-apiserver RSS growth", "bytes", 1, float64(s.RSSGrowthBytes), float64(l.RSSGrowthBytes))
		if s.HeapGrowthBytes > 0 && l.HeapGrowthBytes > 0 {
			add("TApps: tapp-apiserver Go heap growth", "bytes", 1, float64(s.HeapGrowthBytes), float64(l.HeapGrowthBytes))
		}
		add("TApps: list of all", "s", 1, s.ListSeconds, l.ListSeconds)
		add(fmt.Sprintf("TApps: %d watchers see an update", s.Watchers), "s", 0, s.WatchFanOutSeconds, l.WatchFanOutSeconds)
		if s.FirstSyncSeconds > 0 && l.FirstSyncSeconds > 0 {
			add("TApps: created until the controller synced each once", "s", 1, s.FirstSyncSeconds, l.FirstSyncSeconds)
		}
		add("TApps: restart until the controller has resynced", "s", 1, s.ResyncSeconds, l.ResyncSeconds)
	}
	return out
}
