//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

// rewindWindow is how long the workloads are watched while the server runs on a store restored without
// a bumped revision (TestStorageFence watches the lost store for fenceWindow).
const rewindWindow = time.Minute

// TestStorageFenceRewind: a snapshot is taken, another TApp is created, and the snapshot is restored.
// Restored without bumping the revision, the store's revision is below the cluster's high-water mark: the
// server refuses it (StoreRewound) and nothing is deleted. Restored as docs/storage.md says (etcdutl
// snapshot restore --bump-revision --mark-compacted), `storage accept` counts the pods of the TApp the
// snapshot lacks, the server serves, and the collector removes those pods only.
//
// The snapshot is the bbolt database of the stopped server's embedded etcd (what `etcdctl snapshot save`
// writes, minus the hash, hence --skip-hash-check), and a restore without the bump is a copy of the data
// directory taken at the same moment. It does not call t.Parallel (see TestTAppRestartDuringRollingUpdate).
func TestStorageFenceRewind(t *testing.T) {
	ns := controllerNamespace(t, "storage-rewind")
	ctx := testContext(t, 15*time.Minute)
	dataDir := cluster.TAppAPIServerDataDir()
	tmp := t.TempDir()
	etcdutl := filepath.Join(filepath.Dir(kubectlBinary), "etcdutl")
	if _, err := os.Stat(etcdutl); err != nil {
		t.Fatalf("etcdutl is missing from the tools (hack/build-tools.sh builds it): %v", err)
	}

	mustKubectlIn(t, nginxTApp("before", 2, "nginx", ""), "apply", "-n", ns, "-f", "-")
	before := waitTAppPods(t, ctx, ns, "before", 2)

	// The snapshot, with the server stopped.
	stopServer(t)
	snapshotRevision := storeRevision(t, storageCommand(t, "status"))
	if err := exec.Command("cp", "-a", dataDir, filepath.Join(tmp, "copy")).Run(); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("cp", filepath.Join(dataDir, "member", "snap", "db"), filepath.Join(tmp, "snapshot.db")).Run(); err != nil {
		t.Fatal(err)
	}
	startServer(t)
	waitServing(t)

	// Written after the snapshot: a TApp and its pods, and the mark moves past the snapshot's revision.
	mustKubectlIn(t, nginxTApp("after", 2, "nginx", ""), "apply", "-n", ns, "-f", "-")
	after := waitTAppPods(t, ctx, ns, "after", 2)
	pollUntil(t, fenceTimeout, "the high-water mark above the snapshot's revision", func() error {
		cm, err := kubeClient.CoreV1().ConfigMaps(storagefence.DefaultRecord.Namespace).Get(ctx, storagefence.DefaultRecord.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if mark, _ := strconv.ParseInt(cm.Data["highWaterRevision"], 10, 64); mark <= snapshotRevision {
			return fmt.Errorf("mark %d, snapshot revision %d", mark, snapshotRevision)
		}
		return nil
	})
	all := map[string]types.UID{}
	for k, v := range before {
		all[k] = v
	}
	for k, v := range after {
		all[k] = v
	}

	// Restored without the bump: refused, nothing deleted.
	stopServer(t)
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "copy"), dataDir); err != nil {
		t.Fatal(err)
	}
	startServer(t)
	waitFenced(t, storagefence.ReasonRewoundStore)
	holdsFor(t, rewindWindow, "pods while the server runs on a rewound store", func() error {
		return podsIntact(ctx, ns, all)
	})
	stopServer(t)
	requireContains(t, "storage status of the rewound store", storageCommand(t, "status"),
		"Verdict: Refuse ("+storagefence.ReasonRewoundStore+")")

	// Restored as documented, with the revision bumped past the mark.
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	restore := exec.Command(etcdutl, "snapshot", "restore", filepath.Join(tmp, "snapshot.db"), "--skip-hash-check",
		"--bump-revision=1000000000", "--mark-compacted", "--data-dir="+dataDir,
		"--name=tapp-apiserver", "--initial-cluster=tapp-apiserver=https://127.0.0.1:2380",
		"--initial-advertise-peer-urls=https://127.0.0.1:2380")
	if out, err := restore.CombinedOutput(); err != nil {
		t.Fatalf("etcdutl snapshot restore: %v\n%s", err, out)
	}
	plan := storageCommand(t, "accept")
	requireContains(t, "storage accept of the restored store", plan, "Verdict: Serve", "Nothing changed")
	checkCount(t, plan, "pods", 2)
	startServer(t)
	waitServing(t)
	pollUntil(t, fenceTimeout, "the collector removes the pods of the TApp the snapshot lacks, only those", func() error {
		if err := podsIntact(ctx, ns, before); err != nil {
			return fmt.Errorf("a pod of the TApp the snapshot holds: %w", err)
		}
		got, err := listWorkloads(ctx, ns)
		if err != nil {
			return err
		}
		for key, uid := range after {
			if got[key] == uid {
				return fmt.Errorf("%s is still there", key)
			}
		}
		return nil
	})
	if _, err := tappClient.TKEStackAppsV1().TApps(ns).Get(ctx, "after", metav1.GetOptions{}); err == nil {
		t.Fatal("the TApp created after the snapshot is served after the restore")
	}
	getTApp(t, ns, "before")
}

