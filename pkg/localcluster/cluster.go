// Package localcluster runs a real Kubernetes control plane on loopback with tapp-apiserver registered
// behind kube-apiserver's aggregator: etcd, kube-apiserver (client certificates, RBAC, front proxy),
// kube-controller-manager, kube-scheduler, kwok with fake nodes, and tapp-apiserver in cluster mode with its
// own embedded etcd. A pod simulator stands in for the nodes' kubelets (kubelet.go) and a simulated CSI
// driver serves two StorageClasses (storage.go). hack/local-up.sh and the end-to-end tests both start
// clusters through it. A start on a work directory an earlier start used restarts that cluster on its data
// (workdir.go).
package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"embed"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

//go:embed manifests/*.yaml
var manifests embed.FS

// Config says where the local cluster keeps its files and which binaries it runs.
type Config struct {
	// WorkDir holds certificates, kubeconfigs, data and logs (logs/). It is created if missing.
	WorkDir string
	// ToolsDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok.
	ToolsDir string
	// ServerBinary is the tapp-apiserver binary.
	ServerBinary string
	// ServerArgs are extra flags for tapp-apiserver.
	ServerArgs []string
	// KubeAPIServerArgs, ControllerManagerArgs and SchedulerArgs are extra flags for kube-apiserver,
	// kube-controller-manager and kube-scheduler (for example feature gates or client rate limits).
	KubeAPIServerArgs     []string
	ControllerManagerArgs []string
	SchedulerArgs         []string
	// Nodes is the number of kwok nodes to create.
	Nodes int
	// WithoutAPIServices starts tapp-apiserver without registering it: neither group is served through
	// kube-apiserver until APIServiceManifest is applied (a test installs the CRD-based originals first).
	WithoutAPIServices bool
	// HA runs the HA form (ha.go): three etcd members for tapp-apiserver's storage and two tapp-apiserver
	// replicas behind one Service whose EndpointSlices list both, kube-apiserver routing to endpoints.
	HA bool
	// NodeCost, when set, makes the pod simulator model what a node spends on each pod (NodeCostModel);
	// nil: pods start at once.
	NodeCost *NodeCostModel
	// FreshCommand is the command that starts a new cluster in WorkDir, named where a start cannot go on with
	// the earlier cluster there; empty: removing WorkDir.
	FreshCommand string
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...interface{})
}

// Cluster is a running local cluster.
type Cluster struct {
	cfg Config
	// Kubeconfig is the admin kubeconfig (user "admin" in group system:masters).
	Kubeconfig string
	// AdminConfig is the admin client configuration.
	AdminConfig *rest.Config
	// ServerURL is tapp-apiserver's own address, bypassing the aggregator.
	ServerURL string
	// ServerCAFile is the CA bundle of tapp-apiserver's serving certificate.
	ServerCAFile string
	// SchedulerURL is kube-scheduler's secure address (loopback). Its serving certificate is signed by the
	// CA AdminConfig trusts, and it delegates authentication and authorization to kube-apiserver: AdminConfig
	// with this host reads its /metrics and /debug/pprof.
	SchedulerURL string
	// EtcdURL and EtcdPeerURL are the client and peer URLs of kube-apiserver's etcd (mutual TLS,
	// certificates in EtcdCertDir).
	EtcdURL, EtcdPeerURL string
	// ServerEtcdCertDir holds the certificates of tapp-apiserver's embedded etcd, which issues them at every
	// start (pkg/embeddedetcd); its URL is in tapp-apiserver's log.
	ServerEtcdCertDir string

	pki        *clusterPKI
	kubeAPIURL string
	processes  []*process
	kubelet    *kubelet
	kubeletAPI *kubeletAPI
	ha         *haState
	state      *workState
}

type clusterPKI struct {
	clientCA, frontProxyCA      *authority
	apiserverServing            certFiles
	admin, frontProxyClient     certFiles
	tappServer                  certFiles
	controllerManager           certFiles
	scheduler, schedulerServing certFiles
	kubeletServing              certFiles
	kubeletClient               certFiles
	saPublicKey, saSigningKey   string
}

