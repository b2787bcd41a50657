package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	yurtv1beta1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// ScenarioSoak is the soak: a long mixed load on the single-replica form while tapp-apiserver's process is
// sampled.
const ScenarioSoak = "soak"

// soakProcess is the name of the process the soak samples.
const soakProcess = "tapp-apiserver"

// soakFleetSize is the number of instances of each TApp of the fleet.
const soakFleetSize = 10

// soakManagers are the field managers that server-side apply to the fleet.
var soakManagers = []string{"soak-apply-a", "soak-apply-b", "soak-apply-c"}

// soakLoad holds the load's clients and counts.
type soakLoad struct {
	c     *clients
	ns    string
	fleet []string
	mu    sync.Mutex
	reqs  map[string]*RequestCount
	// watch figures, under mu
	watchesOpened, watchesTimedUp, watchesStopped, watchEvents int
}

// do records the outcome of one request of kind.
func (l *soakLoad) do(kind string, apply bool, err error) Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.reqs[kind]
	if c == nil {
		c = &RequestCount{}
		l.reqs[kind] = c
	}
	return c.record(err, apply)
}

func (l *soakLoad) add(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// serverConfig reaches tapp-apiserver itself, bypassing the aggregator, with the admin's client certificate.
func serverConfig(cluster Cluster, admin *rest.Config) (*rest.Config, error) {
	lc, ok := cluster.(*localcluster.Cluster)
	if !ok || lc.ServerURL == "" {
		return nil, fmt.Errorf("the cluster does not say where tapp-apiserver serves")
	}
	cfg := rest.CopyConfig(admin)
	cfg.Host = lc.ServerURL
	cfg.TLSClientConfig.CAFile = lc.ServerCAFile
	cfg.TLSClientConfig.CAData = nil
	cfg.Timeout = 60 * time.Second
	return cfg, nil
}

// serverProbe reads tapp-apiserver's figures.
type serverProbe struct {
	cluster Cluster
	rest    rest.Interface
}

func newServerProbe(cluster Cluster, admin *rest.Config) (*serverProbe, error) {
	cfg, err := serverConfig(cluster, admin)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &serverProbe{cluster: cluster, rest: client.Discovery().RESTClient()}, nil
}

func (p *serverProbe) get(ctx context.Context, path string) (string, error) {
	body, err := p.rest.Get().RequestURI(path).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", path, err)
	}
	return string(body), nil
}

// sample reads the process's figures: a garbage collection first (/debug/pprof/heap?gc=1), so that the heap
// is what is live, then /metrics, then /proc.
func (p *serverProbe) sample(ctx context.Context, label string, at time.Duration, load bool) (SoakSample, error) {
	s := SoakSample{Label: label, At: at, Load: load, PID: p.cluster.PID(soakProcess)}
	if s.PID == 0 {
		return s, fmt.Errorf("%s is not running", soakProcess)
	}
	if _, err := p.get(ctx, "/debug/pprof/heap?gc=1"); err != nil {
		return s, err
	}
	metrics, err := p.get(ctx, "/metrics")
	if err != nil {
		return s, err
	}
	values := ParseMetrics(metrics, "go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes", "go_goroutines")
	for _, name := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes", "go_goroutines"} {
		if _, ok := values[name]; !ok {
			return s, fmt.Errorf("no %s in /metrics", name)
		}
	}
	s.HeapInuse, s.HeapAlloc, s.Goroutines = int64(values["go_memstats_heap_inuse_bytes"]), int64(values["go_memstats_heap_alloc_bytes"]), int64(values["go_goroutines"])
	if s.RSS, s.RSSAnon, s.RSSFile, err = ProcRSS(s.PID); err != nil {
		return s, err
	}
	if s.FDs, err = ProcFDs(s.PID); err != nil {
		return s, err
	}
	return s, nil
}

// serverCodes are tapp-apiserver's counts of its answers so far, by class.
func (p *serverProbe) serverCodes(ctx context.Context) (map[string]float64, error) {
	metrics, err := p.get(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	return RequestCodeClasses(metrics), nil
}

// ParseMetrics returns the values of the unlabelled samples names in a Prometheus text exposition.
func ParseMetrics(text string, names ...string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		for _, name := range names {
			if !strings.HasPrefix(line, name+" ") {
				continue
			}
			if v, err := strconv.ParseFloat(strings.TrimSpace(line[len(name)+1:]), 64); err == nil {
				out[name] = v
			}
		}
	}
	return out
}

