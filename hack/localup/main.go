// Command localup runs the local cluster of pkg/localcluster in the foreground until SIGINT or SIGTERM,
// then stops every process it started and exits 0. hack/local-up.sh builds what it needs and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

func main() {
	cfg := localcluster.Config{}
	flag.StringVar(&cfg.WorkDir, "work-dir", "_output/local", "where certificates, kubeconfigs, data and logs go")
	flag.StringVar(&cfg.ToolsDir, "tools-dir", "", "directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok")
	flag.StringVar(&cfg.ServerBinary, "server-binary", "bin/tapp-apiserver", "the tapp-apiserver binary")
	flag.IntVar(&cfg.Nodes, "nodes", 3, "number of fake nodes")
	flag.BoolVar(&cfg.HA, "ha", false, "the HA form: three etcd members for tapp-apiserver's storage and two tapp-apiserver "+
		"replicas behind one Service, the controllers leader-elected between them")
	flag.Parse()
	cfg.Log = func(format string, args ...interface{}) {
		fmt.Printf("[local-up %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	cluster, err := localcluster.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "local-up: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("local cluster ready in %s: export KUBECONFIG=%s\n", time.Since(start).Round(time.Millisecond), cluster.Kubeconfig)
	<-ctx.Done()
	cfg.Log("stopping")
	cluster.Stop()
	cfg.Log("stopped")
}
