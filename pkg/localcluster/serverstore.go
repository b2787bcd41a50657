package localcluster

import (
	"fmt"
	"os"
	"time"
)

// TAppAPIServerDataDir is the data directory of tapp-apiserver's embedded etcd: its whole store. The HA form
// keeps its store in its three etcd members instead; these methods are for the single-replica form.
func (c *Cluster) TAppAPIServerDataDir() string { return c.path("tapp-apiserver", "etcd") }

// StopTAppAPIServer stops tapp-apiserver (SIGTERM, then SIGKILL after restartGrace) and leaves it stopped,
// so that its store (TAppAPIServerDataDir) can be moved, replaced or restored before
// StartTAppAPIServer. The process's log is kept as logs/tapp-apiserver.<pid>.log.
func (c *Cluster) StopTAppAPIServer() error {
	p := c.serverProcess()
	if p == nil {
		return fmt.Errorf("tapp-apiserver was never started")
	}
	pid := p.cmd.Process.Pid
	took, killed := p.stop(restartGrace)
	c.cfg.Log("stopped tapp-apiserver (pid %d) in %s (killed: %v)", pid, took.Round(time.Millisecond), killed)
	return os.Rename(c.path("logs", "tapp-apiserver.log"), c.path("logs", fmt.Sprintf("tapp-apiserver.%d.log", pid)))
}

// StartTAppAPIServer starts a stopped tapp-apiserver again with the same command line (port, certificates,
// data directory). It returns once the process runs, without waiting for it to be ready: a server whose
// store is not the cluster's never is.
func (c *Cluster) StartTAppAPIServer() error {
	old := c.serverProcess()
	if old == nil {
		return fmt.Errorf("tapp-apiserver was never started")
	}
	if done, _ := old.exited(); !done {
		return fmt.Errorf("tapp-apiserver (pid %d) is running", old.cmd.Process.Pid)
	}
	p, err := startProcess(c.path("logs"), old.name, old.cmd.Path, old.cmd.Args[1:]...)
	if err != nil {
		return err
	}
	for i := range c.processes {
		if c.processes[i] == old {
			c.processes[i] = p
		}
	}
	c.cfg.Log("started tapp-apiserver again (pid %d)", p.cmd.Process.Pid)
	return nil
}

// serverProcess is tapp-apiserver's process (the first replica), running or not.
func (c *Cluster) serverProcess() *process {
	for _, p := range c.processes {
		if p.name == "tapp-apiserver" {
			return p
		}
	}
	return nil
}
