// Package chaos drives failure scenarios against a running local cluster (pkg/localcluster) and counts what
// went wrong: SIGKILLs of tapp-apiserver, which runs the controllers, during TApp scale-ups, in-place
// updates, instance kills and scale-downs and YurtAppDaemon pool changes (counted from a pod and a
// Deployment watch); SIGKILLs of tapp-apiserver while clients write TApps and keep a ledger of acknowledged
// writes (lost writes, resourceVersions going backwards in watches, time to ready); and kube-apiserver
// restarts during a rolling update (duplicate creates and deletes); and tapp-apiserver restarted on a wiped
// or rewound store (pods, claims and Deployments deleted, target 0). On the HA form (three etcd members, two
// replicas): SIGKILLs of the replicas in turn under the same write ledger, and etcd members killed, one at a
// time and then two of three (errors beyond retries, 5xx answers without quorum, pods deleted, time to the
// first write once quorum returns). The soak runs a long mixed load (creates, updates, server-side apply,
// scale, status writes, watches, controller work) and samples tapp-apiserver's RSS, Go heap, goroutines and
// open files (growth bounded after a warm-up, no error but the expected conflicts). cmd/tapp-chaos runs
// every scenario and writes the figures into docs/reliability.md; the end-to-end suite runs short variants
// and asserts the targets. All traffic goes to the local cluster on 127.0.0.1; every loop is bounded in count and time.
package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// Cluster is what the scenarios do to the processes of the local cluster; *localcluster.Cluster has it.
type Cluster interface {
	// KillTAppAPIServer sends SIGKILL to tapp-apiserver and starts it again, returning once it serves.
	KillTAppAPIServer(ctx context.Context) (localcluster.KillTimes, error)
	// RestartKubeAPIServer stops kube-apiserver and starts it again, returning once it is ready.
	RestartKubeAPIServer(ctx context.Context) (time.Duration, error)
	// PID returns the process id of a process of the cluster, 0 when it has exited.
	PID(name string) int
}

// HACluster is what the HA scenarios do to the HA form of the local cluster (three etcd members, two
// tapp-apiserver replicas); *localcluster.Cluster started with Config.HA has it.
type HACluster interface {
	Cluster
	// Replicas is the number of tapp-apiserver replicas.
	Replicas() int
	// KillReplica sends SIGKILL to replica i and leaves it stopped; StartReplica starts it again and returns
	// once it answers /readyz.
	KillReplica(i int) error
	StartReplica(ctx context.Context, i int) error
	// KillEtcdMember sends SIGKILL to etcd member i and leaves it stopped; StartEtcdMembers starts stopped
	// members again and returns once each answers /health.
	KillEtcdMember(i int) error
	StartEtcdMembers(ctx context.Context, members ...int) error
}

// The scenarios of the HA form; the others run on the single-replica form.
const (
	ScenarioHAServerKills = "ha-server-kills"
	ScenarioEtcdMembers   = "etcd-members"
)

// HAScenario says whether a scenario needs the HA form of the cluster.
func HAScenario(name string) bool {
	return name == ScenarioHAServerKills || name == ScenarioEtcdMembers
}

