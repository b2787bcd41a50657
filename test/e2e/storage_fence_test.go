//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

const (
	// fenceWindow is how long the workloads are watched while tapp-apiserver runs on a lost store. Without
	// the fence the garbage collector deleted them within 20 s of the server serving the empty store.
	fenceWindow = 2 * time.Minute
	// fenceTimeout bounds one wait for the server, the aggregator or the garbage collector.
	fenceTimeout = 3 * time.Minute
)

// TestStorageFence: tapp-apiserver restarted on a lost (empty) store does not serve it, so the garbage
// collector deletes none of the pods, claims and Deployments of its TApps and YurtAppDaemons: its readiness
// fails with the reason, requests answer 503 saying what is wrong, the APIServices turn unavailable, an
// Event is recorded and `storage status` names the mismatch. With the original store back it serves again
// and nothing is lost. After `storage accept --confirm` on the empty store the collector removes the
// workloads whose owners the store lacks, as the operator asked. At the end the original store is put back
// and accepted, so that the cluster is as before for the tests that follow.
//
// It does not call t.Parallel: it takes the TApp API away from every test (see
// TestTAppRestartDuringRollingUpdate).
func TestStorageFence(t *testing.T) {
	ns := controllerNamespace(t, "storage-fence")
	ensureLocalPools(t)
	ctx := testContext(t, 20*time.Minute)

	// A TApp of 4 instances with volume claims, and a YurtAppDaemon with one Deployment of 2 pods.
	const tappName, yadName = "data", "fenced"
	mustKubectlIn(t, fmt.Sprintf(dataTApp, 4), "apply", "-n", ns, "-f", "-")
	pools := tappClient.OpenYurtAppsV1alpha1().NodePools()
	if _, err := pools.Patch(ctx, localPools[0], types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"e2e.tapp.io/storage-fence":"true"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	createYAD(t, ns, yadObject(yadName, "nginx", 2, false, map[string]string{"e2e.tapp.io/storage-fence": "true"}))

	workloads := map[string]types.UID{}
	pollUntil(t, fenceTimeout, "4 TApp pods, 4 claims, 1 Deployment and its 2 pods", func() error {
		got, err := listWorkloads(ctx, ns)
		if err != nil {
			return err
		}
		var tappPods, rsPods, claims, deployments int
		for key := range got {
			switch {
			case strings.HasPrefix(key, "pod/"+tappName+"-"):
				tappPods++
			case strings.HasPrefix(key, "pod/"):
				rsPods++
			case strings.HasPrefix(key, "pvc/"):
				claims++
			case strings.HasPrefix(key, "deployment/"):
				deployments++
			}
		}
		if tappPods != 4 || claims != 4 || deployments != 1 || rsPods != 2 {
			return fmt.Errorf("TApp pods %d, claims %d, Deployments %d, Deployment pods %d: %v", tappPods, claims, deployments, rsPods, keys(got))
		}
		workloads = got
		return nil
	})
	t.Logf("workloads: %v", keys(workloads))
	intact := func() error {
		got, err := listWorkloads(ctx, ns)
		if err != nil {
			return nil // the cluster answers; a failed list proves nothing either way
		}
		for key, uid := range workloads {
			if got[key] != uid {
				return fmt.Errorf("%s (uid %s) was deleted or replaced; now %v", key, uid, keys(got))
			}
		}
		return nil
	}

	dataDir := cluster.TAppAPIServerDataDir()
	original := dataDir + ".original"

	// The store is lost: the server comes back on an empty etcd, with the same flags.
	stopServer(t)
	if err := os.Rename(dataDir, original); err != nil {
		t.Fatal(err)
	}
	startServer(t)
	waitFenced(t, storagefence.ReasonEmptyStore)
	code, body := serverRequest(t, "/apis/apps.tkestack.io/v1/namespaces/"+ns+"/tapps")
	if code != http.StatusServiceUnavailable {
		t.Fatalf("a TApp list on the fenced server answered %d, want 503: %s", code, body)
	}
	requireContains(t, "the fenced server's answer", body, storagefence.ReasonEmptyStore, "storage accept --confirm")
	pollUntil(t, fenceTimeout, "the APIService v1.apps.tkestack.io unavailable", func() error {
		return apiServiceAvailable(t, "v1.apps.tkestack.io", "False")
	})
	t.Logf("APIService: %s", mustKubectl(t, "get", "apiservice", "v1.apps.tkestack.io", "-o",
		`jsonpath={.status.conditions[?(@.type=="Available")].reason}: {.status.conditions[?(@.type=="Available")].message}`))
	pollUntil(t, fenceTimeout, "a StoreEmpty Event in tapp-system", func() error {
		out, err := kubectl(t, "get", "events", "-n", storagefence.DefaultRecord.Namespace,
			"--field-selector", "reason="+storagefence.ReasonEmptyStore, "-o", "name")
		if err != nil || strings.TrimSpace(out) == "" {
			return fmt.Errorf("no Event yet: %v", err)
		}
		return nil
	})
	started := time.Now()
	holdsFor(t, fenceWindow, "workloads while the server runs on an empty store", intact)
	t.Logf("nothing deleted in %s on the empty store", time.Since(started).Round(time.Second))
	if err := apiServiceAvailable(t, "v1.apps.tkestack.io", "False"); err != nil {
		t.Fatal(err)
	}

	// storage status names the mismatch (the embedded etcd is opened with the server stopped).
	stopServer(t)
	status := storageCommand(t, "status")
	requireContains(t, "storage status", status, "the store is empty", "Verdict: Refuse ("+storagefence.ReasonEmptyStore+")")
	requireContains(t, "storage status", status, "high-water revision")

	// The original store is back: the server serves it, and nothing was lost.
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(original, dataDir); err != nil {
		t.Fatal(err)
	}
	startServer(t)
	waitServing(t)
	getTApp(t, ns, tappName)
	if err := intact(); err != nil {
		t.Fatal(err)
	}

	// Wiped again, and this time the operator accepts the empty store: the collector removes the TApp's
	// pods and the YurtAppDaemon's Deployment. Claims carry no owner reference and stay.
	stopServer(t)
	if err := os.Rename(dataDir, original); err != nil {
		t.Fatal(err)
	}
	startServer(t)
	waitFenced(t, storagefence.ReasonEmptyStore)
	stopServer(t)
	plan := storageCommand(t, "accept")
	requireContains(t, "storage accept without --confirm", plan, "Nothing changed")
	checkCount(t, plan, "pods", 4)
	checkCount(t, plan, "deployments", 1)
	requireContains(t, "storage status after a plain accept", storageCommand(t, "status"), "Verdict: Refuse")
	requireContains(t, "storage accept --confirm", storageCommand(t, "accept", "--confirm"), "Accepted")
	requireContains(t, "storage status after accept", storageCommand(t, "status"), "Verdict: Serve")
	startServer(t)
	waitServing(t)
	pollUntil(t, fenceTimeout, "the garbage collector removes the orphaned pods and Deployment", func() error {
		got, err := listWorkloads(ctx, ns)
		if err != nil {
			return err
		}
		for key, uid := range workloads {
			orphan := !strings.HasPrefix(key, "pvc/")
			if orphan && got[key] == uid {
				return fmt.Errorf("%s is still there", key)
			}
			if !orphan && got[key] != uid {
				return fmt.Errorf("claim %s was deleted", key)
			}
		}
		return nil
	})

	// The original store again, accepted, for the tests that follow.
	stopServer(t)
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(original, dataDir); err != nil {
		t.Fatal(err)
	}
	requireContains(t, "storage accept --confirm of the original store", storageCommand(t, "accept", "--confirm"), "Accepted")
	startServer(t)
	waitServing(t)
}

// listWorkloads returns the pods, claims and Deployments of ns by kind/name, with their UIDs; those being
// deleted are left out.
func listWorkloads(ctx context.Context, ns string) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	pods, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range pods.Items {
		if o.DeletionTimestamp == nil {
			out["pod/"+o.Name] = o.UID
		}
	}
	claims, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range claims.Items {
		if o.DeletionTimestamp == nil {
			out["pvc/"+o.Name] = o.UID
		}
	}
	deployments, err := kubeClient.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range deployments.Items {
		if o.DeletionTimestamp == nil {
			out["deployment/"+o.Name] = o.UID
		}
	}
	return out, nil
}

