// Command localup runs the local cluster of pkg/localcluster in the foreground until SIGINT or SIGTERM,
// then stops every process it started and exits 0. hack/local-up.sh (make run) builds what it needs and runs
// it. A start on a work directory an earlier start used restarts that cluster on its data; --fresh removes
// it first.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

func main() {
	cfg := localcluster.Config{}
	var fresh bool
	var pluginBinary string
	flag.StringVar(&cfg.WorkDir, "work-dir", "_output/local", "where certificates, kubeconfigs, data and logs go")
	flag.StringVar(&cfg.ToolsDir, "tools-dir", "", "directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok")
	flag.StringVar(&cfg.ServerBinary, "server-binary", "bin/tapp-apiserver", "the tapp-apiserver binary")
	flag.StringVar(&pluginBinary, "plugin-binary", "", "the kubectl plugin kubectl-tapp, whose directory the ready message puts on PATH")
	flag.IntVar(&cfg.Nodes, "nodes", 3, "number of fake nodes (those missing are created; existing ones are kept as they are)")
	flag.BoolVar(&cfg.HA, "ha", false, "the HA form: three etcd members for tapp-apiserver's storage and two tapp-apiserver "+
		"replicas behind one Service, the controllers leader-elected between them")
	flag.BoolVar(&fresh, "fresh", false, "remove the cluster an earlier start left in the work directory (its objects, "+
		"certificates and logs) and start a new one")
	flag.Parse()
	cfg.Log = func(format string, args ...interface{}) {
		fmt.Printf("[local-up %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	cfg.FreshCommand = freshCommand()
	if abs, err := filepath.Abs(cfg.WorkDir); err == nil {
		cfg.WorkDir = abs
	}

	if fresh {
		earlier, err := localcluster.FindEarlierCluster(cfg.WorkDir)
		if err != nil {
			fail(err)
		}
		if earlier != nil {
			if err := localcluster.RemoveData(cfg.WorkDir); err != nil {
				fail(err)
			}
			cfg.Log("removed the earlier cluster in %s (--fresh)", cfg.WorkDir)
		}
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	cluster, err := localcluster.Start(ctx, cfg)
	if err != nil {
		fail(err)
	}
	fmt.Printf("local cluster ready in %s: export KUBECONFIG=%s\n", time.Since(start).Round(time.Millisecond), cluster.Kubeconfig)
	if pluginBinary != "" {
		if dir, err := filepath.Abs(filepath.Dir(pluginBinary)); err == nil {
			fmt.Printf("kubectl tapp (the plugin): export PATH=%s:$PATH\n", dir)
		}
	}
	<-ctx.Done()
	cfg.Log("stopping")
	cluster.Stop()
	cfg.Log("stopped")
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "local-up: %v\n", err)
	os.Exit(1)
}

// freshCommand is the make run command line that starts this form anew: the flags given, except the ones
// hack/local-up.sh passes, with --fresh.
func freshCommand() string {
	args := []string{}
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "work-dir", "tools-dir", "server-binary", "plugin-binary", "fresh":
			return
		}
		if f.Value.String() == "true" {
			args = append(args, "--"+f.Name)
		} else {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	args = append(args, "--fresh")
	if len(args) == 1 {
		return "make run ARGS=" + args[0]
	}
	return `make run ARGS="` + strings.Join(args, " ") + `"`
}
