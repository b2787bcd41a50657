package storagefence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Event reasons besides the Refuse reasons.
const (
	// ReasonServing is the Normal Event of a fenced server that serves again.
	ReasonServing = "StorageIdentityMatches"
	// ReasonNotChecked is the state before the first check.
	ReasonNotChecked = "NotCheckedYet"
)

// HealthCheckName is the name of the readiness check.
const HealthCheckName = "storage-identity"

// retryPeriod is how often a server that does not serve checks again.
const retryPeriod = 2 * time.Second

// While it serves, a replica also reads its store every storeProbePeriod, each read bounded by
// storeProbePeriod, whatever its checks are doing (a check's own read of a store without quorum can take
// seconds to fail); after unreadableProbes reads in a row fail (etcd without quorum answers none), it stops
// serving, and so stops its controllers, until a check reads the store again. A store that cannot be read
// cannot be decided on, but controllers acting on a cache that can no longer be written back would act blind:
// this way they stop within seconds of a lost quorum, before the replica's readiness fails.
const (
	storeProbePeriod = time.Second
	unreadableProbes = 2
)

// Fence runs the check of one replica and holds its outcome: whether the server may serve its store.
type Fence struct {
	store    *Store
	cluster  *Cluster
	recorder record.EventRecorder
	period   time.Duration

	mu      sync.Mutex
	serving bool
	// verdict is the last Refuse or Wait verdict that keeps the server from serving.
	verdict Verdict
	// changed is closed, and replaced, when serving changes.
	changed chan struct{}
	// reported is the reason and message last logged and recorded, so that each is said once.
	reported string
	// pauses counts the pauses for an unreadable store: a check that began before one does not serve.
	pauses int
}

// New returns a fence that does not serve until its first check passes. period is how often a serving
// replica checks again (and moves the high-water mark forward); recorder may be nil.
func New(store *Store, cluster *Cluster, recorder record.EventRecorder, period time.Duration) *Fence {
	return &Fence{
		store: store, cluster: cluster, recorder: recorder, period: period,
		verdict: Verdict{Action: Wait, Reason: ReasonNotChecked, Message: "the store's identity has not been checked yet"},
		changed: make(chan struct{}),
	}
}

// Run checks at once and then periodically until ctx is done, and probes the store while serving
// (storeProbePeriod).
func (f *Fence) Run(ctx context.Context) {
	go f.probeStore(ctx)
	for {
		checkCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
		f.Check(checkCtx)
		cancel()
		serving, changed := f.watch()
		wait := f.period
		if !serving {
			wait = retryPeriod
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		case <-changed: // paused by the probe: check again
		}
	}
}

// probeStore reads the store every storeProbePeriod while the server serves, and stops serving once
// unreadableProbes reads in a row failed. It returns when ctx ends.
func (f *Fence) probeStore(ctx context.Context) {
	failed := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(storeProbePeriod):
		}
		if serving, _ := f.State(); !serving {
			failed = 0
			continue
		}
		probeCtx, cancel := context.WithTimeout(ctx, storeProbePeriod)
		rec := f.store.Read(probeCtx)
		cancel()
		if rec.State != StoreUnreadable || ctx.Err() != nil {
			failed = 0
			continue
		}
		if failed++; failed >= unreadableProbes {
			failed = 0
			f.pause(Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: fmt.Sprintf(
				"the store cannot be read (%v): serving again once it can", rec.Err)})
		}
	}
}

// pause stops serving while the store cannot be read; the next check that reads it serves again.
func (f *Fence) pause(v Verdict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.serving {
		return
	}
	f.serving, f.verdict, f.reported = false, v, v.Reason+v.Message
	f.pauses++
	klog.ErrorS(errors.New(v.Message), "Not serving: the store cannot be read", "store", f.store.Where)
	f.event(corev1.EventTypeWarning, v.Reason, fmt.Sprintf("%s (%s)", v.Message, f.store.Where))
	close(f.changed)
	f.changed = make(chan struct{})
}

// Check reads both records, decides, writes what the verdict asks for and updates the state.
func (f *Fence) Check(ctx context.Context) Verdict {
	f.mu.Lock()
	pauses := f.pauses
	f.mu.Unlock()
	var v Verdict
	// A replica that loses a race to record its identity reads again once.
	for attempt := 0; attempt < 2; attempt++ {
		var retry bool
		v, retry = f.checkOnce(ctx)
		if !retry {
			break
		}
	}
	if !f.setUnlessPausedSince(v, pauses) {
		// The store became unreadable while this check ran: the next check decides.
		return Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: "the store could not be read during the check"}
	}
	return v
}

func (f *Fence) checkOnce(ctx context.Context) (Verdict, bool) {
	rec, _ := f.cluster.Read(ctx)
	store := f.store.Read(ctx)
	v := Decide(rec, store)
	var err error
	switch v.Action {
	case Initialise:
		id := Identity{ID: string(uuid.NewUUID()), Created: time.Now().UTC().Truncate(time.Second)}
		if id, err = f.store.Identify(ctx, id); err != nil {
			return Verdict{Action: Wait, Reason: ReasonStoreUnreadable, Message: fmt.Sprintf("cannot write the store's identity: %v", err)}, false
		}
		err = f.cluster.Create(ctx, id, store.Revision)
		if err == nil {
			klog.InfoS("Recorded a new storage identity in the store and the cluster", "identity", id, "store", f.store.Where, "record", f.cluster.Name)
		}
	case Record:
		err = f.cluster.Create(ctx, store.Identity, store.Revision)
		if err == nil {
			klog.InfoS("Recorded the store's identity in the cluster", "identity", store.Identity, "store", f.store.Where, "record", f.cluster.Name)
		}
	case Serve:
		if store.Revision > rec.HighWater {
			if err := f.cluster.AdvanceMark(ctx, store.Identity, store.Revision); err != nil {
				klog.ErrorS(err, "Cannot move the store's high-water revision forward", "record", f.cluster.Name)
			}
		}
		return v, false
	default:
		return v, false
	}
	switch {
	case apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err):
		return Verdict{Action: Wait, Reason: ReasonClusterUnreadable, Message: "another replica recorded an identity first; checking again"}, true
	case err != nil:
		return Verdict{Action: Wait, Reason: ReasonClusterUnreadable, Message: fmt.Sprintf("cannot record the store's identity in the cluster: %v", err)}, false
	}
	return Verdict{Action: Serve}, false
}

