package bench

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// evaluateTargets checks the targets against the results.
func evaluateTargets(res *Results) []Target {
	var out []Target
	add := func(name, goal, unit string, value float64, measured bool, met bool) {
		out = append(out, Target{Name: name, Goal: goal, Value: value, Unit: unit, Measured: measured, Met: measured && met})
	}
	if res.APIPath != nil {
		for _, path := range []struct {
			name string
			goal float64
		}{{pathAggregated, 1.0}, {pathDirect, 1.5}} {
			for _, shape := range []string{shapeTutorial, shapePool5} {
				for _, verb := range []string{"create", "update"} {
					c := findCell(res.APIPath.Cells, path.name, shape, verb, 16)
					v, ok := 0.0, c != nil && c.Errors == 0
					if c != nil {
						v = c.ThroughputRatioToCRD
					}
					add(fmt.Sprintf("API %s %s %s c=16 throughput vs CRD", path.name, verb, shape),
						fmt.Sprintf("≥ %.1f×", path.goal), "×", v, ok, v >= path.goal)
				}
			}
		}
	}
	if res.APIPath != nil {
		for _, path := range []string{pathAggregatedProtobuf, pathDirectProtobuf} {
			c := findCell(res.APIPath.Cells, path, shapeTutorial, "list", 16)
			ok := c != nil && c.Errors == 0
			var vsCRD, vsJSON float64
			if c != nil {
				vsCRD, vsJSON = c.ThroughputRatioToCRD, c.ThroughputRatioToJSON
			}
			add(fmt.Sprintf("API %s list %s c=16 throughput vs CRD", path, shapeTutorial), "≥ 3.0×", "×", vsCRD, ok && vsCRD > 0, vsCRD >= 3)
			add(fmt.Sprintf("API %s list %s c=16 throughput vs %s (JSON)", path, shapeTutorial, jsonPathOf(path)), "≥ 1.5×", "×", vsJSON,
				ok && vsJSON > 0, vsJSON >= 1.5)
			for _, conc := range []int{1, 16} {
				w := findCell(res.APIPath.Cells, path, shapeTutorial, "watch", conc)
				v := 0.0
				if w != nil {
					v = w.P50RatioToCRD
				}
				add(fmt.Sprintf("API %s watch %s c=%d p50 latency vs CRD", path, shapeTutorial, conc), "≤ 0.5×", "×", v,
					w != nil && w.Errors == 0 && v > 0, v <= 0.5)
			}
		}
	}
	if res.Admission != nil {
		for _, path := range []struct {
			name string
			goal float64
		}{{pathAggregated, 1.0}, {pathDirect, 1.5}} {
			for _, shape := range []string{shapeTutorial, shapePool5} {
				c := findCell(res.Admission.Cells, path.name, shape, "create", 16)
				v, ok := 0.0, c != nil && c.Errors == 0
				if c != nil {
					v = c.ThroughputRatioToCRD
				}
				add(fmt.Sprintf("API %s create %s c=16 throughput vs CRD, shipped admission chain", path.name, shape),
					fmt.Sprintf("≥ %.1f×", path.goal), "×", v, ok, v >= path.goal)
				c = findCell(res.Admission.Cells, path.name, shape, verbCreateNewTemplate, 16)
				v, ok = 0.0, c != nil && c.Errors == 0
				if c != nil {
					v = c.ThroughputRatioToCRD
				}
				add(fmt.Sprintf("API %s create (new template) %s c=16 throughput vs CRD, shipped admission chain", path.name, shape),
					"≥ 0.8×", "×", v, ok, v >= 0.8)
			}
		}
	}
	if m := res.Memory; m != nil {
		v := ratio(float64(m.TAppAPIServer.AfterRSSBytes), float64(m.KubeAPIServer.GrowthRSSBytes))
		add(fmt.Sprintf("memory: tapp-apiserver RSS with %d TApps / kube-apiserver RSS growth with %d CRs", m.Objects, m.Objects),
			"≤ 1.0×", "×", v, m.KubeAPIServer.GrowthRSSBytes > 0, v <= 1.0)
		add(fmt.Sprintf("memory: tapp-apiserver RSS with %d TApps / kube-apiserver RSS growth with %d CRs, no worse than before growth", m.Objects, m.Objects),
			fmt.Sprintf("≤ %.2f×", memoryRatioBefore), "×", v, m.KubeAPIServer.GrowthRSSBytes > 0, v <= memoryRatioBefore)
	}
	for _, budget := range budgetsOf(res) {
		at := " at " + budget.String()
		ups := atBudget(res.ScaleUp, budget)
		if up := findRun(ups, kindTApp); up != nil {
			sts, limit := findRun(ups, kindStatefulSet), findRun(ups, kindLimit)
			stsDone := up.Completed && sts != nil && sts.Completed
			add("scale-up"+at+": TApp time / StatefulSet time", "≤ 1.0×", "×", up.TimeRatioToStatefulSet, stsDone, up.TimeRatioToStatefulSet <= 1.0)
			add("scale-up"+at+": TApp throughput / bare-client limit", "≥ 0.9×", "×", up.ThroughputRatioToLimit,
				up.Completed && limit != nil && limit.Completed, up.ThroughputRatioToLimit >= 0.9)
			goal := "≤ StatefulSet's"
			if sts != nil {
				goal = fmt.Sprintf("≤ %.2f s (StatefulSet's)", sts.AllCreatedSeconds)
			}
			add("scale-up"+at+": TApp all pods created", goal, "s", up.AllCreatedSeconds, stsDone, stsDone && up.AllCreatedSeconds <= sts.AllCreatedSeconds)
		}
		rolls := atBudget(res.RollingUpdate, budget)
		tapp, sts := findRoll(rolls, kindTApp), findRoll(rolls, kindStatefulSet)
		if tapp == nil {
			continue
		}
		stsDone := tapp.Completed && sts != nil && sts.Completed
		var stsRoll RollRun
		if sts != nil {
			stsRoll = sts.RollRun
		}
		add("rolling update"+at+": TApp time / StatefulSet time", "≤ 1.0×", "×", ratio(tapp.Seconds, stsRoll.Seconds), stsDone, tapp.Seconds <= stsRoll.Seconds)
		add("rolling update"+at+": TApp kube-apiserver CPU per updated instance",
			fmt.Sprintf("≤ %.2f ms (StatefulSet's per recreated instance)", stsRoll.KubeAPIServerCPUMsPerInstance), "ms",
			tapp.KubeAPIServerCPUMsPerInstance, stsDone, tapp.KubeAPIServerCPUMsPerInstance <= stsRoll.KubeAPIServerCPUMsPerInstance)
		add("rolling update"+at+": TApp kube-apiserver writes per updated instance",
			fmt.Sprintf("≤ %.2f (StatefulSet's per recreated instance)", stsRoll.KubeAPIWritesPerInstance), "writes",
			tapp.KubeAPIWritesPerInstance, stsDone, tapp.KubeAPIWritesPerInstance <= stsRoll.KubeAPIWritesPerInstance)
		add("rolling update"+at+": TApp pods recreated", "0", "pods", float64(tapp.PodsRecreated), tapp.Completed, tapp.PodsRecreated == 0)
		allowed := allowedUnavailable(tapp.MaxUnavailable, tapp.Replicas)
		add("rolling update"+at+": TApp max unavailable observed", fmt.Sprintf("≤ %d (%s of %d)", allowed, tapp.MaxUnavailable, tapp.Replicas), "pods",
			float64(tapp.MaxUnavailableObserved), tapp.Completed, tapp.MaxUnavailableObserved <= allowed)
	}
	for _, r := range res.ClaimExpansion {
		if r.Kind == kindTApp {
			add("claim expansion: TApp pods recreated + container restarts", "0", "pods", float64(r.PodsRecreated+r.ContainerRestarts),
				r.Completed, r.PodsRecreated+r.ContainerRestarts == 0)
		}
	}
	if y := res.YASFanOut; y != nil {
		add(fmt.Sprintf("fan-out yas-created: %d workloads with tweaks dispatched (median)", y.NodePools), "< 10 s", "s", y.Created.Median,
			len(y.Created.Values) > 0, y.Created.Median < 10)
	}
	if f := res.FanOut; f != nil {
		for _, v := range []struct {
			name string
			s    Spread
		}{{"yad-created", f.YADCreated}, {"pools-created", f.PoolsCreated}} {
			add(fmt.Sprintf("fan-out %s: %d workloads provisioned (median)", v.name, f.NodePools), "< 10 s", "s", v.s.Median,
				len(v.s.Values) > 0, v.s.Median < 10)
		}
	}
	if g := res.Growth; g != nil {
		for _, f := range g.Figures {
			add(fmt.Sprintf("growth %d→%d: %s, exponent", f.SmallN, f.LargeN, f.Name), fmt.Sprintf("≤ %.1f", f.ExpectedExponent+growthTolerance), "",
				f.Exponent, f.Small > 0 && f.Large > 0, f.Exponent <= f.ExpectedExponent+growthTolerance)
		}
	}
	return out
}