// Start brings the cluster up and returns once both APIServices are Available (unless WithoutAPIServices) and
// no process of it listens outside loopback and its own network namespace (CheckLoopbackOnly). On error
// everything started so far is stopped.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Log == nil {
		cfg.Log = func(string, ...interface{}) {}
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	// Every path goes to other processes' flags and into kubeconfigs, where a relative path would be read
	// relative to another directory (kubectl resolves a kubeconfig's paths against the kubeconfig's folder).
	for _, p := range []*string{&cfg.WorkDir, &cfg.ToolsDir, &cfg.ServerBinary} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	if cfg.FreshCommand == "" {
		cfg.FreshCommand = "rm -rf " + cfg.WorkDir
	}
	if cfg.HA {
		// The aggregator proxies to an endpoint of the Service rather than to its cluster IP.
		cfg.KubeAPIServerArgs = append(append([]string(nil), cfg.KubeAPIServerArgs...), "--enable-aggregator-routing=true")
	}
	c := &Cluster{cfg: cfg}
	if err := c.start(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.CheckLoopbackOnly(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.cfg.WorkDir}, elem...)...)
}

func (c *Cluster) tool(name string) string { return filepath.Join(c.cfg.ToolsDir, name) }

func (c *Cluster) start(ctx context.Context) error {
	if err := os.MkdirAll(c.cfg.WorkDir, 0o755); err != nil {
		return err
	}
	if err := c.openWorkState(); err != nil {
		return err
	}
	for _, dir := range []string{"pki", "logs", "etcd", "tapp-apiserver"} {
		if err := os.MkdirAll(c.path(dir), 0o755); err != nil {
			return err
		}
	}
	if err := c.writePKI(); err != nil {
		return fmt.Errorf("creating certificates: %w", err)
	}

	etcdURL, err := c.startEtcd(ctx)
	if err != nil {
		return err
	}
	if err := c.startKubeAPIServer(ctx, etcdURL); err != nil {
		return err
	}
	rbac, err := renderManifest("rbac.yaml", nil)
	if err != nil {
		return err
	}
	if !c.cfg.HA {
		service, err := renderManifest("service.yaml", nil)
		if err != nil {
			return err
		}
		rbac = append(append(rbac, "---\n"...), service...)
	}
	// These objects are the local cluster's own, which tapp-apiserver needs as they are written here.
	if err := c.kubectl(ctx, rbac, "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		return err
	}
	// The StorageClasses exist before any controller or user could create a claim.
	admin, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return err
	}
	if err := applyStorageClasses(ctx, admin); err != nil {
		return err
	}
	startServer := c.startTAppAPIServer
	if c.cfg.HA {
		startServer = c.startHA
	}
	if err := startServer(ctx); err != nil {
		return err
	}
	if !c.cfg.WithoutAPIServices {
		if err := c.registerAPIServices(ctx); err != nil {
			return err
		}
	}
	if err := c.startControllerManager(ctx); err != nil {
		return err
	}
	if err := c.startScheduler(ctx); err != nil {
		return err
	}
	if err := c.startNodes(ctx); err != nil {
		return err
	}
	// The simulator stands in for the kubelets of every node at once: client-go's default of 5 requests per
	// second would make it the slowest part of any scale-up (about 5 pods Ready per second).
	simulatorConfig := rest.CopyConfig(c.AdminConfig)
	simulatorConfig.QPS, simulatorConfig.Burst = simulatorQPS, simulatorBurst
	client, err := kubernetes.NewForConfig(simulatorConfig)
	if err != nil {
		return err
	}
	if c.kubelet, err = startKubelet(client, c.cfg.NodeCost); err != nil {
		return fmt.Errorf("starting the pod simulator: %w", err)
	}
	c.cfg.Log("pod simulator is running")
	return nil
}

