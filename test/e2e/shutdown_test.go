//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

// stopBound is how long tapp-apiserver may take to exit after SIGTERM with watches open and writes in flight:
// its watches end within --shutdown-watch-termination-grace-period (2 s), not at the 60 s request timeout.
const stopBound = 5 * time.Second

// TestStandaloneGracefulStop runs tapp-apiserver --standalone (embedded etcd), opens watches, keeps writers
// creating TApps, and sends SIGTERM: the watches are ended by the server, the process exits 0 within
// stopBound, and after a restart on the same data directory every create the server acknowledged is there.
// (Cluster mode is covered by TestTAppRestartDuringRollingUpdate: the local cluster's restart fails unless
// tapp-apiserver exits 0 within the same bound with the aggregator's watches open.)
func TestStandaloneGracefulStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := freeLoopbackPort(t)
	start := func(logName string) (*exec.Cmd, chan error, versioned.Interface) {
		t.Helper()
		kubeconfig := filepath.Join(dir, "kubeconfig")
		_ = os.Remove(kubeconfig)
		logFile, err := os.Create(filepath.Join(dir, logName))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")), "--standalone",
			"--secure-port", strconv.Itoa(port), "--cert-dir", filepath.Join(dir, "certs"),
			"--embedded-etcd-data-dir", filepath.Join(dir, "etcd"), "--write-kubeconfig", kubeconfig)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait(); logFile.Close() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		pollUntil(t, time.Minute, "standalone tapp-apiserver writes its kubeconfig", func() error {
			_, err := os.Stat(kubeconfig)
			return err
		})
		config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		client, err := versioned.NewForConfig(config)
		if err != nil {
			t.Fatal(err)
		}
		pollUntil(t, time.Minute, "standalone tapp-apiserver serves TApps", func() error {
			_, err := client.TKEStackAppsV1().TApps("default").List(context.Background(), metav1.ListOptions{})
			return err
		})
		return cmd, exited, client
	}

	cmd, exited, client := start("server.log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const watches = 5
	watchEnded := make(chan time.Time, watches)
	for i := 0; i < watches; i++ {
		w, err := client.TKEStackAppsV1().TApps(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range w.ResultChan() {
			}
			watchEnded <- time.Now()
		}()
	}

	// Writers create TApps until the server stops answering; the ledger holds what it acknowledged.
	var mu sync.Mutex
	var acknowledged []string
	var writers sync.WaitGroup
	stopWriting := make(chan struct{})
	for g := 0; g < 4; g++ {
		g := g
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; ; i++ {
				select {
				case <-stopWriting:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", g, i)
				reqCtx, reqCancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := client.TKEStackAppsV1().TApps("default").Create(reqCtx, shutdownTApp(name), metav1.CreateOptions{})
				reqCancel()
				if err == nil {
					mu.Lock()
					acknowledged = append(acknowledged, name)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(time.Second)

	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	select {
	case exitErr = <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("tapp-apiserver still running a minute after SIGTERM (log in %s)", dir)
	}
	took := time.Since(signalled)
	close(stopWriting)
	writers.Wait()
	t.Logf("exited %s after SIGTERM with %d watches open and 4 writers (%d creates acknowledged): %v",
		took.Round(time.Millisecond), watches, len(acknowledged), exitErr)
	if exitErr != nil {
		t.Errorf("tapp-apiserver exited with %v after SIGTERM, want 0", exitErr)
	}
	if took > stopBound {
		t.Errorf("tapp-apiserver took %s to exit after SIGTERM, want at most %s", took, stopBound)
	}
	for i := 0; i < watches; i++ {
		select {
		case <-watchEnded:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d watches ended when the server stopped", i, watches)
		}
	}
	if len(acknowledged) == 0 {
		t.Fatal("no create was acknowledged before SIGTERM: the test proved nothing")
	}

	// Restarted on the same data: every acknowledged create is stored.
	_, _, client = start("server-restarted.log")
	list, err := client.TKEStackAppsV1().TApps("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, tapp := range list.Items {
		stored[tapp.Name] = true
	}
	var lost []string
	for _, name := range acknowledged {
		if !stored[name] {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d acknowledged creates are missing after the restart: %v", len(lost), len(acknowledged), lost)
	}
}

// shutdownTApp is a minimal valid TApp.
func shutdownTApp(name string) *tkestackv1.TApp {
	labels := map[string]string{"app": name}
	return &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tkestackv1.TAppSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

// freeLoopbackPort returns a port on 127.0.0.1 that nothing listens on right now.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
