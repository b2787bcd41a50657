// Package bench measures tapp-apiserver on the local cluster of pkg/localcluster (the cluster of
// hack/local-up.sh and the end-to-end suite) and writes _output/bench/results.json and results.md:
//
//  1. API path: create, get, update, list and watch latency of the same TApp through kube-apiserver's
//     aggregator, directly to tapp-apiserver, and as a CRD of the same schema on the same kube-apiserver;
//  2. memory: tapp-apiserver's resident set holding 10k TApps against kube-apiserver's growth holding 10k
//     objects of the CRD;
//  3. scale-up 0→1000 Ready pods and 1000→0: TApp, StatefulSet (Parallel), Deployment and a bare client
//     at the controllers' client rate limit, without and with the readiness gate of TApp's pods, at each
//     budget of --budgets (100/200 and 2000/2500);
//  4. rolling image update of 1000 instances at maxUnavailable 25%: TApp in place, StatefulSet, Deployment,
//     at each budget;
//     4b. ("resize") a change of the container resources of 1000 instances: TApp in place, StatefulSet;
//     4d. ("claims") the claims of 1000 instances raised from 1Gi to 2Gi: by the TApp controller, and by a
//     user patching each claim of a StatefulSet, whose claim template cannot be raised;
//     4c. ("rollout-modelled") scale-up and rolling image update of TApp and StatefulSet on a cluster whose
//     pod simulator models what a node spends on a pod (localcluster.PublishedNodeCost);
//  5. YurtAppDaemon and YurtAppSet (with tweaks) fan-out over 100 NodePools;
//  6. ("growth") one TApp of 1000 and of 10000 instances (scale-up, in-place roll, status size, writes) and
//     1000 and 10000 TApps in one server (memory, list, watch fan-out, controller resync), with the growth
//     exponent of each figure.
//
// Sections 1-2 run on a cluster whose tapp-apiserver runs no controllers (the CRD has none either);
// sections 3-4 on a fresh cluster with the controllers per budget (the budget is a process flag), the first
// of which also runs 4b, 4d and 5; 4c and 6 on a cluster each at the first budget. Run it with `make bench`;
// docs/benchmarks.md explains the method and records the latest run.
package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

const (
	noControllers = "--controllers="
	dryRunPlugin  = "TAppPodTemplateDryRun"
)

// The benchmark client's rate limit: high enough never to be the limit, the same for every path.
const (
	clientQPS   = 5000
	clientBurst = 10000
)

type options struct {
	toolsDir, serverBinary, outDir string
	scale                          float64
	sections                       map[string]bool
	// budgets are the controllers' client rate limits of sections 3 and 4, one workloads cluster each.
	budgets           []Budget
	controllerWorkers int
	listOps           int
	admissionOps      int
	pool5Ops          int
	profileSeconds    int
	listDuration      time.Duration
	repeats           int
	// rounds is how many times sections 3 and 4 run every kind.
	rounds          int
	timeout         time.Duration
	command         string
	extraServerArgs []string
}

type bench struct {
	opts    options
	res     *Results
	cluster *localcluster.Cluster
	// clusterTag names the current workloads cluster in profile file names and errors: its budget, and the
	// variant if any.
	clusterTag string
	// createAudit is the audit log of the pod creates of the current workloads cluster (createAuditPolicy).
	createAudit string
	// round is the round of sections 3 and 4 being run, from 0 (profiles are taken in the first only).
	round int
	// profiling counts the CPU profiles being taken.
	profiling sync.WaitGroup
	// clientConfig is the admin through kube-apiserver with the benchmark's rate limit and JSON.
	clientConfig *rest.Config
	kube         kubernetes.Interface
	// watchKube serves the pod watches that time the workloads (watchConfig).
	watchKube kubernetes.Interface
	dyn       dynamic.Interface
}

