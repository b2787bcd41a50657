// Command tapp-apiserver serves TApp, YurtAppDaemon, YurtAppSet and NodePool as an aggregated Kubernetes API.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/tapp-io/tapp-apiserver/cmd/tapp-apiserver/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	cmd := app.NewCommand(ctx, app.NewOptions())
	os.Exit(cli.Run(cmd))
}