// startControllerManager runs kube-controller-manager with every default controller, each with its own
// service account, so garbage collection, namespaces, Deployments, StatefulSets and HPAs work.
func (c *Cluster) startControllerManager(ctx context.Context) error {
	kubeconfig := c.path("pki", "kube-controller-manager.kubeconfig")
	if err := c.writeKubeconfig(kubeconfig, "system:kube-controller-manager", c.pki.controllerManager); err != nil {
		return err
	}
	port := freePort()
	_, err := c.run("kube-controller-manager", c.tool("kube-controller-manager"),
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+c.pki.saSigningKey,
		"--root-ca-file="+c.pki.clientCA.CertFile,
		"--controllers=*",
		"--node-monitor-grace-period=20s",
		"--horizontal-pod-autoscaler-sync-period=5s",
	)
	if err != nil {
		return err
	}
	return c.waitHTTP(ctx, "kube-controller-manager", "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", nil)
}

// startScheduler runs kube-scheduler, which places pods on the kwok nodes, serving on loopback with a
// certificate of the cluster's CA (SchedulerURL).
func (c *Cluster) startScheduler(ctx context.Context) error {
	kubeconfig := c.path("pki", "kube-scheduler.kubeconfig")
	if err := c.writeKubeconfig(kubeconfig, "system:kube-scheduler", c.pki.scheduler); err != nil {
		return err
	}
	port := freePort()
	_, err := c.run("kube-scheduler", c.tool("kube-scheduler"),
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+c.pki.schedulerServing.CertFile, "--tls-private-key-file="+c.pki.schedulerServing.KeyFile,
		"--leader-elect=false",
	)
	if err != nil {
		return err
	}
	c.SchedulerURL = "https://127.0.0.1:" + strconv.Itoa(port)
	return c.waitHTTP(ctx, "kube-scheduler", c.SchedulerURL+"/healthz", nil)
}

// startNodes runs kwok and creates the fake nodes that do not exist yet, half of them in node pool
// "hangzhou" and half in "shanghai". Nodes an earlier start created are the user's to change (labels, taints,
// pools): they are kept as they are, and kwok, which manages every node, makes them Ready again.
func (c *Cluster) startNodes(ctx context.Context) error {
	// kwok.yaml holds kwok's own templates: it is copied, not rendered.
	stages, err := manifests.ReadFile("manifests/kwok.yaml")
	if err != nil {
		return err
	}
	kwokConfig := c.path("kwok.yaml")
	if err := os.WriteFile(kwokConfig, stages, 0o644); err != nil {
		return err
	}
	// The kubelet API every node reports as its kubelet endpoint (kubeletapi.go), on the port of the earlier
	// start when it is free: kept nodes report that port until kwok next writes their status.
	kubeletPort, err := c.port("kubelet-api", false)
	if err != nil {
		return err
	}
	if c.kubeletAPI, err = startKubeletAPI(c.AdminConfig, c.pki.kubeletServing, c.pki.clientCA.CertFile, kubeletPort); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return err
	}
	// The node Leases an earlier start's kwok held name that kwok process, which is gone: a new kwok would
	// only take them over once they expire, and the node lifecycle controller could meanwhile mark the nodes
	// Unknown. They are the simulated kubelets' heartbeats, the local cluster's own: the new kwok creates them
	// again at once.
	if err := c.releaseNodeLeases(ctx, client); err != nil {
		return err
	}
	_, err = c.run("kwok", c.tool("kwok"),
		"--kubeconfig="+c.Kubeconfig,
		"--config="+kwokConfig,
		"--manage-all-nodes=true",
		"--node-lease-duration-seconds=40",
		"--node-ip=127.0.0.1",
		"--node-port="+strconv.Itoa(c.kubeletAPI.port()),
		"--server-address=127.0.0.1:"+strconv.Itoa(freePort()),
	)
	if err != nil {
		return err
	}
	var nodes []string
	created := 0
	for i := 0; i < c.cfg.Nodes; i++ {
		pool := "hangzhou"
		if i%2 == 1 {
			pool = "shanghai"
		}
		nodes = append(nodes, fmt.Sprintf("node-%d", i))
		manifest, err := renderManifest("node.yaml", map[string]interface{}{"Name": nodes[i], "Pool": pool})
		if err != nil {
			return err
		}
		node := &corev1.Node{}
		if err := yaml.UnmarshalStrict(manifest, node); err != nil {
			return fmt.Errorf("manifests/node.yaml: %w", err)
		}
		_, err = client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{FieldManager: fieldManager})
		switch {
		case err == nil:
			created++
		case !apierrors.IsAlreadyExists(err):
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		default:
			if err := c.pointAtKubeletAPI(ctx, client, node.Name); err != nil {
				return err
			}
		}
	}
	args := append([]string{"wait", "--for=condition=Ready", "--timeout=120s"}, prefixed("node/", nodes)...)
	if err := c.kubectl(ctx, nil, args...); err != nil {
		return err
	}
	c.cfg.Log("%d nodes are Ready (%d created, %d kept as they were)", len(nodes), created, len(nodes)-created)
	return nil
}

