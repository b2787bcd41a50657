package localcluster

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/manager"
	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

// The HA form (Config.HA) runs tapp-apiserver as it runs in artifacts/deploy: three etcd members forming one
// cluster with mutual TLS on their client and peer ports (certificates of their own CA from pkg/etcdpki),
// and two tapp-apiserver replicas on that etcd, electing the one that runs the controllers. kube-apiserver
// routes to the Service's endpoints (--enable-aggregator-routing): the Service tapp-system/tapp-apiserver
// has no selector and one EndpointSlice per replica, whose Ready condition follows the replica's /readyz as a
// kubelet's readiness probe and the EndpointSlice controller would make it follow.
//
// Endpoint addresses may not be loopback addresses, and nothing of the local cluster listens on the machine's
// own interfaces: the replicas run in a network namespace of the cluster's own and listen on its address,
// each on a port of its own (netns.go).

const (
	// haReplicas and haEtcdMembers are the sizes of the HA form.
	haReplicas    = 2
	haEtcdMembers = 3
	// haServicePort is the port of the Service and of the APIServices; each EndpointSlice maps it to its
	// replica's port.
	haServicePort = 443
	// haServicePortName names the Service port the EndpointSlices carry.
	haServicePortName = "https"
	// haEtcdName names the HA etcd's certificates (etcdpki.PeerCommonName) and processes.
	haEtcdName = "tapp-etcd"
	// haProbePeriod is how often the endpoints keeper probes each replica's /readyz.
	haProbePeriod = 500 * time.Millisecond
	// haShutdownDelay keeps a stopping replica serving, with /readyz failing, until the endpoints keeper and
	// the aggregator have stopped routing to it.
	haShutdownDelay = 3 * time.Second
	// haEndpointsManager is the managed-by label of the EndpointSlices the local cluster keeps.
	haEndpointsManager = "localcluster.tapp-apiserver"
)

// haState is what the HA form adds to a cluster.
type haState struct {
	network    *replicaNetwork
	etcdURLs   []string
	etcdPeers  []string
	replicaURL []string
	caFiles    []string

	keeperCancel context.CancelFunc
	keeperDone   chan struct{}
}

// ReplicaName returns the process name of tapp-apiserver replica i: "tapp-apiserver" for replica 0 (so that
// PID, KillTAppAPIServer and RestartTAppAPIServer act on it), "tapp-apiserver-<i>" for the others.
func ReplicaName(i int) string {
	if i == 0 {
		return "tapp-apiserver"
	}
	return "tapp-apiserver-" + strconv.Itoa(i)
}

// Replicas is the number of tapp-apiserver replicas: 2 in the HA form, 1 otherwise.
func (c *Cluster) Replicas() int {
	if c.ha == nil {
		return 1
	}
	return haReplicas
}

// ReplicaURL is the address of replica i, bypassing the aggregator. Its serving certificate is for
// "localhost" (ServerName) and signed by ReplicaCAFile(i).
func (c *Cluster) ReplicaURL(i int) string {
	if c.ha == nil {
		return c.ServerURL
	}
	return c.ha.replicaURL[i]
}

// ReplicaLog is the log file of replica i's current process (earlier processes' logs are kept as
// <name>.<pid>.log beside it).
func (c *Cluster) ReplicaLog(i int) string { return c.path("logs", ReplicaName(i)+".log") }

// ReplicaCAFile is the CA of replica i's self-signed serving certificate.
func (c *Cluster) ReplicaCAFile(i int) string {
	if c.ha == nil {
		return c.ServerCAFile
	}
	return c.ha.caFiles[i]
}

// HAEtcdURLs are the client URLs of the three etcd members of the HA form (mutual TLS, certificates in
// HAEtcdCertDir), nil otherwise.
func (c *Cluster) HAEtcdURLs() []string {
	if c.ha == nil {
		return nil
	}
	return c.ha.etcdURLs
}

