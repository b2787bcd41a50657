package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	yurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/manager"
	tkestackv1client "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/typed/tkestack/v1"
)

const (
	imageV1 = "registry.example.com/chaos/app:v1"
	imageV2 = "registry.example.com/chaos/app:v2"
	// poolSelectLabel puts a NodePool into the scenario's YurtAppDaemon.
	poolSelectLabel = "chaos.tapp.io/run"
)

// ControllerKillResult are the figures of the controller scenario.
type ControllerKillResult struct {
	Namespace string `json:"namespace"`
	Replicas  int    `json:"replicas"`
	Kills     int    `json:"kills"`
	// Ready and Serving are from each SIGKILL to /readyz and to both groups through the aggregator.
	Ready   Durations `json:"ready"`
	Serving Durations `json:"serving"`
	// Leading is from each SIGKILL until the new process holds the controllers' Lease.
	Leading Durations     `json:"leading"`
	Phases  []PhaseResult `json:"phases"`
	// Pods and Children are the counts of the pod watch (TApp instances) and the Deployment watch
	// (YurtAppDaemon children, one per pool).
	Pods     watchCounts `json:"pods"`
	Children watchCounts `json:"children"`
	// UpdateRecreated are instances whose pod UID changed across the in-place image update.
	UpdateRecreated []string `json:"updateRecreated,omitempty"`
	// FinalState is empty when every instance had exactly one pod on its template and every selected pool
	// exactly one child, else the first difference.
	FinalState string `json:"finalState,omitempty"`
	// LeftBehind are the objects still in the namespace after the TApp, the YurtAppDaemon and the pools
	// were deleted and the garbage collector had time to act.
	LeftBehind []string      `json:"leftBehind,omitempty"`
	Took       time.Duration `json:"took"`
}

// PhaseResult is one step of a scenario.
type PhaseResult struct {
	Name      string        `json:"name"`
	Kills     int           `json:"kills"`
	Converged bool          `json:"converged"`
	Took      time.Duration `json:"took"`
	Problem   string        `json:"problem,omitempty"`
}

// killer kills the leading tapp-apiserver and measures its return.
type killer struct {
	cluster Cluster
	c       *clients
	rng     *rand.Rand
	log     func(string, ...interface{})
	mu      sync.Mutex
	ready   []time.Duration
	serving []time.Duration
	leading []time.Duration
	kills   int
}