// pointAtKubeletAPI makes a node kept from an earlier start report this start's kubelet API as its kubelet
// endpoint, when the earlier port could not be kept (kwok writes the endpoint only when it makes a node Ready).
func (c *Cluster) pointAtKubeletAPI(ctx context.Context, client kubernetes.Interface, name string) error {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	port := int32(c.kubeletAPI.port())
	if node.Status.DaemonEndpoints.KubeletEndpoint.Port == port {
		return nil
	}
	patch := fmt.Sprintf(`{"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":%d}}}}`, port)
	if _, err := client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("pointing node %s at the kubelet API: %w", name, err)
	}
	return nil
}

// releaseNodeLeases deletes the node Leases of existing nodes (in kube-node-lease, named after their node).
func (c *Cluster) releaseNodeLeases(ctx context.Context, client kubernetes.Interface) error {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, node := range nodes.Items {
		err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, node.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the Lease of node %s: %w", node.Name, err)
		}
	}
	return nil
}

// fieldManager is the field manager of what the local cluster writes through client-go.
const fieldManager = "local-cluster"

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// startTAppAPIServer runs tapp-apiserver in cluster mode as the user "tapp-apiserver".
func (c *Cluster) startTAppAPIServer(ctx context.Context) error {
	kubeconfig := c.path("tapp-apiserver", "kubeconfig")
	if err := c.writeKubeconfig(kubeconfig, "tapp-apiserver", c.pki.tappServer); err != nil {
		return err
	}
	port, err := c.port("tapp-apiserver", false)
	if err != nil {
		return err
	}
	certDir := c.path("tapp-apiserver", "certs")
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		"--alternate-dns=tapp-apiserver.tapp-system.svc",
		"--embedded-etcd-data-dir=" + c.path("tapp-apiserver", "etcd"),
		"--embedded-etcd-unsafe-no-fsync",
	}, c.cfg.ServerArgs...)
	if _, err := c.run("tapp-apiserver", c.cfg.ServerBinary, args...); err != nil {
		return err
	}
	c.ServerURL = "https://127.0.0.1:" + strconv.Itoa(port)
	c.ServerCAFile = filepath.Join(certDir, "apiserver.crt")
	c.ServerEtcdCertDir = filepath.Join(certDir, "etcd")
	return c.waitServer(ctx, "tapp-apiserver", c.ServerURL+"/readyz")
}

// storeRefusal is what tapp-apiserver logs when its storage fence refuses its store (pkg/storagefence).
const storeRefusal = "Not serving: the store is not the cluster's"

// waitServer waits until the tapp-apiserver process name answers url with 200, as waitHTTP does, but fails
// as soon as it logs that its storage fence refuses its store: the store is not the one kube-apiserver's
// record names (as when a store was removed or replaced while kube-apiserver's data was kept), which no
// waiting mends. The error says so and names the command that starts a new cluster.
func (c *Cluster) waitServer(ctx context.Context, name, url string) error {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	refused := make(chan string, 1)
	go func() {
		ticker := time.NewTicker(time.Second)
		defer ticker.Stop()
		for {
			select {
			case <-waitCtx.Done():
				return
			case <-ticker.C:
			}
			if line := c.logLine(name, storeRefusal); line != "" {
				refused <- line
				cancel()
				return
			}
		}
	}()
	err := c.waitHTTP(waitCtx, name, url, nil)
	if err == nil {
		return nil
	}
	select {
	case line := <-refused:
		return fmt.Errorf("%s refuses its store, which is not the store this cluster recorded:\n  %s\n"+
			"start a new cluster, removing the earlier one, with: %s", name, line, c.cfg.FreshCommand)
	default:
		return err
	}
}

