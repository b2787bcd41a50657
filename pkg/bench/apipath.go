package bench

import (
	"context"
	"encoding/json"
	"fmt"
	appsv1 "k8s.io/api/apps/v1"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	tappclientv1 "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/typed/tkestack/v1"
)

// The API paths: tapp-apiserver through the aggregator and directly, each in JSON and in protobuf, and the
// CRD, which has no protobuf (kube-apiserver serves custom resources in JSON and YAML only).
const (
	pathAggregated         = "aggregated"
	pathDirect             = "direct"
	pathCRD                = "crd"
	pathAggregatedProtobuf = "aggregated-protobuf"
	pathDirectProtobuf     = "direct-protobuf"
)

// jsonPathOf names the JSON path a protobuf path is compared with ("" for the others).
func jsonPathOf(path string) string {
	switch path {
	case pathAggregatedProtobuf:
		return pathAggregated
	case pathDirectProtobuf:
		return pathDirect
	}
	return ""
}

// sentAnnotation carries the client's clock just before an update, so the watcher can time the event.
const sentAnnotation = "bench.tkestack.io/sent"

// apiPath is one way to reach TApps, always through the generated typed client.
type apiPath struct {
	name   string
	client tappclientv1.TKEStackAppsV1Interface
	// watchers is the server whose watch cache serves the path's watches.
	watchers watcherSource
}

// tappGroup is the API group this server serves TApps in.
const tappGroup = tkestackv1.GroupName

// watcherSource names the server and API group of a path's watch cache, whose
// apiserver_terminated_watchers_total counts the watches it closed as unresponsive.
type watcherSource struct {
	server *rest.Config
	group  string
}

// terminated reads the server's count of TApp watches it closed as unresponsive (every watcher of the
// resource, not only the benchmark's); ok is false when it cannot be read.
func (w watcherSource) terminated(ctx context.Context) (float64, bool) {
	if w.server == nil {
		return 0, false
	}
	sums, _, err := scrapeSums(ctx, w.server, map[string]string{"group": w.group, "resource": "tapps"}, "apiserver_terminated_watchers_total")
	if err != nil {
		return 0, false
	}
	return sums[0], true
}

// runOps runs op(i) for i in [0, n) on conc goroutines and returns the latency of every successful op.
func runOps(ctx context.Context, n, conc int, op func(ctx context.Context, i int) error) (lat []time.Duration, errs int, firstErr error, elapsed time.Duration) {
	lat, errs, firstErr, elapsed, _ = runOpsFor(ctx, n, conc, 0, op)
	return
}

// runOpsFor is runOps that starts no operation after maxDuration (0: no bound) and also returns how many
// operations it started.
func runOpsFor(ctx context.Context, n, conc int, maxDuration time.Duration, op func(ctx context.Context, i int) error) (lat []time.Duration, errs int, firstErr error, elapsed time.Duration, started int) {
	var next int64 = -1
	var errCount int64
	perWorker := make([][]time.Duration, conc)
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				if maxDuration > 0 && time.Since(start) > maxDuration {
					return
				}
				i := int(atomic.AddInt64(&next, 1))
				if i >= n || ctx.Err() != nil {
					return
				}
				opCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
				t := time.Now()
				err := op(opCtx, i)
				d := time.Since(t)
				cancel()
				if err != nil {
					atomic.AddInt64(&errCount, 1)
					once.Do(func() { firstErr = err })
					continue
				}
				perWorker[w] = append(perWorker[w], d)
			}
		}(w)
	}
	wg.Wait()
	elapsed = time.Since(start)
	for _, l := range perWorker {
		lat = append(lat, l...)
	}
	started = int(atomic.LoadInt64(&next)) + 1
	if started > n {
		started = n
	}
	return lat, int(errCount), firstErr, elapsed, started
}

func newCell(path, shape, verb string, conc, n int, lat []time.Duration, errs int, firstErr error, elapsed time.Duration) *APICell {
	c := &APICell{Path: path, Shape: shape, Verb: verb, Concurrency: conc, Ops: n, Errors: errs,
		Seconds: round(elapsed.Seconds(), 3), LatencyMs: summarize(lat)}
	if elapsed > 0 {
		c.OpsPerSecond = round(float64(len(lat))/elapsed.Seconds(), 1)
	}
	if firstErr != nil {
		c.FirstError = firstErr.Error()
	}
	return c
}

