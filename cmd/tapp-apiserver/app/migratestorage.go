package app

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tapp-io/tapp-apiserver/pkg/storageversion"
)

// NewMigrateStorageCommand returns the migrate-storage subcommand: the storage-version migration, which
// rewrites every stored object once through the API (pkg/storageversion, docs/storage.md).
func NewMigrateStorageCommand(ctx context.Context) *cobra.Command {
	var kubeconfig string
	m := &storageversion.Migrator{PageSize: 100}
	cmd := &cobra.Command{
		Use:   "migrate-storage --progress-file=FILE",
		Short: "Rewrite every stored TApp, YurtAppDaemon, YurtAppSet and NodePool once, in the server's current storage media type and version",
		Long: "migrate-storage lists every object of every resource the running tapp-apiserver serves and updates it " +
			"unchanged, through the API (kube-apiserver's aggregator, or the server itself), so that the server " +
			"stores it again in its --storage-media-type and storage version; an object already stored that way is " +
			"not written again. Run it after an upgrade that changes how objects are stored (from JSON to " +
			"protobuf: see docs/storage.md). Progress is recorded in --progress-file after every page: run it " +
			"again with the same file to continue after an interruption. Objects the server refuses to update " +
			"are listed at the end and the command fails; the others are rewritten.",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
				&clientcmd.ConfigOverrides{}).ClientConfig()
			if err != nil {
				return err
			}
			config.UserAgent = "tapp-apiserver-migrate-storage"
			if m.Dynamic, err = dynamic.NewForConfig(config); err != nil {
				return err
			}
			if m.Discovery, err = discovery.NewDiscoveryClientForConfig(config); err != nil {
				return err
			}
			m.Out = cmd.OutOrStdout()
			return m.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	flags := cmd.Flags()
	flags.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster, or of the server (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	flags.StringVar(&m.ProgressFile, "progress-file", "", "where progress is recorded after every page, and where a re-run continues from; empty: start from the beginning every time")
	flags.Int64Var(&m.PageSize, "page-size", m.PageSize, "objects listed at a time")
	return cmd
}
