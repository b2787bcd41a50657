package localcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// The HA form's replicas must be reachable at an address that an EndpointSlice accepts (not loopback), and
// nothing of the local cluster may listen on the machine's own interfaces. So the replicas run in a network
// namespace of the cluster's own, joined to the host by a veth pair on a /30 of 198.18.0.0/15 (the range
// RFC 2544 sets aside for benchmark networks): the replicas listen on the namespace's end; kube-apiserver's
// aggregator, the endpoints keeper and the tests reach them through the host's end, on which nothing listens.
// Inside the namespace, loopback forwarders owned by the launcher carry the replicas' connections to
// kube-apiserver and etcd on the host's loopback, on the same port numbers, so their command lines and
// certificates are the ones they would have on one network.
//
// The namespace is named replicaNetnsPrefix+"<launcher pid>-<n>" and its host link vethPrefix+"<pid>x<n>", so a
// later run can tell a stale one (its launcher is gone: SIGKILL leaves no chance to clean up) and remove it.
// Every process of the cluster gets SIGKILL when its launcher dies (processStarter), so nothing is left
// running in a namespace that is removed.

const (
	replicaNetnsPrefix = "tapp-lc-"
	vethPrefix         = "tlc"
	netnsDir           = "/run/netns"
)

// replicaNetwork is a network namespace of the cluster's own with a veth pair to the host.
type replicaNetwork struct {
	name     string
	hostLink string
	hostIP   string
	// IP is the namespace's address, where the replicas listen.
	IP string

	mu         sync.Mutex
	forwarders []*loopbackForwarder
}

// networkSeq numbers the namespaces one process creates.
var networkSeq atomic.Int32

// newReplicaNetwork removes the namespaces of launchers that are gone, then creates a namespace with loopback
// up and a veth pair on a free /30 of 198.18.0.0/15.
func newReplicaNetwork(log func(string, ...interface{})) (*replicaNetwork, error) {
	ipTool, err := exec.LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("the HA form runs its replicas in a network namespace and needs iproute2's ip: %w", err)
	}
	removeStaleNetworks(ipTool, log)
	pid, seq := os.Getpid(), networkSeq.Add(1)
	n := &replicaNetwork{
		name:     fmt.Sprintf("%s%d-%d", replicaNetnsPrefix, pid, seq),
		hostLink: fmt.Sprintf("%s%dx%d", vethPrefix, pid, seq),
	}
	peer := fmt.Sprintf("tlp%dx%d", pid, seq)
	if n.hostIP, n.IP, err = freeBenchmarkSubnet(pid, int(seq)); err != nil {
		return nil, err
	}
	steps := [][]string{
		{"netns", "add", n.name},
		{"link", "add", n.hostLink, "type", "veth", "peer", "name", peer, "netns", n.name},
		{"addr", "add", n.hostIP + "/30", "dev", n.hostLink},
		{"link", "set", n.hostLink, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
		{"-n", n.name, "addr", "add", n.IP + "/30", "dev", peer},
		{"-n", n.name, "link", "set", peer, "up"},
	}
	for _, args := range steps {
		if out, err := exec.Command(ipTool, args...).CombinedOutput(); err != nil {
			n.remove()
			return nil, fmt.Errorf("creating the replicas' network namespace (needs CAP_NET_ADMIN, i.e. root): ip %s: %v: %s",
				strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	log("network namespace %s: replicas on %s, host end %s on %s", n.name, n.IP, n.hostIP, n.hostLink)
	return n, nil
}

// freeBenchmarkSubnet picks a /30 of 198.18.0.0/15 that no interface of the host uses, starting from one
// derived from the launcher's pid, and returns its host and namespace addresses.
func freeBenchmarkSubnet(pid, seq int) (hostIP, nsIP string, err error) {
	used := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", "", err
	}
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok && ipnet.IP.To4() != nil {
			used[ipnet.IP.Mask(net.CIDRMask(30, 32)).String()] = true
		}
	}
	const blocks = 1 << 15 // /30s in a /15
	start := (pid*8 + seq) % blocks
	for i := 0; i < 256; i++ {
		block := (start + i) % blocks
		base := net.IPv4(198, 18+byte(block>>14), byte(block>>6), byte(block<<2)).To4()
		if used[base.String()] {
			continue
		}
		host, ns := append(net.IP(nil), base...), append(net.IP(nil), base...)
		host[3]++
		ns[3] += 2
		return host.String(), ns.String(), nil
	}
	return "", "", errors.New("no free /30 in 198.18.0.0/15 for the replicas' network namespace")
}

// removeStaleNetworks deletes the namespaces and host links named after launchers that no longer run.
func removeStaleNetworks(ipTool string, log func(string, ...interface{})) {
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if pid, ok := launcherPID(e.Name(), replicaNetnsPrefix, "-"); ok && !processAlive(pid) {
			if out, err := exec.Command(ipTool, "netns", "del", e.Name()).CombinedOutput(); err != nil {
				log("removing stale network namespace %s: %v: %s", e.Name(), err, strings.TrimSpace(string(out)))
				continue
			}
			log("removed stale network namespace %s (launcher pid %d is gone)", e.Name(), pid)
		}
	}
	// A host link outlives its namespace only when a launcher died between creating the pair and moving one
	// end into the namespace.
	links, _ := net.Interfaces()
	for _, l := range links {
		if pid, ok := launcherPID(l.Name, vethPrefix, "x"); ok && !processAlive(pid) {
			if err := exec.Command(ipTool, "link", "del", l.Name).Run(); err == nil {
				log("removed stale link %s (launcher pid %d is gone)", l.Name, pid)
			}
		}
	}
}