// memoryRatioBefore is section 2's ratio of the run before the growth section (docs/benchmarks.md, "Latest
// run"): tapp-apiserver's resident set with 10,000 TApps is 0.59 of kube-apiserver's growth with 10,000
// objects of the CRD; the growth work must not make it worse.
const memoryRatioBefore = 0.59

// growthTolerance is how far above its expected exponent a figure may measure before it counts as
// super-linear (the noise of two sizes on a shared machine).
const growthTolerance = 0.2

func findCell(cells []*APICell, path, shape, verb string, conc int) *APICell {
	for _, c := range cells {
		if c.Path == path && c.Shape == shape && c.Verb == verb && c.Concurrency == conc {
			return c
		}
	}
	return nil
}

// budgetsOf lists the budgets of the scale and rolling-update runs, in the order they ran.
func budgetsOf(res *Results) []Budget {
	var out []Budget
	seen := map[Budget]bool{}
	note := func(b Budget) {
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	for _, r := range res.ScaleUp {
		note(r.Budget)
	}
	for _, r := range res.RollingUpdate {
		note(r.Budget)
	}
	return out
}

// measuredAt is a run of sections 3 or 4, measured at one budget.
type measuredAt interface{ budget() Budget }

func (r WorkloadRun) budget() Budget { return r.Budget }
func (r RolloutRun) budget() Budget  { return r.Budget }

// atBudget returns the runs measured at budget.
func atBudget[R measuredAt](runs []R, budget Budget) []R {
	var out []R
	for _, r := range runs {
		if r.budget() == budget {
			out = append(out, r)
		}
	}
	return out
}

func findRoll(runs []RolloutRun, kind string) *RolloutRun {
	for i := range runs {
		if runs[i].Kind == kind {
			return &runs[i]
		}
	}
	return nil
}

// allowedUnavailable is maxUnavailable ("25%" or "250") of replicas as the TApp controller resolves it
// (policy.MaxUnavailable): a percentage rounded up, as StatefulSet's controller does too (Deployment's rounds
// down). Both give 250 of 1000; the rounding matters at small --scale (13 of 50).
func allowedUnavailable(maxUnavailable string, replicas int) int {
	v := intstr.Parse(maxUnavailable)
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, replicas, true)
	if err != nil {
		return 0
	}
	return n
}