// logLine returns the last line of the log of process name that contains text, or "".
func (c *Cluster) logLine(name, text string) string {
	log, err := os.ReadFile(c.path("logs", name+".log"))
	if err != nil {
		return ""
	}
	found := ""
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, text) {
			found = line
		}
	}
	return found
}

// APIServiceManifest returns the APIServices that register tapp-apiserver, with its CA bundle.
func (c *Cluster) APIServiceManifest() ([]byte, error) {
	if c.ha != nil {
		return c.haAPIServiceManifest()
	}
	bundle, err := caBundle(c.ServerCAFile)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(c.ServerURL[strings.LastIndex(c.ServerURL, ":")+1:])
	if err != nil {
		return nil, err
	}
	return renderManifest("apiservices.yaml", map[string]interface{}{"Port": port, "CABundle": bundle})
}

// registerAPIServices creates the APIServices with tapp-apiserver's CA and waits until they are Available.
func (c *Cluster) registerAPIServices(ctx context.Context) error {
	apiservices, err := c.APIServiceManifest()
	if err != nil {
		return err
	}
	if err := c.kubectl(ctx, apiservices, "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		return err
	}
	for _, name := range []string{"v1.apps.tkestack.io", "v1beta2.apps.openyurt.io", "v1beta1.apps.openyurt.io", "v1alpha1.apps.openyurt.io"} {
		if err := c.kubectl(ctx, nil, "wait", "--for=condition=Available", "--timeout=120s", "apiservice/"+name); err != nil {
			return err
		}
	}
	c.cfg.Log("APIServices are Available")
	return nil
}

// PID returns the process id of the cluster's process name ("etcd", "kube-apiserver", "tapp-apiserver",
// "kube-controller-manager", "kube-scheduler", "kwok"), or 0 when there is none or it has exited.
func (c *Cluster) PID(name string) int {
	for _, p := range c.processes {
		if p.name == name {
			if done, _ := p.exited(); done {
				return 0
			}
			return p.cmd.Process.Pid
		}
	}
	return 0
}

// RestartTAppAPIServer stops tapp-apiserver (SIGTERM, then SIGKILL if it is still there after restartGrace)
// and starts it again with the same binary, arguments and data directory, so that its embedded etcd keeps
// every object; it returns once the new process serves /readyz, both APIServices are Available and both
// groups answer through kube-apiserver's aggregator. The new process takes the old one's place: PID reports
// it and Stop stops it. The old process's log is kept as logs/tapp-apiserver.<old pid>.log.
//
// On SIGTERM tapp-apiserver stops its controllers and releases their Lease, ends the watches open on it
// through the aggregator (such as kube-controller-manager's garbage collector's), lets requests in flight
// finish, closes its storage and exits 0. The restart fails if it did not exit so within restartGrace (it is
// then killed).
func (c *Cluster) RestartTAppAPIServer(ctx context.Context) error {
	const name = "tapp-apiserver"
	i := -1
	for j, p := range c.processes {
		if p.name == name {
			i = j
		}
	}
	if i < 0 {
		return fmt.Errorf("%s is not running", name)
	}
	old := c.processes[i]
	oldPID := old.cmd.Process.Pid
	took, killed := old.stop(restartGrace)
	_, exitErr := old.exited()
	c.cfg.Log("stopped %s (pid %d) in %s: %v", name, oldPID, took.Round(time.Millisecond), exitErr)
	if err := os.Rename(c.path("logs", name+".log"), c.path("logs", fmt.Sprintf("%s.%d.log", name, oldPID))); err != nil {
		return err
	}
	// The same command line: the same port, certificates and embedded etcd data directory.
	p, err := startProcess(c.path("logs"), name, old.cmd.Path, old.cmd.Args[1:]...)
	if err != nil {
		return err
	}
	c.processes[i] = p
	c.cfg.Log("restarted %s (pid %d), log %s", name, p.cmd.Process.Pid, c.path("logs", name+".log"))
	var stopErr error
	switch {
	case killed:
		stopErr = fmt.Errorf("%s (pid %d) was still running %s after SIGTERM and was killed", name, oldPID, restartGrace)
	case exitErr != nil:
		stopErr = fmt.Errorf("%s (pid %d) exited after SIGTERM with %v, want 0", name, oldPID, exitErr)
	}
	if err := c.waitHTTP(ctx, name, c.ServerURL+"/readyz", nil); err != nil {
		return err
	}
	if err := c.registerAPIServices(ctx); err != nil {
		return err
	}
	for _, group := range []string{"/apis/apps.tkestack.io/v1", "/apis/apps.openyurt.io/v1alpha1"} {
		if err := c.waitHTTP(ctx, group+" through the aggregator", c.kubeAPIURL+group, c.AdminConfig); err != nil {
			return err
		}
	}
	return stopErr
}

