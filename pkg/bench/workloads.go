package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// Workload kinds of sections 3 and 4.
const (
	kindTApp        = "TApp"
	kindStatefulSet = "StatefulSet"
	kindDeployment  = "Deployment"
	// kindLimit is a bare client creating and deleting the pods at the controllers' client QPS and burst.
	kindLimit = "limit (bare client)"
	// kindLimitGate is the bare client creating pods that carry the TApp controller's readiness gate and
	// setting each one's gate condition True right after its create (inplace.Updater.InitReadinessGate): the
	// least a controller whose pods can be updated in place must write, with nothing else of a controller.
	kindLimitGate = "bare client + readiness gate"
)

const (
	imageV1 = "registry.example.com/bench/app:v1"
	imageV2 = "registry.example.com/bench/app:v2"
	// maxUnavailable of every rolling update.
	rolloutMaxUnavailable = "25%"
)

// workload is one kind driven through its API.
type workload interface {
	create(ctx context.Context) error
	scale(ctx context.Context, replicas int32) error
	setImage(ctx context.Context, image string) error
	remove(ctx context.Context) error
}

func benchPodTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: imageV1}},
		},
	}
}

type tappWorkload struct {
	client    versioned.Interface
	namespace string
	// claims, when set, are the TApp's volumeClaimTemplates (mounted by its container, withClaims), which
	// follow their templates on the rolling update (volumeClaimUpdateStrategy OnPodRollingUpdate).
	claims []corev1.PersistentVolumeClaim
}

func (w *tappWorkload) create(ctx context.Context) error {
	mu := intstr.FromString(rolloutMaxUnavailable)
	tapp := &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: tkestackv1.TAppSpec{
			Replicas:       0,
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench-tapp"}},
			Template:       benchPodTemplate("bench-tapp"),
			UpdateStrategy: tkestackv1.TAppUpdateStrategy{MaxUnavailable: &mu},
		},
	}
	if len(w.claims) > 0 {
		withClaims(&tapp.Spec.Template.Spec, w.claims)
		tapp.Spec.VolumeClaimTemplates = w.claims
		tapp.Spec.VolumeClaimUpdateStrategy = &tkestackv1.TAppVolumeClaimUpdateStrategy{Type: tkestackv1.OnPodRollingUpdateVolumeClaimUpdateStrategyType}
	}
	_, err := w.client.TKEStackAppsV1().TApps(w.namespace).Create(ctx, tapp, metav1.CreateOptions{})
	return err
}

func (w *tappWorkload) scale(ctx context.Context, replicas int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := w.client.TKEStackAppsV1().TApps(w.namespace).GetScale(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = w.client.TKEStackAppsV1().TApps(w.namespace).UpdateScale(ctx, "bench", s, metav1.UpdateOptions{})
		return err
	})
}

func (w *tappWorkload) setImage(ctx context.Context, image string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		t, err := w.client.TKEStackAppsV1().TApps(w.namespace).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return err
		}
		t.Spec.Template.Spec.Containers[0].Image = image
		_, err = w.client.TKEStackAppsV1().TApps(w.namespace).Update(ctx, t, metav1.UpdateOptions{})
		return err
	})
}

func (w *tappWorkload) remove(ctx context.Context) error {
	return ignoreNotFound(w.client.TKEStackAppsV1().TApps(w.namespace).Delete(ctx, "bench", metav1.DeleteOptions{}))
}

type statefulSetWorkload struct {
	client    kubernetes.Interface
	namespace string
	// claims, when set, are the StatefulSet's volumeClaimTemplates (mounted by its container, withClaims).
	claims []corev1.PersistentVolumeClaim
}