// HAEtcdCertDir holds the CA, serving, peer and client certificates of the HA form's etcd (names in
// pkg/etcdpki).
func (c *Cluster) HAEtcdCertDir() string { return c.path("pki", haEtcdName) }

// EtcdMemberName is the process name of etcd member i of the HA form.
func EtcdMemberName(i int) string { return haEtcdName + "-" + strconv.Itoa(i) }

// StopReplica stops replica i with SIGTERM (SIGKILL after restartGrace) and leaves it stopped; its log is kept
// as logs/<name>.<pid>.log. It reports how long the replica took to exit.
func (c *Cluster) StopReplica(i int) (time.Duration, error) {
	p := c.processByName(ReplicaName(i))
	if p == nil {
		return 0, fmt.Errorf("%s was never started", ReplicaName(i))
	}
	took, killed := p.stop(restartGrace)
	if killed {
		return took, fmt.Errorf("%s (pid %d) was still running %s after SIGTERM and was killed", p.name, p.cmd.Process.Pid, restartGrace)
	}
	return took, nil
}

// KillReplica kills replica i with SIGKILL (no shutdown: it neither releases the controllers' Lease nor
// fails its readiness first) and leaves it stopped.
func (c *Cluster) KillReplica(i int) error {
	return c.kill(ReplicaName(i))
}

// StartReplica starts a stopped replica i again with the same command line (address, certificates, etcd) and
// waits until it answers /readyz.
func (c *Cluster) StartReplica(ctx context.Context, i int) error {
	if err := c.startStopped(ReplicaName(i)); err != nil {
		return err
	}
	return c.waitProcessHTTP(ctx, ReplicaName(i), c.ReplicaURL(i)+"/readyz", nil)
}

// KillEtcdMember kills etcd member i of the HA form with SIGKILL and leaves it stopped.
func (c *Cluster) KillEtcdMember(i int) error { return c.kill(EtcdMemberName(i)) }

// StartEtcdMembers starts stopped etcd members of the HA form again on their data directories and waits
// until each answers /health (which needs a quorum).
func (c *Cluster) StartEtcdMembers(ctx context.Context, members ...int) error {
	for _, i := range members {
		if err := c.startStopped(EtcdMemberName(i)); err != nil {
			return err
		}
	}
	certs := func(name string) string { return filepath.Join(c.HAEtcdCertDir(), name) }
	for _, i := range members {
		if err := c.waitProcessHTTP(ctx, EtcdMemberName(i), c.ha.etcdURLs[i]+"/health", &rest.Config{TLSClientConfig: rest.TLSClientConfig{
			CAFile: certs(etcdpki.CAFile), CertFile: certs(etcdpki.ClientCertFile), KeyFile: certs(etcdpki.ClientKeyFile),
		}}); err != nil {
			return err
		}
	}
	return nil
}

// waitProcessHTTP polls url until it answers 200, failing early if the named process exits; other processes
// of the cluster may be stopped meanwhile.
func (c *Cluster) waitProcessHTTP(ctx context.Context, name, url string, cfg *rest.Config) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if cfg != nil {
		transport, err := rest.TransportFor(cfg)
		if err != nil {
			return err
		}
		client.Transport = transport
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if done, err := c.processByName(name).exited(); done {
			return false, fmt.Errorf("%s exited (%v); see %s", name, err, c.path("logs", name+".log"))
		}
		resp, err := client.Get(url)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s at %s: %w (last: %s)", name, url, err, last)
	}
	c.cfg.Log("%s is ready", name)
	return nil
}