// restartGrace is how long RestartTAppAPIServer waits for tapp-apiserver to exit after SIGTERM.
const restartGrace = 5 * time.Second

// Stop stops every process the cluster started, newest first, and waits for them to exit.
func (c *Cluster) Stop() {
	if c.kubelet != nil {
		c.kubelet.stop()
		c.kubelet = nil
	}
	if c.kubeletAPI != nil {
		c.kubeletAPI.stop()
		c.kubeletAPI = nil
	}
	c.stopHA()
	for i := len(c.processes) - 1; i >= 0; i-- {
		c.processes[i].stop(15 * time.Second)
	}
	c.processes = nil
	c.removeHANetwork()
}

func (c *Cluster) run(name, binary string, args ...string) (*process, error) {
	switch name {
	case "kube-apiserver":
		args = append(args, c.cfg.KubeAPIServerArgs...)
	case "kube-controller-manager":
		args = append(args, c.cfg.ControllerManagerArgs...)
	case "kube-scheduler":
		args = append(args, c.cfg.SchedulerArgs...)
	}
	p, err := startProcess(c.path("logs"), name, binary, args...)
	if err != nil {
		return nil, err
	}
	c.processes = append(c.processes, p)
	c.cfg.Log("started %s (pid %d), log %s", name, p.cmd.Process.Pid, c.path("logs", name+".log"))
	return p, nil
}