// killLeader waits until the controllers have a leader, lets it lead for a random moment and kills it.
func (k *killer) killLeader(ctx context.Context, maxDelay time.Duration) error {
	if _, err := k.waitLeader(ctx, ""); err != nil {
		return err
	}
	time.Sleep(randomBetween(k.rng, 0, maxDelay))
	holder, err := k.holder(ctx)
	if err != nil {
		return err
	}
	killed := time.Now()
	times, err := k.cluster.KillTAppAPIServer(ctx)
	if err != nil {
		return err
	}
	if _, err := k.waitLeader(ctx, holder); err != nil {
		return err
	}
	k.mu.Lock()
	k.kills++
	k.ready, k.serving = append(k.ready, times.Ready), append(k.serving, times.Serving)
	k.leading = append(k.leading, time.Since(killed))
	n := k.kills
	k.mu.Unlock()
	k.log("kill %d: ready in %s, serving in %s, leading after %s", n, times.Ready.Round(time.Millisecond),
		times.Serving.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	return nil
}

// holder returns the Lease's holder identity.
func (k *killer) holder(ctx context.Context) (string, error) {
	var holder string
	err := retry(ctx, time.Minute, func(ctx context.Context) error {
		l, err := k.c.kube.CoordinationV1().Leases(manager.LeaseNamespace).Get(ctx, manager.LeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		holder = ptr.Deref(l.Spec.HolderIdentity, "")
		return nil
	})
	return holder, err
}

// waitLeader waits until the Lease is held by someone other than notHolder and was renewed lately; it
// returns how long it waited.
func (k *killer) waitLeader(ctx context.Context, notHolder string) (time.Duration, error) {
	start := time.Now()
	err := retry(ctx, 2*time.Minute, func(ctx context.Context) error {
		l, err := k.c.kube.CoordinationV1().Leases(manager.LeaseNamespace).Get(ctx, manager.LeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if holder == "" || holder == notHolder {
			return fmt.Errorf("the controllers' Lease is held by %q", holder)
		}
		if l.Spec.RenewTime == nil || time.Since(l.Spec.RenewTime.Time) > time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 15))*time.Second {
			return fmt.Errorf("the controllers' Lease held by %s is stale", holder)
		}
		return nil
	})
	return time.Since(start), err
}

// tappSpec is what the driver last asked of the TApp.
type tappSpec struct {
	replicas int
	killed   map[int]bool
	image    string
}

func (s tappSpec) wants(id int) bool { return id >= 0 && id < s.replicas && !s.killed[id] }

func runControllerKills(ctx context.Context, cluster Cluster, c *clients, opts Options, rng *rand.Rand) (*ControllerKillResult, error) {
	start := time.Now()
	ns, err := newNamespace(ctx, c, "chaos-controllers")
	if err != nil {
		return nil, err
	}
	res := &ControllerKillResult{Namespace: ns, Replicas: opts.Replicas}
	opts.Log("controller kills in namespace %s: %d kills, scale 0→%d, %d pools", ns, opts.ControllerKills, opts.Replicas, opts.Pools)
	const name = "chaos"
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()

	pods := newIdentityWatch(func(o metav1.Object) (string, bool) {
		suffix, ok := strings.CutPrefix(o.GetName(), name+"-")
		if !ok {
			return "", false
		}
		id, err := strconv.Atoi(suffix)
		return suffix, err == nil && strconv.Itoa(id) == suffix
	})
	children := newIdentityWatch(func(o metav1.Object) (string, bool) {
		pool, ok := o.GetLabels()[openyurt.PoolNameLabel]
		return pool, ok
	})
	if err := startPodWatch(watchCtx, c.kube, ns, pods); err != nil {
		return nil, err
	}
	if err := startDeploymentWatch(watchCtx, c.kube, ns, children); err != nil {
		return nil, err
	}

	var specMu sync.Mutex
	spec := tappSpec{killed: map[int]bool{}, image: imageV1}
	setSpec := func(s tappSpec) {
		specMu.Lock()
		spec = s
		specMu.Unlock()
		pods.setWanted(func(key string) bool {
			id, _ := strconv.Atoi(key)
			return s.wants(id)
		})
	}
	selected := map[string]bool{}
	setPools := func(pools map[string]bool) {
		children.setWanted(func(pool string) bool { return pools[pool] })
	}
	tapps := c.tapp.TKEStackAppsV1().TApps(ns)
	writeTimeout := opts.PhaseTimeout

	// The TApp starts with no instance.
	maxUnavailable := intstr.FromString("25%")
	if err := createTApp(ctx, tapps, name, 0, maxUnavailable, writeTimeout); err != nil {
		return nil, err
	}
	setSpec(spec)

	patchTApp := func(ctx context.Context, patch map[string]interface{}) error {
		body, err := json.Marshal(map[string]interface{}{"spec": patch})
		if err != nil {
			return err
		}
		return retry(ctx, writeTimeout, func(ctx context.Context) error {
			_, err := tapps.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
			return err
		})
	}
	checkTApp := func(ctx context.Context) error {
		specMu.Lock()
		s := spec
		specMu.Unlock()
		return checkInstances(ctx, c, ns, name, s)
	}

	// Pools of the YurtAppDaemon: NodePools of their own, selected by label.
	poolName := func(i int) string { return fmt.Sprintf("%s-p%d", ns, i) }
	labelPool := func(ctx context.Context, pool string, in bool) error {
		var value interface{}
		if in {
			value = ns
		}
		body, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]interface{}{poolSelectLabel: value}}})
		return retry(ctx, writeTimeout, func(ctx context.Context) error {
			pools := c.tapp.OpenYurtAppsV1alpha1().NodePools()
			_, err := pools.Patch(ctx, pool, types.MergePatchType, body, metav1.PatchOptions{})
			if apierrors.IsNotFound(err) && in {
				_, err = pools.Create(ctx, &yurtv1alpha1.NodePool{
					ObjectMeta: metav1.ObjectMeta{Name: pool, Labels: map[string]string{poolSelectLabel: ns}},
					Spec:       yurtv1alpha1.NodePoolSpec{Type: "Edge"},
				}, metav1.CreateOptions{})
			}
			return err
		})
	}
	checkPools := func(ctx context.Context) error { return checkChildren(ctx, c, ns, selected) }

	half := opts.Replicas / 2
	// updateBefore holds the pod UIDs at the start of the in-place update until its phase has converged.
	var updateBefore map[string]types.UID
	phases := []struct {
		name  string
		apply func(ctx context.Context) error
		check func(ctx context.Context) error
	}{
		{fmt.Sprintf("scale 0→%d", opts.Replicas), func(ctx context.Context) error {
			err := patchTApp(ctx, map[string]interface{}{"replicas": opts.Replicas})
			s := spec
			s.replicas = opts.Replicas
			setSpec(s) // more instances wanted: after the write
			return err
		}, checkTApp},
		{"in-place image update v1→v2", func(ctx context.Context) error {
			res.UpdateRecreated = nil
			before := pods.liveUIDs()
			s := spec
			s.image = imageV2
			setSpec(s)
			err := patchTApp(ctx, map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
				"containers": []map[string]interface{}{{"name": "app", "image": imageV2}}}}})
			// Compared once the phase has converged (below).
			updateBefore = before
			return err
		}, checkTApp},
		{"kill every 10th instance", func(ctx context.Context) error {
			s := tappSpec{replicas: spec.replicas, image: spec.image, killed: map[int]bool{}}
			statuses := map[string]interface{}{}
			for id := 3; id < s.replicas; id += 10 {
				s.killed[id] = true
				statuses[strconv.Itoa(id)] = "Killed"
			}
			setSpec(s) // fewer instances wanted: before the write
			return patchTApp(ctx, map[string]interface{}{"statuses": statuses})
		}, checkTApp},
		{fmt.Sprintf("scale-down %d→%d", opts.Replicas, half), func(ctx context.Context) error {
			s := spec
			s.replicas = half
			setSpec(s)
			return patchTApp(ctx, map[string]interface{}{"replicas": half})
		}, checkTApp},
		{fmt.Sprintf("YurtAppDaemon over %d new pools", opts.Pools), func(ctx context.Context) error {
			for i := 0; i < opts.Pools; i++ {
				selected[poolName(i)] = true
			}
			setPools(copySet(selected))
			for i := 0; i < opts.Pools; i++ {
				if err := labelPool(ctx, poolName(i), true); err != nil {
					return err
				}
			}
			return retry(ctx, writeTimeout, func(ctx context.Context) error {
				_, err := c.tapp.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(ctx, chaosYAD(ns), metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					return nil
				}
				return err
			})
		}, checkPools},
		{"pools removed and added", func(ctx context.Context) error {
			for i := 0; i < opts.Pools/2; i++ {
				delete(selected, poolName(i))
			}
			setPools(copySet(selected)) // before the writes that deselect
			for i := 0; i < opts.Pools/2; i++ {
				if err := labelPool(ctx, poolName(i), false); err != nil {
					return err
				}
			}
			added := poolName(opts.Pools)
			if err := labelPool(ctx, added, true); err != nil {
				return err
			}
			selected[added] = true
			setPools(copySet(selected))
			return nil
		}, checkPools},
	}
	kills := make([]int, len(phases))
	for i := 0; i < opts.ControllerKills; i++ {
		kills[i%len(phases)]++
	}
	k := &killer{cluster: cluster, c: c, rng: rng, log: opts.Log}
	for i, p := range phases {
		phaseStart := time.Now()
		pr := PhaseResult{Name: p.name, Kills: kills[i]}
		opts.Log("phase %q with %d kills", p.name, kills[i])
		// The write first, then the kills: the first lands while the controllers act on the write, each
		// further one a random moment into the next leadership, while they finish what is left.
		if err := p.apply(ctx); err != nil {
			return res, fmt.Errorf("phase %q: %w", p.name, err)
		}
		for j := 0; j < kills[i]; j++ {
			if err := k.killLeader(ctx, 2*time.Second); err != nil {
				return res, fmt.Errorf("phase %q: killing tapp-apiserver: %w", p.name, err)
			}
		}
		err := retry(ctx, opts.PhaseTimeout, p.check)
		pr.Took, pr.Converged = time.Since(phaseStart), err == nil
		if err != nil {
			pr.Problem = err.Error()
		}
		if updateBefore != nil {
			after := pods.liveUIDs()
			for id, uid := range updateBefore {
				if after[id] != uid {
					res.UpdateRecreated = append(res.UpdateRecreated, fmt.Sprintf("%s-%s: %s → %q", name, id, uid, after[id]))
				}
			}
			sort.Strings(res.UpdateRecreated)
			updateBefore = nil
		}
		opts.Log("phase %q: converged %v in %s %s", p.name, pr.Converged, pr.Took.Round(time.Millisecond), pr.Problem)
		res.Phases = append(res.Phases, pr)
	}
	res.Kills = k.kills
	res.Ready, res.Serving, res.Leading = summarise(k.ready), summarise(k.serving), summarise(k.leading)

	// Final state, once more after every kill: each instance one pod on its template, each pool one child.
	if err := retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error {
		if err := checkTApp(ctx); err != nil {
			return err
		}
		return checkPools(ctx)
	}); err != nil {
		res.FinalState = err.Error()
	}

	// Everything deleted: nothing may be left behind.
	setSpec(tappSpec{killed: map[int]bool{}})
	setPools(map[string]bool{})
	cleanupTimeout := 2 * time.Minute
	_ = retry(ctx, cleanupTimeout, func(ctx context.Context) error {
		err := tapps.Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	_ = retry(ctx, cleanupTimeout, func(ctx context.Context) error {
		err := c.tapp.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Delete(ctx, "chaos", metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	for i := 0; i <= opts.Pools; i++ {
		_ = c.tapp.OpenYurtAppsV1alpha1().NodePools().Delete(ctx, poolName(i), metav1.DeleteOptions{})
	}
	var left []string
	_ = retry(ctx, cleanupTimeout, func(ctx context.Context) error {
		var err error
		left, err = leftInNamespace(ctx, c, ns)
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("%d objects left", len(left))
		}
		return err
	})
	res.LeftBehind = left
	res.Pods, res.Children = pods.counts(), children.counts()
	_ = c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	res.Took = time.Since(start)
	return res, nil
}

func copySet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// chaosYAD is a YurtAppDaemon of Deployments without replicas in every pool labelled for the namespace.
func chaosYAD(ns string) *yurtv1alpha1.YurtAppDaemon {
	labels := map[string]string{"app": "chaos-yad"}
	return &yurtv1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "chaos"},
		Spec: yurtv1alpha1.YurtAppDaemonSpec{
			Selector:         &metav1.LabelSelector{MatchLabels: labels},
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{poolSelectLabel: ns}},
			WorkloadTemplate: yurtv1alpha1.WorkloadTemplate{DeploymentTemplate: &yurtv1alpha1.DeploymentTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](0),
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: imageV1}}},
					},
				},
			}},
		},
	}
}