// apiPlan says what runAPIPath measures: operations per cell, lists per list cell, objects per list, verbs.
type apiPlan struct {
	ops, lists, listObjects int
	// pool5Ops, when set, replaces ops for the pool5 shape (its objects are 11 times larger).
	pool5Ops int
	// listDuration bounds a list cell: no list starts after it.
	listDuration time.Duration
	verbs        map[string]bool
	// warmups is the number of objects created, read and updated on each path before measuring.
	warmups int
	// settle is a pause after the namespaces and warm-ups of a shape, before its cells: TAppPodTemplateDryRun
	// remembers no verdict for a moment after a change to what admission reads, a new namespace for one.
	settle time.Duration
	// storedBytes reads the stored size of the direct path's list objects from tapp-apiserver's etcd.
	storedBytes bool
}

// verbCreateNewTemplate is a create whose templates are new every time (their image differs from every
// object before): no remembered verdict of TAppPodTemplateDryRun applies.
const verbCreateNewTemplate = "create (new template)"

// withNewTemplates gives every template of t an image no other object has: nginx:1.7.9-<suffix>.
func withNewTemplates(t *tkestackv1.TApp, suffix string) *tkestackv1.TApp {
	image := "nginx:1.7.9-" + suffix
	t.Spec.Template.Spec.Containers[0].Image = image
	for name, tmpl := range t.Spec.TemplatePool {
		tmpl.Spec.Containers[0].Image = image
		t.Spec.TemplatePool[name] = tmpl
	}
	return t
}