// writePKI writes the cluster's CAs, certificates and service account keys, keeping those an earlier start
// on the same work directory wrote while they are valid (pki.go).
func (c *Cluster) writePKI() error {
	dir := c.path("pki")
	p := &clusterPKI{}
	var err error
	if p.clientCA, err = loadOrNewAuthority(dir, "client-ca"); err != nil {
		return err
	}
	if p.frontProxyCA, err = loadOrNewAuthority(dir, "front-proxy-ca"); err != nil {
		return err
	}
	issues := []struct {
		target  *certFiles
		ca      *authority
		name    string
		subject pkix.Name
		hosts   []string
	}{
		{&p.apiserverServing, p.clientCA, "kube-apiserver", pkix.Name{CommonName: "kube-apiserver"},
			[]string{"127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}},
		{&p.admin, p.clientCA, "admin", pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, nil},
		{&p.frontProxyClient, p.frontProxyCA, "front-proxy-client", pkix.Name{CommonName: "front-proxy-client"}, nil},
		{&p.tappServer, p.clientCA, "tapp-apiserver-client", pkix.Name{CommonName: "tapp-apiserver"}, nil},
		{&p.controllerManager, p.clientCA, "kube-controller-manager", pkix.Name{CommonName: "system:kube-controller-manager"}, nil},
		{&p.scheduler, p.clientCA, "kube-scheduler", pkix.Name{CommonName: "system:kube-scheduler"}, nil},
		{&p.schedulerServing, p.clientCA, "kube-scheduler-serving", pkix.Name{CommonName: "kube-scheduler"}, []string{"127.0.0.1"}},
		{&p.kubeletServing, p.clientCA, "kubelet-serving", pkix.Name{CommonName: "kubelet"}, []string{"127.0.0.1"}},
		{&p.kubeletClient, p.clientCA, kubeletClientName, pkix.Name{CommonName: kubeletClientName}, nil},
	}
	for _, i := range issues {
		if *i.target, err = i.ca.issue(dir, i.name, i.subject, i.hosts...); err != nil {
			return err
		}
	}
	if p.saPublicKey, p.saSigningKey, err = serviceAccountKeys(dir); err != nil {
		return err
	}
	c.pki = p
	return nil
}

// startEtcd runs kube-apiserver's etcd with mutual TLS on its client and peer ports: certificates of its own
// CA (pkg/etcdpki) in pki/etcd, and kube-apiserver's client certificate the only one issued. It returns the
// client URL.
func (c *Cluster) startEtcd(ctx context.Context) (string, error) {
	clientPort, err := c.port("etcd-client", false)
	if err != nil {
		return "", err
	}
	peerPort, err := c.port("etcd-peer", false)
	if err != nil {
		return "", err
	}
	if err := etcdCerts(c.EtcdCertDir(), "local-etcd", []string{"127.0.0.1", "localhost"}); err != nil {
		return "", err
	}
	pki := func(name string) string { return filepath.Join(c.EtcdCertDir(), name) }
	clientURL := "https://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "https://127.0.0.1:" + strconv.Itoa(peerPort)
	_, err = c.run("etcd", c.tool("etcd"),
		"--name=local", "--data-dir="+c.path("etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=local="+peerURL,
		"--client-cert-auth", "--trusted-ca-file="+pki(etcdpki.CAFile),
		"--cert-file="+pki(etcdpki.ServerCertFile), "--key-file="+pki(etcdpki.ServerKeyFile),
		"--peer-client-cert-auth", "--peer-trusted-ca-file="+pki(etcdpki.CAFile),
		"--peer-cert-file="+pki(etcdpki.PeerCertFile), "--peer-key-file="+pki(etcdpki.PeerKeyFile),
		"--peer-cert-allowed-cn="+etcdpki.PeerCommonName("local-etcd"),
		"--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return "", err
	}
	c.EtcdURL, c.EtcdPeerURL = clientURL, peerURL
	return clientURL, c.waitEtcd(ctx, clientURL, pki(etcdpki.CAFile), pki(etcdpki.ClientCertFile), pki(etcdpki.ClientKeyFile))
}

// ServerEtcdURL returns the client URL of tapp-apiserver's embedded etcd, which picks a free port at every
// start, from the server's log.
func (c *Cluster) ServerEtcdURL() (string, error) {
	log, err := os.ReadFile(c.path("logs", "tapp-apiserver.log"))
	if err != nil {
		return "", err
	}
	m := embeddedEtcdURLRE.FindAllSubmatch(log, -1)
	if len(m) == 0 {
		return "", fmt.Errorf("no embedded etcd in %s", c.path("logs", "tapp-apiserver.log"))
	}
	return string(m[len(m)-1][1]), nil
}

var embeddedEtcdURLRE = regexp.MustCompile(`"Started embedded etcd".* url="([^"]+)"`)

// EtcdCertDir holds the CA, serving, peer and client certificates of kube-apiserver's etcd (names in
// pkg/etcdpki).
func (c *Cluster) EtcdCertDir() string { return c.path("pki", "etcd") }

// waitEtcd waits until etcd answers /health to a client with the client certificate.
func (c *Cluster) waitEtcd(ctx context.Context, url, caFile, certFile, keyFile string) error {
	return c.waitHTTP(ctx, "etcd", url+"/health", &rest.Config{TLSClientConfig: rest.TLSClientConfig{
		CAFile: caFile, CertFile: certFile, KeyFile: keyFile,
	}})
}

func (c *Cluster) startKubeAPIServer(ctx context.Context, etcdURL string) error {
	port, err := c.port("kube-apiserver", false)
	if err != nil {
		return err
	}
	p := c.pki
	_, err = c.run("kube-apiserver", c.tool("kube-apiserver"),
		"--etcd-servers="+etcdURL,
		"--etcd-cafile="+filepath.Join(c.EtcdCertDir(), etcdpki.CAFile),
		"--etcd-certfile="+filepath.Join(c.EtcdCertDir(), etcdpki.ClientCertFile),
		"--etcd-keyfile="+filepath.Join(c.EtcdCertDir(), etcdpki.ClientKeyFile),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		// The default Service's endpoints would be the advertised address, and Endpoints refuse loopback
		// addresses: left to itself, kube-apiserver logs that refusal every ten seconds. Nothing here runs in a
		// pod that would reach kube-apiserver through that Service.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file="+p.apiserverServing.CertFile, "--tls-private-key-file="+p.apiserverServing.KeyFile,
		"--client-ca-file="+p.clientCA.CertFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+p.saPublicKey,
		"--service-account-signing-key-file="+p.saSigningKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--requestheader-client-ca-file="+p.frontProxyCA.CertFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+p.frontProxyClient.CertFile,
		"--proxy-client-key-file="+p.frontProxyClient.KeyFile,
		"--allow-privileged=true",
		// The fake nodes' kubelet API (kubeletapi.go), for logs, exec, attach and port-forward.
		"--kubelet-client-certificate="+p.kubeletClient.CertFile, "--kubelet-client-key="+p.kubeletClient.KeyFile,
		"--kubelet-certificate-authority="+p.clientCA.CertFile, "--kubelet-preferred-address-types=InternalIP",
		"--cert-dir="+c.path("pki", "kube-apiserver-generated"),
	)
	if err != nil {
		return err
	}
	c.kubeAPIURL = "https://127.0.0.1:" + strconv.Itoa(port)
	c.Kubeconfig = c.path("kubeconfig")
	if err := c.writeKubeconfig(c.Kubeconfig, "admin", p.admin); err != nil {
		return err
	}
	if c.AdminConfig, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return err
	}
	return c.waitHTTP(ctx, "kube-apiserver", c.kubeAPIURL+"/readyz", c.AdminConfig)
}

// writeKubeconfig writes a kubeconfig for kube-apiserver authenticating with a client certificate. The
// certificates are embedded, so the file works wherever it is read from and wherever it is copied to.
func (c *Cluster) writeKubeconfig(path, user string, cert certFiles) error {
	ca, err := os.ReadFile(c.pki.clientCA.CertFile)
	if err != nil {
		return err
	}
	clientCert, err := os.ReadFile(cert.CertFile)
	if err != nil {
		return err
	}
	clientKey, err := os.ReadFile(cert.KeyFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.kubeAPIURL, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: clientCert, ClientKeyData: clientKey}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

// kubectl runs kubectl against the cluster as admin, with stdin as its input.
func (c *Cluster) kubectl(ctx context.Context, stdin []byte, args ...string) error {
	cmd := exec.CommandContext(ctx, c.tool("kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// renderManifest fills in a manifest template from manifests/.
func renderManifest(name string, data interface{}) ([]byte, error) {
	raw, err := manifests.ReadFile("manifests/" + name)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, data); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// waitHTTP polls url until it answers 200, failing early if a process of the cluster has exited.
func (c *Cluster) waitHTTP(ctx context.Context, what, url string, cfg *rest.Config) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if cfg != nil {
		transport, err := rest.TransportFor(cfg)
		if err != nil {
			return err
		}
		client.Transport = transport
	}
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		if err := c.checkProcesses(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				c.cfg.Log("%s is ready", what)
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not become ready at %s: %s", what, url, last)
}

// checkProcesses returns an error naming the first process of the cluster that has exited.
func (c *Cluster) checkProcesses() error {
	for _, p := range c.processes {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s exited (%v); see %s", p.name, err, c.path("logs", p.name+".log"))
		}
	}
	return nil
}

// freePort returns a loopback TCP port that is free right now, or 0.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// caBundle returns the base64 of a PEM file, as an APIService's caBundle wants it.
func caBundle(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(data), nil
}