// set applies a verdict: Serve (after Initialise or Record too) serves, Refuse stops serving, and Wait keeps
// whatever state the last decision left, since it decides nothing.
func (f *Fence) set(v Verdict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(v)
}

// setUnlessPausedSince applies v as set does, unless v serves and the probe paused the server after the
// pauses-th pause (the check that gave v began before it); it reports whether v was applied.
func (f *Fence) setUnlessPausedSince(v Verdict, pauses int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v.Action == Serve && f.pauses != pauses {
		return false
	}
	f.setLocked(v)
	return true
}

func (f *Fence) setLocked(v Verdict) {
	wasServing := f.serving
	switch v.Action {
	case Serve:
		f.serving = true
		if !wasServing && (f.verdict.Action == Refuse || f.verdict.Reason == ReasonStoreUnreadable) {
			msg := fmt.Sprintf("the store (%s) is the cluster's again: serving", f.store.Where)
			klog.InfoS("Storage fence lifted: serving", "store", f.store.Where)
			f.event(corev1.EventTypeNormal, ReasonServing, msg)
		}
		f.reported = ""
	case Refuse:
		f.serving = false
		f.verdict = v
		if key := v.Reason + v.Message; key != f.reported {
			f.reported = key
			klog.ErrorS(errors.New(v.Message), "Not serving: the store is not the cluster's", "reason", v.Reason, "store", f.store.Where, "record", f.cluster.Name)
			f.event(corev1.EventTypeWarning, v.Reason, fmt.Sprintf("%s (%s)", v.Message, f.store.Where))
		}
	case Wait:
		if key := v.Reason + v.Message; key != f.reported {
			f.reported = key
			klog.InfoS("Storage identity not checked", "reason", v.Reason, "message", v.Message, "serving", f.serving)
		}
		if !f.serving && f.verdict.Action != Refuse {
			f.verdict = v
		}
	}
	if f.serving != wasServing {
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

func (f *Fence) event(eventType, reason, message string) {
	if f.recorder == nil {
		return
	}
	f.recorder.Event(&corev1.ObjectReference{
		Kind: "ConfigMap", APIVersion: "v1", Namespace: f.cluster.Name.Namespace, Name: f.cluster.Name.Name,
	}, eventType, reason, message)
}

// State reports whether the server may serve and, when not, the verdict that keeps it from serving.
func (f *Fence) State() (bool, Verdict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.serving, f.verdict
}

func (f *Fence) watch() (bool, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.serving, f.changed
}

// healthCheck fails, with the reason, while the server does not serve.
func (f *Fence) healthCheck(*http.Request) error {
	serving, v := f.State()
	if serving {
		return nil
	}
	return fmt.Errorf("%s: %s", v.Reason, v.Message)
}

// HealthChecker is the readiness check.
func (f *Fence) HealthChecker() healthz.HealthChecker { return healthChecker{f} }

type healthChecker struct{ f *Fence }

func (h healthChecker) Name() string                  { return HealthCheckName }
func (h healthChecker) Check(req *http.Request) error { return h.f.healthCheck(req) }

// WithFence answers 503, with a Status that says why and what to do, to every request for a version of
// groups (discovery of a group-version included, so that the aggregator marks the APIServices unavailable
// as it does for a server that is down) while the server does not serve. Other paths pass.
func (f *Fence) WithFence(handler http.Handler, groups []string, codecs runtime.NegotiatedSerializer) http.Handler {
	fenced := sets.New(groups...)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if serving, v := f.State(); !serving && fenced.Has(groupVersionOf(req.URL.Path)) {
			w.Header().Set("Retry-After", "10")
			err := apierrors.NewServiceUnavailable(fmt.Sprintf("tapp-apiserver does not serve its store (%s): %s", v.Reason, v.Message))
			responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{Version: "v1"}, w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
}

// groupVersionOf returns the group of /apis/<group>/<version>[/...], or "".
func groupVersionOf(path string) string {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 4)
	if len(parts) < 3 || parts[0] != "apis" || parts[2] == "" {
		return ""
	}
	return parts[1]
}

// RunWhileServing runs fn while the server serves: it waits until the server serves, runs fn with a
// context that ends when the server stops serving (or ctx ends), and starts again once it serves again.
// It returns fn's error, or nil when ctx is done.
func (f *Fence) RunWhileServing(ctx context.Context, fn func(context.Context) error) error {
	for {
		serving, changed := f.watch()
		if !serving {
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
				continue
			}
		}
		running, stop := context.WithCancel(ctx)
		go func() {
			select {
			case <-changed:
			case <-running.Done():
			}
			stop()
		}()
		err := fn(running)
		if err == nil {
			<-running.Done() // fn had nothing to run: wait until the state changes
		}
		stop()
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		klog.InfoS("Stopped while the store is not the cluster's; starting again once it is")
	}
}