func (w *statefulSetWorkload) create(ctx context.Context) error {
	mu := intstr.FromString(rolloutMaxUnavailable)
	zero := int32(0)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &zero,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench-sts"}},
			Template:            benchPodTemplate("bench-sts"),
			ServiceName:         "bench",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &mu},
			},
		},
	}
	if len(w.claims) > 0 {
		withClaims(&sts.Spec.Template.Spec, w.claims)
		sts.Spec.VolumeClaimTemplates = w.claims
	}
	_, err := w.client.AppsV1().StatefulSets(w.namespace).Create(ctx, sts, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// Without the MaxUnavailableStatefulSet feature gate kube-apiserver drops maxUnavailable silently.
	got, err := w.client.AppsV1().StatefulSets(w.namespace).Get(ctx, "bench", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ru := got.Spec.UpdateStrategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil {
		return fmt.Errorf("kube-apiserver dropped the StatefulSet's rollingUpdate.maxUnavailable: is the MaxUnavailableStatefulSet feature gate on?")
	}
	return nil
}

func (w *statefulSetWorkload) scale(ctx context.Context, replicas int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		_, err := w.client.AppsV1().StatefulSets(w.namespace).UpdateScale(ctx, "bench", &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: w.namespace},
			Spec:       autoscalingv1.ScaleSpec{Replicas: replicas},
		}, metav1.UpdateOptions{})
		return err
	})
}

func (w *statefulSetWorkload) setImage(ctx context.Context, image string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := w.client.AppsV1().StatefulSets(w.namespace).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Template.Spec.Containers[0].Image = image
		_, err = w.client.AppsV1().StatefulSets(w.namespace).Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

func (w *statefulSetWorkload) remove(ctx context.Context) error {
	return ignoreNotFound(w.client.AppsV1().StatefulSets(w.namespace).Delete(ctx, "bench", metav1.DeleteOptions{}))
}

type deploymentWorkload struct {
	client    kubernetes.Interface
	namespace string
}

func (w *deploymentWorkload) create(ctx context.Context) error {
	mu := intstr.FromString(rolloutMaxUnavailable)
	surge := intstr.FromInt32(0)
	zero := int32(0)
	_, err := w.client.AppsV1().Deployments(w.namespace).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench-deploy"}},
			Template: benchPodTemplate("bench-deploy"),
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &mu, MaxSurge: &surge},
			},
		},
	}, metav1.CreateOptions{})
	return err
}

func (w *deploymentWorkload) scale(ctx context.Context, replicas int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		_, err := w.client.AppsV1().Deployments(w.namespace).UpdateScale(ctx, "bench", &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: w.namespace},
			Spec:       autoscalingv1.ScaleSpec{Replicas: replicas},
		}, metav1.UpdateOptions{})
		return err
	})
}

func (w *deploymentWorkload) setImage(ctx context.Context, image string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := w.client.AppsV1().Deployments(w.namespace).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		_, err = w.client.AppsV1().Deployments(w.namespace).Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

func (w *deploymentWorkload) remove(ctx context.Context) error {
	return ignoreNotFound(w.client.AppsV1().Deployments(w.namespace).Delete(ctx, "bench", metav1.DeleteOptions{}))
}

// limitWorkload creates and deletes bare pods at the controllers' client rate limit, 16 requests in flight
// (kept from the first measurements, so that figures compare across runs; at an unthrottled budget the 16
// requests in flight and the cluster, not the rate limiter, are what bounds it).
//
// With gate set, each pod carries the TApp controller's readiness gate and its create is followed by the gate
// write, made as the controller makes it, through a second client with a rate limit of its own (as the
// controller's pod status client).
type limitWorkload struct {
	client    kubernetes.Interface
	namespace string
	current   int
	gate      *inplace.Updater
}

func newLimitWorkload(cfg *rest.Config, qps float32, burst int, namespace string, gate bool) (*limitWorkload, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = qps, burst
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	w := &limitWorkload{client: client, namespace: namespace}
	if gate {
		status, err := kubernetes.NewForConfig(c) // a rate limiter of its own
		if err != nil {
			return nil, err
		}
		w.gate = &inplace.Updater{Client: client, StatusClient: status, FieldManager: "bench-bare-client"}
	}
	return w, nil
}

// isBareClient tells the kinds that are a bare client, not a controller: no rolling update.
func isBareClient(kind string) bool { return kind == kindLimit || kind == kindLimitGate }

func (w *limitWorkload) create(context.Context) error { return nil }

func (w *limitWorkload) scale(ctx context.Context, replicas int32) error {
	n := int(replicas)
	var errs int
	var firstErr error
	switch {
	case n > w.current:
		from := w.current
		gates := w.writeGates(ctx, n-from)
		_, errs, firstErr, _ = runOps(ctx, n-from, 16, func(ctx context.Context, i int) error {
			tmpl := benchPodTemplate("bench-limit")
			if w.gate != nil {
				inplace.AddReadinessGate(&tmpl.Spec)
			}
			pod, err := w.client.CoreV1().Pods(w.namespace).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bare-%d", from+i), Labels: tmpl.Labels},
				Spec:       tmpl.Spec,
			}, metav1.CreateOptions{})
			if err == nil && gates != nil {
				gates.created <- pod
			}
			return err
		})
		if gates != nil {
			gateErrs, gateErr := gates.wait()
			errs += gateErrs
			if firstErr == nil {
				firstErr = gateErr
			}
		}
	case n < w.current:
		from := n
		_, errs, firstErr, _ = runOps(ctx, w.current-n, 16, func(ctx context.Context, i int) error {
			return ignoreNotFound(w.client.CoreV1().Pods(w.namespace).Delete(ctx, fmt.Sprintf("bare-%d", from+i), metav1.DeleteOptions{}))
		})
	}
	w.current = n
	if errs > 0 {
		return fmt.Errorf("%d pod calls failed, first: %w", errs, firstErr)
	}
	return nil
}