// TestStorageFenceOtherReplica: a second replica of tapp-apiserver pointed at another (empty) etcd, with the
// same cluster record, refuses its store and starts no controllers, while the first keeps serving.
func TestStorageFenceOtherReplica(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := "https://127.0.0.1:" + strconv.Itoa(freeLoopbackPort(t))
	logFile, err := os.Create(filepath.Join(dir, "replica.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")),
		"--kubeconfig="+cluster.Kubeconfig, "--bind-address=127.0.0.1",
		"--secure-port="+strings.TrimPrefix(base, "https://127.0.0.1:"), "--cert-dir="+filepath.Join(dir, "certs"),
		"--embedded-etcd-data-dir="+filepath.Join(dir, "etcd"), "--embedded-etcd-unsafe-no-fsync")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		log, _ := os.ReadFile(filepath.Join(dir, "replica.log"))
		// pkg/controller/manager's lines (k8s.io/apiserver's certificate controllers log "Starting controller" too).
		if strings.Contains(string(log), `"Starting controller" controller=`) || strings.Contains(string(log), "starting the controllers") {
			t.Errorf("the replica on another etcd started controllers:\n%s", log)
		}
		if t.Failed() {
			t.Logf("the replica's log:\n%s", log)
		}
	}()

	waitFencedAt(t, base, storagefence.ReasonEmptyStore)
	holdsFor(t, 10*time.Second, "the first replica serving while the other refuses", func() error {
		if code, body := readyz(); code != 200 {
			return fmt.Errorf("the first replica's /readyz answered %d: %s", code, body)
		}
		if err := apiServiceAvailable(t, "v1.apps.tkestack.io", "True"); err != nil {
			return err
		}
		_, err := tappClient.TKEStackAppsV1().TApps("default").List(context.Background(), metav1.ListOptions{})
		return err
	})
	waitFencedAt(t, base, storagefence.ReasonEmptyStore)
}

// waitTAppPods waits until the TApp name has n pods and returns them by "pod/<name>".
func waitTAppPods(t *testing.T, ctx context.Context, ns, name string, n int) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	pollUntil(t, fenceTimeout, fmt.Sprintf("%d pods of TApp %s", n, name), func() error {
		pods, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return err
		}
		got := map[string]types.UID{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				got["pod/"+p.Name] = p.UID
			}
		}
		if len(got) != n {
			return fmt.Errorf("%d pods", len(got))
		}
		out = got
		return nil
	})
	return out
}

// podsIntact fails if one of want is gone, being deleted or replaced; a failed list proves nothing.
func podsIntact(ctx context.Context, ns string, want map[string]types.UID) error {
	got, err := listWorkloads(ctx, ns)
	if err != nil {
		return nil
	}
	for key, uid := range want {
		if got[key] != uid {
			return fmt.Errorf("%s (uid %s) was deleted or replaced", key, uid)
		}
	}
	return nil
}

var revisionRE = regexp.MustCompile(`(?m)^Store:.*\n(?:  .*\n)*?  revision: (\d+)$`)

// storeRevision reads the store's revision from `storage status`.
func storeRevision(t *testing.T, status string) int64 {
	t.Helper()
	m := revisionRE.FindStringSubmatch(status)
	if m == nil {
		t.Fatalf("no store revision in:\n%s", status)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}