// checkInstances says whether the TApp's pods are exactly its wanted instances, each Ready on the image.
func checkInstances(ctx context.Context, c *clients, ns, name string, s tappSpec) error {
	list, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return err
	}
	have := map[int]int{}
	for i := range list.Items {
		pod := &list.Items[i]
		id, err := strconv.Atoi(strings.TrimPrefix(pod.Name, name+"-"))
		if err != nil {
			return fmt.Errorf("pod %s is not named %s-<id>", pod.Name, name)
		}
		if !s.wants(id) {
			return fmt.Errorf("pod %s exists; instance %d is not wanted", pod.Name, id)
		}
		if podGone(pod) {
			return fmt.Errorf("pod %s is going away", pod.Name)
		}
		have[id]++
		if img := pod.Spec.Containers[0].Image; img != s.image {
			return fmt.Errorf("pod %s runs %s, want %s", pod.Name, img, s.image)
		}
		ready := false
		for _, cs := range pod.Status.ContainerStatuses {
			ready = cs.Ready && cs.Image == s.image
		}
		if !ready {
			return fmt.Errorf("pod %s is not Ready on %s", pod.Name, s.image)
		}
	}
	for id := 0; id < s.replicas; id++ {
		if s.wants(id) && have[id] != 1 {
			return fmt.Errorf("instance %d has %d pods, want 1", id, have[id])
		}
	}
	return nil
}