// RequestCodeClasses sums apiserver_request_total of a Prometheus text exposition by the class of its code:
// "2xx", "409", "other 4xx", "5xx" (and "other" for anything else).
func RequestCodeClasses(text string) map[string]float64 {
	out := map[string]float64{}
	const prefix = "apiserver_request_total{"
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		end := strings.LastIndex(line, "}")
		if end < 0 {
			continue
		}
		code := ""
		for _, kv := range strings.Split(line[len(prefix):end], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok && k == "code" {
				code = strings.Trim(v, `"`)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		out[codeClass(code)] += v
	}
	return out
}

func codeClass(code string) string {
	switch {
	case code == "409":
		return "409"
	case strings.HasPrefix(code, "2") && len(code) == 3:
		return "2xx"
	case strings.HasPrefix(code, "4") && len(code) == 3:
		return "other 4xx"
	case strings.HasPrefix(code, "5") && len(code) == 3:
		return "5xx"
	}
	return "other"
}

// ProcRSS is VmRSS, RssAnon and RssFile of /proc/<pid>/status in bytes.
func ProcRSS(pid int) (rss, anon, file int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	values, err := ParseProcStatus(f, "VmRSS:", "RssAnon:", "RssFile:")
	if err != nil {
		return 0, 0, 0, err
	}
	if _, ok := values["VmRSS:"]; !ok {
		return 0, 0, 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return values["VmRSS:"], values["RssAnon:"], values["RssFile:"], nil
}

// ParseProcStatus returns the fields names (with their colon) of a /proc/<pid>/status, in bytes.
func ParseProcStatus(r io.Reader, names ...string) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[2] != "kB" {
			continue
		}
		for _, name := range names {
			if fields[0] == name {
				kb, err := strconv.ParseInt(fields[1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%s %q: %w", name, fields[1], err)
				}
				out[name] = kb * 1024
			}
		}
	}
	return out, sc.Err()
}

// ProcFDs is the number of entries of /proc/<pid>/fd.
func ProcFDs(pid int) (int64, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return int64(len(entries)), err
}

// runSoak creates the fleet, samples the server, runs the mixed load for opts.SoakDuration sampling every
// opts.SoakInterval, stops it, waits for the server to be quiet and the fleet to converge, and samples once
// more.
func runSoak(ctx context.Context, cluster Cluster, c *clients, opts Options, rng *rand.Rand) (*SoakResult, error) {
	started := time.Now()
	probe, err := newServerProbe(cluster, c.cfg)
	if err != nil {
		return nil, err
	}
	ns, err := newNamespace(ctx, c, "chaos-soak")
	if err != nil {
		return nil, err
	}
	fleet := opts.SoakInstances / soakFleetSize
	if fleet < 1 {
		fleet = 1
	}
	res := &SoakResult{
		Namespace: ns, Instances: fleet * soakFleetSize, Fleet: fleet,
		Duration: opts.SoakDuration, Interval: opts.SoakInterval, Warmup: opts.SoakWarmup,
		Bounds: opts.SoakBounds, Started: started,
	}
	if res.Bounds == (SoakBounds{}) {
		res.Bounds = DefaultSoakBounds()
	}
	opts.Log("soak in namespace %s: %d TApps of %d instances, %s of load, a sample every %s", ns, fleet, soakFleetSize, opts.SoakDuration, opts.SoakInterval)
	l := &soakLoad{c: c, ns: ns, reqs: map[string]*RequestCount{}}
	tapps := c.tapp.TKEStackAppsV1().TApps(ns)
	for i := 0; i < fleet; i++ {
		name := fmt.Sprintf("soak-%d", i)
		if err := createTApp(ctx, tapps, name, soakFleetSize, intstr.FromString("50%"), opts.PhaseTimeout); err != nil {
			return res, fmt.Errorf("creating %s: %w", name, err)
		}
		l.fleet = append(l.fleet, name)
	}
	if err := waitFleet(ctx, l, opts.PhaseTimeout); err != nil {
		return res, fmt.Errorf("the fleet did not become ready: %w", err)
	}
	opts.Log("soak: %d instances ready after %s", res.Instances, time.Since(started).Round(time.Second))

	start, err := probe.sample(ctx, "start", 0, false)
	if err != nil {
		return res, fmt.Errorf("sampling %s: %w", soakProcess, err)
	}
	res.Samples = append(res.Samples, start)
	opts.Log("soak sample %s", sampleLine(start))
	codesBefore, err := probe.serverCodes(ctx)
	if err != nil {
		return res, err
	}

	load, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	loadStart := time.Now()
	wait := l.start(load, rng)
	pid := start.PID
	takeSample := func(label string, at time.Duration, underLoad bool) error {
		s, err := probe.sample(ctx, label, at, underLoad)
		if s.PID != 0 && s.PID != pid {
			res.Restarts++
			pid = s.PID
		}
		if err != nil {
			return fmt.Errorf("sampling %s at %s: %w", soakProcess, label, err)
		}
		res.Samples = append(res.Samples, s)
		opts.Log("soak sample %s", sampleLine(s))
		return nil
	}
	var sampleErr error
	for next := opts.SoakInterval; next < opts.SoakDuration && sampleErr == nil; next += opts.SoakInterval {
		if !sleepUntil(ctx, loadStart.Add(next)) {
			break
		}
		sampleErr = takeSample(fmtAt(next), next, true)
	}
	if sampleErr == nil && sleepUntil(ctx, loadStart.Add(opts.SoakDuration)) {
		sampleErr = takeSample("end", opts.SoakDuration, true)
	}
	stopLoad()
	wait()
	codesAfter, codesErr := probe.serverCodes(ctx)
	res.Requests = l.reqs
	res.WatchesOpened, res.WatchesTimedUp, res.WatchesStopped, res.WatchEvents = l.watchesOpened, l.watchesTimedUp, l.watchesStopped, l.watchEvents
	if sampleErr != nil {
		return res, sampleErr
	}
	if codesErr != nil {
		return res, codesErr
	}
	res.ServerCodes = map[string]int{}
	for k, v := range codesAfter {
		if d := int(v - codesBefore[k] + 0.5); d > 0 {
			res.ServerCodes[k] = d
		}
	}
	t := res.Totals()
	opts.Log("soak: load stopped; %d requests, %d conflicts, %d apply conflicts, %d errors; %d watches", t.Sent, t.Conflicts, t.ApplyConflicts, t.Errors, res.WatchesOpened)

	// The fleet converges, and the server lets go of what the load held (watches, connections).
	if err := waitFleet(ctx, l, opts.PhaseTimeout); err != nil {
		res.Problem = err.Error()
	} else {
		res.Converged = true
	}
	stopped := time.Now()
	var after SoakSample
	for {
		after, err = probe.sample(ctx, "after", opts.SoakDuration, false)
		if err != nil {
			return res, fmt.Errorf("sampling %s after the load: %w", soakProcess, err)
		}
		if res.Bounds.QuietWithin(start, after) || time.Since(stopped) > soakQuietWait || ctx.Err() != nil {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if after.PID != pid {
		res.Restarts++
	}
	res.QuietAfter = time.Since(stopped)
	res.Samples = append(res.Samples, after)
	opts.Log("soak sample %s", sampleLine(after))

	_ = retry(ctx, time.Minute, func(ctx context.Context) error {
		return tapps.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	_ = c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	res.Took = time.Since(started)
	return res, nil
}

// soakQuietWait bounds the wait for the server to be quiet after the load.
const soakQuietWait = time.Minute

func sampleLine(s SoakSample) string {
	return fmt.Sprintf("%s (pid %d): RSS %s, heap %s, %d goroutines, %d open files", s.Label, s.PID,
		FigureRSS.format(float64(s.RSS)), FigureHeap.format(float64(s.HeapInuse)), s.Goroutines, s.FDs)
}

// fmtAt renders a time into the load as a sample label: "5m", "1m30s".
func fmtAt(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// sleepUntil sleeps until t or until ctx ends; it says whether t was reached.
func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}

// waitFleet waits until every TApp of the fleet has acted on its spec and every instance is ready and
// updated.
func waitFleet(ctx context.Context, l *soakLoad, timeout time.Duration) error {
	tapps := l.c.tapp.TKEStackAppsV1().TApps(l.ns)
	return retry(ctx, timeout, func(ctx context.Context) error {
		for _, name := range l.fleet {
			t, err := tapps.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			st := t.Status
			if st.ObservedGeneration < t.Generation || st.ReadyReplicas != t.Spec.Replicas || st.UpdatedReplicas != t.Spec.Replicas {
				return fmt.Errorf("%s: generation %d observed %d, %d replicas wanted, %d ready, %d updated",
					name, t.Generation, st.ObservedGeneration, t.Spec.Replicas, st.ReadyReplicas, st.UpdatedReplicas)
			}
		}
		return nil
	})
}

// soakWorker is one loop of the load: every period (± a quarter) it calls step, until ctx ends.
type soakWorker struct {
	name   string
	period time.Duration
	step   func(ctx context.Context, rng *rand.Rand, n int)
}

// start runs the load's workers until ctx ends; the returned function waits for them. Each request is
// sent with a context of its own (bounded by the clients' timeout), so that stopping the load never breaks
// a request under way.
func (l *soakLoad) start(ctx context.Context, rng *rand.Rand) func() {
	workers := []soakWorker{
		{"churn", 400 * time.Millisecond, l.churn},
		{"update-0", 300 * time.Millisecond, l.update},
		{"update-1", 300 * time.Millisecond, l.update},
		{"scale", 2 * time.Second, l.scale},
		{"rollout", 20 * time.Second, l.rollout},
		{"status", time.Second, l.status},
		{"read", 500 * time.Millisecond, l.read},
		{"nodepool", 3 * time.Second, l.nodePool},
	}
	for i, m := range soakManagers {
		m := m
		period := 500 * time.Millisecond
		workers = append(workers, soakWorker{"apply-" + strconv.Itoa(i), period, func(ctx context.Context, rng *rand.Rand, n int) { l.apply(m, rng, n) }})
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		w, wrng := w, rand.New(rand.NewSource(rng.Int63()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				w.step(ctx, wrng, n)
				select {
				case <-ctx.Done():
				case <-time.After(randomBetween(wrng, w.period*3/4, w.period*5/4)):
				}
			}
		}()
	}
	wrng := rand.New(rand.NewSource(rng.Int63()))
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.watches(ctx, wrng)
	}()
	return func() {
		wg.Wait()
		l.cleanupNodePools()
	}
}

// req is the context of one request of the load: its own, bounded by the clients' timeout.
func req() context.Context { return context.Background() }

func (l *soakLoad) pick(rng *rand.Rand) string { return l.fleet[rng.Intn(len(l.fleet))] }

// churn creates a TApp without instances, updates it and deletes it, one step per call.
func (l *soakLoad) churn(_ context.Context, _ *rand.Rand, n int) {
	tapps := l.c.tapp.TKEStackAppsV1().TApps(l.ns)
	name := fmt.Sprintf("churn-%d", n/3)
	switch n % 3 {
	case 0:
		_, err := tapps.Create(req(), loadTApp(name), metav1.CreateOptions{})
		l.do("create tapps", false, err)
	case 1:
		patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"annotations": map[string]string{seqAnnotation: "1"}}})
		_, err := tapps.Patch(req(), name, types.MergePatchType, patch, metav1.PatchOptions{})
		l.do("patch tapps", false, err)
	case 2:
		l.do("delete tapps", false, tapps.Delete(req(), name, metav1.DeleteOptions{}))
	}
}

// update reads a TApp of the fleet and writes it back with an annotation changed (PUT): a conflict when
// anyone wrote it in between (the controllers write its status all the time).
func (l *soakLoad) update(_ context.Context, rng *rand.Rand, n int) {
	tapps := l.c.tapp.TKEStackAppsV1().TApps(l.ns)
	t, err := tapps.Get(req(), l.pick(rng), metav1.GetOptions{})
	if l.do("get tapps", false, err) != OutcomeOK {
		return
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations["soak.tapp.io/updated"] = strconv.Itoa(n)
	_, err = tapps.Update(req(), t, metav1.UpdateOptions{})
	l.do("update tapps", false, err)
}

// apply is server-side apply by manager: a label of its own, and a shared annotation every manager sets to
// its name (a conflict when another manager owns it; every fourth apply forces it).
func (l *soakLoad) apply(manager string, rng *rand.Rand, n int) {
	tapps := l.c.tapp.TKEStackAppsV1().TApps(l.ns)
	name := l.pick(rng)
	body, _ := json.Marshal(map[string]interface{}{
		"apiVersion": "apps.tkestack.io/v1", "kind": "TApp",
		"metadata": map[string]interface{}{
			"name":        name,
			"labels":      map[string]string{"soak.tapp.io/" + manager: strconv.Itoa(n % 5)},
			"annotations": map[string]string{"soak.tapp.io/shared": manager},
		},
	})
	force := n%4 == 3
	_, err := tapps.Patch(req(), name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: manager, Force: &force})
	l.do("apply tapps", true, err)
}

// scale moves a TApp of the fleet one instance above or below its size, or back, through the scale
// subresource (read, then write: a conflict when the TApp changed in between).
func (l *soakLoad) scale(_ context.Context, rng *rand.Rand, _ int) {
	tapps := l.c.tapp.TKEStackAppsV1().TApps(l.ns)
	name := l.pick(rng)
	s, err := tapps.GetScale(req(), name, metav1.GetOptions{})
	if l.do("get tapps/scale", false, err) != OutcomeOK {
		return
	}
	want := int32(soakFleetSize - 1 + rng.Intn(3))
	if s.Spec.Replicas == want {
		want = soakFleetSize
	}
	_, err = tapps.UpdateScale(req(), name, &autoscalingv1.Scale{ObjectMeta: s.ObjectMeta, Spec: autoscalingv1.ScaleSpec{Replicas: want}}, metav1.UpdateOptions{})
	l.do("update tapps/scale", false, err)
}

// rollout switches a TApp of the fleet to the other image: an in-place update of its instances.
func (l *soakLoad) rollout(_ context.Context, rng *rand.Rand, n int) {
	image := imageV1
	if n%2 == 0 {
		image = imageV2
	}
	patch, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
		"containers": []map[string]string{{"name": "app", "image": image}},
	}}}})
	_, err := l.c.tapp.TKEStackAppsV1().TApps(l.ns).Patch(req(), l.pick(rng), types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	l.do("patch tapps (image)", false, err)
}

