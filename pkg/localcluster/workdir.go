package localcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A cluster keeps everything in its work directory, and a start on a work directory an earlier cluster used
// is a restart of that cluster: its etcd data (every object the user made, nodes and their labels included),
// tapp-apiserver's store, its certificates and the ports its etcd members know each other by. The file
// stateFile says which form (single-replica or HA) made the directory and which ports it used.

// stateFile is the file in the work directory that records the cluster's form and ports.
const stateFile = "local-cluster.json"

// Forms of the local cluster, as recorded in stateFile.
const (
	FormSingle = "single"
	FormHA     = "ha"
)

// workDirEntries are the files and directories a cluster writes into its work directory; RemoveData removes
// exactly these.
var workDirEntries = []string{stateFile, "pki", "etcd", "tapp-apiserver", haEtcdName, "kubeconfig", "kwok.yaml", "logs"}

// workState is the content of stateFile.
type workState struct {
	// Form is FormSingle or FormHA: tapp-apiserver's store is the single replica's embedded etcd
	// (tapp-apiserver/etcd) or the HA form's three etcd members (tapp-etcd), and the storage fence's record in
	// kube-apiserver names that store's identity, so that the other form's store is refused.
	Form string `json:"form"`
	// Created is when the first start on the directory began.
	Created time.Time `json:"created"`
	// Ports are the loopback ports of the cluster's listeners by name; a restart takes them again when they
	// are free (etcd members must: their peers know them by these ports).
	Ports map[string]int `json:"ports"`
}

// EarlierCluster describes the cluster an earlier start left in a work directory.
type EarlierCluster struct {
	// Form is FormSingle or FormHA.
	Form string
	// Created is when it was first started; zero when its work directory predates stateFile.
	Created time.Time
}

// FindEarlierCluster returns the cluster an earlier start left in workDir, or nil when there is none (no etcd
// data there).
func FindEarlierCluster(workDir string) (*EarlierCluster, error) {
	st, err := readWorkState(workDir)
	if err != nil {
		return nil, err
	}
	if st != nil {
		return &EarlierCluster{Form: st.Form, Created: st.Created}, nil
	}
	if !exists(filepath.Join(workDir, "etcd", "member")) {
		return nil, nil
	}
	// A directory written before stateFile existed: the form is the one whose store is there.
	form := FormSingle
	if exists(filepath.Join(workDir, haEtcdName)) && !exists(filepath.Join(workDir, "tapp-apiserver", "etcd")) {
		form = FormHA
	}
	return &EarlierCluster{Form: form}, nil
}

// RemoveData removes what clusters wrote into workDir (and nothing else there), so that the next start is a
// new cluster.
func RemoveData(workDir string) error {
	for _, name := range workDirEntries {
		if err := os.RemoveAll(filepath.Join(workDir, name)); err != nil {
			return err
		}
	}
	return nil
}

// FormMismatchError is Start's error when the work directory holds a cluster of the other form: tapp-apiserver
// would start on a new store while kube-apiserver keeps the record of the earlier one, and its storage fence
// (pkg/storagefence) would rightly refuse to serve it.
type FormMismatchError struct {
	WorkDir      string
	Found, Asked string
	// FreshCommand starts a new cluster of the asked form (Config.FreshCommand).
	FreshCommand string
}

func (e *FormMismatchError) Error() string {
	return fmt.Sprintf("%s holds a cluster of the %s form: its TApps, YurtAppDaemons and NodePools are in that form's "+
		"store, and tapp-apiserver's storage fence would rightly refuse the %s form's store under that cluster's record. "+
		"Start the %s form again on it, or start a new %s cluster, removing the earlier one: %s",
		e.WorkDir, formName(e.Found), formName(e.Asked), formName(e.Found), formName(e.Asked), e.FreshCommand)
}

// formName is how messages name a form.
func formName(form string) string {
	if form == FormHA {
		return "HA"
	}
	return "single-replica"
}

func readWorkState(workDir string) (*workState, error) {
	raw, err := os.ReadFile(filepath.Join(workDir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := &workState{}
	if err := json.Unmarshal(raw, st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(workDir, stateFile), err)
	}
	if st.Form != FormSingle && st.Form != FormHA {
		return nil, fmt.Errorf("%s: unknown form %q", filepath.Join(workDir, stateFile), st.Form)
	}
	return st, nil
}

// openWorkState checks that the work directory holds no cluster of the other form, reports which cluster it
// holds, and records the form (and, as they are chosen, the ports) for the next start.
func (c *Cluster) openWorkState() error {
	form := FormSingle
	if c.cfg.HA {
		form = FormHA
	}
	earlier, err := FindEarlierCluster(c.cfg.WorkDir)
	if err != nil {
		return err
	}
	st, err := readWorkState(c.cfg.WorkDir)
	if err != nil {
		return err
	}
	switch {
	case earlier != nil && earlier.Form != form:
		return &FormMismatchError{WorkDir: c.cfg.WorkDir, Found: earlier.Form, Asked: form, FreshCommand: c.cfg.FreshCommand}
	case earlier != nil:
		since := ""
		if !earlier.Created.IsZero() {
			since = ", first started " + earlier.Created.Local().Format(time.RFC1123)
		}
		c.cfg.Log("found an earlier %s cluster in %s%s: restarting it on its data (to start a new one instead: %s)",
			formName(form), c.cfg.WorkDir, since, c.cfg.FreshCommand)
	default:
		c.cfg.Log("no earlier cluster in %s: starting a new %s cluster", c.cfg.WorkDir, formName(form))
	}
	if st == nil && earlier != nil && form == FormHA {
		// Its etcd members know each other by peer ports nobody recorded: they could not form their cluster.
		return fmt.Errorf("%s holds an HA cluster started before the local cluster recorded its etcd members' ports "+
			"(%s), so its etcd cannot be restarted; start a new one, removing the earlier one, with: %s",
			c.cfg.WorkDir, stateFile, c.cfg.FreshCommand)
	}
	if st == nil {
		st = &workState{Form: form, Created: time.Now().UTC()}
	}
	if st.Ports == nil {
		st.Ports = map[string]int{}
	}
	c.state = st
	return c.saveWorkState()
}

func (c *Cluster) saveWorkState() error {
	raw, err := json.MarshalIndent(c.state, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(c.path(stateFile), append(raw, '\n'), 0o644)
}

// port returns the loopback port of the listener name: the one the earlier start recorded when it is free,
// else a free one, which it records. With mustKeep a recorded port that is taken is an error.
func (c *Cluster) port(name string, mustKeep bool) (int, error) {
	if p, ok := c.state.Ports[name]; ok && p > 0 {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			l.Close()
			return p, nil
		} else if mustKeep {
			return 0, fmt.Errorf("port %d of %s, which the cluster in %s was started with, is in use: %w", p, name, c.cfg.WorkDir, err)
		}
	}
	p := freePort()
	if p == 0 {
		return 0, fmt.Errorf("no free loopback port for %s", name)
	}
	c.state.Ports[name] = p
	return p, c.saveWorkState()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