// Main parses the command line (flag.CommandLine), runs the benchmark or renders a results.json, and
// returns the process's exit code.
func Main() int {
	var opts options
	var sections string
	var budgets string
	var qps float64
	var burst int
	flag.StringVar(&opts.toolsDir, "tools-dir", "", "directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok (hack/build-tools.sh)")
	flag.StringVar(&opts.serverBinary, "server-binary", "bin/tapp-apiserver", "the tapp-apiserver binary")
	flag.StringVar(&opts.outDir, "out", "_output/bench", "where results.json, results.md and the clusters' files go")
	flag.Float64Var(&opts.scale, "scale", 1, "multiplies every count (operations, objects, pods, pools); 1 is the full run")
	flag.StringVar(&sections, "sections", "memory,api,admission,workloads,rollout,resize,claims,fanout,rollout-modelled,growth", "sections to run")
	flag.StringVar(&budgets, "budgets", "100/200,2000/2500", "client QPS/burst of tapp-apiserver's controllers, kube-controller-manager and the bare client: sections 3 and 4 run at each, on a cluster each; the first is also the budget of 4b, 4c, 4d and 5")
	flag.Float64Var(&qps, "controller-qps", 0, "with --controller-burst, a single budget (overrides --budgets)")
	flag.IntVar(&burst, "controller-burst", 0, "see --controller-qps")
	flag.IntVar(&opts.controllerWorkers, "controller-workers", 5, "tapp-apiserver --controller-workers (kube-controller-manager's concurrent syncs default to 5)")
	flag.IntVar(&opts.listOps, "list-ops", 100, "lists per list cell (each returns 1000 objects at scale 1)")
	flag.IntVar(&opts.pool5Ops, "pool5-ops", 1000, "operations per cell of the pool5 shape (the tutorial shape always does 2000)")
	flag.DurationVar(&opts.listDuration, "list-duration", 15*time.Second, "no list of a list cell starts after this")
	flag.IntVar(&opts.profileSeconds, "profile", 0, "seconds of CPU profile to take of kube-apiserver at the start of every kind's scale-up and rolling update, and of tapp-apiserver during TApp's, at each budget (0: none); written to <out>/profiles")
	flag.IntVar(&opts.admissionOps, "admission-ops", 1000, "creates per cell through the shipped admission chain (section 1b)")
	flag.IntVar(&opts.repeats, "repeats", 3, "repeats of the fan-out variants")
	flag.IntVar(&opts.rounds, "rounds", 3, "rounds of sections 3 and 4: every kind runs this many times, the kinds taking turns, and is reported by its median round")
	flag.DurationVar(&opts.timeout, "timeout", 150*time.Minute, "bound of the whole run")
	flag.StringVar(&opts.command, "command", "", "the command to record (make bench sets it)")
	var extra string
	flag.StringVar(&extra, "server-args", "", "extra tapp-apiserver flags for both clusters, comma-separated (diagnostics; recorded in the results)")
	render := flag.String("render", "", "only render this results.json as markdown on standard output")
	flag.Parse()
	if *render != "" {
		data, err := os.ReadFile(*render)
		if err == nil {
			var res Results
			if err = json.Unmarshal(data, &res); err == nil {
				fmt.Print(renderMarkdown(&res))
				return 0
			}
		}
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	if qps > 0 || burst > 0 {
		budgets = fmt.Sprintf("%g/%d", qps, burst)
	}
	var err error
	if opts.budgets, err = parseBudgets(budgets); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 2
	}
	if extra != "" {
		opts.extraServerArgs = strings.Split(extra, ",")
	}
	opts.sections = map[string]bool{}
	for _, s := range strings.Split(sections, ",") {
		opts.sections[strings.TrimSpace(s)] = true
	}
	if opts.toolsDir == "" {
		fmt.Fprintln(os.Stderr, "bench: --tools-dir is required (the directory printed by hack/build-tools.sh); run `make bench`")
		return 2
	}
	if opts.command == "" {
		opts.command = strings.Join(os.Args, " ")
	}
	if err := run(opts); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func logf(format string, args ...interface{}) {
	fmt.Printf("[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (b *bench) logf(format string, args ...interface{}) { logf(format, args...) }

// fail records a problem that does not stop the run.
func (b *bench) fail(format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	b.res.Errors = append(b.res.Errors, msg)
	logf("ERROR %s", msg)
}

// count scales n, never below min.
func (b *bench) count(n, min int) int {
	v := int(float64(n)*b.opts.scale + 0.5)
	if v < min {
		return min
	}
	return v
}

func run(opts options) error {
	started := time.Now()
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, opts.timeout)
	defer cancelTimeout()
	for _, p := range []*string{&opts.toolsDir, &opts.serverBinary, &opts.outDir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if err := os.MkdirAll(opts.outDir, 0o755); err != nil {
		return err
	}
	primary := opts.budgets[0]
	serverArgs := []string{fmt.Sprintf("--controller-workers=%d", opts.controllerWorkers)}
	serverArgs = append(serverArgs, opts.extraServerArgs...)
	// The API and memory cluster: no controllers (the CRD has none), and without the TAppPodTemplateDryRun
	// admission plugin, whose cost section 1b measures on its own (see docs/benchmarks.md).
	apiServerArgs := []string{noControllers, "--disable-admission-plugins=" + dryRunPlugin}
	kubeAPIServerArgs := []string{"--feature-gates=MaxUnavailableStatefulSet=true"}
	controllerManagerArgs := []string{"--feature-gates=MaxUnavailableStatefulSet=true"}
	// The scheduler binds every pod of every kind: it must not be what the comparison measures.
	schedulerArgs := []string{"--kube-api-qps=1000", "--kube-api-burst=2000"}
	res := &Results{
		SchemaVersion: 2,
		Command:       opts.command,
		Args:          os.Args[1:],
		StartedAt:     started.UTC().Format(time.RFC3339),
		Machine:       machineInfo(),
		Scale:         opts.scale,
		Settings: Settings{
			ClientQPS: clientQPS, ClientBurst: clientBurst,
			Budgets: opts.budgets, ControllerWorkers: opts.controllerWorkers, Rounds: opts.rounds,
			ServerArgs: serverArgs, APIServerArgs: apiServerArgs,
			KubeAPIServerArgs: kubeAPIServerArgs, ControllerManagerArgs: controllerManagerArgs, SchedulerArgs: schedulerArgs,
			Nodes: 3,
		},
	}
	b := &bench{opts: opts, res: res}
	stopLoad := sampleLoad(&res.Machine.LoadAverageMax)
	defer stopLoad()
	logf("machine: %d CPUs (%s), %s memory, load %.2f; scale %g", res.Machine.CPUs, res.Machine.CPUModel, mib(res.Machine.MemoryBytes), res.Machine.LoadAverage1m, opts.scale)

	base := localcluster.Config{
		ToolsDir: opts.toolsDir, ServerBinary: opts.serverBinary, Nodes: 3,
		KubeAPIServerArgs: kubeAPIServerArgs, SchedulerArgs: schedulerArgs,
		Log: func(format string, args ...interface{}) { logf("cluster: "+format, args...) },
	}
	// atBudget is base with tapp-apiserver's extra flags and both controller processes at budget.
	atBudget := func(budget Budget, extra ...string) localcluster.Config {
		cfg := base
		cfg.ServerArgs = append(append(append([]string{}, serverArgs...), budget.serverArgs()...), extra...)
		cfg.ControllerManagerArgs = append(append([]string{}, controllerManagerArgs...), budget.controllerManagerArgs()...)
		return cfg
	}

	if opts.sections["memory"] || opts.sections["api"] {
		cfg := atBudget(primary, apiServerArgs...)
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-api")
		if err := b.withCluster(ctx, cfg, b.apiSections); err != nil {
			b.fail("API and memory sections: %v", err)
		}
	}
	if opts.sections["admission"] {
		cfg := atBudget(primary, noControllers)
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-admission")
		if err := b.withCluster(ctx, cfg, b.admissionSection); err != nil {
			b.fail("admission section: %v", err)
		}
	}
	for i, budget := range opts.budgets {
		first := i == 0
		if !opts.sections["workloads"] && !opts.sections["rollout"] && !(first && (opts.sections["resize"] || opts.sections["claims"] || opts.sections["fanout"])) {
			continue
		}
		cfg := atBudget(budget)
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-workloads-"+budget.slug())
		if err := b.auditCreates(&cfg); err != nil {
			return err
		}
		b.clusterTag = budget.slug()
		if err := b.withCluster(ctx, cfg, func(ctx context.Context) error { return b.workloadSections(ctx, budget, first) }); err != nil {
			b.fail("workload sections at %s: %v", budget, err)
		}
	}
	if opts.sections["growth"] {
		cfg := atBudget(primary)
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-growth")
		if err := b.auditCreates(&cfg); err != nil {
			return err
		}
		cfg.Nodes = growthNodes(b.count(growthLarge, 100))
		b.clusterTag = "growth-" + primary.slug()
		if err := b.withCluster(ctx, cfg, func(ctx context.Context) error { return b.growthSection(ctx, primary) }); err != nil {
			b.fail("growth: %v", err)
		}
	}
	if opts.sections["rollout-modelled"] {
		cost := localcluster.PublishedNodeCost()
		cfg := atBudget(primary)
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-rollout-modelled")
		if err := b.auditCreates(&cfg); err != nil {
			return err
		}
		cfg.NodeCost = &cost
		b.clusterTag = "modelled-" + primary.slug()
		if err := b.withCluster(ctx, cfg, func(ctx context.Context) error { return b.modelledRollout(ctx, cost, primary) }); err != nil {
			b.fail("rollout under the modelled node cost: %v", err)
		}
	}
	stopLoad()
	res.Targets = evaluateTargets(res)
	res.DurationSeconds = round(time.Since(started).Seconds(), 1)
	if err := writeResults(opts.outDir, res); err != nil {
		return err
	}
	logf("done in %s: %s and %s", time.Since(started).Round(time.Second), filepath.Join(opts.outDir, "results.json"), filepath.Join(opts.outDir, "results.md"))
	for _, t := range res.Targets {
		logf("target %-62s %-10s value %8.3f %-6s met=%v", t.Name, t.Goal, t.Value, t.Unit, t.Met)
	}
	return nil
}

// auditCreates has the kube-apiserver of cfg log its pod creates (createAuditPolicy) into cfg.WorkDir, and
// makes that log b.createAudit.
func (b *bench) auditCreates(cfg *localcluster.Config) error {
	b.createAudit = filepath.Join(cfg.WorkDir, "pod-creates-audit.log")
	args, err := createAuditArgs(b.opts.outDir, b.createAudit)
	if err != nil {
		return err
	}
	cfg.KubeAPIServerArgs = append(append([]string{}, cfg.KubeAPIServerArgs...), args...)
	return nil
}

// withCluster starts a fresh local cluster in cfg.WorkDir, runs fn and stops the cluster.
func (b *bench) withCluster(ctx context.Context, cfg localcluster.Config, fn func(context.Context) error) (err error) {
	if err := os.RemoveAll(cfg.WorkDir); err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	start := time.Now()
	cluster, err := localcluster.Start(startCtx, cfg)
	if err != nil {
		return fmt.Errorf("starting the local cluster: %w (logs in %s)", err, filepath.Join(cfg.WorkDir, "logs"))
	}
	logf("local cluster ready in %s (%s)", time.Since(start).Round(time.Millisecond), cfg.WorkDir)
	defer func() {
		cluster.Stop()
		// Keep the logs, not the data: the etcd directories of a full run take about a gigabyte.
		_ = os.RemoveAll(filepath.Join(cfg.WorkDir, "etcd"))
		_ = os.RemoveAll(filepath.Join(cfg.WorkDir, "tapp-apiserver", "etcd"))
		logf("local cluster stopped; its logs are in %s", filepath.Join(cfg.WorkDir, "logs"))
	}()
	defer func() {
		// After the load as before it (localcluster.Start checks once): nothing listens outside loopback.
		if err == nil {
			err = cluster.CheckLoopbackOnly()
		}
	}()
	b.cluster = cluster
	b.clientConfig = benchConfig(cluster.AdminConfig)
	if b.kube, err = kubernetes.NewForConfig(b.clientConfig); err != nil {
		return err
	}
	if b.watchKube, err = kubernetes.NewForConfig(watchConfig(cluster.AdminConfig)); err != nil {
		return err
	}
	if b.dyn, err = dynamic.NewForConfig(b.clientConfig); err != nil {
		return err
	}
	return fn(ctx)
}

// benchConfig is a client configuration with the benchmark's rate limit, speaking JSON (the only
// encoding of CRDs, and what tapp-apiserver serves).
func benchConfig(base *rest.Config) *rest.Config {
	c := rest.CopyConfig(base)
	c.QPS, c.Burst = clientQPS, clientBurst
	c.ContentType = "application/json"
	c.AcceptContentTypes = "application/json"
	c.UserAgent = "tapp-bench"
	return c
}

// watchConfig is the configuration of the pod watches that time the workloads: protobuf, as the
// controllers' informers, and a connection of its own (client-go shares one connection between the clients
// of equal transport settings; DisableCompression is one of them), so that the simulator's writes, which
// share the admin's, do not delay the events a measurement waits for.
func watchConfig(base *rest.Config) *rest.Config {
	c := rest.CopyConfig(base)
	c.UserAgent = "tapp-bench-watch"
	c.DisableCompression = true
	return c
}

// directConfig reaches tapp-apiserver itself, with the admin's client certificate.
func directConfig(cluster *localcluster.Cluster, base *rest.Config) *rest.Config {
	c := rest.CopyConfig(base)
	c.Host = cluster.ServerURL
	c.TLSClientConfig.CAFile = cluster.ServerCAFile
	c.TLSClientConfig.CAData = nil
	return c
}

// protobufConfig is c speaking protobuf both ways (the generated clientset's watch asks for protobuf
// frames with it).
func protobufConfig(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	return c
}

// setupPaths installs the CRD and returns the paths (CRD, aggregated, direct, and with withProtobuf the
// aggregated and direct paths in protobuf) and the direct config.
func (b *bench) setupPaths(ctx context.Context, withProtobuf bool) ([]apiPath, *crdSchema, *rest.Config, error) {
	schema, err := tappStructuralSchema()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("converting the TApp OpenAPI definition: %w", err)
	}
	direct := directConfig(b.cluster, b.clientConfig)
	aggregatedClient, err := versioned.NewForConfig(b.clientConfig)
	if err != nil {
		return nil, nil, nil, err
	}
	directClient, err := versioned.NewForConfig(direct)
	if err != nil {
		return nil, nil, nil, err
	}
	crdClient, err := crdTAppClient(b.clientConfig)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := installCRD(ctx, b.dyn, tappCRD(schema), crdClient.TApps("default")); err != nil {
		return nil, nil, nil, err
	}
	logf("CRD tapps.%s installed (%d fields preserved whole: %s)", crdGroup, len(schema.Preserved), strings.Join(schema.Preserved, ", "))
	crdWatchers := watcherSource{server: b.clientConfig, group: crdGroup}
	tappWatchers := watcherSource{server: direct, group: tappGroup}
	paths := []apiPath{
		{name: pathCRD, client: crdClient, watchers: crdWatchers},
		{name: pathAggregated, client: aggregatedClient.TKEStackAppsV1(), watchers: tappWatchers},
		{name: pathDirect, client: directClient.TKEStackAppsV1(), watchers: tappWatchers},
	}
	if withProtobuf {
		for _, p := range []struct {
			name string
			cfg  *rest.Config
		}{{pathAggregatedProtobuf, b.clientConfig}, {pathDirectProtobuf, direct}} {
			client, err := versioned.NewForConfig(protobufConfig(p.cfg))
			if err != nil {
				return nil, nil, nil, err
			}
			paths = append(paths, apiPath{name: p.name, client: client.TKEStackAppsV1(), watchers: tappWatchers})
		}
	}
	return paths, schema, direct, nil
}

// apiSections runs sections 2 and 1 (memory first, on fresh servers).
func (b *bench) apiSections(ctx context.Context) error {
	paths, schema, direct, err := b.setupPaths(ctx, b.opts.sections["api"])
	if err != nil {
		return err
	}
	if b.opts.sections["memory"] {
		mem, err := b.runMemory(ctx, paths[2], paths[0], direct, b.clientConfig)
		if err != nil {
			b.fail("memory: %v", err)
		}
		b.res.Memory = mem
	}
	if b.opts.sections["api"] {
		api, err := b.runAPIPath(ctx, paths, schema, apiPlan{
			ops: b.count(2000, 50), pool5Ops: b.count(b.opts.pool5Ops, 50),
			lists: b.count(b.opts.listOps, 5), listObjects: b.count(1000, 10), listDuration: b.opts.listDuration,
			warmups: 20, verbs: map[string]bool{"create": true, "get": true, "update": true, "list": true}, storedBytes: true})
		if err != nil {
			b.fail("API path: %v", err)
		}
		b.res.APIPath = api
	}
	return nil
}

// dryRunPodRounds is how many TApps' dry-run pods section 1b sends per shape and concurrency on their own.
const dryRunPodRounds = 2000

// admissionSection runs creates through the shipped admission chain (section 1b).
func (b *bench) admissionSection(ctx context.Context) error {
	paths, schema, _, err := b.setupPaths(ctx, false)
	if err != nil {
		return err
	}
	res, err := b.runAPIPath(ctx, paths, schema, apiPlan{ops: b.count(b.opts.admissionOps, 10), warmups: 3,
		verbs: map[string]bool{"create": true, verbCreateNewTemplate: true}, settle: 4 * time.Second})
	if err != nil {
		b.fail("API path with the shipped admission chain: %v", err)
	}
	if res != nil {
		cells, err := b.runDryRunPods(ctx, b.count(dryRunPodRounds, 20))
		if err != nil {
			b.fail("dry-run pod creates: %v", err)
		}
		res.Cells = append(res.Cells, cells...)
		sts, err := b.runStatefulSetCreates(ctx, b.count(b.opts.admissionOps, 10))
		if err != nil {
			b.fail("StatefulSet creates: %v", err)
		}
		res.Cells = append(res.Cells, sts...)
	}
	b.res.Admission = res
	return nil
}

// workloadSections runs sections 3 and 4 at the cluster's budget, and on the first budget's cluster 4b, 4d
// and 5.
func (b *bench) workloadSections(ctx context.Context, budget Budget, first bool) error {
	if b.opts.sections["workloads"] || b.opts.sections["rollout"] {
		kinds := []string{kindTApp, kindStatefulSet, kindDeployment, kindLimit, kindLimitGate}
		ups, downs, rolls, err := b.runWorkloads(ctx, kinds, b.opts.sections["rollout"], budget, b.opts.rounds)
		if err != nil {
			b.fail("workloads at %s: %v", budget, err)
		}
		b.res.ScaleUp = append(b.res.ScaleUp, ups...)
		b.res.ScaleDown = append(b.res.ScaleDown, downs...)
		b.res.RollingUpdate = append(b.res.RollingUpdate, rolls...)
	}
	if !first {
		return nil
	}
	if b.opts.sections["resize"] {
		runs, err := b.runResize(ctx)
		if err != nil {
			b.fail("resize: %v", err)
		}
		b.res.Resize = runs
	}
	if b.opts.sections["claims"] {
		runs, err := b.runClaimExpansion(ctx, budget)
		if err != nil {
			b.fail("claim expansion: %v", err)
		}
		b.res.ClaimExpansion = runs
	}
	if b.opts.sections["fanout"] {
		registered := false
		for _, name := range knownControllers(b.opts.serverBinary) {
			if name == "yurtappdaemon" {
				registered = true
			}
		}
		fan, err := b.runFanOut(ctx, registered)
		if err != nil {
			b.fail("fan-out: %v", err)
		}
		b.res.FanOut = fan
		yasRegistered := false
		for _, name := range knownControllers(b.opts.serverBinary) {
			yasRegistered = yasRegistered || name == "yurtappset"
		}
		yas, err := b.runYASFanOut(ctx, yasRegistered)
		if err != nil {
			b.fail("YurtAppSet fan-out: %v", err)
		}
		b.res.YASFanOut = yas
	}
	return nil
}

// modelledRollout is section 4c: TApp and StatefulSet scaled to N and rolled to a new image on a cluster
// whose pod simulator models cost; the scale-ups are recorded too, the scale-downs are not.
func (b *bench) modelledRollout(ctx context.Context, cost localcluster.NodeCostModel, budget Budget) error {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	m := &ModelledRollout{NodeCost: NodeCostMs{
		SandboxCreate: ms(cost.SandboxCreate), ImagePull: ms(cost.ImagePull),
		ContainerStart: ms(cost.ContainerStart), VolumeAttach: ms(cost.VolumeAttach),
	}}
	b.res.RolloutModelled = m
	ups, _, rolls, err := b.runWorkloads(ctx, []string{kindTApp, kindStatefulSet}, true, budget, 1)
	m.ScaleUp, m.RollingUpdate = ups, rolls
	return err
}

// parseBudgets parses "qps/burst,qps/burst".
func parseBudgets(s string) ([]Budget, error) {
	var out []Budget
	for _, part := range strings.Split(s, ",") {
		var b Budget
		if _, err := fmt.Sscanf(strings.TrimSpace(part), "%g/%d", &b.QPS, &b.Burst); err != nil || b.QPS <= 0 || b.Burst <= 0 {
			return nil, fmt.Errorf("--budgets: %q is not qps/burst (both positive)", part)
		}
		out = append(out, b)
	}
	return out, nil
}

// serverArgs are tapp-apiserver's flags of the budget.
func (b Budget) serverArgs() []string {
	return []string{fmt.Sprintf("--controller-kube-api-qps=%g", b.QPS), fmt.Sprintf("--controller-kube-api-burst=%d", b.Burst)}
}

// controllerManagerArgs are kube-controller-manager's flags of the budget.
func (b Budget) controllerManagerArgs() []string {
	return []string{fmt.Sprintf("--kube-api-qps=%g", b.QPS), fmt.Sprintf("--kube-api-burst=%d", b.Burst)}
}

// slug names the budget in file names: "100-200".
func (b Budget) slug() string { return fmt.Sprintf("%g-%d", b.QPS, b.Burst) }

func writeResults(dir string, res *Results) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(renderMarkdown(res)), 0o644)
}
