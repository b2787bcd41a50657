package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// etcdMembers is the size of the HA form's etcd.
const etcdMembers = 3

// quorumClientTimeout bounds each write tried without a quorum: longer than the servers' own request timeout
// (60 s), so that a hang shows as the longest request rather than as this client giving up.
const quorumClientTimeout = 75 * time.Second

// quorumTAppInstances is the size of the TApp whose pods must survive the loss of quorum.
const quorumTAppInstances = 3

// EtcdMemberResult are the figures of the etcd member scenario.
type EtcdMemberResult struct {
	Namespace string `json:"namespace"`
	Writers   int    `json:"writers"`
	// One member killed at a time (SIGKILL, started again after a pause) under write load: the writes'
	// ledger as in the server scenario; Errors are the failed attempts clients retried, Abandoned the writes
	// that failed beyond maxAttempts attempts.
	MemberKills   int       `json:"memberKills"`
	MemberRestart Durations `json:"memberRestart"`
	Acknowledged  int       `json:"acknowledged"`
	Errors        int       `json:"errors"`
	Abandoned     []string  `json:"abandoned,omitempty"`
	Lost          int       `json:"lost"`
	LostWrites    []string  `json:"lostWrites,omitempty"`
	// Two of three members killed: each write tried is answered 5xx, answered otherwise (Succeeded or
	// OtherErrors), or not answered within quorumClientTimeout (Hung); LongestRequest is the longest of them.
	QuorumWrites      int           `json:"quorumWrites"`
	Answered5xx       int           `json:"answered5xx"`
	Succeeded         int           `json:"succeeded"`
	Hung              int           `json:"hung"`
	OtherErrors       []string      `json:"otherErrors,omitempty"`
	LongestRequest    time.Duration `json:"longestRequest"`
	QuorumLossWindow  time.Duration `json:"quorumLossWindow"`
	Pods              int           `json:"pods"`
	PodsDeleted       []string      `json:"podsDeleted,omitempty"`
	PodsReplaced      []string      `json:"podsReplaced,omitempty"`
	ReplicaExits      int           `json:"replicaExits"`
	FirstWriteAfter   time.Duration `json:"firstWriteAfter"`
	MembersHealthyIn  time.Duration `json:"membersHealthyIn"`
	QuorumWriteErrors []string      `json:"quorumWriteErrors,omitempty"`
	Took              time.Duration `json:"took"`
}