// status writes a condition of its own into a TApp's status (strategic merge patch of the status
// subresource).
func (l *soakLoad) status(_ context.Context, rng *rand.Rand, n int) {
	patch, _ := json.Marshal(map[string]interface{}{"status": map[string]interface{}{"conditions": []map[string]string{{
		"type": "SoakProbe", "status": "True", "reason": "Soak", "message": strconv.Itoa(n),
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}}})
	_, err := l.c.tapp.TKEStackAppsV1().TApps(l.ns).Patch(req(), l.pick(rng), types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	l.do("patch tapps/status", false, err)
}

// read lists the namespace's TApps, reads one and lists the NodePools.
func (l *soakLoad) read(_ context.Context, rng *rand.Rand, _ int) {
	tapps := l.c.tapp.TKEStackAppsV1().TApps(l.ns)
	_, err := tapps.List(req(), metav1.ListOptions{})
	l.do("list tapps", false, err)
	_, err = tapps.Get(req(), l.pick(rng), metav1.GetOptions{})
	l.do("get tapps", false, err)
	_, err = l.c.tapp.OpenYurtAppsV1beta1().NodePools().List(req(), metav1.ListOptions{})
	l.do("list nodepools", false, err)
}

// soakPoolPrefix names the NodePools of the load.
const soakPoolPrefix = "chaos-soak-pool-"

// nodePool creates a NodePool (without nodes) and deletes it again, one step per call.
func (l *soakLoad) nodePool(_ context.Context, _ *rand.Rand, n int) {
	pools := l.c.tapp.OpenYurtAppsV1beta1().NodePools()
	name := fmt.Sprintf("%s%d", soakPoolPrefix, n/2)
	if n%2 == 0 {
		_, err := pools.Create(req(), &yurtv1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		l.do("create nodepools", false, err)
		return
	}
	l.do("delete nodepools", false, pools.Delete(req(), name, metav1.DeleteOptions{}))
}

// cleanupNodePools deletes the load's NodePools left when it stopped between create and delete.
func (l *soakLoad) cleanupNodePools() {
	pools := l.c.tapp.OpenYurtAppsV1beta1().NodePools()
	list, err := pools.List(req(), metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, soakPoolPrefix) {
			_ = pools.Delete(req(), p.Name, metav1.DeleteOptions{})
		}
	}
}

// soakMaxWatches bounds the watches the load keeps open at once.
const soakMaxWatches = 4

// watches opens watches (list, then watch from the list's resourceVersion, as informers do) of TApps,
// TApps by label, NodePools and YurtAppDaemons, each with a timeout of 5–30 s that the server ends, or
// stopped by the client after 1–10 s; at most soakMaxWatches at once.
func (l *soakLoad) watches(ctx context.Context, rng *rand.Rand) {
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, soakMaxWatches)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
			return
		case slots <- struct{}{}:
		}
		kind, open := l.watchOpener(rng)
		timeout := int64(5 + rng.Intn(26))
		stopAfter := time.Duration(0)
		if rng.Intn(2) == 0 {
			stopAfter = randomBetween(rng, time.Second, 10*time.Second)
		}
		w, err := open(timeout)
		var lf listFailed
		switch {
		case errors.As(err, &lf):
			<-slots // counted as an error of the list
		case l.do("watch "+kind, false, err) != OutcomeOK:
			<-slots
		default:
			l.add(func() { l.watchesOpened++ })
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				l.consumeWatch(ctx, kind, w, stopAfter)
			}()
		}
		select {
		case <-ctx.Done():
		case <-time.After(randomBetween(rng, 500*time.Millisecond, 2*time.Second)):
		}
	}
}

