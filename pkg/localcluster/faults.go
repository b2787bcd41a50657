package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/rest"
)

// KillTimes says how long a process took to come back after it was killed.
type KillTimes struct {
	// Ready is from the kill to the new process answering /readyz.
	Ready time.Duration
	// Serving is from the kill to both groups answering through kube-apiserver's aggregator again.
	Serving time.Duration
}

// KillTAppAPIServer kills tapp-apiserver with SIGKILL (no shutdown: its controllers' Lease is not released
// and its embedded etcd is not closed) and starts it again with the same binary, arguments and data
// directory. It returns once the new process serves /readyz and both groups answer through the aggregator,
// with how long each took from the kill. The old process's log is kept as logs/tapp-apiserver.<old pid>.log.
func (c *Cluster) KillTAppAPIServer(ctx context.Context) (KillTimes, error) {
	killed := time.Now()
	if err := c.killAndStart("tapp-apiserver"); err != nil {
		return KillTimes{}, err
	}
	var times KillTimes
	if err := c.waitHTTP(ctx, "tapp-apiserver", c.ServerURL+"/readyz", nil); err != nil {
		return times, err
	}
	times.Ready = time.Since(killed)
	for _, group := range []string{"/apis/apps.tkestack.io/v1", "/apis/apps.openyurt.io/v1alpha1"} {
		if err := c.waitHTTP(ctx, group+" through the aggregator", c.kubeAPIURL+group, c.AdminConfig); err != nil {
			return times, err
		}
	}
	times.Serving = time.Since(killed)
	return times, nil
}

// RestartKubeAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after restartGrace) and starts it again
// with the same arguments on the same etcd and port; it returns once /readyz answers, with how long the
// restart took. Every client of the cluster (tapp-apiserver's controllers, kube-controller-manager, the
// scheduler, kwok, the pod simulator) sees its connections drop and its watches end meanwhile.
func (c *Cluster) RestartKubeAPIServer(ctx context.Context) (time.Duration, error) {
	const name = "kube-apiserver"
	start := time.Now()
	p := c.processByName(name)
	if p == nil {
		return 0, fmt.Errorf("%s is not running", name)
	}
	p.stop(restartGrace)
	if err := c.startAgain(p); err != nil {
		return 0, err
	}
	// Not waitHTTP: another process exiting meanwhile (tapp-apiserver does when its controllers cannot renew
	// their Lease) is for the caller to deal with.
	transport, err := rest.TransportFor(c.AdminConfig)
	if err != nil {
		return 0, err
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: transport}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if done, err := c.processByName(name).exited(); done {
			return 0, fmt.Errorf("%s exited (%v); see %s", name, err, c.path("logs", name+".log"))
		}
		resp, err := client.Get(c.kubeAPIURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s did not become ready again within 2m: %v", name, err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// killAndStart sends SIGKILL to the named process, waits for it to be gone and starts the same command again.
func (c *Cluster) killAndStart(name string) error {
	p := c.processByName(name)
	if p == nil {
		return fmt.Errorf("%s is not running", name)
	}
	if done, _ := p.exited(); !done {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return c.startAgain(p)
}

// startAgain starts the command of an exited process in its place, keeping the old log under its pid.
func (c *Cluster) startAgain(old *process) error {
	oldPID := old.cmd.Process.Pid
	if err := os.Rename(c.path("logs", old.name+".log"), c.path("logs", fmt.Sprintf("%s.%d.log", old.name, oldPID))); err != nil {
		return err
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
	c.cfg.Log("restarted %s (pid %d, was %d)", old.name, p.cmd.Process.Pid, oldPID)
	return nil
}

// processByName returns the cluster's process of that name, or nil.
func (c *Cluster) processByName(name string) *process {
	for _, p := range c.processes {
		if p.name == name {
			return p
		}
	}
	return nil
}