func runEtcdMembers(ctx context.Context, cluster HACluster, c *clients, opts Options, rng *rand.Rand) (*EtcdMemberResult, error) {
	start := time.Now()
	ns, err := newNamespace(ctx, c, "chaos-etcd")
	if err != nil {
		return nil, err
	}
	res := &EtcdMemberResult{Namespace: ns, Writers: opts.Writers}
	opts.Log("etcd member kills in namespace %s: %d kills of one member, then two of three", ns, opts.EtcdMemberKills)
	tapps := c.tapp.TKEStackAppsV1().TApps(ns)

	// One member at a time.
	load, stopLoad := context.WithCancel(ctx)
	ledger := &writeLedger{}
	waitWriters := startWriters(load, tapps, opts.Writers, ledger, opts.PhaseTimeout)
	var restarts []time.Duration
	var killErr error
	time.Sleep(2 * time.Second)
	for i := 0; i < opts.EtcdMemberKills; i++ {
		member := i % etcdMembers
		killed := time.Now()
		if killErr = cluster.KillEtcdMember(member); killErr != nil {
			break
		}
		time.Sleep(randomBetween(rng, time.Second, 3*time.Second))
		if killErr = cluster.StartEtcdMembers(ctx, member); killErr != nil {
			break
		}
		restarts = append(restarts, time.Since(killed))
		res.MemberKills++
		opts.Log("etcd member %d killed and healthy again in %s", member, time.Since(killed).Round(time.Millisecond))
		time.Sleep(randomBetween(rng, time.Second, 2*time.Second))
	}
	stopLoad()
	waitWriters()
	if killErr != nil {
		return res, killErr
	}
	if err := ledger.verify(ctx, tapps, opts.PhaseTimeout); err != nil {
		return res, err
	}
	res.MemberRestart = summarise(restarts)
	res.Acknowledged, res.Errors, res.Abandoned = ledger.acked, ledger.unknown, ledger.abandoned
	res.Lost, res.LostWrites = ledger.lost, ledger.lostWrites

	if err := runQuorumLoss(ctx, cluster, c, ns, opts, res); err != nil {
		return res, err
	}
	_ = retry(ctx, time.Minute, func(ctx context.Context) error {
		return tapps.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	_ = c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	res.Took = time.Since(start)
	return res, nil
}

// runQuorumLoss kills two of the three members while a TApp's pods run, tries writes, waits out the window,
// counts pods deleted or replaced, and starts the members again, timing the first successful write.
func runQuorumLoss(ctx context.Context, cluster HACluster, c *clients, ns string, opts Options, res *EtcdMemberResult) error {
	tapps := c.tapp.TKEStackAppsV1().TApps(ns)
	pods := c.kube.CoreV1().Pods(ns)
	const name = "survivor"
	tapp := loadTApp(name)
	tapp.Spec.Replicas = quorumTAppInstances
	if err := retry(ctx, time.Minute, func(ctx context.Context) error {
		_, err := tapps.Create(ctx, tapp, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}); err != nil {
		return err
	}
	selector := metav1.ListOptions{LabelSelector: "app=" + name}
	var before *corev1.PodList
	if err := retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error {
		var err error
		if before, err = pods.List(ctx, selector); err != nil {
			return err
		}
		if len(before.Items) != quorumTAppInstances {
			return fmt.Errorf("%d pods of %d", len(before.Items), quorumTAppInstances)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("the TApp's pods: %w", err)
	}
	res.Pods = len(before.Items)

	// Pods live in kube-apiserver's etcd, which stays up: a watch sees every deletion.
	watcher, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: selector.LabelSelector, ResourceVersion: before.ResourceVersion})
	if err != nil {
		return err
	}
	var deleted []string
	var watchMu sync.Mutex
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ev := range watcher.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && (ev.Type == watch.Deleted || pod.DeletionTimestamp != nil) {
				watchMu.Lock()
				deleted = append(deleted, pod.Name)
				watchMu.Unlock()
			}
		}
	}()

	lost := []int{1, 2}
	lossStart := time.Now()
	for _, m := range lost {
		if err := cluster.KillEtcdMember(m); err != nil {
			watcher.Stop()
			return err
		}
	}
	opts.Log("etcd members %v killed: no quorum", lost)
	slow := rest.CopyConfig(c.cfg)
	slow.Timeout = quorumClientTimeout
	slowClient, err := versioned.NewForConfig(slow)
	if err != nil {
		watcher.Stop()
		return err
	}
	for i := 0; i < opts.QuorumLossWrites; i++ {
		began := time.Now()
		_, err := slowClient.TKEStackAppsV1().TApps(ns).Create(ctx, loadTApp("no-quorum-"+strconv.Itoa(i)), metav1.CreateOptions{})
		took := time.Since(began)
		if took > res.LongestRequest {
			res.LongestRequest = took
		}
		res.QuorumWrites++
		var status apierrors.APIStatus
		switch {
		case err == nil:
			res.Succeeded++
		case errors.As(err, &status) && status.Status().Code >= 500:
			res.Answered5xx++
			if len(res.QuorumWriteErrors) < 5 {
				res.QuorumWriteErrors = append(res.QuorumWriteErrors, fmt.Sprintf("%d %s", status.Status().Code, status.Status().Message))
			}
		case took >= quorumClientTimeout:
			res.Hung++
		default:
			res.OtherErrors = append(res.OtherErrors, err.Error())
		}
		opts.Log("write %d without quorum: %v after %s", i, err, took.Round(time.Millisecond))
		time.Sleep(time.Second)
	}
	if rest := opts.QuorumLossWindow - time.Since(lossStart); rest > 0 {
		time.Sleep(rest)
	}
	res.QuorumLossWindow = time.Since(lossStart)

	// Quorum returns: the first write that succeeds, from the moment the members are started.
	returned := time.Now()
	healthy := make(chan error, 1)
	go func() {
		err := cluster.StartEtcdMembers(ctx, lost...)
		if err == nil {
			res.MembersHealthyIn = time.Since(returned)
		}
		healthy <- err
	}()
	if err := retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error {
		_, err := tapps.Create(ctx, loadTApp("quorum-back"), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}); err != nil {
		watcher.Stop()
		return fmt.Errorf("no successful write after quorum returned: %w", err)
	}
	res.FirstWriteAfter = time.Since(returned)
	if err := <-healthy; err != nil {
		watcher.Stop()
		return err
	}
	opts.Log("quorum back: first write after %s", res.FirstWriteAfter.Round(time.Millisecond))

	// A replica that exited meanwhile is started again, as its kubelet would.
	for i := 0; i < cluster.Replicas(); i++ {
		if cluster.PID(localcluster.ReplicaName(i)) == 0 {
			res.ReplicaExits++
			if err := cluster.StartReplica(ctx, i); err != nil {
				watcher.Stop()
				return err
			}
		}
	}
	// The controllers act again: the TApp still has its pods, the same ones.
	if err := retry(ctx, opts.PhaseTimeout, func(ctx context.Context) error {
		got, err := tapps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Status.ObservedGeneration < got.Generation || got.Status.ReadyReplicas != quorumTAppInstances {
			return fmt.Errorf("status: %d of %d ready", got.Status.ReadyReplicas, quorumTAppInstances)
		}
		return nil
	}); err != nil {
		watcher.Stop()
		return fmt.Errorf("the TApp after quorum returned: %w", err)
	}
	time.Sleep(5 * time.Second)
	after, err := pods.List(ctx, selector)
	watcher.Stop()
	<-watchDone
	if err != nil {
		return err
	}
	uids := map[string]string{}
	for _, p := range after.Items {
		uids[p.Name] = string(p.UID)
	}
	for _, p := range before.Items {
		if uids[p.Name] != string(p.UID) {
			res.PodsReplaced = append(res.PodsReplaced, p.Name)
		}
	}
	res.PodsDeleted = deleted
	return nil
}
