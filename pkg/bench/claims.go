package bench

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// The claim template of section 4d: one claim per instance on the default StorageClass, raised from
// claimSizeBefore to claimSizeAfter.
const (
	claimTemplateName = "data"
	claimSizeBefore   = "1Gi"
	claimSizeAfter    = "2Gi"
	// claimPatchConcurrency is how many claim patches the user's client loop has in flight (the bare
	// client's of section 3).
	claimPatchConcurrency = 16
	claimTimeout          = 8 * time.Minute
)

// benchClaimTemplate is the claim template data: ReadWriteOnce, size, no storage class named (the
// cluster's default, localcluster.StorageClassStandard, which allows volume expansion).
func benchClaimTemplate(size string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimTemplateName},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

// withClaims has the first container mount every claim template at /<name>.
func withClaims(spec *corev1.PodSpec, claims []corev1.PersistentVolumeClaim) {
	c := &spec.Containers[0]
	for _, claim := range claims {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: claim.Name, MountPath: "/" + claim.Name})
	}
}

// claimDone reports whether a claim is bound with status.capacity size and no expansion under way or
// failed: no resize condition and no allocatedResourceStatuses entry for storage.
func claimDone(c *corev1.PersistentVolumeClaim, size resource.Quantity) bool {
	capacity, ok := c.Status.Capacity[corev1.ResourceStorage]
	if c.Status.Phase != corev1.ClaimBound || !ok || capacity.Cmp(size) != 0 {
		return false
	}
	if _, ok := c.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; ok {
		return false
	}
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case corev1.PersistentVolumeClaimResizing, corev1.PersistentVolumeClaimFileSystemResizePending,
			corev1.PersistentVolumeClaimControllerResizeError, corev1.PersistentVolumeClaimNodeResizeError:
			return false
		}
	}
	return true
}

// claimResizing reports whether a bound claim's expansion is under way: its request is above its
// capacity, or the resizer or kubelet reports a step of it.
func claimResizing(c *corev1.PersistentVolumeClaim) bool {
	if c.Status.Phase != corev1.ClaimBound {
		return false
	}
	if _, ok := c.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; ok {
		return true
	}
	request, capacity := c.Spec.Resources.Requests[corev1.ResourceStorage], c.Status.Capacity[corev1.ResourceStorage]
	return request.Cmp(capacity) > 0
}

// claimTracker follows the claims of one namespace through a watch: how many are bound, at the marked
// size (claimDone), resizing, when each first reached the marked size, and the most resizing at once.
type claimTracker struct {
	mu     sync.Mutex
	claims map[types.UID]claimState
	size   resource.Quantity
	// doneAt is when each claim name was first seen at size since the mark.
	doneAt      map[string]time.Time
	maxResizing int
	stop        context.CancelFunc
}

type claimState struct {
	name                  string
	bound, done, resizing bool
	// capacity is status.capacity[storage] as written ("" before it is bound).
	capacity string
}

type claimSnapshot struct{ claims, bound, done, resizing int }

func startClaimTracker(ctx context.Context, client kubernetes.Interface, namespace, size string) (*claimTracker, error) {
	ctx, cancel := context.WithCancel(ctx)
	t := &claimTracker{claims: map[types.UID]claimState{}, size: resource.MustParse(size), doneAt: map[string]time.Time{}, stop: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().PersistentVolumeClaims().Informer()
	if err := observeInformer(ctx, factory, inf, fmt.Sprintf("claim watch of %s", namespace), t.observe); err != nil {
		cancel()
		return nil, err
	}
	return t, nil
}

func (t *claimTracker) close() { t.stop() }

func (t *claimTracker) observe(obj interface{}, deleted bool) {
	c, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if deleted {
		delete(t.claims, c.UID)
		return
	}
	s := claimState{name: c.Name, bound: c.Status.Phase == corev1.ClaimBound, done: claimDone(c, t.size), resizing: claimResizing(c)}
	if q, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
		s.capacity = q.String()
	}
	t.claims[c.UID] = s
	if s.done {
		if _, seen := t.doneAt[s.name]; !seen {
			t.doneAt[s.name] = now
		}
	}
	resizing := 0
	for _, s := range t.claims {
		if s.resizing {
			resizing++
		}
	}
	t.maxResizing = max(t.maxResizing, resizing)
}