// checkChildren says whether the YurtAppDaemon has exactly one Deployment per selected pool.
func checkChildren(ctx context.Context, c *clients, ns string, pools map[string]bool) error {
	list, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	have := map[string]int{}
	for _, d := range list.Items {
		pool := d.Labels[openyurt.PoolNameLabel]
		if !pools[pool] {
			return fmt.Errorf("Deployment %s serves pool %q, which is not selected", d.Name, pool)
		}
		if d.DeletionTimestamp != nil {
			return fmt.Errorf("Deployment %s is being deleted", d.Name)
		}
		have[pool]++
	}
	for _, pool := range sortedKeys(pools) {
		if have[pool] != 1 {
			return fmt.Errorf("pool %s has %d children, want 1", pool, have[pool])
		}
	}
	return nil
}

// leftInNamespace lists what is still in a scenario's namespace.
func leftInNamespace(ctx context.Context, c *clients, ns string) ([]string, error) {
	var left []string
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		left = append(left, "pod/"+p.Name)
	}
	deps, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, d := range deps.Items {
		left = append(left, "deployment/"+d.Name)
	}
	revs, err := c.kube.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, r := range revs.Items {
		left = append(left, "controllerrevision/"+r.Name)
	}
	tapps, err := c.tapp.TKEStackAppsV1().TApps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, t := range tapps.Items {
		left = append(left, "tapp/"+t.Name)
	}
	yads, err := c.tapp.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, y := range yads.Items {
		left = append(left, "yurtappdaemon/"+y.Name)
	}
	return left, nil
}

// createTApp creates the TApp name of the scenarios (one container of imageV1 that stops at once, pods labelled
// app=name) with replicas instances and maxUnavailable, retrying for at most timeout; an existing one is kept.
func createTApp(ctx context.Context, tapps tkestackv1client.TAppInterface, name string, replicas int32, maxUnavailable intstr.IntOrString, timeout time.Duration) error {
	return retry(ctx, timeout, func(ctx context.Context) error {
		_, err := tapps.Create(ctx, &tkestackv1.TApp{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: tkestackv1.TAppSpec{
				Replicas: replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec: corev1.PodSpec{
						Containers:                    []corev1.Container{{Name: "app", Image: imageV1}},
						TerminationGracePeriodSeconds: ptr.To[int64](0),
					},
				},
				UpdateStrategy: tkestackv1.TAppUpdateStrategy{MaxUnavailable: &maxUnavailable},
			},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}