// Options size the scenarios.
type Options struct {
	// ControllerKills is the number of SIGKILLs of the leading tapp-apiserver in the controller scenario.
	ControllerKills int
	// Replicas is the TApp scale-up target of the controller scenario (0 → Replicas).
	Replicas int
	// Pools is the number of NodePools the YurtAppDaemon gains (then half of them are taken away again).
	Pools int
	// ServerKills is the number of SIGKILLs of tapp-apiserver under write load.
	ServerKills int
	// Writers is the number of clients writing TApps in the server scenario.
	Writers int
	// RolloutReplicas is the size of the TApp rolled during the kube-apiserver restarts.
	RolloutReplicas int
	// KubeAPIServerRestarts is the number of kube-apiserver restarts during that rollout.
	KubeAPIServerRestarts int
	// StorageWindow is how long the storage scenario watches the workloads on each wrong store.
	StorageWindow time.Duration
	// PhaseTimeout bounds each wait for the controllers to converge.
	PhaseTimeout time.Duration
	// HAServerKills is the number of SIGKILLs of a tapp-apiserver replica (alternating) under write load.
	HAServerKills int
	// EtcdMemberKills is the number of SIGKILLs of one etcd member (each started again) under write load.
	EtcdMemberKills int
	// QuorumLossWrites is the number of writes tried while two of the three etcd members are down, and
	// QuorumLossWindow how long the two stay down at least.
	QuorumLossWrites int
	QuorumLossWindow time.Duration
	// SoakDuration is how long the soak's mixed load runs, SoakInterval how often tapp-apiserver is sampled
	// meanwhile, SoakWarmup how long into the load the slope and the growth bounds begin, and
	// SoakInstances the TApp instances the controllers keep during it.
	SoakDuration  time.Duration
	SoakInterval  time.Duration
	SoakWarmup    time.Duration
	SoakInstances int
	// SoakBounds are the growth the soak tolerates after its warm-up.
	SoakBounds SoakBounds
	// Seed makes the random moments reproducible.
	Seed int64
	// Scenarios to run: "controllers", "server", "kube-apiserver", "storage", "soak" (single replica) and
	// "ha-server-kills", "etcd-members" (HA form); empty runs all those of the cluster's form.
	Scenarios []string
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...interface{}) `json:"-"`
}

// DefaultOptions is the full run of `make chaos`.
func DefaultOptions() Options {
	return Options{
		ControllerKills: 50, Replicas: 200, Pools: 4,
		ServerKills: 20, Writers: 4,
		RolloutReplicas: 40, KubeAPIServerRestarts: 2,
		StorageWindow: 2 * time.Minute,
		HAServerKills: 20, EtcdMemberKills: 6, QuorumLossWrites: 5, QuorumLossWindow: time.Minute,
		SoakDuration: 30 * time.Minute, SoakInterval: 5 * time.Minute, SoakWarmup: 5 * time.Minute, SoakInstances: 200,
		SoakBounds:   DefaultSoakBounds(),
		PhaseTimeout: 4 * time.Minute, Seed: 1,
	}
}

// QuickOptions is the short variant the end-to-end suite runs.
func QuickOptions() Options {
	return Options{
		ControllerKills: 3, Replicas: 20, Pools: 2,
		ServerKills: 3, Writers: 2,
		RolloutReplicas: 30, KubeAPIServerRestarts: 1,
		StorageWindow: 30 * time.Second,
		HAServerKills: 2, EtcdMemberKills: 1, QuorumLossWrites: 2, QuorumLossWindow: 20 * time.Second,
		SoakDuration: 2 * time.Minute, SoakInterval: 15 * time.Second, SoakWarmup: 30 * time.Second, SoakInstances: 40,
		SoakBounds:   QuickSoakBounds(),
		PhaseTimeout: 3 * time.Minute, Seed: 1,
	}
}

// Results are the figures of one run.
type Results struct {
	Options       Options                     `json:"options"`
	Controllers   *ControllerKillResult       `json:"controllers,omitempty"`
	Server        *ServerKillResult           `json:"server,omitempty"`
	KubeAPIServer *KubeAPIServerRestartResult `json:"kubeAPIServer,omitempty"`
	Storage       *StorageResult              `json:"storage,omitempty"`
	// HAServer and EtcdMembers are the figures of the HA form's scenarios.
	HAServer    *ServerKillResult `json:"haServer,omitempty"`
	EtcdMembers *EtcdMemberResult `json:"etcdMembers,omitempty"`
	// Soak is the figures of the soak (single-replica form).
	Soak *SoakResult `json:"soak,omitempty"`
	// Command is the command line of the run, for the record, and Note a sentence recorded under it (the
	// machine's other work, for example).
	Command string        `json:"command"`
	Note    string        `json:"note,omitempty"`
	Started time.Time     `json:"started"`
	Took    time.Duration `json:"took"`
}

// clients are the admin's clients through kube-apiserver.
type clients struct {
	cfg  *rest.Config
	kube kubernetes.Interface
	tapp versioned.Interface
}

