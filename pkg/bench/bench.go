// Package bench measures tapp-apiserver on the local cluster of pkg/localcluster (the cluster of
// hack/local-up.sh and the end-to-end suite) and writes _output/bench/results.json and results.md:
//
//  1. API path: create, get, update, list and watch latency of the same TApp through kube-apiserver's
//     aggregator, directly to tapp-apiserver, and as a CRD of the same schema on the same kube-apiserver;
//  2. memory: tapp-apiserver's resident set holding 10k TApps against kube-apiserver's growth holding 10k
//     objects of the CRD;
//  3. scale-up 0→1000 Ready pods and 1000→0: TApp, StatefulSet (Parallel), Deployment and a bare client
//     at the controllers' client rate limit;
//  4. rolling image update of 1000 instances at maxUnavailable 25%: TApp in place, StatefulSet, Deployment;
//     4b. ("resize") a change of the container resources of 1000 instances: TApp in place, StatefulSet;
//  5. YurtAppDaemon fan-out over 100 NodePools.
//
// Sections 1-2 run on a cluster whose tapp-apiserver runs no controllers (the CRD has none either);
// sections 3-5 on a second, fresh cluster with the controllers. Run it with `make bench`; docs/benchmarks.md
// explains the method and records the latest run.
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
	controllerQPS                  float32
	controllerBurst                int
	controllerWorkers              int
	listOps                        int
	admissionOps                   int
	pool5Ops                       int
	profileSeconds                 int
	listDuration                   time.Duration
	repeats                        int
	timeout                        time.Duration
	command                        string
	extraServerArgs                []string
}

type bench struct {
	opts    options
	res     *Results
	cluster *localcluster.Cluster
	// clientConfig is the admin through kube-apiserver with the benchmark's rate limit and JSON.
	clientConfig *rest.Config
	kube         kubernetes.Interface
	dyn          dynamic.Interface
}

