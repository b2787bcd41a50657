package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	typedv1 "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/typed/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// seqAnnotation carries the number of the last update a writer made to a TApp.
const seqAnnotation = "chaos.tapp.io/seq"

// updatesPerObject is how many updates each TApp of the write load gets between its create and delete.
const updatesPerObject = 3

// ServerKillResult are the figures of the server scenario.
type ServerKillResult struct {
	Namespace string `json:"namespace"`
	Kills     int    `json:"kills"`
	Writers   int    `json:"writers"`
	// Ready and Serving are from each SIGKILL to /readyz and to both groups through the aggregator.
	Ready   Durations `json:"ready"`
	Serving Durations `json:"serving"`
	// Acknowledged writes (creates, updates, deletes answered 2xx), writes whose outcome the client could
	// not know (the connection broke), and acknowledged writes not found afterwards.
	Acknowledged int      `json:"acknowledged"`
	Unknown      int      `json:"unknown"`
	Lost         int      `json:"lost"`
	LostWrites   []string `json:"lostWrites,omitempty"`
	// Abandoned are writes a client gave up on after maxAttempts attempts without an answer.
	Abandoned []string `json:"abandoned,omitempty"`
	Objects   int      `json:"objects"`
	// Watch figures: events seen, watches re-established, relists after 410 Gone, resourceVersions lower
	// than one seen before in the same watch.
	WatchEvents   int           `json:"watchEvents"`
	Rewatches     int           `json:"rewatches"`
	Relists       int           `json:"relists"`
	RVBackwards   int           `json:"rvBackwards"`
	RVBackwardsAt []string      `json:"rvBackwardsAt,omitempty"`
	Took          time.Duration `json:"took"`
}

// ledgerEntry is what a writer knows was acknowledged for one TApp.
type ledgerEntry struct {
	name    string
	seq     int
	deleted bool
}

// writeLedger collects the writers' counts.
type writeLedger struct {
	mu                   sync.Mutex
	acked, unknown, lost int
	lostWrites           []string
	abandoned            []string
	entries              []ledgerEntry
}

func (l *writeLedger) add(f func(l *writeLedger)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l)
}

// maxAttempts bounds the attempts of one write.
const maxAttempts = 20

// giveUp records a write that never got an answer.
func (l *writeLedger) giveUp(format string, args ...interface{}) {
	l.add(func(l *writeLedger) {
		if len(l.abandoned) < 20 {
			l.abandoned = append(l.abandoned, fmt.Sprintf(format, args...))
		}
	})
}

func (l *writeLedger) loss(format string, args ...interface{}) {
	l.add(func(l *writeLedger) {
		l.lost++
		if len(l.lostWrites) < 20 {
			l.lostWrites = append(l.lostWrites, fmt.Sprintf(format, args...))
		}
	})
}

// serverKiller kills a tapp-apiserver process (kill number i, from 0) and returns once it serves again, with
// how long that took from the kill.
type serverKiller func(ctx context.Context, i int) (localcluster.KillTimes, error)

// killTheServer is the single-replica form: SIGKILL of tapp-apiserver and its embedded etcd, started again.
func killTheServer(cluster Cluster) serverKiller {
	return func(ctx context.Context, _ int) (localcluster.KillTimes, error) {
		return cluster.KillTAppAPIServer(ctx)
	}
}

// killReplicas is the HA form: SIGKILL of the replicas in turn (kill i hits replica i mod replicas), each
// started again; the other replica serves meanwhile. Ready is from the kill to the replica's /readyz, and
// Serving the same (the group never stops being served through the aggregator).
func killReplicas(cluster HACluster) serverKiller {
	return func(ctx context.Context, i int) (localcluster.KillTimes, error) {
		replica := i % cluster.Replicas()
		killed := time.Now()
		if err := cluster.KillReplica(replica); err != nil {
			return localcluster.KillTimes{}, err
		}
		if err := cluster.StartReplica(ctx, replica); err != nil {
			return localcluster.KillTimes{}, err
		}
		took := time.Since(killed)
		return localcluster.KillTimes{Ready: took, Serving: took}, nil
	}
}