// gateWriters set the readiness gate True on the pods sent to created, 16 at a time, beside the creates (as
// the TApp controller writes the gates of its new pods: the creates do not wait for them).
type gateWriters struct {
	created  chan *corev1.Pod
	done     sync.WaitGroup
	mu       sync.Mutex
	errs     int
	firstErr error
}

// writeGates starts the gate writers of a scale-up of count pods, or returns nil for pods without the gate.
// Every created pod fits in the channel, so that a create never waits for a gate write.
func (w *limitWorkload) writeGates(ctx context.Context, count int) *gateWriters {
	if w.gate == nil {
		return nil
	}
	g := &gateWriters{created: make(chan *corev1.Pod, count)}
	for range 16 {
		g.done.Add(1)
		go func() {
			defer g.done.Done()
			for pod := range g.created {
				if _, err := w.gate.InitReadinessGate(ctx, pod); err != nil {
					g.mu.Lock()
					g.errs++
					if g.firstErr == nil {
						g.firstErr = err
					}
					g.mu.Unlock()
				}
			}
		}()
	}
	return g
}

// wait ends the gate writes once every created pod was sent, and returns their failures.
func (g *gateWriters) wait() (int, error) {
	close(g.created)
	g.done.Wait()
	return g.errs, g.firstErr
}

func (w *limitWorkload) setImage(context.Context, string) error {
	return fmt.Errorf("the bare client has no rolling update")
}

