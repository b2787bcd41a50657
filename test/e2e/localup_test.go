//go:build e2e

package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLocalUp runs the command behind `make run` (hack/localup, as hack/local-up.sh runs it) in a directory of
// its own, beside the suite's cluster: it must print "local cluster ready" with a working admin kubeconfig,
// and on SIGTERM stop every process it started and exit 0.
func TestLocalUp(t *testing.T) {
	dir := t.TempDir()
	binary := filepath.Join(dir, "localup")
	build := exec.Command("go", "build", "-o", binary, "./hack/localup")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./hack/localup: %v\n%s", err, out)
	}
	workDir := filepath.Join(dir, "local")
	cmd := exec.Command(binary, "--work-dir", workDir, "--tools-dir", filepath.Dir(kubectlBinary),
		"--server-binary", absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")), "--nodes", "1")
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
	var output strings.Builder
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
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	select {
	case line := <-ready:
		t.Logf("%s (after %s)", line, time.Since(started).Round(time.Millisecond))
	case err := <-exited:
		t.Fatalf("localup exited before the cluster was ready: %v\n%s", err, output.String())
	case <-time.After(startTimeout):
		t.Fatalf("no \"local cluster ready\" within %s\n%s", startTimeout, output.String())
	}

	// The admin kubeconfig it wrote works, and the TApp API is served behind the aggregator.
	kubeconfig := filepath.Join(workDir, "kubeconfig")
	out, err := exec.Command(kubectlBinary, "--kubeconfig", kubeconfig, "get", "apiservice", "v1.apps.tkestack.io",
		"-o", "jsonpath={.status.conditions[?(@.type=='Available')].status}").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Fatalf("kubectl get apiservice v1.apps.tkestack.io with %s: %v: %s", kubeconfig, err, out)
	}
	if out, err := exec.Command(kubectlBinary, "--kubeconfig", kubeconfig, "get", "tapps", "-A").CombinedOutput(); err != nil {
		t.Fatalf("kubectl get tapps: %v: %s", err, out)
	}
	children := processesUnder(t, workDir)
	if len(children) < 6 {
		t.Fatalf("found %d processes using %s, want etcd, kube-apiserver, tapp-apiserver, kube-controller-manager, "+
			"kube-scheduler and kwok: %v", len(children), workDir, children)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("localup exited with %v after SIGTERM, want 0\n%s", err, output.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("localup still running a minute after SIGTERM\n%s", output.String())
	}
	if left := processesUnder(t, workDir); len(left) > 0 {
		t.Errorf("processes left running after localup exited: %v", left)
	}
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