// runServerKills drives kills SIGKILLs with kill under the write load of opts.Writers clients.
func runServerKills(ctx context.Context, kill serverKiller, kills int, c *clients, opts Options, rng *rand.Rand) (*ServerKillResult, error) {
	start := time.Now()
	ns, err := newNamespace(ctx, c, "chaos-writes")
	if err != nil {
		return nil, err
	}
	res := &ServerKillResult{Namespace: ns, Writers: opts.Writers}
	opts.Log("server kills in namespace %s: %d kills, %d writers", ns, kills, opts.Writers)
	tapps := c.tapp.TKEStackAppsV1().TApps(ns)

	load, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	w := &rvWatch{}
	watchDone := make(chan struct{})
	if err := w.start(load, tapps, watchDone); err != nil {
		return nil, err
	}
	ledger := &writeLedger{}
	waitWriters := startWriters(load, tapps, opts.Writers, ledger, opts.PhaseTimeout)

	var ready, serving []time.Duration
	var killErr error
	time.Sleep(2 * time.Second) // the load is under way before the first kill
	for i := 0; i < kills; i++ {
		time.Sleep(randomBetween(rng, 500*time.Millisecond, 2500*time.Millisecond))
		times, err := kill(ctx, i)
		if err != nil {
			killErr = err
			break
		}
		ready, serving = append(ready, times.Ready), append(serving, times.Serving)
		res.Kills++
		opts.Log("server kill %d: ready in %s, serving in %s", res.Kills, times.Ready.Round(time.Millisecond), times.Serving.Round(time.Millisecond))
	}
	time.Sleep(2 * time.Second) // and goes on after the last one
	stopLoad()
	waitWriters()
	<-watchDone
	if killErr != nil {
		return res, killErr
	}
	res.Ready, res.Serving = summarise(ready), summarise(serving)

	if err := ledger.verify(ctx, tapps, opts.PhaseTimeout); err != nil {
		return res, err
	}
	res.Acknowledged, res.Unknown, res.Lost, res.LostWrites = ledger.acked, ledger.unknown, ledger.lost, ledger.lostWrites
	res.Abandoned = ledger.abandoned
	res.Objects = len(ledger.entries)
	res.WatchEvents, res.Rewatches, res.Relists, res.RVBackwards, res.RVBackwardsAt = w.events, w.rewatches, w.relists, w.backwards, w.backwardsAt
	_ = retry(ctx, time.Minute, func(ctx context.Context) error {
		return tapps.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	_ = c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	res.Took = time.Since(start)
	return res, nil
}

// verify reads back every TApp of the ledger and counts acknowledged writes not found: deleted objects stay
// deleted, the others carry their last acknowledged update.
func (l *writeLedger) verify(ctx context.Context, tapps typedv1.TAppInterface, timeout time.Duration) error {
	for _, e := range l.entries {
		var got *tkestackv1.TApp
		err := retry(ctx, timeout, func(ctx context.Context) error {
			var err error
			got, err = tapps.Get(ctx, e.name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				got, err = nil, nil
			}
			return err
		})
		switch {
		case err != nil:
			return fmt.Errorf("reading %s back: %w", e.name, err)
		case e.deleted && got != nil:
			l.loss("%s: acknowledged delete, found again", e.name)
		case !e.deleted && got == nil:
			l.loss("%s: acknowledged write (seq %d), not found", e.name, e.seq)
		case !e.deleted && got.Annotations[seqAnnotation] != strconv.Itoa(e.seq):
			l.loss("%s: acknowledged seq %d, found %q", e.name, e.seq, got.Annotations[seqAnnotation])
		}
	}
	return nil
}

// startWriters runs n writers of writeLoad until ctx ends; the returned function waits for them.
func startWriters(ctx context.Context, tapps typedv1.TAppInterface, n int, ledger *writeLedger, timeout time.Duration) func() {
	var writers sync.WaitGroup
	for i := 0; i < n; i++ {
		writers.Add(1)
		go func(i int) {
			defer writers.Done()
			writeLoad(ctx, tapps, fmt.Sprintf("w%d", i), ledger, timeout)
		}(i)
	}
	return writers.Wait
}

// writeLoad creates, updates and deletes TApps named <prefix>-<n> one after another until ctx ends,
// recording in the ledger every write acknowledged. A write whose outcome is unknown (the server died under
// it) is settled by reading the object back, once the server answers, before the next write.
func writeLoad(ctx context.Context, tapps typedv1.TAppInterface, prefix string, ledger *writeLedger, timeout time.Duration) {
	// Writes end when ctx ends, but a write under way is settled with a context of its own.
	settle := context.Background()
	for n := 0; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("%s-%d", prefix, n)
		entry := ledgerEntry{name: name}
		created := false
		for attempt := 0; !created; attempt++ {
			if attempt == maxAttempts {
				ledger.giveUp("%s: create not acknowledged after %d attempts", name, attempt)
				return
			}
			_, err := tapps.Create(settle, loadTApp(name), metav1.CreateOptions{})
			switch {
			case err == nil:
				ledger.add(func(l *writeLedger) { l.acked++ })
				created = true
			case apierrors.IsAlreadyExists(err):
				created = true // an earlier attempt whose answer was lost
			default:
				ledger.add(func(l *writeLedger) { l.unknown++ })
				if waitAnswer(settle, tapps, name, timeout) != nil {
					return
				}
			}
		}
		var index int
		ledger.add(func(l *writeLedger) { l.entries = append(l.entries, entry); index = len(l.entries) - 1 })
		for seq := 1; seq <= updatesPerObject && ctx.Err() == nil; seq++ {
			patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"annotations": map[string]string{seqAnnotation: strconv.Itoa(seq)}}})
			for attempt := 0; ; attempt++ {
				if attempt == maxAttempts {
					ledger.giveUp("%s: update %d not acknowledged after %d attempts", name, seq, attempt)
					return
				}
				_, err := tapps.Patch(settle, name, types.MergePatchType, patch, metav1.PatchOptions{})
				if err == nil {
					ledger.add(func(l *writeLedger) { l.acked++; l.entries[index].seq = seq })
					break
				}
				ledger.add(func(l *writeLedger) { l.unknown++ })
				got, err := readBack(settle, tapps, name, timeout)
				if err != nil {
					return
				}
				if got == nil {
					ledger.loss("%s: acknowledged create, not found before update %d", name, seq)
					return
				}
				have, _ := strconv.Atoi(got.Annotations[seqAnnotation])
				if have < seq-1 {
					ledger.loss("%s: acknowledged seq %d, read back %d", name, seq-1, have)
				}
				if have == seq {
					ledger.add(func(l *writeLedger) { l.entries[index].seq = seq })
					break
				}
			}
		}
		for attempt := 0; ; attempt++ {
			if attempt == maxAttempts {
				ledger.giveUp("%s: delete not acknowledged after %d attempts", name, attempt)
				return
			}
			err := tapps.Delete(settle, name, metav1.DeleteOptions{})
			if err == nil || apierrors.IsNotFound(err) {
				if err == nil {
					ledger.add(func(l *writeLedger) { l.acked++ })
				}
				ledger.add(func(l *writeLedger) { l.entries[index].deleted = true })
				break
			}
			ledger.add(func(l *writeLedger) { l.unknown++ })
			if waitAnswer(settle, tapps, name, timeout) != nil {
				return
			}
		}
	}
}

