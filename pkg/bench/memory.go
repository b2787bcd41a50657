package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// runMemory is section 2: tapp-apiserver's resident set holding N TApps against the growth of
// kube-apiserver's resident set holding N objects of the CRD. It runs first, on fresh servers.
func (b *bench) runMemory(ctx context.Context, direct, crd apiPath, directConfig, kubeConfig *rest.Config) (*MemoryResult, error) {
	n := b.count(10000, 100)
	res := &MemoryResult{Objects: n, Shape: shapeTutorial}
	pids := map[string]int{
		"tapp-apiserver": b.cluster.PID("tapp-apiserver"),
		"kube-apiserver": b.cluster.PID("kube-apiserver"),
		"etcd":           b.cluster.PID("etcd"),
	}
	for name, pid := range pids {
		if pid == 0 {
			return nil, fmt.Errorf("no pid for %s", name)
		}
	}
	res.TAppAPIServer.PID, res.KubeAPIServer.PID, res.Etcd.PID = pids["tapp-apiserver"], pids["kube-apiserver"], pids["etcd"]
	for _, ns := range []string{"memory-tapp", "memory-crd"} {
		if err := b.ensureNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}

	b.settle(ctx, directConfig, kubeConfig)
	tappBefore, tappHeapBefore := b.sample(ctx, pids["tapp-apiserver"], directConfig)
	kubeBefore, _ := b.sample(ctx, pids["kube-apiserver"], kubeConfig)

	b.logf("memory: creating %d TApps directly on tapp-apiserver", n)
	_, errs, firstErr, elapsed := runOps(ctx, n, 16, func(ctx context.Context, i int) error {
		_, err := direct.client.TApps("memory-tapp").Create(ctx, benchTApp(shapeTutorial, fmt.Sprintf("m-%05d", i)), metav1.CreateOptions{})
		return err
	})
	if errs > 0 {
		return nil, fmt.Errorf("%d of %d TApp creates failed, first: %v", errs, n, firstErr)
	}
	res.TAppCreateSeconds = round(elapsed.Seconds(), 2)
	b.settle(ctx, directConfig, kubeConfig)
	tappAfter, tappHeapAfter := b.sample(ctx, pids["tapp-apiserver"], directConfig)
	b.saveMemoryHeapProfile(ctx, directConfig, "tapp-apiserver")
	kubeMid, kubeHeapMid := b.sample(ctx, pids["kube-apiserver"], kubeConfig)
	etcdMid, _ := b.sample(ctx, pids["etcd"], nil)
	res.KubeAPIServerDuringTAppsBytes = kubeMid.RSS - kubeBefore.RSS

	b.logf("memory: creating %d objects of the CRD", n)
	_, errs, firstErr, elapsed = runOps(ctx, n, 16, func(ctx context.Context, i int) error {
		_, err := crd.client.TApps("memory-crd").Create(ctx, benchTApp(shapeTutorial, fmt.Sprintf("m-%05d", i)), metav1.CreateOptions{})
		return err
	})
	if errs > 0 {
		return nil, fmt.Errorf("%d of %d CRD creates failed, first: %v", errs, n, firstErr)
	}
	res.CRDCreateSeconds = round(elapsed.Seconds(), 2)
	b.settle(ctx, directConfig, kubeConfig)
	kubeAfter, kubeHeapAfter := b.sample(ctx, pids["kube-apiserver"], kubeConfig)
	b.saveMemoryHeapProfile(ctx, kubeConfig, "kube-apiserver")
	etcdAfter, _ := b.sample(ctx, pids["etcd"], nil)

	res.TAppAPIServer = processMemory(pids["tapp-apiserver"], tappBefore, tappAfter, tappHeapBefore, tappHeapAfter)
	// kube-apiserver and etcd are compared from just before the CRD objects were created.
	res.KubeAPIServer = processMemory(pids["kube-apiserver"], kubeMid, kubeAfter, kubeHeapMid, kubeHeapAfter)
	res.Etcd = processMemory(pids["etcd"], etcdMid, etcdAfter, heapReading{}, heapReading{})
	b.logf("memory: tapp-apiserver %s → %s (heap %s → %s); kube-apiserver %s → %s (+%s, heap +%s); etcd +%s",
		mib(tappBefore.RSS), mib(tappAfter.RSS), mib(tappHeapBefore.Inuse), mib(tappHeapAfter.Inuse),
		mib(kubeMid.RSS), mib(kubeAfter.RSS), mib(kubeAfter.RSS-kubeMid.RSS), mib(kubeHeapAfter.Inuse-kubeHeapMid.Inuse), mib(etcdAfter.RSS-etcdMid.RSS))

	for _, c := range []struct {
		ns     string
		client apiPath
	}{{"memory-tapp", direct}, {"memory-crd", crd}} {
		if err := deleteAllTApps(ctx, c.client.client.TApps(c.ns)); err != nil {
			b.logf("memory cleanup of %s: %v", c.ns, err)
		}
	}
	return res, nil
}