// launcherPID parses the launcher pid out of a name made of prefix, pid, sep and a sequence number.
func launcherPID(name, prefix, sep string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	pidText, seqText, ok := strings.Cut(rest, sep)
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return 0, false
	}
	if _, err := strconv.Atoi(seqText); err != nil {
		return 0, false
	}
	return pid, true
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// path is the namespace's bind mount, which setns takes.
func (n *replicaNetwork) path() string { return filepath.Join(netnsDir, n.name) }

// command wraps a command line so that it runs in the namespace (ip netns exec replaces itself with the
// command: the pid is the command's).
func (n *replicaNetwork) command(binary string, args []string) (string, []string) {
	ipTool, err := exec.LookPath("ip")
	if err != nil {
		ipTool = "ip"
	}
	return ipTool, append([]string{"netns", "exec", n.name, binary}, args...)
}

// forwardLoopback makes hostAddr (a loopback address and port of the host) reachable at the same address
// inside the namespace.
func (n *replicaNetwork) forwardLoopback(hostAddr string) error {
	l, err := listenInNetns(n.path(), hostAddr)
	if err != nil {
		return fmt.Errorf("forwarding %s into network namespace %s: %w", hostAddr, n.name, err)
	}
	f := &loopbackForwarder{listener: l, target: hostAddr, conns: map[net.Conn]struct{}{}}
	n.mu.Lock()
	n.forwarders = append(n.forwarders, f)
	n.mu.Unlock()
	go f.serve()
	return nil
}

// remove stops the forwarders and deletes the namespace (which deletes the veth pair with it).
func (n *replicaNetwork) remove() {
	n.mu.Lock()
	forwarders := n.forwarders
	n.forwarders = nil
	n.mu.Unlock()
	for _, f := range forwarders {
		f.close()
	}
	ipTool, err := exec.LookPath("ip")
	if err != nil {
		return
	}
	_ = exec.Command(ipTool, "netns", "del", n.name).Run()
	_ = exec.Command(ipTool, "link", "del", n.hostLink).Run() // gone with the namespace unless the pair never got there
}

// listenInNetns listens on addr inside the network namespace at nsPath. The socket keeps belonging to the
// namespace after the thread that made it has gone back.
func listenInNetns(nsPath, addr string) (net.Listener, error) {
	var l net.Listener
	err := inNetns(nsPath, func() error {
		var err error
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// inNetns runs fn on an OS thread that has joined the network namespace at nsPath, so that the sockets fn
// makes belong to it.
func inNetns(nsPath string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		// Locked for good unless the thread gets back to the host's namespace: a goroutine that ends locked
		// takes its thread with it, so no other goroutine ever runs in the cluster's namespace.
		runtime.LockOSThread()
		host, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- err
			return
		}
		defer host.Close()
		target, err := os.Open(nsPath)
		if err != nil {
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns: %w", err)
			return
		}
		fnErr := fn()
		if err := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns back to the host: %w", err)
			return
		}
		runtime.UnlockOSThread()
		done <- fnErr
	}()
	return <-done
}

// loopbackForwarder accepts connections inside the namespace and joins each to a new connection to the same
// address on the host.
type loopbackForwarder struct {
	listener net.Listener
	target   string

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

func (f *loopbackForwarder) serve() {
	for {
		in, err := f.listener.Accept()
		if err != nil {
			return
		}
		go f.join(in)
	}
}

func (f *loopbackForwarder) join(in net.Conn) {
	out, err := net.Dial("tcp", f.target)
	if err != nil {
		in.Close() // the target is down (a killed etcd member): the client sees its connection end
		return
	}
	if !f.track(in, out) {
		in.Close()
		out.Close()
		return
	}
	defer f.untrack(in, out)
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
	}
	go pipe(out, in)
	go pipe(in, out)
	wg.Wait()
	in.Close()
	out.Close()
}

func (f *loopbackForwarder) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	for _, c := range conns {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *loopbackForwarder) untrack(conns ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range conns {
		delete(f.conns, c)
	}
}

func (f *loopbackForwarder) close() {
	f.mu.Lock()
	f.closed = true
	conns := f.conns
	f.conns = map[net.Conn]struct{}{}
	f.mu.Unlock()
	f.listener.Close()
	for c := range conns {
		c.Close()
	}
}
