package localcluster

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestReplicaNetwork makes a real namespace: a listener inside it on its address is reached from the host
// through the veth pair, a loopback listener of the host is reached from inside through the forwarder, a
// process runs inside it, and remove leaves neither the namespace nor the link behind.
func TestReplicaNetwork(t *testing.T) {
	requireNetAdmin(t)
	n, err := newReplicaNetwork(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer n.remove()

	// Host loopback → forwarded into the namespace.
	hostLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hostLn.Close()
	go func() {
		for {
			c, err := hostLn.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, "from the host")
			c.Close()
		}
	}()
	if err := n.forwardLoopback(hostLn.Addr().String()); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := inNetns(n.path(), func() error {
		c, err := net.DialTimeout("tcp", hostLn.Addr().String(), 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		b, err := io.ReadAll(c)
		got = string(b)
		return err
	}); err != nil {
		t.Fatalf("dialling the host's loopback listener from inside: %v", err)
	}
	if got != "from the host" {
		t.Fatalf("read %q through the forwarder", got)
	}

	// A listener inside on the namespace's address, reached from the host; the host's loopback is not.
	nsLn, err := listenInNetns(n.path(), net.JoinHostPort(n.IP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer nsLn.Close()
	go func() {
		c, err := nsLn.Accept()
		if err == nil {
			fmt.Fprint(c, "from inside")
			c.Close()
		}
	}()
	c, err := net.DialTimeout("tcp", nsLn.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatalf("dialling %s from the host: %v", nsLn.Addr(), err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "from inside" {
		t.Fatalf("read %q from inside", b)
	}
	port := nsLn.Addr().(*net.TCPAddr).Port
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Fatalf("the namespace's listener answers on the host's loopback")
	}

	// A command runs inside: it sees only loopback and the namespace's end of the pair.
	binary, args := n.command("cat", []string{"/proc/net/dev"})
	out, err := exec.Command(binary, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", binary, args, err, out)
	}
	if strings.Contains(string(out), n.hostLink+":") || !strings.Contains(string(out), "lo:") {
		t.Fatalf("interfaces inside the namespace:\n%s", out)
	}

	n.remove()
	if _, err := os.Stat(n.path()); !os.IsNotExist(err) {
		t.Errorf("namespace %s still there after remove (%v)", n.name, err)
	}
	if _, err := net.InterfaceByName(n.hostLink); err == nil {
		t.Errorf("link %s still there after remove", n.hostLink)
	}
}

// TestStaleNetworkRemoved leaves a namespace and a link named after a launcher that is gone, as a SIGKILLed
// launcher does, and expects the next network to remove them.
func TestStaleNetworkRemoved(t *testing.T) {
	requireNetAdmin(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid // exited and reaped
	staleNS := fmt.Sprintf("%s%d-1", replicaNetnsPrefix, pid)
	staleLink := fmt.Sprintf("%s%dx1", vethPrefix, pid)
	for _, args := range [][]string{
		{"netns", "add", staleNS},
		{"link", "add", staleLink, "type", "veth", "peer", "name", fmt.Sprintf("tlq%dx1", pid)},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	defer exec.Command("ip", "netns", "del", staleNS).Run()
	defer exec.Command("ip", "link", "del", staleLink).Run()

	n, err := newReplicaNetwork(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer n.remove()
	if _, err := os.Stat(netnsDir + "/" + staleNS); !os.IsNotExist(err) {
		t.Errorf("stale namespace %s is still there (%v)", staleNS, err)
	}
	if _, err := net.InterfaceByName(staleLink); err == nil {
		t.Errorf("stale link %s is still there", staleLink)
	}
}

func requireNetAdmin(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs the HA form, which needs root for its network namespace")
		}
		t.Skip("making network namespaces needs root")
	}
}