// loadTApp is a TApp without instances: the controllers write its status but create no pod.
func loadTApp(name string) *tkestackv1.TApp {
	return &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{seqAnnotation: "0"}},
		Spec: tkestackv1.TAppSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: imageV1}}},
			},
		},
	}
}

// readBack reads a TApp once the server answers; nil when it does not exist.
func readBack(ctx context.Context, tapps typedv1.TAppInterface, name string, timeout time.Duration) (*tkestackv1.TApp, error) {
	var got *tkestackv1.TApp
	err := retry(ctx, timeout, func(ctx context.Context) error {
		var err error
		got, err = tapps.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			got, err = nil, nil
		}
		return err
	})
	return got, err
}

// waitAnswer waits until the server answers a read of name again.
func waitAnswer(ctx context.Context, tapps typedv1.TAppInterface, name string, timeout time.Duration) error {
	_, err := readBack(ctx, tapps, name, timeout)
	return err
}

// rvWatch watches the TApps of a namespace across server restarts, re-establishing the watch from the last
// resourceVersion it saw, and counts resourceVersions that go backwards.
type rvWatch struct {
	events, rewatches, relists, backwards int
	backwardsAt                           []string
}

func (w *rvWatch) start(ctx context.Context, tapps typedv1.TAppInterface, done chan struct{}) error {
	list, err := tapps.List(ctx, metav1.ListOptions{})
	if err != nil {
		close(done)
		return err
	}
	last, _ := strconv.ParseUint(list.ResourceVersion, 10, 64)
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			timeout := int64(30)
			watcher, err := tapps.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(last, 10), AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
			if err != nil {
				time.Sleep(300 * time.Millisecond)
				continue
			}
			last = w.consume(ctx, tapps, watcher, last)
			watcher.Stop()
			w.rewatches++
		}
	}()
	return nil
}

// consume reads one watch until it ends and returns the last resourceVersion seen.
func (w *rvWatch) consume(ctx context.Context, tapps typedv1.TAppInterface, watcher watch.Interface, last uint64) uint64 {
	for ev := range watcher.ResultChan() {
		if ev.Type == watch.Error {
			if status := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(status) || apierrors.IsGone(status) {
				list, err := tapps.List(ctx, metav1.ListOptions{})
				if err != nil {
					return last
				}
				w.relists++
				rv, _ := strconv.ParseUint(list.ResourceVersion, 10, 64)
				w.check(rv, last, true, "relist")
				if rv > last {
					last = rv
				}
			}
			return last
		}
		obj, err := meta.Accessor(ev.Object)
		if err != nil {
			continue
		}
		rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
		if err != nil {
			continue
		}
		w.events++
		w.check(rv, last, ev.Type == watch.Bookmark, string(ev.Type)+" "+obj.GetName())
		if rv > last {
			last = rv
		}
	}
	return last
}

// check counts rv as going backwards when it is below last (or equal to it, for a change: every change has
// a resourceVersion of its own).
func (w *rvWatch) check(rv, last uint64, mayEqual bool, what string) {
	if rv < last || (rv == last && !mayEqual) {
		w.backwards++
		if len(w.backwardsAt) < 20 {
			w.backwardsAt = append(w.backwardsAt, fmt.Sprintf("%s at %d after %d", what, rv, last))
		}
	}
}
