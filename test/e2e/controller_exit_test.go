//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServerExitsWhenTheControllersCannotStart runs a second tapp-apiserver in cluster mode against the
// cluster, with a store and a storage identity record of its own, whose controller manager cannot start
// (--leader-elect-resource-lock names no lock kind). The server starts, then the process exits non-zero
// and says why, instead of serving with /readyz green and no controllers.
func TestServerExitsWhenTheControllersCannotStart(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "controllers-exit")
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	cmd := exec.Command(absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")),
		"--kubeconfig="+cluster.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--embedded-etcd-data-dir="+filepath.Join(dir, "etcd"), "--embedded-etcd-unsafe-no-fsync",
		"--storage-identity-configmap="+ns+"/storage-identity",
		"--leader-elect-resource-lock=no-such-lock",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("tapp-apiserver still ran 2 minutes after its controllers could not start; its log:\n%s", lastLines(out.String(), 40))
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("tapp-apiserver ended with %v, want a non-zero exit status; its log:\n%s", err, lastLines(out.String(), 40))
	}
	log := out.String()
	for _, want := range []string{"the embedded controllers failed", "leader election lock"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q; its end:\n%s", want, lastLines(log, 40))
		}
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
