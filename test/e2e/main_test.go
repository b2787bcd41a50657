//go:build e2e

// Package e2e drives tapp-apiserver end to end: one real local cluster (etcd, kube-apiserver with the
// aggregator, kube-controller-manager, kube-scheduler, kwok nodes and tapp-apiserver in cluster mode) is
// started for the whole package, and the tests talk to it through kube-apiserver with kubectl and client-go,
// as users of a real cluster would.
//
// Run it with `make e2e`, or by hand:
//
//	go build -o bin/tapp-apiserver ./cmd/tapp-apiserver
//	TAPP_E2E_TOOLS_DIR=$(./hack/build-tools.sh | tail -n 1) TAPP_E2E_SERVER_BINARY=$PWD/bin/tapp-apiserver \
//	  go test -tags e2e -count=1 -v ./test/e2e/...
//
// TAPP_E2E_WORK_DIR, when set, keeps the cluster's files (certificates, kubeconfig, logs) in that directory
// ("1" or "true" mean _output/e2e of the module) instead of a temporary directory.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

const (
	// kubectlTimeout bounds one kubectl invocation.
	kubectlTimeout = 60 * time.Second
	// startTimeout bounds the start of the local cluster.
	startTimeout = 4 * time.Minute
)

var (
	// cluster is the one local cluster all tests share.
	cluster *localcluster.Cluster
	// repoRoot is the directory of the module's go.mod.
	repoRoot string
	// kubectlBinary is the kubectl of the tools directory.
	kubectlBinary string

	kubeClient    kubernetes.Interface
	tappClient    versioned.Interface
	dynamicClient dynamic.Interface
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	logf := func(format string, args ...interface{}) {
		fmt.Fprintf(os.Stderr, "[e2e %s] %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}

	toolsDir, serverBinary := os.Getenv("TAPP_E2E_TOOLS_DIR"), os.Getenv("TAPP_E2E_SERVER_BINARY")
	if toolsDir == "" || serverBinary == "" {
		fmt.Fprintln(os.Stderr, "e2e: TAPP_E2E_TOOLS_DIR (the bin directory printed by hack/build-tools.sh) and "+
			"TAPP_E2E_SERVER_BINARY (a built tapp-apiserver) must be set; run the suite with `make e2e`, which sets both")
		return 1
	}
	var err error
	if repoRoot, err = findRepoRoot(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	toolsDir, serverBinary = absolute(toolsDir), absolute(serverBinary)
	kubectlBinary = filepath.Join(toolsDir, "kubectl")
	for _, f := range []string{kubectlBinary, serverBinary} {
		if _, err := os.Stat(f); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v (run the suite with `make e2e`)\n", err)
			return 1
		}
	}

	workDir, keep := os.Getenv("TAPP_E2E_WORK_DIR"), true
	switch workDir {
	case "":
		keep = false
		if workDir, err = os.MkdirTemp("", "tapp-e2e-"); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
	case "1", "true":
		workDir = filepath.Join(repoRoot, "_output", "e2e")
	default:
		workDir = absolute(workDir)
	}
	// A previous run's data (etcd, certificates) must not leak into this one.
	if err := localcluster.RemoveData(workDir); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	logsDir := filepath.Join(workDir, "logs")

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	started := time.Now()
	logf("starting the local cluster in %s", workDir)
	cluster, err = localcluster.Start(ctx, localcluster.Config{
		WorkDir:      workDir,
		ToolsDir:     toolsDir,
		ServerBinary: serverBinary,
		Nodes:        3,
		Log:          logf,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the local cluster: %v\ne2e: logs are in %s\n", err, logsDir)
		return 1
	}
	logf("local cluster ready in %s", time.Since(started).Round(time.Millisecond))

	code := func() int {
		if err := newClients(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		code := m.Run()
		removePluginDir()
		// After the whole suite's load: no process of the cluster, nor this test program, listens outside
		// loopback (localcluster.Start checked it once already, before any test ran).
		if err := cluster.CheckLoopbackOnly(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		return code
	}()

	cluster.Stop()
	switch {
	case code != 0:
		fmt.Fprintf(os.Stderr, "e2e: FAILED; the cluster's logs are in %s\n", logsDir)
	case !keep:
		_ = os.RemoveAll(workDir)
	default:
		logf("the cluster's files are in %s", workDir)
	}
	return code
}

func newClients() error {
	var err error
	if kubeClient, err = kubernetes.NewForConfig(cluster.AdminConfig); err != nil {
		return err
	}
	if tappClient, err = versioned.NewForConfig(cluster.AdminConfig); err != nil {
		return err
	}
	dynamicClient, err = dynamic.NewForConfig(cluster.AdminConfig)
	return err
}

// findRepoRoot walks up from the working directory to the directory holding go.mod.
func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// absolute resolves a relative path against the working directory if it exists there, else the module root
// (go test runs in test/e2e, make in the module root).
func absolute(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	if abs, err := filepath.Abs(path); err == nil {
		if _, err := os.Stat(abs); err == nil {
			return abs
		}
	}
	return filepath.Join(repoRoot, path)
}

// repoPath is a file of the module.
func repoPath(elem ...string) string {
	return filepath.Join(append([]string{repoRoot}, elem...)...)
}

// kubectl runs kubectl as the cluster's admin and returns its stdout; the error carries stderr.
func kubectl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return kubectlIn(t, nil, args...)
}

// kubectlAs runs kubectl as the admin impersonating user (--as).
func kubectlAs(t testing.TB, user string, args ...string) (string, error) {
	t.Helper()
	return kubectlIn(t, nil, append([]string{"--as=" + user}, args...)...)
}

// kubectlIn runs kubectl as the admin with stdin as its input.
func kubectlIn(t testing.TB, stdin []byte, args ...string) (string, error) {
	t.Helper()
	stdout, _, err := kubectlOutputs(t, stdin, args...)
	return stdout, err
}

// kubectlOutputs runs kubectl as the admin with stdin as its input and returns stdout and stderr.
func kubectlOutputs(t testing.TB, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary, append([]string{"--kubeconfig=" + cluster.Kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("kubectl %s", strings.Join(args, " "))
	if err != nil {
		return stdout.String(), stderr.String(), fmt.Errorf("kubectl %s: %w\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String(), nil
}

// mustKubectl runs kubectl as the admin and fails the test on error.
func mustKubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := kubectl(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustKubectlIn runs kubectl as the admin with stdin and fails the test on error.
func mustKubectlIn(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectlIn(t, []byte(stdin), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// backgroundKubectl is a long-running kubectl (a watch) whose stdout lines arrive on a channel.
type backgroundKubectl struct {
	cancel context.CancelFunc
	lines  chan string
	done   chan struct{}
	mu     sync.Mutex
	stderr bytes.Buffer
}

// startKubectl starts kubectl in the background; it is stopped when the test ends.
func startKubectl(t testing.TB, args ...string) *backgroundKubectl {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, kubectlBinary, append([]string{"--kubeconfig=" + cluster.Kubeconfig}, args...)...)
	b := &backgroundKubectl{cancel: cancel, lines: make(chan string, 1000), done: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = lockedWriter{&b.mu, &b.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl %s &", strings.Join(args, " "))
	go func() {
		defer close(b.done)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			b.lines <- scanner.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(b.lines)
	}()
	t.Cleanup(func() {
		cancel()
		<-b.done
	})
	return b
}

// waitLine returns the first line (after those already read) that satisfies match.
func (b *backgroundKubectl) waitLine(t testing.TB, timeout time.Duration, what string, match func(string) bool) string {
	t.Helper()
	deadline := time.After(timeout)
	var seen []string
	for {
		select {
		case line, ok := <-b.lines:
			if !ok {
				b.mu.Lock()
				defer b.mu.Unlock()
				t.Fatalf("kubectl exited before printing %s; stdout:\n%s\nstderr:\n%s", what, strings.Join(seen, "\n"), b.stderr.String())
			}
			seen = append(seen, line)
			if match(line) {
				return line
			}
		case <-deadline:
			b.mu.Lock()
			defer b.mu.Unlock()
			t.Fatalf("kubectl did not print %s within %s; stdout:\n%s\nstderr:\n%s", what, timeout, strings.Join(seen, "\n"), b.stderr.String())
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// newNamespace creates a namespace with a unique name starting with prefix and deletes it when the test
// ends (without waiting).
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := kubeClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = kubeClient.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// eventually calls f until it returns nil or timeout passes, then fails the test with f's last error.
func eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done within %s: %v", what, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// testContext is a context bounded by timeout that ends with the test.
func testContext(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// table is kubectl's human-readable output: a header and rows cut at the header's column offsets (kubectl
// aligns columns with a tabwriter, and empty cells such as an unset APPSTATUS print as blanks).
type table struct {
	header []string
	rows   [][]string
}

var columnRE = regexp.MustCompile(`\S+(?: \S+)*`)

func parseTable(t testing.TB, out string) table {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		t.Fatalf("no table in kubectl's output %q", out)
	}
	var tb table
	spans := columnRE.FindAllStringIndex(lines[0], -1)
	for _, s := range spans {
		tb.header = append(tb.header, lines[0][s[0]:s[1]])
	}
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		row := make([]string, len(spans))
		for i, s := range spans {
			end := len(l)
			if i+1 < len(spans) && spans[i+1][0] < end {
				end = spans[i+1][0]
			}
			if s[0] < end {
				row[i] = strings.TrimSpace(l[s[0]:end])
			}
		}
		tb.rows = append(tb.rows, row)
	}
	return tb
}

// requireHeader fails unless the header is exactly want.
func (tb table) requireHeader(t testing.TB, want ...string) {
	t.Helper()
	if strings.Join(tb.header, "|") != strings.Join(want, "|") {
		t.Fatalf("header = %q, want %q", tb.header, want)
	}
}

// cell returns the cell of column in the row whose first cell is name.
func (tb table) cell(t testing.TB, name, column string) string {
	t.Helper()
	col := -1
	for i, h := range tb.header {
		if h == column {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no column %s in %q", column, tb.header)
	}
	for _, r := range tb.rows {
		if r[0] == name {
			return r[col]
		}
	}
	t.Fatalf("no row %s in %q", name, tb.rows)
	return ""
}

// requireContains fails unless s contains every one of subs.
func requireContains(t testing.TB, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}