// Main parses the command line (flag.CommandLine), runs the benchmark or renders a results.json, and
// returns the process's exit code.
func Main() int {
	var opts options
	var sections string
	var qps float64
	flag.StringVar(&opts.toolsDir, "tools-dir", "", "directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok (hack/build-tools.sh)")
	flag.StringVar(&opts.serverBinary, "server-binary", "bin/tapp-apiserver", "the tapp-apiserver binary")
	flag.StringVar(&opts.outDir, "out", "_output/bench", "where results.json, results.md and the clusters' files go")
	flag.Float64Var(&opts.scale, "scale", 1, "multiplies every count (operations, objects, pods, pools); 1 is the full run")
	flag.StringVar(&sections, "sections", "memory,api,admission,workloads,rollout,resize,fanout", "sections to run")
	flag.Float64Var(&qps, "controller-qps", 100, "client QPS of tapp-apiserver's controllers, kube-controller-manager and the bare client")
	flag.IntVar(&opts.controllerBurst, "controller-burst", 200, "client burst of the same")
	flag.IntVar(&opts.controllerWorkers, "controller-workers", 5, "tapp-apiserver --controller-workers (kube-controller-manager's concurrent syncs default to 5)")
	flag.IntVar(&opts.listOps, "list-ops", 100, "lists per list cell (each returns 1000 objects at scale 1)")
	flag.IntVar(&opts.pool5Ops, "pool5-ops", 1000, "operations per cell of the pool5 shape (the tutorial shape always does 2000)")
	flag.DurationVar(&opts.listDuration, "list-duration", 15*time.Second, "no list of a list cell starts after this")
	flag.IntVar(&opts.profileSeconds, "profile", 0, "seconds of CPU profile of tapp-apiserver to take during the TApp scale-up and rolling update (0: none); written to <out>/profiles")
	flag.IntVar(&opts.admissionOps, "admission-ops", 20, "creates per cell through the shipped admission chain (section 1b)")
	flag.IntVar(&opts.repeats, "repeats", 3, "repeats of the fan-out variants")
	flag.DurationVar(&opts.timeout, "timeout", 40*time.Minute, "bound of the whole run")
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
	opts.controllerQPS = float32(qps)
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
	serverArgs := []string{
		fmt.Sprintf("--controller-kube-api-qps=%g", opts.controllerQPS),
		fmt.Sprintf("--controller-kube-api-burst=%d", opts.controllerBurst),
		fmt.Sprintf("--controller-workers=%d", opts.controllerWorkers),
	}
	serverArgs = append(serverArgs, opts.extraServerArgs...)
	// The API and memory cluster: no controllers (the CRD has none), and without the TAppPodTemplateDryRun
	// admission plugin, whose cost section 1b measures on its own (see docs/benchmarks.md).
	apiServerArgs := []string{noControllers, "--disable-admission-plugins=" + dryRunPlugin}
	kubeAPIServerArgs := []string{"--feature-gates=MaxUnavailableStatefulSet=true"}
	controllerManagerArgs := []string{
		"--feature-gates=MaxUnavailableStatefulSet=true",
		fmt.Sprintf("--kube-api-qps=%g", opts.controllerQPS),
		fmt.Sprintf("--kube-api-burst=%d", opts.controllerBurst),
	}
	// The scheduler binds every pod of every kind: it must not be what the comparison measures.
	schedulerArgs := []string{"--kube-api-qps=1000", "--kube-api-burst=2000"}
	res := &Results{
		SchemaVersion: 1,
		Command:       opts.command,
		Args:          os.Args[1:],
		StartedAt:     started.UTC().Format(time.RFC3339),
		Machine:       machineInfo(),
		Scale:         opts.scale,
		Settings: Settings{
			ClientQPS: clientQPS, ClientBurst: clientBurst,
			ControllerQPS: opts.controllerQPS, ControllerBurst: opts.controllerBurst, ControllerWorkers: opts.controllerWorkers,
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
		KubeAPIServerArgs: kubeAPIServerArgs, ControllerManagerArgs: controllerManagerArgs, SchedulerArgs: schedulerArgs,
		Log: func(format string, args ...interface{}) { logf("cluster: "+format, args...) },
	}

	if opts.sections["memory"] || opts.sections["api"] {
		cfg := base
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-api")
		cfg.ServerArgs = append(append([]string{}, serverArgs...), apiServerArgs...)
		if err := b.withCluster(ctx, cfg, b.apiSections); err != nil {
			b.fail("API and memory sections: %v", err)
		}
	}
	if opts.sections["admission"] {
		cfg := base
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-admission")
		cfg.ServerArgs = append(append([]string{}, serverArgs...), noControllers)
		if err := b.withCluster(ctx, cfg, b.admissionSection); err != nil {
			b.fail("admission section: %v", err)
		}
	}
	if opts.sections["workloads"] || opts.sections["rollout"] || opts.sections["resize"] || opts.sections["fanout"] {
		cfg := base
		cfg.WorkDir = filepath.Join(opts.outDir, "cluster-workloads")
		cfg.ServerArgs = serverArgs
		if err := b.withCluster(ctx, cfg, b.workloadSections); err != nil {
			b.fail("workload sections: %v", err)
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

// withCluster starts a fresh local cluster in cfg.WorkDir, runs fn and stops the cluster.
func (b *bench) withCluster(ctx context.Context, cfg localcluster.Config, fn func(context.Context) error) error {
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
	b.cluster = cluster
	b.clientConfig = benchConfig(cluster.AdminConfig)
	if b.kube, err = kubernetes.NewForConfig(b.clientConfig); err != nil {
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

// directConfig reaches tapp-apiserver itself, with the admin's client certificate.
func directConfig(cluster *localcluster.Cluster, base *rest.Config) *rest.Config {
	c := rest.CopyConfig(base)
	c.Host = cluster.ServerURL
	c.TLSClientConfig.CAFile = cluster.ServerCAFile
	c.TLSClientConfig.CAData = nil
	return c
}

// setupPaths installs the CRD and returns the three paths (CRD, aggregated, direct) and the direct config.
func (b *bench) setupPaths(ctx context.Context) ([]apiPath, *crdSchema, *rest.Config, error) {
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
	paths := []apiPath{
		{name: pathCRD, client: crdClient},
		{name: pathAggregated, client: aggregatedClient.TKEStackAppsV1()},
		{name: pathDirect, client: directClient.TKEStackAppsV1()},
	}
	return paths, schema, direct, nil
}

// apiSections runs sections 2 and 1 (memory first, on fresh servers).
func (b *bench) apiSections(ctx context.Context) error {
	paths, schema, direct, err := b.setupPaths(ctx)
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
			warmups: 20, verbs: map[string]bool{"create": true, "get": true, "update": true, "list": true}})
		if err != nil {
			b.fail("API path: %v", err)
		}
		b.res.APIPath = api
	}
	return nil
}

// admissionSection runs creates through the shipped admission chain (section 1b).
func (b *bench) admissionSection(ctx context.Context) error {
	paths, schema, _, err := b.setupPaths(ctx)
	if err != nil {
		return err
	}
	res, err := b.runAPIPath(ctx, paths, schema, apiPlan{ops: b.count(b.opts.admissionOps, 10), warmups: 3, verbs: map[string]bool{"create": true}})
	if err != nil {
		b.fail("API path with the shipped admission chain: %v", err)
	}
	if res != nil {
		cells, err := b.runDryRunPods(ctx, b.count(10*b.opts.admissionOps, 20))
		if err != nil {
			b.fail("dry-run pod creates: %v", err)
		}
		res.Cells = append(res.Cells, cells...)
	}
	b.res.Admission = res
	return nil
}

// workloadSections runs sections 3, 4, 4b and 5.
func (b *bench) workloadSections(ctx context.Context) error {
	if b.opts.sections["workloads"] || b.opts.sections["rollout"] {
		ups, downs, rolls, err := b.runWorkloads(ctx, b.opts.sections["rollout"])
		if err != nil {
			b.fail("workloads: %v", err)
		}
		b.res.ScaleUp, b.res.ScaleDown, b.res.RollingUpdate = ups, downs, rolls
	}
	if b.opts.sections["resize"] {
		runs, err := b.runResize(ctx)
		if err != nil {
			b.fail("resize: %v", err)
		}
		b.res.Resize = runs
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
	}
	return nil
}

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