func processMemory(pid int, before, after procMemory, heapBefore, heapAfter heapReading) ProcessMemory {
	return ProcessMemory{
		PID:            pid,
		BeforeRSSBytes: before.RSS, AfterRSSBytes: after.RSS, GrowthRSSBytes: after.RSS - before.RSS,
		BeforeAnonBytes: before.Anon, AfterAnonBytes: after.Anon,
		BeforeFileBytes: before.File, AfterFileBytes: after.File,
		BeforeHeapInuse: heapBefore.Inuse, AfterHeapInuse: heapAfter.Inuse, GrowthHeapInuse: heapAfter.Inuse - heapBefore.Inuse,
		BeforeHeapLive: heapBefore.Live, AfterHeapLive: heapAfter.Live,
		HeapMeasurementOK: heapBefore.Inuse > 0 && heapAfter.Inuse > 0,
	}
}

// settle gives the servers time to finish background work (watch cache, compaction of the write burst)
// and then forces a garbage collection in both, so resident sets compare live data, not garbage.
func (b *bench) settle(ctx context.Context, configs ...*rest.Config) {
	sleepCtx(ctx, 10*time.Second)
	for _, cfg := range configs {
		if _, err := heapAfterGC(ctx, cfg); err != nil {
			b.logf("forcing a garbage collection in %s: %v", cfg.Host, err)
		}
	}
	sleepCtx(ctx, 5*time.Second)
}

// saveMemoryHeapProfile writes a heap profile of a server holding the section's objects to
// <out>/profiles/<server>-memory-heap.pprof (`go tool pprof -sample_index=inuse_space`), which tells what
// takes its memory; a failure is logged, not fatal.
func (b *bench) saveMemoryHeapProfile(ctx context.Context, cfg *rest.Config, server string) {
	dir := filepath.Join(b.opts.outDir, "profiles")
	path := filepath.Join(dir, server+"-memory-heap.pprof")
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = saveHeapProfile(ctx, cfg, path)
	}
	if err == nil {
		// The text form ends with the runtime's memory statistics: live heap (HeapAlloc) against the spans
		// holding it (HeapInuse), idle and released memory, stacks.
		err = savePprof(ctx, cfg, "/debug/pprof/heap?debug=1", 60*time.Second, strings.TrimSuffix(path, ".pprof")+".txt")
	}
	if err != nil {
		b.logf("memory: heap profile of %s: %v", server, err)
	}
}

// sample reads the median resident set of three readings a second apart, and the Go heap after a forced
// collection when cfg reaches the process's server.
func (b *bench) sample(ctx context.Context, pid int, cfg *rest.Config) (procMemory, heapReading) {
	var readings []procMemory
	for i := 0; i < 3; i++ {
		if i > 0 {
			sleepCtx(ctx, time.Second)
		}
		m, err := readProcMemory(pid)
		if err != nil {
			b.logf("reading the memory of pid %d: %v", pid, err)
			continue
		}
		readings = append(readings, m)
	}
	var m procMemory
	if len(readings) > 0 {
		// the median by RSS
		for i := range readings {
			for j := i + 1; j < len(readings); j++ {
				if readings[j].RSS < readings[i].RSS {
					readings[i], readings[j] = readings[j], readings[i]
				}
			}
		}
		m = readings[len(readings)/2]
	}
	var heap heapReading
	if cfg != nil {
		h, err := heapAfterGC(ctx, cfg)
		if err != nil {
			b.logf("heap of %s: %v", cfg.Host, err)
		}
		heap = h
	}
	return m, heap
}

func mib(bytes int64) string { return fmt.Sprintf("%.1fMiB", float64(bytes)/(1<<20)) }

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