func findRun(runs []WorkloadRun, kind string) *WorkloadRun {
	for i := range runs {
		if runs[i].Kind == kind {
			return &runs[i]
		}
	}
	return nil
}

// renderMarkdown renders the results as the tables of docs/benchmarks.md.
func renderMarkdown(res *Results) string {
	var b strings.Builder
	p := func(format string, args ...interface{}) { fmt.Fprintf(&b, format, args...) }
	m := res.Machine
	p("Run of `%s`, started %s, %.0f s in total (scale %g).\n\n", res.Command, res.StartedAt, res.DurationSeconds, res.Scale)
	p("Machine: %d CPUs (%s), %.1f GiB memory, %s, %s; 1-minute load average %.2f at the start, at most %.2f during the run.\n\n",
		m.CPUs, m.CPUModel, float64(m.MemoryBytes)/(1<<30), m.Kernel, m.GoVersion, m.LoadAverage1m, m.LoadAverageMax)

	if a := res.APIPath; a != nil {
		p("### 1. API path\n\n")
		p("Object sizes (JSON): tutorial %d B, pool5 %d B. CRD schema: %d B.\n\n", a.ObjectBytes[shapeTutorial], a.ObjectBytes[shapePool5], a.CRDSchemaBytes)
		renderAPITables(&b, a)
	}
	if a := res.Admission; a != nil {
		p("### 1b. Creates through the shipped admission chain\n\n")
		renderAPITables(&b, a)
		var rows []string
		for _, c := range a.Cells {
			if c.Path == pathDryRun {
				rows = append(rows, fmt.Sprintf("| %s | %d | %d | %.0f (%.2f / %.2f) |", c.Shape, c.Concurrency, c.Ops, c.OpsPerSecond, c.LatencyMs.P50, c.LatencyMs.P99))
			}
		}
		if len(rows) > 0 {
			p("The check's own requests, unthrottled: one dry-run pod create per template of the TApp, in a row (2 for tutorial, 6 for pool5), sent by the benchmark's client to kube-apiserver:\n\n")
			p("| shape | c | TApps checked | TApps/s (p50 / p99 ms) |\n|---|---|---|---|\n%s\n\n", strings.Join(rows, "\n"))
		}
		var stsRows []string
		for _, c := range a.Cells {
			if c.Path == pathStatefulSet {
				crd := findCell(a.Cells, pathCRD, c.Shape, "create", c.Concurrency)
				stsRows = append(stsRows, fmt.Sprintf("| %s | %d | %d | %s | %s |", c.Shape, c.Concurrency, c.Ops, cellText(c), cellText(crd)))
			}
		}
		if len(stsRows) > 0 {
			p("Beside them, a StatefulSet create through kube-apiserver (0 replicas; the template is the TApp's spec.template, for pool5 its first pool entry), by the same client:\n\n")
			p("| shape | c | creates | StatefulSet ops/s (p50 / p99 ms) | CRD ops/s (p50 / p99 ms) |\n|---|---|---|---|---|\n%s\n\n", strings.Join(stsRows, "\n"))
		}
	}
	if mem := res.Memory; mem != nil {
		p("### 2. Memory (%d %s objects)\n\n", mem.Objects, mem.Shape)
		p("| process | before | after | growth | RssAnon after | RssFile after | Go heap in use growth (after GC) | Go heap after: live objects / spans holding them |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range []struct {
			name string
			pm   ProcessMemory
		}{{"tapp-apiserver (holding the TApps, embedded etcd included)", mem.TAppAPIServer}, {"kube-apiserver (holding the CRD objects)", mem.KubeAPIServer}, {"etcd of kube-apiserver (holding the CRD objects)", mem.Etcd}} {
			heap, spans := "n/a", "n/a"
			if r.pm.HeapMeasurementOK {
				heap = mib(r.pm.GrowthHeapInuse)
				if r.pm.AfterHeapLive > 0 {
					spans = fmt.Sprintf("%s / %s (%.0f%% free room)", mib(r.pm.AfterHeapLive), mib(r.pm.AfterHeapInuse),
						100*float64(r.pm.AfterHeapInuse-r.pm.AfterHeapLive)/float64(r.pm.AfterHeapInuse))
				}
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, mib(r.pm.BeforeRSSBytes), mib(r.pm.AfterRSSBytes), mib(r.pm.GrowthRSSBytes), mib(r.pm.AfterAnonBytes), mib(r.pm.AfterFileBytes), heap, spans)
		}
		p("\nkube-apiserver grew by %s while the TApps were created directly on tapp-apiserver. Create time: TApps %.1f s, CRD objects %.1f s (concurrency 16).\n\n",
			mib(mem.KubeAPIServerDuringTAppsBytes), mem.TAppCreateSeconds, mem.CRDCreateSeconds)
	}
	for _, budget := range budgetsOf(res) {
		renderWorkloads(&b, "### 3. Scale-up and scale-down", "### 4. Rolling image update", fmt.Sprintf("controller client budget %s (QPS/burst)", budget),
			atBudget(res.ScaleUp, budget), atBudget(res.ScaleDown, budget), atBudget(res.RollingUpdate, budget))
	}
	if len(res.Resize) > 0 {
		r0 := res.Resize[0]
		p("### 4b. In-place resource resize (maxUnavailable %s)\n\n", r0.MaxUnavailable)
		p("Container resources %s → %s (Burstable both; resizePolicy NotRequired for cpu and memory).\n\n", r0.ResourcesBefore, r0.ResourcesAfter)
		p("| kind | %s | pods kept (restarts) |\n|---|%s---|\n", rollColumns, rollColumnsRule)
		for _, r := range res.Resize {
			p("| %s | %s | %d (%d) |\n", r.Kind, rollCells(r.RollRun), r.PodsKept, r.ContainerRestarts)
		}
		p("\nN = %d. Write requests kube-apiserver received during the resize (events, leases and endpoints left out):\n\n", r0.Replicas)
		p("| kind | writes | of which 409 Conflict | by verb and resource |\n|---|---|---|---|\n")
		for _, r := range res.Resize {
			total, conflicts, parts := writesSummary(r.KubeAPIWrites)
			p("| %s | %d | %d | %s |\n", r.Kind, total, conflicts, parts)
		}
		p("\n")
	}
	if m := res.RolloutModelled; m != nil {
		c := m.NodeCost
		p("### 4c. Modelled node cost: scale-up and rolling image update\n\n")
		p("**Modelled node cost**, not measured: the pod simulator makes each pod wait for sandbox creation %.0f ms, an image pull %.0f ms "+
			"the first time a node runs an image (one image cache per node), %.0f ms per container start and %.0f ms per volume attach "+
			"(localcluster.PublishedNodeCost; sources in *Node cost model*). The figures of sections 3 and 4 are the primary ones.\n\n",
			c.SandboxCreate, c.ImagePull, c.ContainerStart, c.VolumeAttach)
		renderWorkloads(&b, "#### Scale-up", "#### Rolling image update", "modelled node cost", m.ScaleUp, nil, m.RollingUpdate)
	}
	renderClaimExpansion(&b, res.ClaimExpansion)
	if f := res.FanOut; f != nil {
		p("### 5. YurtAppDaemon fan-out (%d NodePools)\n\n", f.NodePools)
		if !f.Registered {
			p("Not measured: the YurtAppDaemon controller is not registered in this build.\n\n")
		} else {
			p("| variant | workloads exist (s), per repeat | provisioned (s), per repeat | provisioned min / median / max (s) | API writes per pool |\n|---|---|---|---|---|\n")
			variants := []fanOutVariant{{"yad-created", f.YADCreated, f.Runs}, {"pools-created", f.PoolsCreated, f.Runs}}
			if y := res.YASFanOut; y != nil && y.Registered {
				variants = append(variants, fanOutVariant{"yas-created", y.Created, y.Runs})
			}
			for _, v := range variants {
				var w, pr, wr []string
				for _, r := range v.runs {
					if r.Variant == v.name {
						w = append(w, fmt.Sprintf("%.2f", r.WorkloadsSeconds))
						pr = append(pr, doneText(r.ProvisionedSeconds, r.Completed))
						wr = append(wr, fmt.Sprintf("%.2f", r.WritesPerPool))
					}
				}
				p("| %s | %s | %s | %.2f / %.2f / %.2f | %s |\n", v.name, strings.Join(w, ", "), strings.Join(pr, ", "), v.s.Min, v.s.Median, v.s.Max, strings.Join(wr, ", "))
			}
			p("\n*yas-created*: a YurtAppSet (apps.openyurt.io/v1beta1) with three workloadTweaks (replicas for every pool, an image for every other pool, a label patch for one pool in ten) is created over the existing pools; provisioned = the status counts every workload with PoolFound and AppDispatched True.\n\n")
			if y := res.YASFanOut; y != nil && !y.Registered {
				p("YurtAppSet not measured: its controller is not registered in this build.\n\n")
			}
		}
	}
	renderGrowth(&b, res.Growth)
	p("### Targets\n\n| target | goal | measured | met |\n|---|---|---|---|\n")
	for _, t := range res.Targets {
		met := "no"
		switch {
		case !t.Measured:
			met = "not measured"
		case t.Met:
			met = "yes"
		}
		value := "–"
		if t.Measured {
			switch t.Unit {
			case "pods":
				value = fmt.Sprintf("%.0f pods", t.Value)
			case "×":
				value = fmt.Sprintf("%.2f×", t.Value)
				if t.Value < 0.1 {
					value = fmt.Sprintf("%.3f×", t.Value)
				}
			default:
				value = strings.TrimSpace(fmt.Sprintf("%.2f %s", t.Value, t.Unit))
			}
		}
		p("| %s | %s | %s | %s |\n", t.Name, t.Goal, value, met)
	}
	if len(res.Errors) > 0 {
		p("\nErrors during the run:\n\n")
		for _, e := range res.Errors {
			p("- %s\n", e)
		}
	}
	return b.String()
}