// runAPIPath is section 1: create, get, update (with watch latency) and list through the aggregator,
// directly, and as a CRD, for both shapes, at concurrency 1 and 16.
func (b *bench) runAPIPath(ctx context.Context, paths []apiPath, schema *crdSchema, plan apiPlan) (*APIPathResult, error) {
	res := &APIPathResult{ObjectBytes: map[string]int{}, PreservedUnknownFields: schema.Preserved, IntOrStringTypes: schema.IntOrString, AtomicLists: schema.AtomicLists}
	if raw, err := json.Marshal(schema.Schema); err == nil {
		res.CRDSchemaBytes = len(raw)
	}
	lists := plan.lists
	concurrencies := []int{1, 16}
	for _, shape := range []string{shapeTutorial, shapePool5} {
		ops := plan.ops
		if shape == shapePool5 && plan.pool5Ops > 0 {
			ops = plan.pool5Ops
		}
		listObjects := plan.listObjects
		if listObjects > ops {
			listObjects = ops
		}
		raw, _ := json.Marshal(benchTApp(shape, "t-00000"))
		res.ObjectBytes[shape] = len(raw)
		ns := func(p apiPath, suffix string) string { return fmt.Sprintf("api-%s-%s-%s", p.name, shape, suffix) }
		for _, p := range paths {
			for _, suffix := range []string{"c1", "c16", "list", "warmup"} {
				if err := b.ensureNamespace(ctx, ns(p, suffix)); err != nil {
					return res, err
				}
			}
			if err := b.warmUp(ctx, p, ns(p, "warmup"), shape, plan.warmups); err != nil {
				return res, fmt.Errorf("warm-up of the %s path: %w", p.name, err)
			}
		}
		if plan.settle > 0 {
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(plan.settle):
			}
		}
		// created[path][conc] are the objects of the create cell, updated in place by the update cell.
		created := map[string]map[int][]*tkestackv1.TApp{}
		for _, p := range paths {
			created[p.name] = map[int][]*tkestackv1.TApp{}
		}
		for _, conc := range concurrencies {
			for _, p := range paths {
				objs := make([]*tkestackv1.TApp, ops)
				target := func(i int) string {
					switch {
					case conc == 1:
						return ns(p, "c1")
					case i < listObjects:
						return ns(p, "list")
					default:
						return ns(p, "c16")
					}
				}
				lat, errs, firstErr, elapsed := runOps(ctx, ops, conc, func(ctx context.Context, i int) error {
					obj, err := p.client.TApps(target(i)).Create(ctx, benchTApp(shape, fmt.Sprintf("t-%05d", i)), metav1.CreateOptions{})
					objs[i] = obj
					return err
				})
				created[p.name][conc] = objs
				b.addCell(res, newCell(p.name, shape, "create", conc, ops, lat, errs, firstErr, elapsed))
			}
		}
		for _, conc := range concurrencies {
			for _, p := range paths {
				if !plan.verbs[verbCreateNewTemplate] {
					break
				}
				lat, errs, firstErr, elapsed := runOps(ctx, ops, conc, func(ctx context.Context, i int) error {
					name := fmt.Sprintf("n-%05d", i)
					_, err := p.client.TApps(ns(p, fmt.Sprintf("c%d", conc))).Create(ctx, withNewTemplates(benchTApp(shape, name), fmt.Sprintf("%s-c%d-%05d", p.name, conc, i)), metav1.CreateOptions{})
					return err
				})
				b.addCell(res, newCell(p.name, shape, verbCreateNewTemplate, conc, ops, lat, errs, firstErr, elapsed))
			}
		}
		for _, conc := range concurrencies {
			for _, p := range paths {
				if !plan.verbs["get"] {
					break
				}
				objs := created[p.name][conc]
				lat, errs, firstErr, elapsed := runOps(ctx, ops, conc, func(ctx context.Context, i int) error {
					if objs[i] == nil {
						return fmt.Errorf("object %d was not created", i)
					}
					_, err := p.client.TApps(objs[i].Namespace).Get(ctx, objs[i].Name, metav1.GetOptions{})
					return err
				})
				b.addCell(res, newCell(p.name, shape, "get", conc, ops, lat, errs, firstErr, elapsed))
			}
		}
		for _, conc := range concurrencies {
			for _, p := range paths {
				if !plan.verbs["update"] {
					break
				}
				objs := created[p.name][conc]
				terminatedBefore, terminatedRead := p.watchers.terminated(ctx)
				w, err := startWatchTimer(ctx, p.client)
				if err != nil {
					return res, fmt.Errorf("watch on the %s path: %w", p.name, err)
				}
				lat, errs, firstErr, elapsed := runOps(ctx, ops, conc, func(ctx context.Context, i int) error {
					if objs[i] == nil {
						return fmt.Errorf("object %d was not created", i)
					}
					obj := objs[i].DeepCopy()
					if obj.Annotations == nil {
						obj.Annotations = map[string]string{}
					}
					obj.Annotations[sentAnnotation] = strconv.FormatInt(time.Now().UnixNano(), 10)
					updated, err := p.client.TApps(obj.Namespace).Update(ctx, obj, metav1.UpdateOptions{})
					if err == nil {
						objs[i] = updated
					}
					return err
				})
				b.addCell(res, newCell(p.name, shape, "update", conc, ops, lat, errs, firstErr, elapsed))
				events, missed, reopened := w.wait(ops-errs, 15*time.Second)
				watchCell := newCell(p.name, shape, "watch", conc, ops, events, missed, nil, elapsed)
				watchCell.WatchReopened = reopened
				if after, ok := p.watchers.terminated(ctx); ok && terminatedRead {
					watchCell.TerminatedWatchers = int(after - terminatedBefore)
				}
				if missed > 0 {
					watchCell.FirstError = fmt.Sprintf("%d update events did not arrive within 15s", missed)
				}
				b.addCell(res, watchCell)
			}
		}
		for _, conc := range concurrencies {
			for _, p := range paths {
				if !plan.verbs["list"] {
					break
				}
				listNS := ns(p, "list")
				var items int64
				lat, errs, firstErr, elapsed, started := runOpsFor(ctx, lists, conc, plan.listDuration, func(ctx context.Context, i int) error {
					list, err := p.client.TApps(listNS).List(ctx, metav1.ListOptions{})
					if err == nil {
						atomic.StoreInt64(&items, int64(len(list.Items)))
					}
					return err
				})
				cell := newCell(p.name, shape, "list", conc, started, lat, errs, firstErr, elapsed)
				cell.ObjectsPerList = int(items)
				b.addCell(res, cell)
			}
		}
		if plan.storedBytes {
			stored, asJSON, err := b.storedSizes(ctx, ns(apiPath{name: pathDirect}, "list"))
			if err != nil {
				b.fail("stored size of the %s objects: %v", shape, err)
			} else {
				s := newStoredBytes(shape, stored, asJSON)
				res.StoredBytes = append(res.StoredBytes, s)
				b.logf("etcd %-8s %d objects: %.0f bytes stored per object, %.0f in JSON (%.2f×)", shape, s.Objects,
					s.StoredBytesPerObject, s.JSONBytesPerObject, s.ProtobufToJSON)
			}
		}
		for _, p := range paths {
			for _, suffix := range []string{"c1", "c16", "list", "warmup"} {
				if err := deleteAllTApps(ctx, p.client.TApps(ns(p, suffix))); err != nil {
					b.logf("cleanup of %s: %v", ns(p, suffix), err)
				}
			}
		}
	}
	computeAPIRatios(res.Cells)
	return res, nil
}

func (b *bench) addCell(res *APIPathResult, c *APICell) {
	res.Cells = append(res.Cells, c)
	b.logf("api %-10s %-8s %-6s c=%-2d %6.0f ops/s p50 %7.2fms p99 %7.2fms errors %d", c.Path, c.Shape, c.Verb, c.Concurrency,
		c.OpsPerSecond, c.LatencyMs.P50, c.LatencyMs.P99, c.Errors)
}

