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
// node pool become Running. Ctrl-C (SIGINT to the process group) must stop every process it started.
func TestLocalUp(t *testing.T) {
	clone := freshCopy(t)

	cmd := exec.Command("make", "run")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(kubectlBinary)+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	ready := make(chan string, 1)
	var output lockedBuffer
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			output.WriteString(line + "\n")
			if strings.Contains(line, "local cluster ready") {
				ready <- line
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	select {
	case line := <-ready:
		t.Logf("%s (after %s)", line, time.Since(started).Round(time.Millisecond))
	case err := <-exited:
		t.Fatalf("make run exited before the cluster was ready: %v\n%s", err, output.String())
	case <-time.After(startTimeout + 2*time.Minute): // make run builds two binaries first
		t.Fatalf("no \"local cluster ready\" within %s\n%s", startTimeout, output.String())
	}

	workDir := filepath.Join(clone, "_output", "local")
	kubeconfig := filepath.Join(workDir, "kubeconfig")
	kubectl := func(args ...string) (string, error) {
		c := exec.Command(kubectlBinary, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		c.Dir = clone
		out, err := c.CombinedOutput()
		return string(out), err
	}

	// The README's walk-through, as written, in the clone (kubectl on PATH, as the user has it).
	script := readmeWalkthrough(t, filepath.Join(clone, "README.md"))
	walk := exec.Command("bash", "-o", "errexit", "-o", "nounset", "-o", "pipefail", "-x", "-c", script)
	walk.Dir = clone
	walk.Env = append(cmd.Env, "PWD="+clone)
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
			events, _ := kubectl("get", "events", "--sort-by=.lastTimestamp")
			t.Logf("pods:\n%s\nevents:\n%s", pods, events)
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

	children := processesUnder(t, workDir)
	if len(children) < 6 {
		t.Fatalf("found %d processes using %s, want etcd, kube-apiserver, tapp-apiserver, kube-controller-manager, "+
			"kube-scheduler and kwok: %v", len(children), workDir, children)
	}

	// Ctrl-C: SIGINT to the foreground process group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if !strings.Contains(output.String(), "stopped") {
			t.Errorf("make run exited (%v) without stopping the cluster:\n%s", err, output.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("make run still running a minute after Ctrl-C\n%s", output.String())
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