func (c *Cluster) kill(name string) error {
	p := c.processByName(name)
	if p == nil {
		return fmt.Errorf("%s was never started", name)
	}
	if done, _ := p.exited(); !done {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	c.cfg.Log("killed %s (pid %d)", name, p.cmd.Process.Pid)
	return nil
}

// startStopped starts the command of an exited process of the cluster in its place.
func (c *Cluster) startStopped(name string) error {
	p := c.processByName(name)
	if p == nil {
		return fmt.Errorf("%s was never started", name)
	}
	if done, _ := p.exited(); !done {
		return fmt.Errorf("%s (pid %d) is running", name, p.cmd.Process.Pid)
	}
	return c.startAgain(p)
}

// startHA runs the HA form's etcd members and tapp-apiserver replicas, the selector-less Service with one
// EndpointSlice per replica, and the endpoints keeper.
func (c *Cluster) startHA(ctx context.Context) error {
	network, err := newReplicaNetwork(c.cfg.Log)
	if err != nil {
		return err
	}
	c.ha = &haState{network: network}
	if err := c.startHAEtcd(ctx); err != nil {
		return err
	}
	// The replicas reach kube-apiserver and the etcd members at their loopback addresses, forwarded into the
	// namespace.
	for _, u := range append([]string{c.kubeAPIURL}, c.ha.etcdURLs...) {
		if err := network.forwardLoopback(strings.TrimPrefix(u, "https://")); err != nil {
			return err
		}
	}
	kubeconfig := c.path("tapp-apiserver", "kubeconfig")
	if err := c.writeKubeconfig(kubeconfig, "tapp-apiserver", c.pki.tappServer); err != nil {
		return err
	}
	certs := func(name string) string { return filepath.Join(c.HAEtcdCertDir(), name) }
	for i := 0; i < haReplicas; i++ {
		port := freePort()
		certDir := c.path("tapp-apiserver", fmt.Sprintf("replica-%d", i))
		args := append([]string{
			"--kubeconfig=" + kubeconfig,
			"--bind-address=" + network.IP, "--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + certDir,
			"--alternate-dns=tapp-apiserver.tapp-system.svc",
			"--etcd-servers=" + strings.Join(c.ha.etcdURLs, ","),
			"--etcd-cafile=" + certs(etcdpki.CAFile),
			"--etcd-certfile=" + certs(etcdpki.ClientCertFile),
			"--etcd-keyfile=" + certs(etcdpki.ClientKeyFile),
			"--shutdown-delay-duration=" + haShutdownDelay.String(),
		}, c.cfg.ServerArgs...)
		binary, args := network.command(c.cfg.ServerBinary, args)
		if _, err := c.run(ReplicaName(i), binary, args...); err != nil {
			return err
		}
		c.ha.replicaURL = append(c.ha.replicaURL, "https://"+net.JoinHostPort(network.IP, strconv.Itoa(port)))
		c.ha.caFiles = append(c.ha.caFiles, filepath.Join(certDir, "apiserver.crt"))
	}
	// Both replicas start at once, as a Deployment's do, on one store.
	for i := 0; i < haReplicas; i++ {
		if err := c.waitServer(ctx, ReplicaName(i), c.ha.replicaURL[i]+"/readyz"); err != nil {
			return err
		}
	}
	c.ServerURL, c.ServerCAFile = c.ha.replicaURL[0], c.ha.caFiles[0]
	if err := c.createHAService(ctx); err != nil {
		return err
	}
	keeperCtx, cancel := context.WithCancel(context.Background())
	c.ha.keeperCancel, c.ha.keeperDone = cancel, make(chan struct{})
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return err
	}
	go c.keepEndpoints(keeperCtx, client)
	return nil
}