// watchOpener picks what to watch; the opener lists first and watches from the list's resourceVersion.
func (l *soakLoad) watchOpener(rng *rand.Rand) (string, func(timeout int64) (watch.Interface, error)) {
	tapps := l.c.tapp.TKEStackAppsV1().TApps(l.ns)
	pools := l.c.tapp.OpenYurtAppsV1beta1().NodePools()
	yads := l.c.tapp.OpenYurtAppsV1alpha1().YurtAppDaemons(metav1.NamespaceAll)
	listWatch := func(kind string, list func(metav1.ListOptions) (string, error), watchFn func(metav1.ListOptions) (watch.Interface, error), opts metav1.ListOptions) func(int64) (watch.Interface, error) {
		return func(timeout int64) (watch.Interface, error) {
			rv, err := list(opts)
			if l.do("list "+kind, false, err) != OutcomeOK {
				return nil, listFailed{err}
			}
			opts.ResourceVersion, opts.TimeoutSeconds, opts.AllowWatchBookmarks = rv, &timeout, true
			return watchFn(opts)
		}
	}
	listTApps := func(o metav1.ListOptions) (string, error) {
		list, err := tapps.List(req(), o)
		if err != nil {
			return "", err
		}
		return list.ResourceVersion, nil
	}
	watchTApps := func(o metav1.ListOptions) (watch.Interface, error) { return tapps.Watch(req(), o) }
	switch rng.Intn(4) {
	case 0:
		return "tapps", listWatch("tapps", listTApps, watchTApps, metav1.ListOptions{})
	case 1:
		sel := metav1.ListOptions{LabelSelector: "soak.tapp.io/" + soakManagers[rng.Intn(len(soakManagers))] + "=" + strconv.Itoa(rng.Intn(5))}
		return "tapps (label selector)", listWatch("tapps (label selector)", listTApps, watchTApps, sel)
	case 2:
		return "nodepools", listWatch("nodepools", func(o metav1.ListOptions) (string, error) {
			list, err := pools.List(req(), o)
			if err != nil {
				return "", err
			}
			return list.ResourceVersion, nil
		}, func(o metav1.ListOptions) (watch.Interface, error) { return pools.Watch(req(), o) }, metav1.ListOptions{})
	default:
		return "yurtappdaemons", listWatch("yurtappdaemons", func(o metav1.ListOptions) (string, error) {
			list, err := yads.List(req(), o)
			if err != nil {
				return "", err
			}
			return list.ResourceVersion, nil
		}, func(o metav1.ListOptions) (watch.Interface, error) { return yads.Watch(req(), o) }, metav1.ListOptions{})
	}
}

// listFailed is the error of a watch whose list failed (and was counted so).
type listFailed struct{ err error }

func (e listFailed) Error() string { return e.err.Error() }

// consumeWatch reads a watch until the server ends it, the client stops it (after stopAfter, when not 0)
// or the load ends; an error event counts as an error of the watch.
func (l *soakLoad) consumeWatch(ctx context.Context, kind string, w watch.Interface, stopAfter time.Duration) {
	defer w.Stop()
	var stop <-chan time.Time
	if stopAfter > 0 {
		t := time.NewTimer(stopAfter)
		defer t.Stop()
		stop = t.C
	}
	for {
		select {
		case <-ctx.Done():
			l.add(func() { l.watchesStopped++ })
			return
		case <-stop:
			l.add(func() { l.watchesStopped++ })
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				l.add(func() { l.watchesTimedUp++ })
				return
			}
			if ev.Type == watch.Error {
				l.do("watch "+kind+" (events)", false, watchError(ev))
				continue
			}
			if _, err := meta.Accessor(ev.Object); err == nil {
				l.add(func() { l.watchEvents++ })
			}
		}
	}
}