func (w *limitWorkload) remove(context.Context) error { return nil }

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// runWorkloads is sections 3 and 4 at one budget (the cluster's): per kind, 0→N until every pod is Ready,
// then (when rollout is set, not for the bare clients) a rolling image update of the N instances, then N→0
// until every pod is gone. It runs this rounds times, the kinds taking turns (each round starts one kind
// further along, so that no kind always follows the same other), and returns per kind its median round
// (medianWorkloadRun, medianRolloutRun). Profiles are taken in the first round only.
func (b *bench) runWorkloads(ctx context.Context, kinds []string, rollout bool, budget Budget, rounds int) (ups, downs []WorkloadRun, rolls []RolloutRun, err error) {
	n := b.count(1000, 20)
	tappClient, err := versioned.NewForConfig(b.clientConfig)
	if err != nil {
		return nil, nil, nil, err
	}
	pids := b.processPIDs()
	type kindRounds struct {
		ups, downs []WorkloadRun
		rolls      []RolloutRun
	}
	byKind := map[string]*kindRounds{}
	for _, kind := range kinds {
		byKind[kind] = &kindRounds{}
	}
	defer func() { b.round = 0 }()
rounds:
	for round := 0; round < max(rounds, 1); round++ {
		b.round = round
		if rounds > 1 {
			b.logf("round %d of %d (%s)", round+1, rounds, b.clusterTag)
		}
		for i := range kinds {
			if err = ctx.Err(); err != nil {
				break rounds
			}
			kind := kinds[(i+round)%len(kinds)]
			up, roll, down, kerr := b.runKind(ctx, kind, tappClient, n, rollout, budget, pids)
			if kerr != nil {
				err = kerr
				break rounds
			}
			k := byKind[kind]
			k.ups, k.downs = append(k.ups, up), append(k.downs, down)
			if roll != nil {
				k.rolls = append(k.rolls, *roll)
			}
		}
	}
	for _, kind := range kinds {
		k := byKind[kind]
		if len(k.ups) == 0 {
			continue // not run: the section ended before its turn
		}
		ups = append(ups, medianWorkloadRun(k.ups))
		downs = append(downs, medianWorkloadRun(k.downs))
		if len(k.rolls) > 0 {
			rolls = append(rolls, medianRolloutRun(k.rolls))
		}
	}
	workloadRatios(ups)
	workloadRatios(downs)
	setSpeedups(rollsOf(rolls))
	return ups, downs, rolls, err
}

// runKind runs one round of one kind in its namespace: scale-up, rolling update (when rollout is set and the
// kind is a controller) and scale-down. A failure of the kind is recorded (b.fail) and its runs are returned
// as far as they went; the error is the one that ends the section (a namespace or client not made).
func (b *bench) runKind(ctx context.Context, kind string, tappClient versioned.Interface, n int, rollout bool, budget Budget, pids map[string]int) (up WorkloadRun, roll *RolloutRun, down WorkloadRun, err error) {
	ns := map[string]string{kindTApp: "wl-tapp", kindStatefulSet: "wl-statefulset", kindDeployment: "wl-deployment", kindLimit: "wl-limit", kindLimitGate: "wl-limit-gate"}[kind]
	if err := b.ensureNamespace(ctx, ns); err != nil {
		return up, nil, down, err
	}
	var w workload
	switch kind {
	case kindTApp:
		w = &tappWorkload{client: tappClient, namespace: ns}
	case kindStatefulSet:
		w = &statefulSetWorkload{client: b.kube, namespace: ns}
	case kindDeployment:
		w = &deploymentWorkload{client: b.kube, namespace: ns}
	case kindLimit, kindLimitGate:
		if w, err = newLimitWorkload(b.cluster.AdminConfig, budget.QPS, budget.Burst, ns, kind == kindLimitGate); err != nil {
			return up, nil, down, err
		}
	}
	up, roll, down, err = b.runWorkload(ctx, kind, ns, w, n, rollout && !isBareClient(kind), pids)
	if err != nil {
		b.fail("%s (%s): %v", kind, b.clusterTag, err)
	}
	up.Budget, down.Budget = budget, budget
	if roll != nil {
		roll.Budget = budget
	}
	return up, roll, down, nil
}

// processPIDs are the cluster's processes whose CPU time sections 3, 4 and 6 read ("self": none).
func (b *bench) processPIDs() map[string]int {
	pids := map[string]int{}
	for _, name := range []string{"tapp-apiserver", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
		pids[name] = b.cluster.PID(name)
	}
	pids["self"] = 0
	return pids
}

func workloadRatios(runs []WorkloadRun) {
	var sts, limit float64
	for _, r := range runs {
		switch r.Kind {
		case kindStatefulSet:
			sts = r.Seconds
		case kindLimit:
			limit = r.PodsPerSecond
		}
	}
	for i := range runs {
		runs[i].TimeRatioToStatefulSet = ratio(runs[i].Seconds, sts)
		runs[i].ThroughputRatioToLimit = ratio(runs[i].PodsPerSecond, limit)
	}
}