// mark starts a measurement of the claims reaching size. Claims the watch has shown may be at another size
// until their next event: a mark is made before the change that makes them move.
func (t *claimTracker) mark(size string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.size = resource.MustParse(size)
	t.doneAt = map[string]time.Time{}
	t.maxResizing = 0
}

func (t *claimTracker) snapshot() claimSnapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := claimSnapshot{claims: len(t.claims)}
	for _, c := range t.claims {
		if c.bound {
			s.bound++
		}
		if c.resizing {
			s.resizing++
		}
		if _, done := t.doneAt[c.name]; done {
			s.done++
		}
	}
	return s
}

// capacity is the status.capacity of the claim name ("" when not seen or not bound).
func (t *claimTracker) capacity(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.claims {
		if c.name == name {
			return c.capacity
		}
	}
	return ""
}

func (t *claimTracker) doneLatencies(start time.Time) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sinceStart(maps.Values(t.doneAt), start)
}

// waitFor polls until cond holds on the tracker's snapshot or timeout passes; it returns whether cond held
// and when.
func (t *claimTracker) waitFor(ctx context.Context, timeout time.Duration, cond func(claimSnapshot) bool) (bool, time.Time) {
	deadline := time.Now().Add(timeout)
	for {
		if cond(t.snapshot()) {
			return true, time.Now()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// claimKind is one kind of section 4d: how it is created, and how its claims are raised to claimSizeAfter.
type claimKind struct {
	kind, namespace string
	w               workload
	// expand raises the claims of n instances and returns, for the results, what it did; it is measured.
	expand func(ctx context.Context, run *ClaimExpansionRun, n int) error
	// expanded, when set, is also waited for before the expansion counts as done (TApp's status).
	expanded func(ctx context.Context) bool
	// templateStorage reads the storage request of the workload's claim template.
	templateStorage func(ctx context.Context) (string, error)
	// claimStatus, when set, reads what the workload's status says of its claims.
	claimStatus func(ctx context.Context) (string, error)
}

// runClaimExpansion is section 4d: per kind, N instances with one claim of claimSizeBefore each, then the
// claims are raised to claimSizeAfter: by the TApp controller after its claim template is raised
// (volumeClaimUpdateStrategy OnPodRollingUpdate), and for the StatefulSet, whose template cannot be raised
// (the refusal is recorded), by a client loop patching every claim at the controllers' client budget. Done
// when every claim is bound at the new size with no resize condition left (and, for the TApp, its
// status.volumeClaims says every claim compatible and ready). Then one instance more shows the size a new
// instance's claim gets, and N+1→0.
func (b *bench) runClaimExpansion(ctx context.Context, budget Budget) ([]ClaimExpansionRun, error) {
	n := b.count(1000, 20)
	tappClient, err := versioned.NewForConfig(b.clientConfig)
	if err != nil {
		return nil, err
	}
	// The user's client: the controllers' client budget, as the bare client of section 3.
	userConfig := rest.CopyConfig(b.clientConfig)
	userConfig.QPS, userConfig.Burst = budget.QPS, budget.Burst
	userConfig.UserAgent = "tapp-bench-claim-patcher"
	user, err := kubernetes.NewForConfig(userConfig)
	if err != nil {
		return nil, err
	}
	pids := map[string]int{}
	for _, name := range []string{"tapp-apiserver", "kube-apiserver", "kube-controller-manager"} {
		pids[name] = b.cluster.PID(name)
	}
	claims := []corev1.PersistentVolumeClaim{benchClaimTemplate(claimSizeBefore)}
	tapps := tappClient.TKEStackAppsV1().TApps("cl-tapp")
	statefulSets := b.kube.AppsV1().StatefulSets("cl-statefulset")
	var generation int64
	kinds := []claimKind{{
		kind: kindTApp, namespace: "cl-tapp",
		w: &tappWorkload{client: tappClient, namespace: "cl-tapp", claims: claims},
		expand: func(ctx context.Context, run *ClaimExpansionRun, n int) error {
			run.How = "the TApp controller: spec.volumeClaimTemplates[0] storage raised, volumeClaimUpdateStrategy OnPodRollingUpdate"
			t, err := tapps.Get(ctx, "bench", metav1.GetOptions{})
			if err != nil {
				return err
			}
			t.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(claimSizeAfter)
			t, err = tapps.Update(ctx, t, metav1.UpdateOptions{})
			if err != nil {
				return err
			}
			generation = t.Generation
			run.TemplateUpdate = "accepted"
			return nil
		},
		expanded: func(ctx context.Context) bool {
			t, err := tapps.Get(ctx, "bench", metav1.GetOptions{})
			return err == nil && t.Status.ObservedGeneration >= generation && claimStatusText(t) == fmt.Sprintf("%d/%d", n, n)
		},
		templateStorage: func(ctx context.Context) (string, error) {
			t, err := tapps.Get(ctx, "bench", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			q := t.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
			return q.String(), nil
		},
		claimStatus: func(ctx context.Context) (string, error) {
			t, err := tapps.Get(ctx, "bench", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return tappClaimState(t), nil
		},
	}, {
		kind: kindStatefulSet, namespace: "cl-statefulset",
		w: &statefulSetWorkload{client: b.kube, namespace: "cl-statefulset", claims: claims},
		expand: func(ctx context.Context, run *ClaimExpansionRun, n int) error {
			run.How = fmt.Sprintf("a client loop: a merge patch of spec.resources.requests.storage on each claim, %d in flight, at %s QPS/burst", claimPatchConcurrency, budget)
			run.ClientBudget = &budget
			_, errs, firstErr, _ := runOps(ctx, n, claimPatchConcurrency, func(ctx context.Context, i int) error {
				patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, claimSizeAfter)
				_, err := user.CoreV1().PersistentVolumeClaims("cl-statefulset").Patch(ctx, fmt.Sprintf("%s-bench-%d", claimTemplateName, i),
					types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				return err
			})
			if errs > 0 {
				return fmt.Errorf("%d claim patches failed, first: %w", errs, firstErr)
			}
			return nil
		},
		templateStorage: func(ctx context.Context) (string, error) {
			s, err := statefulSets.Get(ctx, "bench", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			q := s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
			return q.String(), nil
		},
	}}
	var runs []ClaimExpansionRun
	for _, k := range kinds {
		if ctx.Err() != nil {
			return runs, ctx.Err()
		}
		if err := b.ensureNamespace(ctx, k.namespace); err != nil {
			return runs, err
		}
		run, err := b.runClaimKind(ctx, k, n, pids)
		if err != nil {
			b.fail("claim expansion %s: %v", k.kind, err)
		}
		if run != nil {
			runs = append(runs, *run)
		}
	}
	setClaimRatios(runs)
	return runs, nil
}

// claimStatusText is status.volumeClaims of the claim template as "compatible/ready" ("" when absent).
func claimStatusText(t *tkestackv1.TApp) string {
	for _, s := range t.Status.VolumeClaims {
		if s.VolumeClaimName == claimTemplateName {
			return fmt.Sprintf("%d/%d", s.CompatibleReplicas, s.CompatibleReadyReplicas)
		}
	}
	return ""
}

// refuseStatefulSetClaimTemplate tries what a user would try first, raising the StatefulSet's claim
// template, and returns kube-apiserver's answer: "accepted", or the refusal as the client reports it.
func (b *bench) refuseStatefulSetClaimTemplate(ctx context.Context, ns string) (string, int32, error) {
	s, err := b.kube.AppsV1().StatefulSets(ns).Get(ctx, "bench", metav1.GetOptions{})
	if err != nil {
		return "", 0, err
	}
	s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(claimSizeAfter)
	_, err = b.kube.AppsV1().StatefulSets(ns).Update(ctx, s, metav1.UpdateOptions{})
	if err == nil {
		return "accepted", 0, nil
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Code < 400 || status.Status().Code >= 500 {
		return "", 0, fmt.Errorf("raising the claim template: %w", err)
	}
	code := status.Status().Code
	return err.Error(), code, nil
}

func (b *bench) runClaimKind(ctx context.Context, k claimKind, n int, pids map[string]int) (*ClaimExpansionRun, error) {
	pods, err := startPodTracker(ctx, b.watchKube, k.namespace)
	if err != nil {
		return nil, err
	}
	defer pods.close()
	claims, err := startClaimTracker(ctx, b.watchKube, k.namespace, claimSizeBefore)
	if err != nil {
		return nil, err
	}
	defer claims.close()
	defer func() {
		if rerr := k.w.remove(context.Background()); rerr != nil {
			b.logf("%s: removing the workload: %v", k.kind, rerr)
		}
		b.deleteLeftoverPods(k.namespace, pods)
		b.deleteClaims(k.namespace)
	}()
	if err := k.w.create(ctx); err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	sleepCtx(ctx, 2*time.Second)
	pods.mark(imageV1, -1)
	if err := k.w.scale(ctx, int32(n)); err != nil {
		return nil, fmt.Errorf("scale up: %w", err)
	}
	if ok, _ := claims.waitFor(ctx, scaleTimeout, func(s claimSnapshot) bool { return s.claims == n && s.done == n }); !ok {
		s := claims.snapshot()
		return nil, fmt.Errorf("the claims of the scale-up were not all bound at %s in %s: %d claims, %d bound", claimSizeBefore, scaleTimeout, s.claims, s.bound)
	}
	if ok, _ := pods.waitFor(ctx, scaleTimeout, func(s trackerSnapshot) bool { return s.live == n && s.readyOnImage == n }); !ok {
		s := pods.snapshot()
		return nil, fmt.Errorf("scale-up did not complete in %s: %d pods, %d ready", scaleTimeout, s.live, s.ready)
	}
	b.logf("claims     %-20s %d instances Ready, %d claims bound at %s", k.kind, n, n, claimSizeBefore)

	run := &ClaimExpansionRun{
		RollRun:      RollRun{Kind: k.kind, Replicas: n, MaxUnavailable: rolloutMaxUnavailable},
		StorageClass: localcluster.StorageClassStandard, SizeBefore: claimSizeBefore, SizeAfter: claimSizeAfter,
	}
	if k.kind == kindStatefulSet {
		// What a user tries first; refused before the measurement starts.
		if run.TemplateUpdate, run.TemplateUpdateCode, err = b.refuseStatefulSetClaimTemplate(ctx, k.namespace); err != nil {
			return nil, err
		}
		b.logf("claims     %-20s raising spec.volumeClaimTemplates: %s", k.kind, run.TemplateUpdate)
	}
	sleepCtx(ctx, 2*time.Second)
	before := pods.restartCounts()
	pods.mark(imageV1, n)
	claims.mark(claimSizeAfter)
	direct := directConfig(b.cluster, b.clientConfig)
	actionsBefore, actionsErr := controllerActionCounts(ctx, direct)
	meter := b.startRoll(ctx, pids)
	start := meter.start
	if err := k.expand(ctx, run, n); err != nil {
		return run, fmt.Errorf("expansion: %w", err)
	}
	ok, done := claims.waitFor(ctx, claimTimeout, func(s claimSnapshot) bool {
		return s.claims == n && s.done == n && (k.expanded == nil || k.expanded(ctx))
	})
	after := pods.restartCounts()
	run.Completed = ok
	run.Seconds = round(done.Sub(start).Seconds(), 3)
	run.InstanceLatencyMs = summarize(claims.doneLatencies(start))
	run.MaxUnavailableObserved = pods.snapshot().maxUnavailable
	s := claims.snapshot()
	run.ClaimsExpanded, run.MaxClaimsResizing = s.done, claims.maxResizing
	run.PodsKept, run.ContainerRestarts, run.PodsRecreated = comparePods(before, after)
	meter.finish(ctx, &run.RollRun)
	if actionsErr == nil && k.kind == kindTApp {
		if after, err := controllerActionCounts(ctx, direct); err == nil {
			run.ControllerActions = requestDelta(actionsBefore, after)
		}
	}
	b.logf("claims     %-20s %d claims %s→%s in %6.2fs, at most %d resizing at once, pods kept %d (restarts %d), recreated %d, kube-apiserver %.2f CPU ms and %.2f writes per instance, completed=%v",
		k.kind, n, claimSizeBefore, claimSizeAfter, run.Seconds, run.MaxClaimsResizing, run.PodsKept, run.ContainerRestarts, run.PodsRecreated,
		run.KubeAPIServerCPUMsPerInstance, run.KubeAPIWritesPerInstance, ok)
	if k.claimStatus != nil {
		if run.ClaimStatus, err = k.claimStatus(ctx); err != nil {
			return run, fmt.Errorf("reading the claims' status: %w", err)
		}
	}
	if run.TemplateStorageAfter, err = k.templateStorage(ctx); err != nil {
		return run, fmt.Errorf("reading the claim template: %w", err)
	}
	if !ok {
		return run, fmt.Errorf("the claims did not all reach %s in %s: %d claims, %d at %s, %d resizing", claimSizeAfter, claimTimeout, s.claims, s.done, claimSizeAfter, s.resizing)
	}

	// One instance more: the size its new claim gets from the template.
	if err := k.w.scale(ctx, int32(n+1)); err != nil {
		return run, fmt.Errorf("scale up by one: %w", err)
	}
	added := fmt.Sprintf("%s-bench-%d", claimTemplateName, n)
	if ok, _ := claims.waitFor(ctx, 2*time.Minute, func(claimSnapshot) bool { return claims.capacity(added) != "" }); !ok {
		return run, fmt.Errorf("the claim %s of the instance added was not bound in 2m", added)
	}
	run.NewInstanceClaimStorage = claims.capacity(added)
	b.logf("claims     %-20s template says %s; the instance added afterwards got a claim of %s", k.kind, run.TemplateStorageAfter, run.NewInstanceClaimStorage)

	pods.mark("", -1)
	if err := k.w.scale(ctx, 0); err != nil {
		return run, fmt.Errorf("scale down: %w", err)
	}
	if ok, _ := pods.waitFor(ctx, scaleTimeout, func(s trackerSnapshot) bool { return s.all == 0 }); !ok {
		return run, fmt.Errorf("scale-down did not complete in %s: %d pods left", scaleTimeout, pods.snapshot().all)
	}
	return run, nil
}

// tappClaimState is a TApp's status.volumeClaims of the claim template and its VolumeClaimsUpdated
// condition: "N/N compatible/ready, VolumeClaimsUpdated True (Updated)".
func tappClaimState(t *tkestackv1.TApp) string {
	out := claimStatusText(t) + " compatible/ready"
	if c := meta.FindStatusCondition(t.Status.Conditions, tkestackv1.TAppVolumeClaimsUpdated); c != nil {
		out += fmt.Sprintf(", %s %s (%s)", c.Type, c.Status, c.Reason)
	}
	return out
}

// deleteClaims deletes the claims left in ns (both kinds retain them); their volumes are then deleted by
// the storage stand-in (reclaimPolicy Delete).
func (b *bench) deleteClaims(ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := b.kube.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		b.logf("deleting the claims left in %s: %v", ns, err)
	}
}

// setClaimRatios sets every run's time and kube-apiserver writes per instance as a ratio to the
// StatefulSet run's among them (TApp / StatefulSet: below 1 is faster, fewer writes), and the speed-up.
func setClaimRatios(runs []ClaimExpansionRun) {
	var sts *ClaimExpansionRun
	for i := range runs {
		if runs[i].Kind == kindStatefulSet {
			sts = &runs[i]
		}
	}
	if sts == nil {
		return
	}
	for i := range runs {
		r := &runs[i]
		r.TimeRatioToStatefulSet = ratio(r.Seconds, sts.Seconds)
		r.WritesRatioToStatefulSet = ratio(r.KubeAPIWritesPerInstance, sts.KubeAPIWritesPerInstance)
		if r.Seconds > 0 {
			r.SpeedupVsStatefulSet = ratio(sts.Seconds, r.Seconds)
		}
	}
}