func keys(m map[string]types.UID) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func stopServer(t *testing.T) {
	t.Helper()
	if err := cluster.StopTAppAPIServer(); err != nil {
		t.Fatal(err)
	}
}

func startServer(t *testing.T) {
	t.Helper()
	if err := cluster.StartTAppAPIServer(); err != nil {
		t.Fatal(err)
	}
}

// serverRequest GETs path from tapp-apiserver directly (not through the aggregator) as the cluster's
// admin, and returns the status code and body.
func serverRequest(t *testing.T, path string) (int, string) {
	t.Helper()
	return serverRequestTo(t, cluster.ServerURL, path)
}

// serverRequestTo GETs path from the tapp-apiserver at base as the cluster's admin (its serving certificate
// is not checked).
func serverRequestTo(t *testing.T, base, path string) (int, string) {
	t.Helper()
	config := rest.CopyConfig(cluster.AdminConfig)
	config.Host = base
	config.TLSClientConfig.CAData, config.TLSClientConfig.CAFile, config.TLSClientConfig.Insecure = nil, "", true
	client, err := rest.HTTPClientFor(config)
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 10 * time.Second
	resp, err := client.Get(base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// readyz returns the status code and body of tapp-apiserver's /readyz?verbose.
func readyz() (int, string) { return readyzOf(cluster.ServerURL) }

// readyzOf returns the status code and body of /readyz?verbose of the tapp-apiserver at base.
func readyzOf(base string) (int, string) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get(base + "/readyz?verbose")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitFenced waits until tapp-apiserver's readiness check storage-identity fails and it refuses the
// discovery of apps.tkestack.io/v1 with reason. (/readyz withholds the reasons of failing checks.)
func waitFenced(t *testing.T, reason string) { waitFencedAt(t, cluster.ServerURL, reason) }

// waitFencedAt is waitFenced for the tapp-apiserver at base.
func waitFencedAt(t *testing.T, base, reason string) {
	t.Helper()
	pollUntil(t, fenceTimeout, "tapp-apiserver refusing its store with "+reason, func() error {
		code, body := readyzOf(base)
		if code == http.StatusOK || !strings.Contains(body, "[-]"+storagefence.HealthCheckName+" failed") {
			return fmt.Errorf("/readyz answered %d: %s", code, body)
		}
		code, body = serverRequestTo(t, base, "/apis/apps.tkestack.io/v1")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, reason) {
			return fmt.Errorf("/apis/apps.tkestack.io/v1 answered %d: %s", code, body)
		}
		return nil
	})
}

// waitServing waits until tapp-apiserver is ready and the aggregator serves TApps again.
func waitServing(t *testing.T) {
	t.Helper()
	pollUntil(t, fenceTimeout, "tapp-apiserver ready", func() error {
		if code, body := readyz(); code != http.StatusOK {
			return fmt.Errorf("/readyz answered %d: %s", code, body)
		}
		return nil
	})
	for _, name := range []string{"v1.apps.tkestack.io", "v1alpha1.apps.openyurt.io", "v1beta1.apps.openyurt.io", "v1beta2.apps.openyurt.io"} {
		pollUntil(t, fenceTimeout, "APIService "+name+" available", func() error {
			return apiServiceAvailable(t, name, "True")
		})
	}
	pollUntil(t, fenceTimeout, "TApps served through the aggregator", func() error {
		_, err := tappClient.TKEStackAppsV1().TApps("default").List(context.Background(), metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

func apiServiceAvailable(t *testing.T, name, want string) error {
	t.Helper()
	out, err := kubectl(t, "get", "apiservice", name, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != want {
		return fmt.Errorf("APIService %s Available=%q, want %s", name, out, want)
	}
	return nil
}

// storageCommand runs `tapp-apiserver storage <args>` on the stopped server's embedded etcd and the
// cluster, and returns its output.
func storageCommand(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"storage"}, args...)
	full = append(full, "--kubeconfig="+cluster.Kubeconfig, "--embedded-etcd-data-dir="+cluster.TAppAPIServerDataDir(),
		"--cert-dir="+t.TempDir())
	out, err := exec.CommandContext(ctx, absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")), full...).CombinedOutput()
	t.Logf("tapp-apiserver %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("tapp-apiserver %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// checkCount checks that accept's plan counts at least want of resource (other tests may leave more).
func checkCount(t *testing.T, plan, resource string, want int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s+` + resource + `: (\d+)$`).FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("storage accept does not count %s:\n%s", resource, plan)
	}
	if n, _ := strconv.Atoi(m[1]); n < want {
		t.Fatalf("storage accept counts %d %s, want at least %d", n, resource, want)
	}
}
