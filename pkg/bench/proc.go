package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// procMemory is the resident set of a process from /proc/<pid>/status, in bytes.
type procMemory struct {
	RSS, Anon, File int64
}

func readProcMemory(pid int) (procMemory, error) {
	var m procMemory
	if pid <= 0 {
		return m, fmt.Errorf("no such process")
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			m.RSS = kb * 1024
		case "RssAnon:":
			m.Anon = kb * 1024
		case "RssFile:":
			m.File = kb * 1024
		}
	}
	return m, sc.Err()
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// procCPUSeconds is the user+system CPU time a process has used so far.
func procCPUSeconds(pid int) float64 {
	path := "/proc/self/stat"
	if pid > 0 {
		path = fmt.Sprintf("/proc/%d/stat", pid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// The command name may hold spaces: the fields start after the last ')'.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks
}

// cpuMeter measures the CPU seconds of the cluster's processes over an interval.
type cpuMeter struct {
	pids  map[string]int
	start map[string]float64
}

func newCPUMeter(pids map[string]int) *cpuMeter {
	m := &cpuMeter{pids: pids, start: map[string]float64{}}
	for name, pid := range pids {
		m.start[name] = procCPUSeconds(pid)
	}
	return m
}

func (m *cpuMeter) used(name string) float64 {
	return round(procCPUSeconds(m.pids[name])-m.start[name], 2)
}

// heapReading is a Go server's heap right after a forced garbage collection.
type heapReading struct {
	// Inuse is the bytes of the spans that hold objects (go_memstats_heap_inuse_bytes).
	Inuse int64
	// Live is the bytes of the objects themselves (go_memstats_heap_alloc_bytes): after a collection, what
	// is reachable. Inuse - Live is free room inside those spans.
	Live int64
}

// heapAfterGC forces a garbage collection in a Go server (its /debug/pprof/heap?gc=1) and reads its heap
// from /metrics.
func heapAfterGC(ctx context.Context, cfg *rest.Config) (heapReading, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return heapReading{}, err
	}
	get := func(path string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		body, err := client.Discovery().RESTClient().Get().RequestURI(path).DoRaw(ctx)
		if err != nil {
			return "", fmt.Errorf("GET %s: %w", path, err)
		}
		return string(body), nil
	}
	if _, err := get("/debug/pprof/heap?gc=1"); err != nil {
		return heapReading{}, err
	}
	metrics, err := get("/metrics")
	if err != nil {
		return heapReading{}, err
	}
	return parseHeapReading(metrics)
}

// parseHeapReading reads the heap in use and the live heap from a Go server's /metrics text.
func parseHeapReading(metrics string) (heapReading, error) {
	var h heapReading
	var foundInuse, foundLive bool
	for _, line := range strings.Split(metrics, "\n") {
		into, found := &h.Inuse, &foundInuse
		value, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes ")
		if !ok {
			into, found = &h.Live, &foundLive
			if value, ok = strings.CutPrefix(line, "go_memstats_heap_alloc_bytes "); !ok {
				continue
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return heapReading{}, fmt.Errorf("%q: %w", line, err)
		}
		*into, *found = int64(v), true
	}
	if !foundInuse || !foundLive {
		return heapReading{}, fmt.Errorf("no go_memstats_heap_inuse_bytes or go_memstats_heap_alloc_bytes in /metrics")
	}
	return h, nil
}

// machineInfo describes this machine.
func machineInfo() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "model name") {
				m.CPUModel = strings.TrimSpace(line[strings.Index(line, ":")+1:])
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(fields[1], 10, 64)
				m.MemoryBytes = kb * 1024
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(data))
	}
	m.LoadAverage1m = loadAverage()
	return m
}

func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(fields[0], 64)
	return v
}

// requestCounts scrapes apiserver_request_total of a server's /metrics and sums it by
// "verb resource[/subresource]", codes of 400 and above apart, counting only the write verbs.
func requestCounts(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	samples, err := scrapeCounter(ctx, cfg, "apiserver_request_total")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range samples {
		switch s.labels["verb"] {
		case "WATCH", "LIST", "GET":
			continue
		}
		key := s.labels["verb"] + " " + s.labels["resource"]
		if s.labels["subresource"] != "" {
			key += "/" + s.labels["subresource"]
		}
		if s.labels["code"] >= "400" {
			key += " (" + s.labels["code"] + ")"
		}
		out[key] += s.value
	}
	return out, nil
}