// renderClaimExpansion renders section 4d: the expansion of each kind, what the StatefulSet refused, what
// its template and a new instance say afterwards, and kube-apiserver's writes.
func renderClaimExpansion(b *strings.Builder, runs []ClaimExpansionRun) {
	if len(runs) == 0 {
		return
	}
	p := func(format string, args ...interface{}) { fmt.Fprintf(b, format, args...) }
	r0 := runs[0]
	p("### 4d. Volume claim expansion (maxUnavailable %s)\n\n", r0.MaxUnavailable)
	p("One claim template `%s` per instance, %s → %s, StorageClass `%s` (allowVolumeExpansion; the local cluster's simulated CSI driver "+
		"writes the external-resizer's and the kubelet's steps). Done when every claim is bound at %s with no resize condition left"+
		" (for the TApp, also status.volumeClaims all compatible and ready).\n\n",
		claimTemplateName, r0.SizeBefore, r0.SizeAfter, r0.StorageClass, r0.SizeAfter)
	p("| kind | time to all %s (s) | × StatefulSet time | claim done p50 / p99 (s) | claims at %s | most resizing at once | pods recreated | container restarts | max unavailable observed | kube-apiserver writes per instance | × StatefulSet writes | kube-apiserver CPU ms per instance | CPU s: tapp-apiserver / kube-apiserver / KCM |\n",
		r0.SizeAfter, r0.SizeAfter)
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		p("| %s | %s | %.2f× | %.2f / %.2f | %d of %d | %d | %d | %d | %d | %.2f | %.2f× | %.2f | %.1f / %.1f / %.1f |\n", r.Kind, doneText(r.Seconds, r.Completed),
			r.TimeRatioToStatefulSet, r.InstanceLatencyMs.P50/1000, r.InstanceLatencyMs.P99/1000, r.ClaimsExpanded, r.Replicas, r.MaxClaimsResizing,
			r.PodsRecreated, r.ContainerRestarts, r.MaxUnavailableObserved, r.KubeAPIWritesPerInstance, r.WritesRatioToStatefulSet,
			r.KubeAPIServerCPUMsPerInstance, r.ServerCPUSeconds, r.KubeAPIServerCPUSeconds, r.ControllerManagerCPUSeconds)
	}
	p("\nN = %d. How the claims were raised, and what the workload says afterwards:\n\n", r0.Replicas)
	for _, r := range runs {
		p("- **%s**: %s. ", r.Kind, r.How)
		if r.TemplateUpdate == "accepted" {
			p("Raising `spec.volumeClaimTemplates[0]` storage: accepted. ")
		} else if r.TemplateUpdate != "" {
			p("Raising `spec.volumeClaimTemplates[0]` storage: refused (%d): `%s`. ", r.TemplateUpdateCode, r.TemplateUpdate)
		}
		p("The claim template says %s afterwards", r.TemplateStorageAfter)
		if r.NewInstanceClaimStorage != "" {
			p("; an instance added afterwards (N→N+1) got a claim of %s", r.NewInstanceClaimStorage)
		}
		if r.ClaimStatus != "" {
			p("; status.volumeClaims `%s` %s", claimTemplateName, r.ClaimStatus)
		}
		p(".")
		if len(r.ControllerActions) > 0 {
			p(" The controller's API actions during the expansion: %s.", countsText(r.ControllerActions))
		}
		p("\n")
	}
	p("\nWrite requests kube-apiserver received during the expansion (the user's patches included; events, leases and endpoints left out):\n\n")
	p("| kind | writes | of which 409 Conflict | by verb and resource |\n|---|---|---|---|\n")
	for _, r := range runs {
		total, conflicts, parts := writesSummary(r.KubeAPIWrites)
		p("| %s | %d | %d | %s |\n", r.Kind, total, conflicts, parts)
	}
	p("\n")
}

