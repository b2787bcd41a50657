//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readmeWalkthroughTimeout bounds the README's walk-through commands and the waits for what they create.
const readmeWalkthroughTimeout = 3 * time.Minute

// TestLocalUp runs the README's first command, `make run`, exactly as written in a copy of the tree as a
// fresh clone has it (its default, relative work directory), then the README's walk-through commands
// exactly as written (the shell block that exports KUBECONFIG) in that directory, as a user does in a second
// terminal. Every example must then run: the TApp's instances and the YurtAppDaemon's pods in the example
// node pool become Running, and the plugin answers through the PATH line make run prints. Ctrl-C (SIGINT to
// the process group) must stop every process it started.
//
// Then the user moves a node to another pool, as the YurtAppDaemon example invites, and runs `make run`
// again on the same directory: the same cluster comes back, with the node's labels as the user and the
// NodePool controller left them, every node heartbeating again, the TApp's instances Running, and it
// serves (a scale-up runs). `make run ARGS=--ha` on that directory stops at once, naming the command that
// starts a new HA cluster, and leaves the data alone: `make run` once more is still the user's cluster.
// Last, the HA form on its own data: `make run ARGS="--ha --fresh"`, the examples and the node move, Ctrl-C,
// and `make run ARGS=--ha` is that cluster again.
func TestLocalUp(t *testing.T) {
	clone := freshCopy(t)
	workDir := filepath.Join(clone, "_output", "local")
	kubeconfig := filepath.Join(workDir, "kubeconfig")
	kubectl := func(args ...string) (string, error) {
		c := exec.Command(kubectlBinary, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		c.Dir = clone
		out, err := c.CombinedOutput()
		return string(out), err
	}

	run := startMakeRun(t, clone)
	run.waitReady(t)

	// The README's walk-through, as written, in the clone (kubectl on PATH, as the user has it).
	script := readmeWalkthrough(t, filepath.Join(clone, "README.md"))
	walk := exec.Command("bash", "-o", "errexit", "-o", "nounset", "-o", "pipefail", "-x", "-c", script)
	walk.Dir = clone
	walk.Env = append(run.cmd.Env, "PWD="+clone)
	out, err := walk.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's walk-through failed: %v\n%s", err, out)
	}
	t.Logf("the README's walk-through:\n%s", out)

	// What the walk-through created runs: the example TApp at its scaled size, the tutorial TApp, and the
	// YurtAppDaemon's Deployment in the example node pool with its pods on that pool's nodes.
	t.Cleanup(func() {
		if t.Failed() {
			pods, _ := kubectl("get", "pods", "-o", "wide")
			nodes, _ := kubectl("get", "nodes", "--show-labels")
			events, _ := kubectl("get", "events", "--sort-by=.lastTimestamp")
			t.Logf("pods:\n%s\nnodes:\n%s\nevents:\n%s", pods, nodes, events)
		}
	})
	runningPods := func(selector string, want int) func() error {
		return func() error {
			out, err := kubectl("get", "pods", "-l", selector, "-o",
				`jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.spec.nodeName}{"\n"}{end}`)
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			running := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if strings.Contains(line, " Running ") {
					running++
				}
			}
			if running != want {
				return fmt.Errorf("%d of the pods %s are Running, want %d:\n%s", running, selector, want, out)
			}
			return nil
		}
	}
	pollUntil(t, readmeWalkthroughTimeout, "the example TApp scaled to 5", runningPods("app=example-tapp", 5))
	pollUntil(t, readmeWalkthroughTimeout, "the YurtAppDaemon's pods in node pool hangzhou", runningPods("app=coredns", 2))
	pollUntil(t, readmeWalkthroughTimeout, "the node pool hangzhou has its nodes", func() error {
		out, err := kubectl("get", "nodepool", "hangzhou", "-o", "jsonpath={.status.readyNodeNum}")
		if err != nil || out == "" || out == "0" {
			return fmt.Errorf("readyNodeNum %q: %v", out, err)
		}
		return nil
	})
	nodes, err := kubectl("get", "pods", "-l", "app=coredns", "-o", `jsonpath={range .items[*]}{.spec.nodeName}{" "}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	poolNodes, err := kubectl("get", "nodes", "-l", "apps.openyurt.io/nodepool=hangzhou", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range strings.Fields(nodes) {
		if !strings.Contains(poolNodes, "node/"+node+"\n") && !strings.HasSuffix(poolNodes, "node/"+node) {
			t.Errorf("a coredns pod runs on %s, outside node pool hangzhou (%s)", node, strings.Fields(poolNodes))
		}
	}

	// The plugin, through the PATH line make run printed, as the user pastes it.
	pathLine := run.line(t, "kubectl tapp (the plugin): ")
	plugin := exec.Command("bash", "-o", "errexit", "-c", pathLine+"\nkubectl tapp instances example-tapp")
	plugin.Dir = clone
	plugin.Env = append(run.cmd.Env, "KUBECONFIG="+kubeconfig)
	if out, err := plugin.CombinedOutput(); err != nil || !strings.Contains(string(out), "example-tapp-4") {
		t.Errorf("%q then kubectl tapp instances example-tapp: %v\n%s", pathLine, err, out)
	}

	children := processesUnder(t, workDir)
	if len(children) < 6 {
		t.Fatalf("found %d processes using %s, want etcd, kube-apiserver, tapp-apiserver, kube-controller-manager, "+
			"kube-scheduler and kwok: %v", len(children), workDir, children)
	}

	// The user moves node-0 to the pool shanghai (which has no NodePool): the NodePool controller takes it
	// out of hangzhou, so its labels now have two other field managers than the launcher.
	if out, err := kubectl("label", "node", "node-0", "apps.openyurt.io/desired-nodepool=shanghai", "--overwrite"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	nodePoolLabel := func(node string) (string, error) {
		return kubectl("get", "node", node, "-o", `jsonpath={.metadata.labels.apps\.openyurt\.io/nodepool}`)
	}
	pollUntil(t, readmeWalkthroughTimeout, "the NodePool controller takes node-0 out of hangzhou", func() error {
		if pool, err := nodePoolLabel("node-0"); err != nil || pool == "hangzhou" {
			return fmt.Errorf("node-0 is in node pool %q (%v)", pool, err)
		}
		return nil
	})
	run.interrupt(t, workDir)

	// The user's cluster as they left it: node-0 where they moved it, every node's heartbeat (its Lease)
	// renewed by the new kwok, and the TApp's instances Running.
	userClusterBack := func(started time.Time, instances int) {
		t.Helper()
		out, err := kubectl("get", "node", "node-0", "-o", `jsonpath={.metadata.labels.apps\.openyurt\.io/desired-nodepool}`)
		if err != nil || out != "shanghai" {
			t.Errorf("node-0's label apps.openyurt.io/desired-nodepool is %q after the restart (%v), want shanghai", out, err)
		}
		if pool, err := nodePoolLabel("node-0"); err != nil || pool == "hangzhou" {
			t.Errorf("node-0 is back in node pool %q after the restart (%v)", pool, err)
		}
		pollUntil(t, readmeWalkthroughTimeout, "every node's Lease renewed since the restart", func() error {
			out, err := kubectl("get", "leases", "-n", "kube-node-lease", "-o",
				`jsonpath={range .items[*]}{.metadata.name} {.spec.renewTime}{"\n"}{end}`)
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			renewed := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				fields := strings.Fields(line)
				if len(fields) != 2 {
					continue
				}
				if at, err := time.Parse(time.RFC3339Nano, fields[1]); err == nil && at.After(started) {
					renewed++
				}
			}
			if renewed != 3 {
				return fmt.Errorf("%d node Leases renewed since %s, want 3:\n%s", renewed, started.Format(time.RFC3339), out)
			}
			return nil
		})
		pollUntil(t, readmeWalkthroughTimeout, "the example TApp's instances Running", runningPods("app=example-tapp", instances))
	}

	// make run again on its own data.
	started := time.Now()
	again := startMakeRun(t, clone)
	again.waitReady(t)
	if !strings.Contains(again.output.String(), "found an earlier single-replica cluster") ||
		!strings.Contains(again.output.String(), "make run ARGS=--fresh") {
		t.Errorf("make run did not say it found the earlier cluster and how to start fresh:\n%s", again.output.String())
	}
	userClusterBack(started, 5)
	// A kept node whose heartbeat lapsed while the cluster was stopped, as the node lifecycle controller marks
	// it, is made Ready again by kwok.
	lapsed := time.Now().UTC().Format(time.RFC3339)
	if out, err := kubectl("patch", "node", "node-1", "--subresource=status", "--type=strategic", "-p",
		`{"status":{"conditions":[{"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status.",`+
			`"lastHeartbeatTime":"`+lapsed+`","lastTransitionTime":"`+lapsed+`"}]}}`); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pollUntil(t, readmeWalkthroughTimeout, "node-1 Ready again", func() error {
		out, err := kubectl("get", "node", "node-1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err != nil || out != "True" {
			return fmt.Errorf("node-1 Ready %q (%v)", out, err)
		}
		return nil
	})
	// It serves: the TApp controller, the scheduler, the nodes and the pod simulator all work.
	if out, err := kubectl("scale", "tapp", "example-tapp", "--replicas=6"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pollUntil(t, readmeWalkthroughTimeout, "the restarted cluster scales the TApp to 6", runningPods("app=example-tapp", 6))
	again.interrupt(t, workDir)

	// The HA form on the single-replica form's data stops at once and says how to start a new HA cluster.
	ha := startMakeRun(t, clone, "ARGS=--ha")
	if err := ha.waitExit(t); err == nil {
		t.Errorf("make run ARGS=--ha on the single-replica form's data exited 0:\n%s", ha.output.String())
	}
	if out := ha.output.String(); !strings.Contains(out, "single-replica form") || !strings.Contains(out, `make run ARGS="--ha --fresh"`) ||
		strings.Contains(out, "started etcd") {
		t.Errorf("make run ARGS=--ha on the single-replica form's data: want it to stop before starting anything, "+
			"saying why and naming make run ARGS=\"--ha --fresh\":\n%s", out)
	}
	if left := processesUnder(t, workDir); len(left) > 0 {
		t.Errorf("processes left running after make run ARGS=--ha exited: %v", left)
	}

	// The data is untouched: make run is still the user's cluster.
	started = time.Now()
	last := startMakeRun(t, clone)
	last.waitReady(t)
	userClusterBack(started, 6)
	last.interrupt(t, workDir)

	// The HA form keeps its own data as well: a new HA cluster (--fresh removes the single-replica one), the
	// examples and the node move again, Ctrl-C, and make run ARGS=--ha is the same cluster.
	haFresh := startMakeRun(t, clone, "ARGS=--ha --fresh")
	haFresh.waitReady(t)
	if !strings.Contains(haFresh.output.String(), "removed the earlier cluster") {
		t.Errorf("make run ARGS=\"--ha --fresh\" did not say it removed the earlier cluster:\n%s", haFresh.output.String())
	}
	if out, err := kubectl("get", "tapp", "example-tapp"); err == nil {
		t.Errorf("the new HA cluster has the earlier cluster's TApp:\n%s", out)
	}
	if out, err := kubectl("apply", "-f", "artifacts/examples/"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := kubectl("label", "node", "node-0", "apps.openyurt.io/desired-nodepool=shanghai", "--overwrite"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pollUntil(t, readmeWalkthroughTimeout, "the NodePool controller takes node-0 out of hangzhou", func() error {
		if pool, err := nodePoolLabel("node-0"); err != nil || pool == "hangzhou" {
			return fmt.Errorf("node-0 is in node pool %q (%v)", pool, err)
		}
		return nil
	})
	haFresh.interrupt(t, workDir)

	started = time.Now()
	haAgain := startMakeRun(t, clone, "ARGS=--ha")
	haAgain.waitReady(t)
	if !strings.Contains(haAgain.output.String(), "found an earlier HA cluster") {
		t.Errorf("make run ARGS=--ha did not say it found the earlier HA cluster:\n%s", haAgain.output.String())
	}
	userClusterBack(started, 3)
	haAgain.interrupt(t, workDir)
}

// makeRun is `make run` running in a copy of the tree, in a process group of its own, its output collected.
type makeRun struct {
	cmd     *exec.Cmd
	output  *lockedBuffer
	started time.Time
	exited  chan error
	ready   chan string
}

// startMakeRun runs make run with the make arguments args (such as ARGS=--ha) in clone, kubectl on PATH.
func startMakeRun(t *testing.T, clone string, args ...string) *makeRun {
	t.Helper()
	cmd := exec.Command("make", append([]string{"run"}, args...)...)
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(kubectlBinary)+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	m := &makeRun{cmd: cmd, output: &lockedBuffer{}, started: time.Now(), exited: make(chan error, 1), ready: make(chan string, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			m.output.WriteString(line + "\n")
			if strings.Contains(line, "local cluster ready") {
				m.ready <- line
			}
		}
		m.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return m
}

// waitReady waits for make run's "local cluster ready" line.
func (m *makeRun) waitReady(t *testing.T) {
	t.Helper()
	select {
	case line := <-m.ready:
		t.Logf("%s %s (after %s)", strings.Join(m.cmd.Args, " "), line, time.Since(m.started).Round(time.Millisecond))
	case err := <-m.exited:
		t.Fatalf("make run exited before the cluster was ready: %v\n%s", err, m.output.String())
	case <-time.After(startTimeout + 2*time.Minute): // make run builds three binaries first
		t.Fatalf("no \"local cluster ready\" within %s\n%s", startTimeout, m.output.String())
	}
}

// waitExit waits until make run exits on its own and returns its error.
func (m *makeRun) waitExit(t *testing.T) error {
	t.Helper()
	select {
	case err := <-m.exited:
		return err
	case <-time.After(2 * time.Minute): // make run builds three binaries first
		t.Fatalf("%s still running after 2 minutes\n%s", strings.Join(m.cmd.Args, " "), m.output.String())
		return nil
	}
}

// line returns what follows prefix on the output line that starts with it.
func (m *makeRun) line(t *testing.T, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(m.output.String(), "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimPrefix(l, prefix)
		}
	}
	t.Fatalf("no line starting with %q in make run's output:\n%s", prefix, m.output.String())
	return ""
}

// interrupt is Ctrl-C: SIGINT to the foreground process group. make run must stop every process it started.
func (m *makeRun) interrupt(t *testing.T, workDir string) {
	t.Helper()
	if err := syscall.Kill(-m.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-m.exited:
		if !strings.Contains(m.output.String(), "stopped") {
			t.Errorf("make run exited (%v) without stopping the cluster:\n%s", err, m.output.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("make run still running a minute after Ctrl-C\n%s", m.output.String())
	}
	if left := processesUnder(t, workDir); len(left) > 0 {
		t.Errorf("processes left running after make run exited: %v", left)
	}
}

// freshCopy copies the files a fresh clone of the repository has (tracked files, and files not yet
// committed but not ignored, so that uncommitted work is tested too) into a new directory, and returns it.
// Nothing built or generated under the work tree (bin/, _output/) comes along.
func freshCopy(t *testing.T) string {
	t.Helper()
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = repoRoot
	raw, err := list.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", repoRoot, err)
	}
	dir := filepath.Join(t.TempDir(), "tapp-apiserver")
	for _, name := range strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00") {
		src := filepath.Join(repoRoot, name)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyFile(src, dst, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// readmeWalkthrough returns the README's shell block that starts with `export KUBECONFIG`: the commands a
// user runs against make run's cluster.
func readmeWalkthrough(t *testing.T, readme string) string {
	t.Helper()
	raw, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(raw), "```")
	for i := 1; i < len(blocks); i += 2 {
		body := strings.TrimPrefix(blocks[i], "sh\n")
		if strings.HasPrefix(body, "export KUBECONFIG=") {
			return body
		}
	}
	t.Fatalf("no shell block starting with export KUBECONFIG in %s", readme)
	return ""
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// processesUnder lists "pid command" of the running processes whose command line mentions dir: every process
// of a local cluster has its work directory in its flags.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if strings.Trim(e.Name(), "0123456789") != "" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(raw), dir) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(string(stat)) {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		found = append(found, e.Name()+" "+filepath.Base(args[0]))
	}
	return found
}

// isZombie reports whether a /proc/<pid>/stat line is of a process that has exited but was not reaped.
func isZombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}
