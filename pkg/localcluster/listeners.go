package localcluster

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Every process of the local cluster, and the program that runs it (make run's launcher, the e2e tests, the
// chaos suite, the benchmark), listens only on loopback or inside the network namespace the cluster made for
// itself. Start refuses to hand out a cluster that does otherwise, and the e2e suite checks it again after
// its load; this file finds the sockets from /proc.

// Listener is a socket that a process listens on: a TCP socket in LISTEN or an unconnected bound UDP socket.
type Listener struct {
	// Process is the name of the cluster's process ("kube-apiserver", "tapp-apiserver-1", ...), or "launcher"
	// for this program.
	Process string
	PID     int
	// Protocol is tcp, tcp6, udp or udp6.
	Protocol string
	Address  net.IP
	Port     int
	// Namespace is "host" for the network namespace this program runs in, the name of the cluster's own
	// namespace, or the namespace's inode for any other.
	Namespace string
}

func (l Listener) String() string {
	return fmt.Sprintf("%s (pid %d) listens on %s %s in network namespace %s", l.Process, l.PID, l.Protocol,
		net.JoinHostPort(l.Address.String(), strconv.Itoa(l.Port)), l.Namespace)
}

// Listeners returns the listening sockets of every running process of the cluster and of this program.
func (c *Cluster) Listeners() ([]Listener, error) {
	owners := map[int]string{os.Getpid(): "launcher"}
	for _, p := range c.processes {
		if done, _ := p.exited(); !done {
			owners[p.cmd.Process.Pid] = p.name
		}
	}
	named := map[uint64]string{}
	if c.ha != nil && c.ha.network != nil {
		if ino, err := netnsInode(c.ha.network.path()); err == nil {
			named[ino] = c.ha.network.name
		}
	}
	return listenersOf(owners, named)
}

// CheckLoopbackOnly returns an error naming every socket of Listeners that is neither on loopback nor inside
// the cluster's own network namespace.
func (c *Cluster) CheckLoopbackOnly() error {
	listeners, err := c.Listeners()
	if err != nil {
		return err
	}
	clusterNamespace := ""
	if c.ha != nil && c.ha.network != nil {
		clusterNamespace = c.ha.network.name
	}
	if bad := outsideLoopback(listeners, clusterNamespace); len(bad) > 0 {
		lines := make([]string, len(bad))
		for i, l := range bad {
			lines[i] = l.String()
		}
		return fmt.Errorf("the local cluster listens outside loopback and its own network namespace:\n  %s", strings.Join(lines, "\n  "))
	}
	return nil
}

// outsideLoopback returns the listeners that are in the host's namespace on a non-loopback address, or in a
// namespace other than the host's and the cluster's.
func outsideLoopback(listeners []Listener, clusterNamespace string) []Listener {
	var bad []Listener
	for _, l := range listeners {
		switch {
		case l.Namespace == "host" && l.Address.IsLoopback():
		case clusterNamespace != "" && l.Namespace == clusterNamespace:
		default:
			bad = append(bad, l)
		}
	}
	return bad
}

// listenersOf reads the listening sockets of the processes in owners (pid → name). Namespaces are told by
// inode: the host's is this program's, those in named have a name, others are shown by inode.
func listenersOf(owners map[int]string, named map[uint64]string) ([]Listener, error) {
	hostNS, err := netnsInode("/proc/self/ns/net")
	if err != nil {
		return nil, err
	}
	namespaceName := func(ino uint64) string {
		if ino == hostNS {
			return "host"
		}
		if name, ok := named[ino]; ok {
			return name
		}
		return "net:[" + strconv.FormatUint(ino, 10) + "]"
	}
	// The socket tables of every namespace a process is in, read through one of its processes; a socket the
	// launcher made inside the cluster's namespace is found in the table read through a replica.
	type socketEntry struct {
		protocol  string
		ip        net.IP
		port      int
		namespace uint64
	}
	sockets := map[uint64]socketEntry{}
	readNamespaces := map[uint64]bool{}
	pids := make([]int, 0, len(owners))
	for pid := range owners {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		ns, err := netnsInode(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil || readNamespaces[ns] {
			continue // exited meanwhile, or read already
		}
		readNamespaces[ns] = true
		for _, protocol := range []string{"tcp", "tcp6", "udp", "udp6"} {
			entries, err := readSocketTable(fmt.Sprintf("/proc/%d/net/%s", pid, protocol), strings.HasPrefix(protocol, "udp"))
			if err != nil {
				continue
			}
			for inode, e := range entries {
				sockets[inode] = socketEntry{protocol: protocol, ip: e.ip, port: e.port, namespace: ns}
			}
		}
	}
	var out []Listener
	for _, pid := range pids {
		inodes, err := socketInodes(pid)
		if err != nil {
			continue // exited meanwhile
		}
		for _, inode := range inodes {
			e, ok := sockets[inode]
			if !ok {
				continue // not a listening inet socket (unix sockets, connections)
			}
			out = append(out, Listener{Process: owners[pid], PID: pid, Protocol: e.protocol, Address: e.ip, Port: e.port,
				Namespace: namespaceName(e.namespace)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PID != out[j].PID {
			return out[i].PID < out[j].PID
		}
		return out[i].Port < out[j].Port
	})
	return out, nil
}

func netnsInode(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// socketInodes returns the inodes of the sockets among a process's open files.
func socketInodes(pid int) ([]uint64, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var inodes []uint64
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		if rest, ok := strings.CutPrefix(target, "socket:["); ok {
			if inode, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64); err == nil {
				inodes = append(inodes, inode)
			}
		}
	}
	return inodes, nil
}

type tableEntry struct {
	ip   net.IP
	port int
}

// readSocketTable reads a /proc/<pid>/net/{tcp,tcp6,udp,udp6} table and returns its listening sockets by
// inode: TCP sockets in LISTEN, or, for UDP, sockets with no remote address.
func readSocketTable(path string, udp bool) (map[uint64]tableEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSocketTable(bufio.NewScanner(f), udp)
}

func parseSocketTable(scanner *bufio.Scanner, udp bool) (map[uint64]tableEntry, error) {
	out := map[uint64]tableEntry{}
	first := true
	for scanner.Scan() {
		if first { // the header
			first = false
			continue
		}
		fields := strings.Fields(scanner.Text())
		if len(fields) < 10 {
			continue
		}
		local, remote, state := fields[1], fields[2], fields[3]
		if udp {
			_, remotePort, err := parseHexAddress(remote)
			if err != nil || remotePort != 0 {
				continue
			}
		} else if state != "0A" {
			continue
		}
		ip, port, err := parseHexAddress(local)
		if err != nil {
			return nil, fmt.Errorf("parsing %q: %w", local, err)
		}
		inode, err := strconv.ParseUint(fields[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parsing inode %q: %w", fields[9], err)
		}
		out[inode] = tableEntry{ip: ip, port: port}
	}
	return out, scanner.Err()
}

// parseHexAddress parses the kernel's "ADDR:PORT" of a socket table: the address as 32-bit words in host
// (little-endian) byte order, the port in big-endian hex.
func parseHexAddress(s string) (net.IP, int, error) {
	addrHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, fmt.Errorf("no port")
	}
	raw, err := hex.DecodeString(addrHex)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, fmt.Errorf("bad address %q", addrHex)
	}
	ip := make(net.IP, len(raw))
	for w := 0; w < len(raw); w += 4 {
		ip[w], ip[w+1], ip[w+2], ip[w+3] = raw[w+3], raw[w+2], raw[w+1], raw[w]
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return nil, 0, fmt.Errorf("bad port %q", portHex)
	}
	return ip, int(port), nil
}
