package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// KubeAPIServerRestartResult are the figures of the kube-apiserver scenario.
type KubeAPIServerRestartResult struct {
	Namespace string    `json:"namespace"`
	Replicas  int       `json:"replicas"`
	Restarts  int       `json:"restarts"`
	Restart   Durations `json:"restart"`
	// UpdatedAtRestart is how many instances had been updated when each restart began.
	UpdatedAtRestart []int `json:"updatedAtRestart"`
	// TAppAPIServerExits counts the times tapp-apiserver exited because its controllers could not renew
	// their Lease while kube-apiserver was away (it then exits on purpose); the scenario starts it again, as
	// the kubelet would.
	TAppAPIServerExits int `json:"tappAPIServerExits"`
	// Pods are the pod watch's counts; a duplicate create is a new UID for an instance (Recreations), a
	// duplicate delete one of Deletions; UIDChanged compares every instance's pod before and after.
	Pods       watchCounts   `json:"pods"`
	UIDChanged []string      `json:"uidChanged,omitempty"`
	Converged  bool          `json:"converged"`
	Problem    string        `json:"problem,omitempty"`
	Took       time.Duration `json:"took"`
}

func runKubeAPIServerRestarts(ctx context.Context, cluster Cluster, c *clients, opts Options, rng *rand.Rand) (*KubeAPIServerRestartResult, error) {
	start := time.Now()
	ns, err := newNamespace(ctx, c, "chaos-kube-apiserver")
	if err != nil {
		return nil, err
	}
	res := &KubeAPIServerRestartResult{Namespace: ns, Replicas: opts.RolloutReplicas}
	opts.Log("kube-apiserver restarts in namespace %s: %d restarts during a rollout of %d instances", ns, opts.KubeAPIServerRestarts, opts.RolloutReplicas)
	const name = "roll"
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	pods := newIdentityWatch(func(o metav1.Object) (string, bool) {
		suffix, ok := strings.CutPrefix(o.GetName(), name+"-")
		if !ok {
			return "", false
		}
		id, err := strconv.Atoi(suffix)
		return suffix, err == nil && strconv.Itoa(id) == suffix
	})
	spec := tappSpec{replicas: opts.RolloutReplicas, killed: map[int]bool{}, image: imageV1}
	pods.setWanted(func(key string) bool { id, _ := strconv.Atoi(key); return spec.wants(id) })
	if err := startPodWatch(watchCtx, c.kube, ns, pods); err != nil {
		return nil, err
	}
	tapps := c.tapp.TKEStackAppsV1().TApps(ns)
	// One instance at a time, so that the rollout lasts long enough for the restarts to land in it.
	maxUnavailable := intstr.FromInt32(1)
	if err := createTApp(ctx, tapps, name, int32(opts.RolloutReplicas), maxUnavailable, opts.PhaseTimeout); err != nil {
		return nil, err
	}
	if err := retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error { return checkInstances(ctx, c, ns, name, spec) }); err != nil {
		return res, fmt.Errorf("the TApp did not come up before the rollout: %w", err)
	}
	before := pods.liveUIDs()

	// supervise starts tapp-apiserver again if it has exited, as the kubelet would restart its container.
	supervise := func(ctx context.Context) error {
		if cluster.PID("tapp-apiserver") != 0 {
			return nil
		}
		res.TAppAPIServerExits++
		opts.Log("tapp-apiserver had exited; starting it again")
		_, err := cluster.KillTAppAPIServer(ctx)
		return err
	}

	spec.image = imageV2
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"` + imageV2 + `"}]}}}}`)
	if err := retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error {
		_, err := tapps.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}); err != nil {
		return res, err
	}
	updated := func(ctx context.Context) (int, error) {
		list, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return 0, err
		}
		n := 0
		for _, p := range list.Items {
			if p.Spec.Containers[0].Image == imageV2 {
				n++
			}
		}
		return n, nil
	}
	// The first restart once the rollout has begun.
	if err := retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error {
		n, err := updated(ctx)
		if err == nil && n == 0 {
			err = fmt.Errorf("no instance updated yet")
		}
		return err
	}); err != nil {
		return res, err
	}
	var restarts []time.Duration
	for i := 0; i < opts.KubeAPIServerRestarts; i++ {
		time.Sleep(randomBetween(rng, 0, time.Second))
		if n, err := updated(ctx); err == nil {
			res.UpdatedAtRestart = append(res.UpdatedAtRestart, n)
		}
		took, err := cluster.RestartKubeAPIServer(ctx)
		if err != nil {
			return res, err
		}
		restarts = append(restarts, took)
		res.Restarts++
		opts.Log("kube-apiserver restart %d took %s", res.Restarts, took.Round(time.Millisecond))
		time.Sleep(2 * time.Second)
		if err := supervise(ctx); err != nil {
			return res, err
		}
	}
	res.Restart = summarise(restarts)
	err = retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error {
		if err := supervise(ctx); err != nil {
			return err
		}
		return checkInstances(ctx, c, ns, name, spec)
	})
	res.Converged = err == nil
	if err != nil {
		res.Problem = err.Error()
	}
	after := pods.liveUIDs()
	for id, uid := range before {
		if after[id] != uid {
			res.UIDChanged = append(res.UIDChanged, fmt.Sprintf("%s-%s: %s → %q", name, id, uid, after[id]))
		}
	}
	sort.Strings(res.UIDChanged)
	res.Pods = pods.counts()
	_ = retry(ctx, time.Minute, func(ctx context.Context) error {
		err := tapps.Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	_ = c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	res.Took = time.Since(start)
	return res, nil
}
