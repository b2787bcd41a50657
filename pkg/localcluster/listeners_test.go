package localcluster

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestParseSocketTable(t *testing.T) {
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0 100 0 0 10 0
   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1002 1 0 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0 100 0 0 10 0
   3: 020012C6:01BB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1004 1 0 100 0 0 10 0
`
	got, err := parseSocketTable(bufio.NewScanner(strings.NewReader(tcp)), false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{1001: "127.0.0.1:8080", 1002: "0.0.0.0:2024", 1004: "198.18.0.2:443"}
	if len(got) != len(want) {
		t.Fatalf("got %d listening sockets %v, want %d (the established one is not listening)", len(got), got, len(want))
	}
	for inode, addr := range want {
		e, ok := got[inode]
		if !ok {
			t.Fatalf("inode %d missing", inode)
		}
		if s := net.JoinHostPort(e.ip.String(), strconv.Itoa(e.port)); s != addr {
			t.Errorf("inode %d: %s, want %s", inode, s, addr)
		}
	}

	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:0051 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2002 1 0 100 0 0 10 0
   2: 00000000000000000000000000000000:0052 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2003 1 0 100 0 0 10 0
`
	got6, err := parseSocketTable(bufio.NewScanner(strings.NewReader(tcp6)), false)
	if err != nil {
		t.Fatal(err)
	}
	for inode, wantLoopback := range map[uint64]bool{2001: true, 2002: true, 2003: false} {
		if got6[inode].ip.IsLoopback() != wantLoopback {
			t.Errorf("inode %d: %s loopback=%v, want %v", inode, got6[inode].ip, !wantLoopback, wantLoopback)
		}
	}

	udp := `   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  10: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 3001 2 0 0
  11: 0100007F:9C40 0100007F:0035 01 00000000:00000000 00:00000000 00000000     0        0 3002 2 0 0
`
	gotUDP, err := parseSocketTable(bufio.NewScanner(strings.NewReader(udp)), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := gotUDP[3001]; !ok || len(gotUDP) != 1 {
		t.Errorf("udp: got %v, want only the unconnected socket 3001", gotUDP)
	}
}

func TestOutsideLoopback(t *testing.T) {
	l := func(ns, ip string) Listener {
		return Listener{Process: "p", Protocol: "tcp", Address: net.ParseIP(ip), Port: 1, Namespace: ns}
	}
	for _, c := range []struct {
		name      string
		listener  Listener
		clusterNS string
		bad       bool
	}{
		{"host loopback", l("host", "127.0.0.1"), "", false},
		{"host loopback other than .1", l("host", "127.0.0.2"), "", false},
		{"host IPv6 loopback", l("host", "::1"), "", false},
		{"host wildcard", l("host", "0.0.0.0"), "", true},
		{"host IPv6 wildcard", l("host", "::"), "", true},
		{"host interface address", l("host", "10.1.2.3"), "tapp-lc-1-1", true},
		{"inside the cluster's namespace", l("tapp-lc-1-1", "198.18.0.2"), "tapp-lc-1-1", false},
		{"inside another namespace", l("net:[4026532000]", "198.18.0.2"), "tapp-lc-1-1", true},
		{"a namespace named like the cluster's when it has none", l("tapp-lc-1-1", "198.18.0.2"), "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if bad := outsideLoopback([]Listener{c.listener}, c.clusterNS); (len(bad) == 1) != c.bad {
				t.Errorf("outsideLoopback(%v) = %v, want bad=%v", c.listener, bad, c.bad)
			}
		})
	}
}

// TestListenersOfThisProcess finds a real loopback listener of this process, so that the check cannot pass by
// finding nothing.
func TestListenersOfThisProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	listeners, err := listenersOf(map[int]string{os.Getpid(): "launcher"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range listeners {
		if l.Port == port {
			found = true
			if l.Process != "launcher" || l.Namespace != "host" || !l.Address.Equal(net.ParseIP("127.0.0.1")) || l.Protocol != "tcp" {
				t.Errorf("listener %v, want launcher on tcp 127.0.0.1 in host", l)
			}
		}
	}
	if !found {
		t.Fatalf("the listener on 127.0.0.1:%d is not among %v", port, listeners)
	}
}

func TestLauncherPID(t *testing.T) {
	for _, c := range []struct {
		name, prefix, sep string
		pid               int
		ok                bool
	}{
		{"tapp-lc-123-4", replicaNetnsPrefix, "-", 123, true},
		{"tlc123x4", vethPrefix, "x", 123, true},
		{"tapp-lc-abc-4", replicaNetnsPrefix, "-", 0, false},
		{"tapp-lc-123", replicaNetnsPrefix, "-", 0, false},
		{"tapp-lc-123-x", replicaNetnsPrefix, "-", 0, false},
		{"other-123-4", replicaNetnsPrefix, "-", 0, false},
		{"tlc0x1", vethPrefix, "x", 0, false},
	} {
		pid, ok := launcherPID(c.name, c.prefix, c.sep)
		if pid != c.pid || ok != c.ok {
			t.Errorf("launcherPID(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
		}
	}
}

func TestFreeBenchmarkSubnet(t *testing.T) {
	host, ns, err := freeBenchmarkSubnet(os.Getpid(), 1)
	if err != nil {
		t.Fatal(err)
	}
	_, bench, _ := net.ParseCIDR("198.18.0.0/15")
	for _, ip := range []string{host, ns} {
		if !bench.Contains(net.ParseIP(ip)) {
			t.Errorf("%s is outside 198.18.0.0/15", ip)
		}
	}
	h, n := net.ParseIP(host).To4(), net.ParseIP(ns).To4()
	if h[3]%4 != 1 || n[3] != h[3]+1 || !h.Mask(net.CIDRMask(30, 32)).Equal(n.Mask(net.CIDRMask(30, 32))) {
		t.Errorf("host %s and namespace %s are not .1 and .2 of one /30", host, ns)
	}
}