// countsText lists counts as "key count", largest first, then by key.
func countsText(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// rollColumns are the columns every roll table shares (sections 4, 4b, 4c); rollCells fills them.
const (
	rollColumns     = "time (s) | speed-up vs StatefulSet | pods recreated | max unavailable observed | instance done p50 / p99 (s) | kube-apiserver CPU ms per instance | kube-apiserver writes per instance | CPU s: tapp-apiserver / kube-apiserver / KCM"
	rollColumnsRule = "---|---|---|---|---|---|---|---|"
)

func rollCells(r RollRun) string {
	return fmt.Sprintf("%s | %.2f× | %d | %d | %.2f / %.2f | %.2f | %.2f | %.1f / %.1f / %.1f", doneText(r.Seconds, r.Completed), r.SpeedupVsStatefulSet,
		r.PodsRecreated, r.MaxUnavailableObserved, r.InstanceLatencyMs.P50/1000, r.InstanceLatencyMs.P99/1000,
		r.KubeAPIServerCPUMsPerInstance, r.KubeAPIWritesPerInstance, r.ServerCPUSeconds, r.KubeAPIServerCPUSeconds, r.ControllerManagerCPUSeconds)
}

// renderWorkloads renders the scale and rolling-update tables of one budget (sections 3 and 4) or of the
// modelled variant, and the write requests of each phase.
func renderWorkloads(b *strings.Builder, upHeading, rollHeading, label string, ups, downs []WorkloadRun, rolls []RolloutRun) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(b, format, args...) }
	if len(ups) > 0 {
		p("%s, %s\n\n", upHeading, label)
		if len(downs) > 0 {
			p("| kind | 0→N Ready (s) | all created / seen (s) | pods/s | pod Ready p50 / p99 (s) | × StatefulSet time | × limit throughput | N→0 gone (s) | pods/s | × StatefulSet time | CPU s up: tapp-apiserver / kube-apiserver / KCM / scheduler / etcd / bench | CPU s up, all six / cores busy |\n")
			p("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		} else {
			p("| kind | 0→N Ready (s) | all created / seen (s) | pods/s | pod Ready p50 / p99 (s) | × StatefulSet time | CPU s up: tapp-apiserver / kube-apiserver / KCM / scheduler / etcd / bench | CPU s up, all six / cores busy |\n")
			p("|---|---|---|---|---|---|---|---|\n")
		}
		for _, up := range ups {
			p("| %s | %s | %.2f / %.2f | %.1f | %.2f / %.2f | %.2f |", up.Kind, doneText(up.Seconds, up.Completed), up.AllCreatedSeconds, up.AllSeenSeconds, up.PodsPerSecond,
				up.PodLatencyMs.P50/1000, up.PodLatencyMs.P99/1000, up.TimeRatioToStatefulSet)
			if len(downs) > 0 {
				p(" %.2f |", up.ThroughputRatioToLimit)
				if d := findRun(downs, up.Kind); d != nil {
					p(" %s | %.1f | %.2f |", doneText(d.Seconds, d.Completed), d.PodsPerSecond, d.TimeRatioToStatefulSet)
				} else {
					p(" – | – | – |")
				}
			}
			all := up.ServerCPUSeconds + up.KubeAPIServerCPUSeconds + up.ControllerManagerCPUSeconds + up.SchedulerCPUSeconds +
				up.EtcdCPUSeconds + up.BenchmarkProcessCPUSeconds
			p(" %.1f / %.1f / %.1f / %.1f / %.1f / %.1f | %.1f / %s |\n", up.ServerCPUSeconds, up.KubeAPIServerCPUSeconds, up.ControllerManagerCPUSeconds,
				up.SchedulerCPUSeconds, up.EtcdCPUSeconds, up.BenchmarkProcessCPUSeconds, all, coresBusy(all, up.Seconds))
		}
		p("\nN = %d.\n\n", ups[0].Replicas)
		p("%s", roundsNote(ups, func(r WorkloadRun) []float64 { return r.RoundSeconds }, "0→N Ready"))
	}
	if len(rolls) > 0 {
		p("%s (maxUnavailable %s), %s\n\n", rollHeading, rolls[0].MaxUnavailable, label)
		p("| kind | %s |\n|---|%s\n", rollColumns, rollColumnsRule)
		for _, r := range rolls {
			p("| %s | %s |\n", r.Kind, rollCells(r.RollRun))
		}
		p("\nN = %d. Per instance: divided by the N instances updated (in place) or recreated.\n\n", rolls[0].Replicas)
		p("%s", roundsNote(rolls, func(r RolloutRun) []float64 { return r.RoundSeconds }, "time"))
		p("%s", roundsNote(rolls, func(r RolloutRun) []float64 { return r.RoundCPUMsPerInstance }, "kube-apiserver CPU ms per instance"))
	}
	if len(ups) == 0 {
		return
	}
	p("**Write requests kube-apiserver received, %s** (apiserver_request_total; events, leases and endpoints left out):\n\n", label)
	p("| kind | phase | writes | of which 409 Conflict | by verb and resource |\n|---|---|---|---|---|\n")
	var tappRows []string // only phases in which tapp-apiserver received writes
	for _, w := range phasesWrites(ups, downs, rolls) {
		p("%s", writesRow(w.kind, w.phase, w.kube))
		if total, _, _ := writesSummary(w.tapp); total > 0 {
			tappRows = append(tappRows, writesRow(w.kind, w.phase, w.tapp))
		}
	}
	p("\n")
	if len(tappRows) > 0 {
		p("**Write requests tapp-apiserver received, %s** (its own API: TApp status and scale):\n\n", label)
		p("| kind | phase | writes | of which 409 Conflict | by verb and resource |\n|---|---|---|---|---|\n")
		p("%s\n", strings.Join(tappRows, ""))
	}
}