// startHAEtcd runs three etcd members forming one cluster, with mutual TLS on their client and peer ports.
func (c *Cluster) startHAEtcd(ctx context.Context) error {
	if err := etcdCerts(c.HAEtcdCertDir(), haEtcdName, []string{"127.0.0.1", "localhost"}); err != nil {
		return err
	}
	if err := os.MkdirAll(c.path(haEtcdName), 0o700); err != nil {
		return err
	}
	certs := func(name string) string { return filepath.Join(c.HAEtcdCertDir(), name) }
	var initial []string
	for i := 0; i < haEtcdMembers; i++ {
		clientPort, err := c.port(EtcdMemberName(i)+"-client", false)
		if err != nil {
			return err
		}
		// The members know each other by their peer URLs, kept in their data: a restart needs the same ones.
		peerPort, err := c.port(EtcdMemberName(i)+"-peer", true)
		if err != nil {
			return fmt.Errorf("%w; to start a new cluster instead: %s", err, c.cfg.FreshCommand)
		}
		c.ha.etcdURLs = append(c.ha.etcdURLs, "https://127.0.0.1:"+strconv.Itoa(clientPort))
		c.ha.etcdPeers = append(c.ha.etcdPeers, "https://127.0.0.1:"+strconv.Itoa(peerPort))
		initial = append(initial, EtcdMemberName(i)+"="+c.ha.etcdPeers[i])
	}
	for i := 0; i < haEtcdMembers; i++ {
		_, err := c.run(EtcdMemberName(i), c.tool("etcd"),
			"--name="+EtcdMemberName(i), "--data-dir="+c.path(haEtcdName, EtcdMemberName(i)),
			"--listen-client-urls="+c.ha.etcdURLs[i], "--advertise-client-urls="+c.ha.etcdURLs[i],
			"--listen-peer-urls="+c.ha.etcdPeers[i], "--initial-advertise-peer-urls="+c.ha.etcdPeers[i],
			"--initial-cluster="+strings.Join(initial, ","),
			"--initial-cluster-state=new", "--initial-cluster-token="+haEtcdName,
			"--client-cert-auth", "--trusted-ca-file="+certs(etcdpki.CAFile),
			"--cert-file="+certs(etcdpki.ServerCertFile), "--key-file="+certs(etcdpki.ServerKeyFile),
			"--peer-client-cert-auth", "--peer-trusted-ca-file="+certs(etcdpki.CAFile),
			"--peer-cert-file="+certs(etcdpki.PeerCertFile), "--peer-key-file="+certs(etcdpki.PeerKeyFile),
			"--peer-cert-allowed-cn="+etcdpki.PeerCommonName(haEtcdName),
			"--unsafe-no-fsync", "--log-level=warn")
		if err != nil {
			return err
		}
	}
	for i := 0; i < haEtcdMembers; i++ {
		if err := c.waitEtcdMember(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) waitEtcdMember(ctx context.Context, i int) error {
	certs := func(name string) string { return filepath.Join(c.HAEtcdCertDir(), name) }
	return c.waitEtcd(ctx, c.ha.etcdURLs[i], certs(etcdpki.CAFile), certs(etcdpki.ClientCertFile), certs(etcdpki.ClientKeyFile))
}

// createHAService (re)creates the selector-less ClusterIP Service with one EndpointSlice per replica, not
// ready until the endpoints keeper has probed it; an earlier start's Service and EndpointSlices are replaced.
func (c *Cluster) createHAService(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return err
	}
	const ns, name = "tapp-system", "tapp-apiserver"
	services := client.CoreV1().Services(ns)
	if err := services.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Name: haServicePortName, Port: haServicePort, Protocol: corev1.ProtocolTCP}},
		},
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := services.Create(ctx, svc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil // the old Service is still going
		}
		return err == nil, err
	}); err != nil {
		return fmt.Errorf("creating Service %s/%s: %w", ns, name, err)
	}
	for i := 0; i < haReplicas; i++ {
		slice := c.replicaSlice(i, false)
		slices := client.DiscoveryV1().EndpointSlices(ns)
		_, err := slices.Create(ctx, slice, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// An earlier start's, with that start's address and port.
			var current *discoveryv1.EndpointSlice
			if current, err = slices.Get(ctx, slice.Name, metav1.GetOptions{}); err == nil {
				current.Labels, current.Endpoints, current.Ports = slice.Labels, slice.Endpoints, slice.Ports
				_, err = slices.Update(ctx, current, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("writing EndpointSlice %s/%s: %w", ns, slice.Name, err)
		}
	}
	c.cfg.Log("Service %s/%s routes to %s", ns, name, strings.Join(c.ha.replicaURL, " and "))
	return nil
}

// replicaSlice is the EndpointSlice of replica i.
func (c *Cluster) replicaSlice(i int, ready bool) *discoveryv1.EndpointSlice {
	port, _ := strconv.Atoi(c.ha.replicaURL[i][strings.LastIndex(c.ha.replicaURL[i], ":")+1:])
	portName, port32, protocol := haServicePortName, int32(port), corev1.ProtocolTCP
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: ReplicaName(i), Namespace: "tapp-system",
			Labels: map[string]string{
				discoveryv1.LabelServiceName: "tapp-apiserver",
				discoveryv1.LabelManagedBy:   haEndpointsManager,
			},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{c.ha.network.IP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &port32, Protocol: &protocol}},
	}
}