// createSettle is the pause between creating a workload of no replicas and scaling it up.
const createSettle = 2 * time.Second

const (
	scaleTimeout   = 6 * time.Minute
	rolloutTimeout = 8 * time.Minute
)

// timeoutFor is a scale or rollout timeout for n instances: base up to 2000 instances, and base for every
// further 2000 (section 6's TApp of 10,000 instances).
func timeoutFor(base time.Duration, n int) time.Duration {
	if n <= 2000 {
		return base
	}
	return base * time.Duration((n+1999)/2000)
}

// statusBytesOf waits (at most 30 s) for the TApp's status to count n ready replicas and returns its size.
func (w *tappWorkload) statusBytesOf(ctx context.Context, n int) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		t, err := w.client.TKEStackAppsV1().TApps(w.namespace).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return 0, err
		}
		if int(t.Status.ReadyReplicas) >= n || time.Now().After(deadline) {
			return statusBytes(t), nil
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

func (b *bench) runWorkload(ctx context.Context, kind, ns string, w workload, n int, rollout bool, pids map[string]int) (up WorkloadRun, roll *RolloutRun, down WorkloadRun, err error) {
	up = WorkloadRun{Kind: kind, Replicas: n}
	down = WorkloadRun{Kind: kind, Replicas: n}
	tracker, err := startPodTracker(ctx, b.watchKube, ns)
	if err != nil {
		return up, nil, down, err
	}
	defer tracker.close()
	defer func() {
		if rerr := w.remove(context.Background()); rerr != nil {
			b.logf("%s: removing the workload: %v", kind, rerr)
		}
		b.deleteLeftoverPods(ns, tracker)
	}()
	if err := w.create(ctx); err != nil {
		return up, nil, down, fmt.Errorf("create: %w", err)
	}
	sleepCtx(ctx, createSettle)

	// 0 → n
	tracker.mark(imageV1, -1)
	b.profile(ctx, kind, "scale-up")
	writes := b.writeCounter(ctx)
	cpu := newCPUMeter(pids)
	auditFrom := fileSize(b.createAudit)
	start := time.Now()
	scaleErr := make(chan error, 1)
	go func() { scaleErr <- w.scale(ctx, int32(n)) }()
	okCreated, created := tracker.waitFor(ctx, timeoutFor(scaleTimeout, n), func(s trackerSnapshot) bool { return s.live >= n })
	okReady, ready := tracker.waitFor(ctx, timeoutFor(scaleTimeout, n)-time.Since(start), func(s trackerSnapshot) bool { return s.live == n && s.readyOnImage == n })
	if err := <-scaleErr; err != nil {
		return up, nil, down, fmt.Errorf("scale up: %w", err)
	}
	up.Completed = okCreated && okReady
	up.AllSeenSeconds = round(created.Sub(start).Seconds(), 3)
	up.Seconds = round(ready.Sub(start).Seconds(), 3)
	up.PodsPerSecond = round(float64(n)/ready.Sub(start).Seconds(), 1)
	up.PodLatencyMs = summarize(tracker.readyLatencies(start))
	up.CreatedLatencyMs = summarize(tracker.createdLatencies(start))
	fillCPU(&up, cpu)
	up.KubeAPIWrites, up.TAppAPIWrites = writes(ctx)
	if up.Completed { // read after the CPU and writes were taken, from where the log ended at the start
		count, last, err := podCreatesDone(b.createAudit, auditFrom, ns, start, time.Now())
		if err != nil {
			return up, nil, down, fmt.Errorf("reading the pod creates of the scale-up: %w", err)
		}
		if count < n {
			return up, nil, down, fmt.Errorf("kube-apiserver's audit log shows %d pod creates in the scale-up, want %d", count, n)
		}
		up.AllCreatedSeconds = round(last.Sub(start).Seconds(), 3)
	}
	stamped := summarize(tracker.stampedLatencies(start.Truncate(time.Second)))
	b.logf("scale-up   %-20s 0→%d in %6.2fs (all created %.2fs; seen created: first %.2fs, p50 %.2fs, p90 %.2fs, all %.2fs; creationTimestamp from the start's second p50 %.0fs, p90 %.0fs, max %.0fs), %.1f pods/s, completed=%v", kind, n, up.Seconds,
		up.AllCreatedSeconds, up.CreatedLatencyMs.Min/1000, up.CreatedLatencyMs.P50/1000, up.CreatedLatencyMs.P90/1000, up.AllSeenSeconds, stamped.P50/1000, stamped.P90/1000, stamped.Max/1000, up.PodsPerSecond, up.Completed)
	if !up.Completed {
		s := tracker.snapshot()
		return up, nil, down, fmt.Errorf("scale-up did not complete in %s: %d pods, %d ready", timeoutFor(scaleTimeout, n), s.live, s.ready)
	}
	if t, ok := w.(*tappWorkload); ok {
		if up.TAppStatusBytes, err = t.statusBytesOf(ctx, n); err != nil {
			return up, nil, down, fmt.Errorf("reading the TApp's status: %w", err)
		}
	}

	if rollout {
		sleepCtx(ctx, 2*time.Second)
		before := tracker.uids()
		tracker.mark(imageV2, n)
		b.profile(ctx, kind, "rollout")
		meter := b.startRoll(ctx, pids)
		start := meter.start
		if err := w.setImage(ctx, imageV2); err != nil {
			return up, nil, down, fmt.Errorf("rolling update: %w", err)
		}
		ok, done := tracker.waitFor(ctx, timeoutFor(rolloutTimeout, n), func(s trackerSnapshot) bool {
			return s.all == n && s.live == n && s.readyOnImage == n
		})
		after := tracker.uids()
		recreated := 0
		for uid := range after {
			if !before[uid] {
				recreated++
			}
		}
		roll = &RolloutRun{RollRun: RollRun{
			Kind: kind, Replicas: n, MaxUnavailable: rolloutMaxUnavailable, Completed: ok,
			Seconds:                round(done.Sub(start).Seconds(), 3),
			PodsRecreated:          recreated,
			MaxUnavailableObserved: tracker.snapshot().maxUnavailable,
			InstanceLatencyMs:      summarize(tracker.readyLatencies(start)),
		}}
		meter.finish(ctx, &roll.RollRun)
		b.logf("rollout    %-20s %d instances in %6.2fs, recreated %d, max unavailable %d, kube-apiserver %.2f CPU ms and %.2f writes per instance, completed=%v",
			kind, n, roll.Seconds, recreated, roll.MaxUnavailableObserved, roll.KubeAPIServerCPUMsPerInstance, roll.KubeAPIWritesPerInstance, ok)
		if !ok {
			s := tracker.snapshot()
			return up, roll, down, fmt.Errorf("rolling update did not complete in %s: %d pods, %d ready on the new image", timeoutFor(rolloutTimeout, n), s.all, s.readyOnImage)
		}
	}

	// n → 0
	sleepCtx(ctx, 2*time.Second)
	tracker.mark("", -1)
	writes = b.writeCounter(ctx)
	cpu = newCPUMeter(pids)
	start = time.Now()
	if err := w.scale(ctx, 0); err != nil {
		return up, roll, down, fmt.Errorf("scale down: %w", err)
	}
	ok, gone := tracker.waitFor(ctx, timeoutFor(scaleTimeout, n), func(s trackerSnapshot) bool { return s.all == 0 })
	down.Completed = ok
	down.Seconds = round(gone.Sub(start).Seconds(), 3)
	down.PodsPerSecond = round(float64(n)/gone.Sub(start).Seconds(), 1)
	down.PodLatencyMs = summarize(tracker.goneLatencies(start))
	fillCPU(&down, cpu)
	down.KubeAPIWrites, down.TAppAPIWrites = writes(ctx)
	b.logf("scale-down %-20s %d→0 in %6.2fs, %.1f pods/s, completed=%v", kind, n, down.Seconds, down.PodsPerSecond, ok)
	if !ok {
		return up, roll, down, fmt.Errorf("scale-down did not complete in %s: %d pods left", timeoutFor(scaleTimeout, n), tracker.snapshot().all)
	}
	return up, roll, down, nil
}

func fillCPU(r *WorkloadRun, cpu *cpuMeter) {
	r.ServerCPUSeconds = cpu.used("tapp-apiserver")
	r.KubeAPIServerCPUSeconds = cpu.used("kube-apiserver")
	r.ControllerManagerCPUSeconds = cpu.used("kube-controller-manager")
	r.SchedulerCPUSeconds = cpu.used("kube-scheduler")
	r.EtcdCPUSeconds = cpu.used("etcd")
	r.BenchmarkProcessCPUSeconds = cpu.used("self")
}

// deleteLeftoverPods force-deletes what a failed run left behind so the next kind starts clean.
func (b *bench) deleteLeftoverPods(ns string, tracker *podTracker) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if tracker.snapshot().all == 0 {
		return
	}
	zero := int64(0)
	if err := b.kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		b.logf("deleting the pods left in %s: %v", ns, err)
	}
	tracker.waitFor(ctx, 2*time.Minute, func(s trackerSnapshot) bool { return s.all == 0 })
}