// roundsNote says, when the runs were rounds, that the table gives medians, and lists every round's value of
// what of says, per kind ("" when a single round was run).
func roundsNote[R interface{ kindName() string }](runs []R, of func(R) []float64, what string) string {
	var parts []string
	rounds := 0
	for _, r := range runs {
		values := of(r)
		if len(values) < 2 {
			continue
		}
		rounds = max(rounds, len(values))
		texts := make([]string, len(values))
		for i, v := range values {
			texts[i] = fmt.Sprintf("%.2f", v)
		}
		parts = append(parts, fmt.Sprintf("%s %s", r.kindName(), strings.Join(texts, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Medians of %d rounds (the kinds taking turns); %s of every round, in the order run: %s.\n\n",
		rounds, what, strings.Join(parts, "; "))
}

// phaseWrites are the write requests of one phase of one kind: those kube-apiserver received and those
// tapp-apiserver received.
type phaseWrites struct {
	kind, phase string
	kube, tapp  map[string]int
}

// phasesWrites lists, per kind, the writes of its scale-up, rolling update and scale-down, in that order.
func phasesWrites(ups, downs []WorkloadRun, rolls []RolloutRun) []phaseWrites {
	var out []phaseWrites
	for _, up := range ups {
		out = append(out, phaseWrites{up.Kind, "scale-up", up.KubeAPIWrites, up.TAppAPIWrites})
		if r := findRoll(rolls, up.Kind); r != nil {
			out = append(out, phaseWrites{r.Kind, "rolling update", r.KubeAPIWrites, r.TAppAPIWrites})
		}
		if d := findRun(downs, up.Kind); d != nil {
			out = append(out, phaseWrites{up.Kind, "scale-down", d.KubeAPIWrites, d.TAppAPIWrites})
		}
	}
	return out
}

// writesRow is the row of a writes table for one phase's writes w.
func writesRow(kind, phase string, w map[string]int) string {
	total, conflicts, parts := writesSummary(w)
	return fmt.Sprintf("| %s | %s | %d | %d | %s |\n", kind, phase, total, conflicts, parts)
}

// coresBusy is the CPU seconds of the measured processes over the phase's wall-clock seconds: how many of
// the machine's cores they kept busy on average ("–" when the phase took no time).
func coresBusy(cpuSeconds, seconds float64) string {
	if seconds <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", cpuSeconds/seconds)
}

func renderAPITables(b *strings.Builder, a *APIPathResult) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(b, format, args...) }
	protobuf := false
	for _, c := range a.Cells {
		if jsonPathOf(c.Path) != "" {
			protobuf = true
		}
	}
	for _, shape := range []string{shapeTutorial, shapePool5} {
		p("**%s**: ops/s (p50 / p99 latency in ms), and ratio to the CRD (throughput; for watch, p50 latency)", shape)
		if protobuf {
			p(" and of protobuf to the same path's JSON; the CRD has no protobuf (kube-apiserver serves custom resources in JSON only), its column is JSON")
		}
		p("\n\n")
		if protobuf {
			p("| verb | c | CRD | aggregated | × CRD | aggregated protobuf | × CRD | × JSON | direct | × CRD | direct protobuf | × CRD | × JSON |\n")
			p("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		} else {
			p("| verb | c | CRD | aggregated | × CRD | direct | × CRD |\n|---|---|---|---|---|---|---|\n")
		}
		for _, verb := range []string{"create", verbCreateNewTemplate, "get", "update", "list", "watch"} {
			for _, conc := range []int{1, 16} {
				crd := findCell(a.Cells, pathCRD, shape, verb, conc)
				agg := findCell(a.Cells, pathAggregated, shape, verb, conc)
				dir := findCell(a.Cells, pathDirect, shape, verb, conc)
				if crd == nil && agg == nil && dir == nil {
					continue
				}
				label := verb
				if verb == "list" && crd != nil {
					label = fmt.Sprintf("list (%d objects)", crd.ObjectsPerList)
				}
				if !protobuf {
					p("| %s | %d | %s | %s | %s | %s | %s |\n", label, conc, cellText(crd), cellText(agg), ratioText(agg), cellText(dir), ratioText(dir))
					continue
				}
				aggPB := findCell(a.Cells, pathAggregatedProtobuf, shape, verb, conc)
				dirPB := findCell(a.Cells, pathDirectProtobuf, shape, verb, conc)
				p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, conc, cellText(crd),
					cellText(agg), ratioText(agg), cellText(aggPB), ratioText(aggPB), jsonRatioText(aggPB),
					cellText(dir), ratioText(dir), cellText(dirPB), ratioText(dirPB), jsonRatioText(dirPB))
			}
		}
		if c := findCell(a.Cells, pathCRD, shape, "create", 1); c != nil {
			if findCell(a.Cells, pathCRD, shape, "update", 1) != nil {
				p("\n%d operations per create, get, update and watch cell", c.Ops)
			} else {
				p("\n%d operations per cell", c.Ops)
			}
			if l := findCell(a.Cells, pathCRD, shape, "list", 1); l != nil {
				p("; lists per list cell as shown after n=")
			}
			p(".\n")
		}
		p("\n")
	}
	if len(a.StoredBytes) > 0 {
		p("**etcd bytes per object** (the direct path's list objects read back from tapp-apiserver's etcd, against the same objects in JSON as `--storage-media-type=application/json` stores them)\n\n")
		p("| shape | objects | stored (protobuf) | JSON | protobuf / JSON |\n|---|---|---|---|---|\n")
		for _, s := range a.StoredBytes {
			p("| %s | %d | %.0f | %.0f | %.2f |\n", s.Shape, s.Objects, s.StoredBytesPerObject, s.JSONBytesPerObject, s.ProtobufToJSON)
		}
		p("\n")
	}
	var errs []string
	for _, c := range a.Cells {
		if c.Errors > 0 {
			errs = append(errs, fmt.Sprintf("%s %s %s c=%d: %d errors (%s)", c.Path, c.Shape, c.Verb, c.Concurrency, c.Errors, c.FirstError))
		}
	}
	if len(errs) > 0 {
		p("Errors: %s\n\n", strings.Join(errs, "; "))
	}
	var closed []string
	for _, c := range a.Cells {
		if c.Verb == "watch" && (c.TerminatedWatchers > 0 || c.WatchReopened > 0) {
			closed = append(closed, fmt.Sprintf("%s %s c=%d: %d closed, the benchmark's watch re-opened %d times",
				c.Path, c.Shape, c.Concurrency, c.TerminatedWatchers, c.WatchReopened))
		}
	}
	if len(closed) > 0 {
		p("Watches closed by the server as unresponsive during watch cells (`apiserver_terminated_watchers_total` of the "+
			"server whose watch cache serves the path, every client's watches): %s\n\n", strings.Join(closed, "; "))
	}
}

// jsonRatioText is a protobuf cell's ratio to the JSON cell of its path (throughput; for watch, p50 latency).
func jsonRatioText(c *APICell) string {
	if c == nil {
		return "–"
	}
	if c.Verb == "watch" {
		return fmt.Sprintf("%.2f", c.P50RatioToJSON)
	}
	return fmt.Sprintf("%.2f", c.ThroughputRatioToJSON)
}

func cellText(c *APICell) string {
	if c == nil {
		return "–"
	}
	if c.Verb == "watch" {
		return fmt.Sprintf("%.2f / %.2f ms", c.LatencyMs.P50, c.LatencyMs.P99)
	}
	if c.Verb == "list" {
		return fmt.Sprintf("%.1f (%.1f / %.1f) n=%d", c.OpsPerSecond, c.LatencyMs.P50, c.LatencyMs.P99, c.Ops)
	}
	if c.OpsPerSecond < 10 {
		return fmt.Sprintf("%.1f (%.2f / %.2f)", c.OpsPerSecond, c.LatencyMs.P50, c.LatencyMs.P99)
	}
	return fmt.Sprintf("%.0f (%.2f / %.2f)", c.OpsPerSecond, c.LatencyMs.P50, c.LatencyMs.P99)
}

func ratioText(c *APICell) string {
	if c == nil {
		return "–"
	}
	if c.Verb == "watch" {
		return fmt.Sprintf("%.2f", c.P50RatioToCRD)
	}
	if c.ThroughputRatioToCRD < 0.1 {
		return fmt.Sprintf("%.3f", c.ThroughputRatioToCRD)
	}
	return fmt.Sprintf("%.2f", c.ThroughputRatioToCRD)
}

func doneText(seconds float64, completed bool) string {
	if !completed {
		return fmt.Sprintf("> %.1f (did not complete)", seconds)
	}
	return fmt.Sprintf("%.2f", seconds)
}

// writesSummary totals the write counts that matter for workloads (not events, leases, endpoints or
// authorization reviews) and lists them, largest first.
func writesSummary(w map[string]int) (total, conflicts int, parts string) {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range w {
		res := strings.Fields(k)
		if len(res) < 2 {
			continue
		}
		switch strings.Split(res[1], "/")[0] {
		case "events", "leases", "endpoints", "subjectaccessreviews":
			continue
		}
		total += v
		if strings.Contains(k, "(409)") {
			conflicts += v
		}
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprintf("%s %d", e.k, e.v))
	}
	return total, conflicts, strings.Join(out, ", ")
}

