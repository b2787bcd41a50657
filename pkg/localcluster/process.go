package localcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// process is one binary the local cluster started, logging to a file.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startProcess starts binary with args, logging to logDir/name.log.
func startProcess(logDir, name, binary string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so a terminal's Ctrl-C reaches only the supervisor, which stops everything in order;
	// SIGKILL when the supervisor is gone, so that a killed launcher leaves nothing running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := processStarter.start(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM, and SIGKILL if the process is still there after grace. It reports how long the process
// took to exit and whether it had to be killed.
func (p *process) stop(grace time.Duration) (took time.Duration, killed bool) {
	if done, _ := p.exited(); done {
		return 0, false
	}
	start := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		killed = true
	}
	return time.Since(start), killed
}

// processStarter starts every process of the local clusters of this program from one OS thread that never
// ends: the kernel sends a child its parent-death signal when the thread that forked it ends, not when the
// process does, and Go ends a thread whenever a goroutine locked to it returns.
var processStarter starter

type starter struct {
	once     sync.Once
	requests chan startRequest
}

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func (s *starter) start(cmd *exec.Cmd) error {
	s.once.Do(func() {
		s.requests = make(chan startRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the program
			for r := range s.requests {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	s.requests <- startRequest{cmd: cmd, done: done}
	return <-done
}