// warmUp opens the connection and primes caches (discovery, authorization, admission) before measuring.
func (b *bench) warmUp(ctx context.Context, p apiPath, ns, shape string, n int) error {
	for i := 0; i < n; i++ {
		obj, err := p.client.TApps(ns).Create(ctx, benchTApp(shape, fmt.Sprintf("w-%02d", i)), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if _, err := p.client.TApps(ns).Get(ctx, obj.Name, metav1.GetOptions{}); err != nil {
			return err
		}
		obj.Annotations = map[string]string{sentAnnotation: "0"}
		if _, err := p.client.TApps(ns).Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	_, err := p.client.TApps(ns).List(ctx, metav1.ListOptions{})
	return err
}

// computeAPIRatios sets the ratios of every cell to the CRD cell of the same shape, verb and concurrency,
// and of every protobuf cell to the JSON cell of its path.
func computeAPIRatios(cells []*APICell) {
	type key struct {
		shape, verb string
		conc        int
	}
	crd := map[key]*APICell{}
	for _, c := range cells {
		if c.Path == pathCRD {
			crd[key{c.Shape, c.Verb, c.Concurrency}] = c
		}
	}
	byPath := map[string]map[key]*APICell{}
	for _, c := range cells {
		if byPath[c.Path] == nil {
			byPath[c.Path] = map[key]*APICell{}
		}
		byPath[c.Path][key{c.Shape, c.Verb, c.Concurrency}] = c
	}
	for _, c := range cells {
		if js := byPath[jsonPathOf(c.Path)][key{c.Shape, c.Verb, c.Concurrency}]; js != nil {
			if c.Verb != "watch" {
				c.ThroughputRatioToJSON = ratio(c.OpsPerSecond, js.OpsPerSecond)
			}
			c.P50RatioToJSON = ratio(c.LatencyMs.P50, js.LatencyMs.P50)
		}
		ref := crd[key{c.Shape, c.Verb, c.Concurrency}]
		if ref == nil {
			continue
		}
		if c.Verb != "watch" {
			c.ThroughputRatioToCRD = ratio(c.OpsPerSecond, ref.OpsPerSecond)
		}
		c.P50RatioToCRD = ratio(c.LatencyMs.P50, ref.LatencyMs.P50)
		c.P99RatioToCRD = ratio(c.LatencyMs.P99, ref.LatencyMs.P99)
	}
}

// watchTimer watches every TApp of a path and times the update events carrying sentAnnotation.
type watchTimer struct {
	mu      sync.Mutex
	samples []time.Duration
	seen    map[string]bool
	// reopened counts the watches the server ended before the benchmark stopped them.
	reopened int
	stopped  bool
	w        watch.Interface
	done     chan struct{}
}

// maxWatchReopens bounds how often a watch cell re-opens a watch the server ended.
const maxWatchReopens = 20

// startWatchTimer opens a watch of every TApp at the current resource version and times the update events it
// receives. A watch the server ends (a watch cache closes a watcher that does not keep up) is re-opened at the
// last resource version seen, at most maxWatchReopens times, so that its events arrive late rather than never.
func startWatchTimer(ctx context.Context, client tappclientv1.TKEStackAppsV1Interface) (*watchTimer, error) {
	list, err := client.TApps("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	w, err := client.TApps("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, err
	}
	t := &watchTimer{w: w, seen: map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		rv := list.ResourceVersion
		for {
			rv = t.receive(w, rv)
			t.mu.Lock()
			stop := t.stopped || t.reopened >= maxWatchReopens
			if !stop {
				t.reopened++
			}
			t.mu.Unlock()
			if stop || ctx.Err() != nil {
				return
			}
			if w, err = client.TApps("").Watch(ctx, metav1.ListOptions{ResourceVersion: rv}); err != nil {
				return
			}
			t.mu.Lock()
			t.w = w
			stopped := t.stopped
			t.mu.Unlock()
			if stopped {
				w.Stop()
			}
		}
	}()
	return t, nil
}

// receive records the update events of w until it ends, and returns the last resource version seen.
func (t *watchTimer) receive(w watch.Interface, rv string) string {
	for ev := range w.ResultChan() {
		now := time.Now()
		obj, ok := ev.Object.(*tkestackv1.TApp)
		if !ok {
			continue
		}
		rv = obj.ResourceVersion
		if ev.Type != watch.Modified {
			continue
		}
		sent := obj.Annotations[sentAnnotation]
		nanos, err := strconv.ParseInt(sent, 10, 64)
		if err != nil || nanos == 0 {
			continue
		}
		key := obj.Namespace + "/" + obj.Name + "/" + sent
		t.mu.Lock()
		if !t.seen[key] {
			t.seen[key] = true
			t.samples = append(t.samples, now.Sub(time.Unix(0, nanos)))
		}
		t.mu.Unlock()
	}
	return rv
}

// wait returns the event latencies once want events arrived or after timeout, how many are missing, and how
// often the watch was re-opened after the server ended it.
func (t *watchTimer) wait(want int, timeout time.Duration) ([]time.Duration, int, int) {
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		n := len(t.samples)
		t.mu.Unlock()
		if n >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.mu.Lock()
	t.stopped = true
	w := t.w
	t.mu.Unlock()
	w.Stop()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	missing := want - len(t.samples)
	if missing < 0 {
		missing = 0
	}
	return t.samples, missing, t.reopened
}

// deleteAllTApps removes every TApp of a namespace and waits until none is left.
func deleteAllTApps(ctx context.Context, client tappclientv1.TAppInterface) error {
	err := client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		list, err := client.List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil && len(list.Items) == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("objects left after two minutes")
}

func (b *bench) ensureNamespace(ctx context.Context, name string) error {
	_, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// pathDryRun is the cost of TAppPodTemplateDryRun's own requests: one dry-run pod create per template of
// the TApp, in a row, as the plugin makes them, with the benchmark's unthrottled client.
const pathDryRun = "pod dry-run"

func (b *bench) runDryRunPods(ctx context.Context, n int) ([]*APICell, error) {
	const ns = "api-dryrun"
	if err := b.ensureNamespace(ctx, ns); err != nil {
		return nil, err
	}
	var cells []*APICell
	for _, shape := range []string{shapeTutorial, shapePool5} {
		t := benchTApp(shape, "dryrun")
		templates := []corev1.PodTemplateSpec{t.Spec.Template}
		for _, name := range sortedKeys(t.Spec.TemplatePool) {
			templates = append(templates, t.Spec.TemplatePool[name])
		}
		var pods []*corev1.Pod
		for _, tmpl := range templates {
			pod := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
			pod.GenerateName, pod.Namespace = t.Name+"-", ns
			pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: "tkestack.io/InPlaceUpdate"})
			pods = append(pods, pod)
		}
		for _, conc := range []int{1, 16} {
			lat, errs, firstErr, elapsed := runOps(ctx, n, conc, func(ctx context.Context, i int) error {
				for _, pod := range pods {
					if _, err := b.kube.CoreV1().Pods(ns).Create(ctx, pod.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
						return err
					}
				}
				return nil
			})
			c := newCell(pathDryRun, shape, "create", conc, n, lat, errs, firstErr, elapsed)
			b.addCell(&APIPathResult{}, c)
			cells = append(cells, c)
		}
	}
	return cells, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pathStatefulSet is a StatefulSet create through kube-apiserver, of the TApp's spec.template, for comparison.
const pathStatefulSet = "statefulset"

// runStatefulSetCreates creates n StatefulSets of each shape's spec.template, with 0 replicas (no pods:
// the TApps of section 1b get none either, tapp-apiserver running no controllers), at concurrency 1 and 16.
func (b *bench) runStatefulSetCreates(ctx context.Context, n int) ([]*APICell, error) {
	var cells []*APICell
	for _, shape := range []string{shapeTutorial, shapePool5} {
		t := benchTApp(shape, "sts")
		template := t.Spec.Template
		if shape == shapePool5 {
			template = t.Spec.TemplatePool[sortedKeys(t.Spec.TemplatePool)[0]]
		}
		for _, conc := range []int{1, 16} {
			ns := fmt.Sprintf("api-sts-%s-c%d", shape, conc)
			if err := b.ensureNamespace(ctx, ns); err != nil {
				return cells, err
			}
			lat, errs, firstErr, elapsed := runOps(ctx, n, conc, func(ctx context.Context, i int) error {
				zero := int32(0)
				sts := &appsv1.StatefulSet{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%05d", i)},
					Spec: appsv1.StatefulSetSpec{
						Replicas: &zero,
						Selector: t.Spec.Selector.DeepCopy(),
						Template: *template.DeepCopy(),
					},
				}
				_, err := b.kube.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{})
				return err
			})
			c := newCell(pathStatefulSet, shape, "create", conc, n, lat, errs, firstErr, elapsed)
			b.addCell(&APIPathResult{}, c)
			cells = append(cells, c)
		}
	}
	return cells, nil
}