// renderGrowth writes section 6: the figures at both sizes, their exponents, and the points measured.
func renderGrowth(b *strings.Builder, g *GrowthResult) {
	if g == nil {
		return
	}
	p := func(format string, args ...interface{}) { fmt.Fprintf(b, format, args...) }
	p("### 6. Growth\n\n")
	p("Each figure at the small and the large size, and its growth exponent log(large/small) / log(size ratio): 1 is linear, 0 constant, above 1 super-linear.\n\n")
	p("| figure | small | large | exponent | expected |\n|---|---|---|---|---|\n")
	for _, f := range g.Figures {
		p("| %s | %s at %d | %s at %d | %.2f | %.0f |\n", f.Name, growthValue(f.Small, f.Unit), f.SmallN, growthValue(f.Large, f.Unit), f.LargeN, f.Exponent, f.ExpectedExponent)
	}
	p("\n")
	if len(g.Instances) > 0 {
		p("| one TApp: instances | scale-up (s) | in-place roll (s) | status bytes | kube-apiserver writes per instance, up / roll | tapp-apiserver writes, up / roll |\n|---|---|---|---|---|---|\n")
		for _, i := range g.Instances {
			p("| %d | %s | %s | %d | %.2f / %.2f | %d / %d |\n", i.Instances, doneText(i.ScaleUpSeconds, i.ScaleUpCompleted), doneText(i.RollSeconds, i.RollCompleted),
				i.StatusBytes, perInstance(i.ScaleUpKubeAPIWrites, i.Instances), perInstance(i.RollKubeAPIWrites, i.Instances), i.ScaleUpTAppAPIWrites, i.RollTAppAPIWrites)
		}
		p("\n")
	}
	if len(g.TApps) > 0 {
		p("| TApps in one server | created until each synced once (s) | tapp-apiserver RSS growth (Go heap) | list of all (s) | watchers see an update (s) | restart until the controller has resynced (s), of it the restart |\n|---|---|---|---|---|---|\n")
		for _, t := range g.TApps {
			p("| %d | %.2f | %s (%s) | %.3f | %.3f (%d watchers) | %.2f, %.2f |\n", t.TApps, t.FirstSyncSeconds, mib(t.RSSGrowthBytes), mib(t.HeapGrowthBytes), t.ListSeconds, t.WatchFanOutSeconds, t.Watchers, t.ResyncSeconds, t.RestartSeconds)
		}
		p("\n")
	}
}

func growthValue(v float64, unit string) string {
	switch unit {
	case "bytes":
		if v >= 1<<20 {
			return mib(int64(v))
		}
		return fmt.Sprintf("%.0f B", v)
	case "writes", "syncs":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f %s", v, unit)
}

func perInstance(total, instances int) float64 {
	if instances <= 0 {
		return 0
	}
	return round(float64(total)/float64(instances), 2)
}

// fanOutVariant is one row of section 5.
type fanOutVariant struct {
	name string
	s    Spread
	runs []FanOutRun
}