// writeCounter snapshots the write requests of kube-apiserver and tapp-apiserver; the function it returns
// gives the requests since.
func (b *bench) writeCounter(ctx context.Context) func(context.Context) (map[string]int, map[string]int) {
	direct := directConfig(b.cluster, b.clientConfig)
	kubeBefore, err1 := requestCounts(ctx, b.clientConfig)
	tappBefore, err2 := requestCounts(ctx, direct)
	return func(ctx context.Context) (map[string]int, map[string]int) {
		var kube, tapp map[string]int
		if err1 == nil {
			if after, err := requestCounts(ctx, b.clientConfig); err == nil {
				kube = requestDelta(kubeBefore, after)
			}
		}
		if err2 == nil {
			if after, err := requestCounts(ctx, direct); err == nil {
				tapp = requestDelta(tappBefore, after)
			}
		}
		return kube, tapp
	}
}

// profile takes, in the background, CPU profiles during a phase of a kind when --profile is set: of
// kube-apiserver for every kind (the bare clients' tell what the pods' own writes cost it), and of tapp-apiserver (with a goroutine dump halfway)
// for TApp. The file names carry the server, kind, phase and the cluster's tag (budget, variant). A server
// takes one CPU profile at a time: profile first waits, before the phase starts, for the previous ones to end.
func (b *bench) profile(ctx context.Context, kind, phase string) {
	if b.opts.profileSeconds <= 0 || b.round > 0 {
		return
	}
	b.profiling.Wait()
	dir := filepath.Join(b.opts.outDir, "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.logf("profile: %v", err)
		return
	}
	name := func(server, suffix string) string {
		slug := strings.ToLower(strings.ReplaceAll(kind, " ", "-"))
		return filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%s%s", server, slug, phase, b.clusterTag, suffix))
	}
	take := func(server string, cfg *rest.Config) {
		path := name(server, ".pprof")
		b.profiling.Add(1)
		go func() {
			defer b.profiling.Done()
			if err := saveProfile(ctx, cfg, b.opts.profileSeconds, path); err != nil {
				b.logf("profile of %s during the %s %s: %v", server, kind, phase, err)
				return
			}
			b.logf("CPU profile of %s during the %s %s: %s", server, kind, phase, path)
		}()
	}
	take("kube-apiserver", b.clientConfig)
	if kind != kindTApp {
		return
	}
	direct := directConfig(b.cluster, b.clientConfig)
	take("tapp-apiserver", direct)
	go func() {
		// Halfway through, where the controller's goroutines wait (client rate limiter, API calls).
		sleepCtx(ctx, time.Duration(b.opts.profileSeconds)*time.Second/2)
		if err := saveGoroutines(ctx, direct, name("tapp-apiserver", "-goroutines.txt")); err != nil {
			b.logf("goroutines during %s: %v", phase, err)
		}
	}()
}