// controllerActionCounts scrapes the TApp controller's tapp_controller_actions_total of tapp-apiserver's
// /metrics by "action", results other than success apart ("action (result)").
func controllerActionCounts(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	samples, err := scrapeCounter(ctx, cfg, "tapp_controller_actions_total")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range samples {
		key := s.labels["action"]
		if r := s.labels["result"]; r != "success" {
			key += " (" + r + ")"
		}
		out[key] += s.value
	}
	return out, nil
}

// metricSample is one sample of a counter with labels.
type metricSample struct {
	labels map[string]string
	value  float64
}

// scrapeCounter reads the samples of the labelled counter name from a server's /metrics.
func scrapeCounter(ctx context.Context, cfg *rest.Config, name string) ([]metricSample, error) {
	body, err := scrapeMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return parseCounter(bytes.NewReader(body), name)
}

// scrapeSums reads a server's /metrics once and returns, for each of names, the sum of its samples whose
// labels include match (every sample for nil), and the names that had no such sample (their sum is 0).
func scrapeSums(ctx context.Context, cfg *rest.Config, match map[string]string, names ...string) (sums []float64, missing []string, err error) {
	body, err := scrapeMetrics(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	sums = make([]float64, len(names))
	for i, name := range names {
		samples, err := parseCounter(bytes.NewReader(body), name)
		if err != nil {
			return nil, nil, err
		}
		found := false
		for _, s := range samples {
			if labelsMatch(s.labels, match) {
				sums[i] += s.value
				found = true
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return sums, missing, nil
}

// labelsMatch reports whether labels has every label of match with its value.
func labelsMatch(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// scrapeMetrics returns the body of a server's /metrics.
func scrapeMetrics(ctx context.Context, cfg *rest.Config) ([]byte, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// parseCounter reads the samples of the labelled counter name from the text exposition format (label
// values without commas or escaped quotes, as those of the counters read here).
func parseCounter(r io.Reader, name string) ([]metricSample, error) {
	var out []metricSample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	prefix := name + "{"
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		end := strings.LastIndex(line, "}")
		if end < len(prefix) {
			continue
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(line[len(prefix):end], ",") {
			if i := strings.Index(kv, "="); i > 0 {
				labels[kv[:i]] = strings.Trim(kv[i+1:], `"`)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		out = append(out, metricSample{labels: labels, value: v})
	}
	return out, sc.Err()
}

// requestDelta is after − before, without zero entries.
func requestDelta(before, after map[string]float64) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := int(v - before[k] + 0.5); d > 0 {
			out[k] = d
		}
	}
	return out
}

// saveProfile writes a CPU profile of a Go server (its /debug/pprof/profile) to path.
func saveProfile(ctx context.Context, cfg *rest.Config, seconds int, path string) error {
	return savePprof(ctx, cfg, fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds), time.Duration(seconds+30)*time.Second, path)
}

// saveHeapProfile writes a heap profile of a Go server, taken after a forced garbage collection (its
// /debug/pprof/heap?gc=1), to path.
func saveHeapProfile(ctx context.Context, cfg *rest.Config, path string) error {
	return savePprof(ctx, cfg, "/debug/pprof/heap?gc=1", 60*time.Second, path)
}

// savePprof writes the answer of a Go server's pprof endpoint (uri: path and query) to path.
func savePprof(ctx context.Context, cfg *rest.Config, uri string, timeout time.Duration, path string) error {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+uri, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// saveGoroutines writes a server's goroutine stacks, aggregated (/debug/pprof/goroutine?debug=1), to path.
func saveGoroutines(ctx context.Context, cfg *rest.Config, path string) error {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// sampleLoad records the largest 1-minute load average seen every 5 seconds until the returned function is
// called (more than once is fine).
func sampleLoad(max *float64) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if l := loadAverage(); l > *max {
				*max = l
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Second):
			}
		}
	}()
	var once bool
	return func() {
		if !once {
			once = true
			close(done)
			<-stopped
		}
	}
}
