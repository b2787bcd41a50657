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

// TestKilledLauncherLeavesNothing runs a launcher (this test binary, as TestLauncherProcess) that makes a
// namespace and starts a process inside it, SIGKILLs the launcher, and expects its process to die with it and
// the next network to remove its namespace.
func TestKilledLauncherLeavesNothing(t *testing.T) {
	requireNetAdmin(t)
	launcher := exec.Command(os.Args[0], "-test.run=^TestLauncherProcess$", "-test.count=1")
	launcher.Env = append(os.Environ(), "LOCALCLUSTER_TEST_LAUNCHER=1")
	stdout, err := launcher.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	launcher.Stderr = os.Stderr
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	defer launcher.Process.Kill()
	var namespace string
	var child int
	line := make([]byte, 256)
	n, err := stdout.Read(line) // "ready <namespace> <child pid>\n"
	if err != nil {
		t.Fatalf("reading the launcher's line: %v", err)
	}
	if _, err := fmt.Sscanf(string(line[:n]), "ready %s %d", &namespace, &child); err != nil {
		t.Fatalf("launcher said %q: %v", line[:n], err)
	}
	if !processAlive(child) {
		t.Fatalf("the launcher's process %d is not running", child)
	}
	if err := launcher.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = launcher.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for processAlive(child) && !isZombie(child) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running 10s after its launcher was killed", child)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(netnsDir + "/" + namespace); err != nil {
		t.Fatalf("the killed launcher's namespace %s is already gone (%v): the test cannot show it is removed", namespace, err)
	}
	next, err := newReplicaNetwork(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer next.remove()
	if _, err := os.Stat(netnsDir + "/" + namespace); !os.IsNotExist(err) {
		t.Errorf("the killed launcher's namespace %s is still there after the next run started (%v)", namespace, err)
	}
}

// TestLauncherProcess is the launcher of TestKilledLauncherLeavesNothing; it does nothing in a normal run.
func TestLauncherProcess(t *testing.T) {
	if os.Getenv("LOCALCLUSTER_TEST_LAUNCHER") != "1" {
		t.Skip("run by TestKilledLauncherLeavesNothing")
	}
	n, err := newReplicaNetwork(func(string, ...interface{}) {})
	if err != nil {
		t.Fatal(err)
	}
	binary, args := n.command("sleep", []string{"600"})
	p, err := startProcess(t.TempDir(), "sleeper", binary, args...)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ready %s %d\n", n.name, p.cmd.Process.Pid)
	time.Sleep(5 * time.Minute) // until killed
}

// isZombie reports whether pid has exited and waits for its parent to reap it (its parent was the killed
// launcher: init reaps it soon).
func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndex(string(stat), ")")+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}
