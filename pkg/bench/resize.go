package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

// resizable is a workload whose template's container resources the benchmark changes.
type resizable interface {
	workload
	setResources(ctx context.Context, r corev1.ResourceRequirements) error
}

// benchResources are the container resources before (v1) and after (v2) the resize: both Burstable, every
// value doubled, small enough for 1000 pods on the local cluster's three nodes.
func benchResources(version int) corev1.ResourceRequirements {
	q := resource.MustParse
	if version == 1 {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("10m"), corev1.ResourceMemory: q("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
		}
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: q("20m"), corev1.ResourceMemory: q("32Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: q("200m"), corev1.ResourceMemory: q("128Mi")},
	}
}

// withResources sets the first container's resources and a NotRequired resize policy for cpu and memory.
func withResources(spec *corev1.PodSpec, r corev1.ResourceRequirements) {
	c := &spec.Containers[0]
	c.Resources = r
	c.ResizePolicy = []corev1.ContainerResizePolicy{
		{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired},
		{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.NotRequired},
	}
}

func (w *tappWorkload) setResources(ctx context.Context, r corev1.ResourceRequirements) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		t, err := w.client.TKEStackAppsV1().TApps(w.namespace).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return err
		}
		withResources(&t.Spec.Template.Spec, r)
		_, err = w.client.TKEStackAppsV1().TApps(w.namespace).Update(ctx, t, metav1.UpdateOptions{})
		return err
	})
}

func (w *statefulSetWorkload) setResources(ctx context.Context, r corev1.ResourceRequirements) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := w.client.AppsV1().StatefulSets(w.namespace).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return err
		}
		withResources(&s.Spec.Template.Spec, r)
		_, err = w.client.AppsV1().StatefulSets(w.namespace).Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

// runResize is section 4b: per kind, N instances on the v1 resources (set while at 0 replicas, so every pod
// is created with them), then the template's resources change to v2 and the run lasts until every pod is
// Ready and reports the v2 resources; TApp resizes in place, StatefulSet recreates. Then N→0.
func (b *bench) runResize(ctx context.Context) ([]ResizeRun, error) {
	n := b.count(1000, 20)
	tappClient, err := versioned.NewForConfig(b.clientConfig)
	if err != nil {
		return nil, err
	}
	pids := map[string]int{}
	for _, name := range []string{"tapp-apiserver", "kube-apiserver", "kube-controller-manager"} {
		pids[name] = b.cluster.PID(name)
	}
	var runs []ResizeRun
	for _, kind := range []string{kindTApp, kindStatefulSet} {
		if ctx.Err() != nil {
			return runs, ctx.Err()
		}
		ns := map[string]string{kindTApp: "rz-tapp", kindStatefulSet: "rz-statefulset"}[kind]
		if err := b.ensureNamespace(ctx, ns); err != nil {
			return runs, err
		}
		var w resizable = &tappWorkload{client: tappClient, namespace: ns}
		if kind == kindStatefulSet {
			w = &statefulSetWorkload{client: b.kube, namespace: ns}
		}
		run, err := b.runResizeWorkload(ctx, kind, ns, w, n, pids)
		if err != nil {
			b.fail("resize %s: %v", kind, err)
		}
		if run != nil {
			runs = append(runs, *run)
		}
	}
	rolls := make([]*RollRun, len(runs))
	for i := range runs {
		rolls[i] = &runs[i].RollRun
	}
	setSpeedups(rolls)
	return runs, nil
}

func (b *bench) runResizeWorkload(ctx context.Context, kind, ns string, w resizable, n int, pids map[string]int) (*ResizeRun, error) {
	tracker, err := startPodTracker(ctx, b.watchKube, ns)
	if err != nil {
		return nil, err
	}
	defer tracker.close()
	defer func() {
		if rerr := w.remove(context.Background()); rerr != nil {
			b.logf("%s: removing the workload: %v", kind, rerr)
		}
		b.deleteLeftoverPods(ns, tracker)
	}()
	if err := w.create(ctx); err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	v1, v2 := benchResources(1), benchResources(2)
	if err := w.setResources(ctx, v1); err != nil {
		return nil, fmt.Errorf("setting the first resources: %w", err)
	}
	sleepCtx(ctx, 2*time.Second)
	tracker.markResources(imageV1, resourcesKey(v1), -1)
	if err := w.scale(ctx, int32(n)); err != nil {
		return nil, fmt.Errorf("scale up: %w", err)
	}
	if ok, _ := tracker.waitFor(ctx, scaleTimeout, func(s trackerSnapshot) bool { return s.live == n && s.readyOnImage == n }); !ok {
		s := tracker.snapshot()
		return nil, fmt.Errorf("scale-up did not complete in %s: %d pods, %d ready", scaleTimeout, s.live, s.ready)
	}

	sleepCtx(ctx, 2*time.Second)
	before := tracker.restartCounts()
	tracker.markResources(imageV1, resourcesKey(v2), n)
	meter := b.startRoll(ctx, pids)
	start := meter.start
	if err := w.setResources(ctx, v2); err != nil {
		return nil, fmt.Errorf("resize: %w", err)
	}
	ok, done := tracker.waitFor(ctx, rolloutTimeout, func(s trackerSnapshot) bool {
		return s.all == n && s.live == n && s.readyOnImage == n
	})
	after := tracker.restartCounts()
	run := &ResizeRun{
		RollRun: RollRun{
			Kind: kind, Replicas: n, MaxUnavailable: rolloutMaxUnavailable, Completed: ok,
			Seconds:                round(done.Sub(start).Seconds(), 3),
			MaxUnavailableObserved: tracker.snapshot().maxUnavailable,
			InstanceLatencyMs:      summarize(tracker.readyLatencies(start)),
		},
		ResourcesBefore: resourcesKey(v1), ResourcesAfter: resourcesKey(v2),
	}
	run.PodsKept, run.ContainerRestarts, run.PodsRecreated = comparePods(before, after)
	meter.finish(ctx, &run.RollRun)
	b.logf("resize     %-20s %d instances in %6.2fs, kept %d (restarts %d), recreated %d, kube-apiserver %.2f CPU ms and %.2f writes per instance, completed=%v",
		kind, n, run.Seconds, run.PodsKept, run.ContainerRestarts, run.PodsRecreated, run.KubeAPIServerCPUMsPerInstance, run.KubeAPIWritesPerInstance, ok)
	if !ok {
		s := tracker.snapshot()
		return run, fmt.Errorf("resize did not complete in %s: %d pods, %d ready on the new resources", rolloutTimeout, s.all, s.readyOnImage)
	}

	sleepCtx(ctx, 2*time.Second)
	tracker.mark("", -1)
	if err := w.scale(ctx, 0); err != nil {
		return run, fmt.Errorf("scale down: %w", err)
	}
	if ok, _ := tracker.waitFor(ctx, scaleTimeout, func(s trackerSnapshot) bool { return s.all == 0 }); !ok {
		return run, fmt.Errorf("scale-down did not complete in %s: %d pods left", scaleTimeout, tracker.snapshot().all)
	}
	return run, nil
}