func newClients(cfg *rest.Config) (*clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	// A request to a server that was just killed must not hang the scenario.
	cfg.Timeout = 15 * time.Second
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	tapp, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{cfg: cfg, kube: kube, tapp: tapp}, nil
}

// Run drives the scenarios opts selects on the cluster, whose admin is adminConfig.
func Run(ctx context.Context, cluster Cluster, adminConfig *rest.Config, opts Options) (*Results, error) {
	if opts.Log == nil {
		opts.Log = func(string, ...interface{}) {}
	}
	res := &Results{Options: opts, Started: time.Now()}
	opts.Log = res.Options.Log
	c, err := newClients(adminConfig)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(opts.Seed))
	ha, isHA := cluster.(HACluster)
	if isHA && ha.Replicas() < 2 {
		isHA = false
	}
	want := func(name string) bool {
		if HAScenario(name) != isHA {
			return false
		}
		if len(opts.Scenarios) == 0 {
			return true
		}
		for _, s := range opts.Scenarios {
			if s == name {
				return true
			}
		}
		return false
	}
	if want("controllers") {
		if res.Controllers, err = runControllerKills(ctx, cluster, c, opts, rng); err != nil {
			return res, fmt.Errorf("controller kills: %w", err)
		}
	}
	if want("server") {
		if res.Server, err = runServerKills(ctx, killTheServer(cluster), opts.ServerKills, c, opts, rng); err != nil {
			return res, fmt.Errorf("server kills: %w", err)
		}
	}
	if want("kube-apiserver") {
		if res.KubeAPIServer, err = runKubeAPIServerRestarts(ctx, cluster, c, opts, rng); err != nil {
			return res, fmt.Errorf("kube-apiserver restarts: %w", err)
		}
	}
	if want("storage") {
		sc, ok := cluster.(StoreCluster)
		if !ok {
			return res, fmt.Errorf("storage: the cluster cannot stop and start tapp-apiserver around its store")
		}
		if res.Storage, err = runStorage(ctx, sc, c, opts); err != nil {
			return res, fmt.Errorf("storage: %w", err)
		}
	}
	if want(ScenarioSoak) {
		if res.Soak, err = runSoak(ctx, cluster, c, opts, rng); err != nil {
			return res, fmt.Errorf("soak: %w", err)
		}
	}
	if want(ScenarioHAServerKills) {
		if res.HAServer, err = runServerKills(ctx, killReplicas(ha), opts.HAServerKills, c, opts, rng); err != nil {
			return res, fmt.Errorf("server kills in HA mode: %w", err)
		}
	}
	if want(ScenarioEtcdMembers) {
		if res.EtcdMembers, err = runEtcdMembers(ctx, ha, c, opts, rng); err != nil {
			return res, fmt.Errorf("etcd member kills: %w", err)
		}
	}
	res.Took = time.Since(res.Started)
	return res, nil
}

// Durations summarises a set of durations.
type Durations struct {
	N      int           `json:"n"`
	Min    time.Duration `json:"min"`
	Median time.Duration `json:"median"`
	Max    time.Duration `json:"max"`
}

func summarise(ds []time.Duration) Durations {
	if len(ds) == 0 {
		return Durations{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return Durations{N: len(s), Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

func (d Durations) String() string {
	if d.N == 0 {
		return "–"
	}
	r := func(x time.Duration) string { return x.Round(10 * time.Millisecond).String() }
	return fmt.Sprintf("%s / %s / %s", r(d.Min), r(d.Median), r(d.Max))
}

// retry calls f until it succeeds or timeout passes, pausing between attempts: the API may be down while a
// process restarts. It returns f's last error.
func retry(ctx context.Context, timeout time.Duration, f func(ctx context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// newNamespace creates a namespace for one scenario and returns its name.
func newNamespace(ctx context.Context, c *clients, prefix string) (string, error) {
	var name string
	err := retry(ctx, time.Minute, func(ctx context.Context) error {
		ns, err := c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		name = ns.Name
		return nil
	})
	return name, err
}

// randomBetween returns a random duration in [lo, hi).
func randomBetween(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int63n(int64(hi-lo)))
}