// keepEndpoints probes each replica's /readyz every haProbePeriod and writes the result into its
// EndpointSlice's Ready condition, until ctx is done.
func (c *Cluster) keepEndpoints(ctx context.Context, client kubernetes.Interface) {
	defer close(c.ha.keeperDone)
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	written := make([]*bool, haReplicas)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		for i := 0; i < haReplicas; i++ {
			ready := false
			if resp, err := probe.Get(c.ha.replicaURL[i] + "/readyz"); err == nil {
				resp.Body.Close()
				ready = resp.StatusCode == http.StatusOK
			}
			if written[i] != nil && *written[i] == ready {
				continue
			}
			slices := client.DiscoveryV1().EndpointSlices("tapp-system")
			current, err := slices.Get(ctx, ReplicaName(i), metav1.GetOptions{})
			if err != nil {
				continue // kube-apiserver away: tried again at the next probe
			}
			want := c.replicaSlice(i, ready)
			current.Endpoints = want.Endpoints
			if _, err := slices.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
				continue
			}
			written[i] = &ready
			c.cfg.Log("endpoint of %s is ready: %v", ReplicaName(i), ready)
		}
	}, haProbePeriod)
}

// haAPIServiceManifest is the APIServices pointing to the Service's port, with both replicas' CAs.
func (c *Cluster) haAPIServiceManifest() ([]byte, error) {
	var bundle []byte
	for _, f := range c.ha.caFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		bundle = append(bundle, data...)
	}
	return renderManifest("apiservices.yaml", map[string]interface{}{
		"Port": haServicePort, "CABundle": base64.StdEncoding.EncodeToString(bundle),
	})
}

// stopHA stops the endpoints keeper.
func (c *Cluster) stopHA() {
	if c.ha == nil || c.ha.keeperCancel == nil {
		return
	}
	c.ha.keeperCancel()
	<-c.ha.keeperDone
	c.ha.keeperCancel = nil
}

// removeHANetwork removes the replicas' network namespace once the replicas have stopped.
func (c *Cluster) removeHANetwork() {
	if c.ha == nil || c.ha.network == nil {
		return
	}
	c.ha.network.remove()
}

// LeadingReplica returns the replica that holds the controllers' Lease, found by the Lease's holder
// identity in the replicas' current logs, with the Lease; -1 when no running replica holds it.
func (c *Cluster) LeadingReplica(ctx context.Context) (int, *coordinationv1.Lease, error) {
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return -1, nil, err
	}
	lease, err := client.CoordinationV1().Leases(manager.LeaseNamespace).Get(ctx, manager.LeaseName, metav1.GetOptions{})
	if err != nil {
		return -1, nil, err
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return -1, lease, nil
	}
	for i := 0; i < c.Replicas(); i++ {
		if done, _ := c.processByName(ReplicaName(i)).exited(); done {
			continue
		}
		log, err := os.ReadFile(c.ReplicaLog(i))
		if err != nil {
			return -1, lease, err
		}
		// The manager logs "Leading: starting the controllers" with its identity="<holder identity>".
		if strings.Contains(string(log), `identity="`+*lease.Spec.HolderIdentity+`"`) {
			return i, lease, nil
		}
	}
	return -1, lease, nil
}
