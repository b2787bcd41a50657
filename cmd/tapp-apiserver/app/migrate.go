package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tapp-io/tapp-apiserver/pkg/migrate"
)

// NewMigrateCommand returns the migrate subcommand: it moves an installation of the CRD-based originals
// onto tapp-apiserver (see pkg/migrate and docs/migrate.md).
func NewMigrateCommand(ctx context.Context) *cobra.Command {
	var kubeconfig string
	o := migrate.Options{Timeout: 5 * time.Minute}
	cmd := &cobra.Command{
		Use:   "migrate --apiservice-file=FILE --backup-file=FILE",
		Short: "Move TApps, YurtAppDaemons and NodePools served by the originals' CRDs onto tapp-apiserver without restarting a pod",
		Long: "migrate moves the objects that the CRDs of tkestack/tapp (tapps.apps.tkestack.io) and yurt-app-manager " +
			"(yurtappdaemons and nodepools.apps.openyurt.io) serve onto a running tapp-apiserver: it refuses while an " +
			"original controller runs, backs every object up to --backup-file, deletes them with orphan propagation, " +
			"removes the originals' webhooks and CRDs, registers the APIServices of --apiservice-file and creates the " +
			"objects again, whose controllers adopt the existing pods, claims and workloads. Run it again after a " +
			"failure, with the same backup file, to continue where it stopped. See docs/migrate.md.",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateMigrate(o); err != nil {
				return err
			}
			config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
				&clientcmd.ConfigOverrides{}).ClientConfig()
			if err != nil {
				return err
			}
			config.UserAgent = "tapp-apiserver-migrate"
			// The lock check lists Endpoints, whose deprecation warning would only confuse here.
			quiet := rest.CopyConfig(config)
			quiet.WarningHandler = rest.NoWarnings{}
			kube, err := kubernetes.NewForConfig(quiet)
			if err != nil {
				return err
			}
			dyn, err := dynamic.NewForConfig(config)
			if err != nil {
				return err
			}
			m := &migrate.Migrator{Options: o, Kube: kube, Dynamic: dyn, Out: cmd.OutOrStdout()}
			return m.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	flags := cmd.Flags()
	flags.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	flags.StringVar(&o.APIServiceFile, "apiservice-file", "", "the APIService manifests that register tapp-apiserver, with their caBundle (required)")
	flags.StringVar(&o.BackupFile, "backup-file", "", "where every object is backed up before anything is deleted, and where a re-run finds them (required; keep it)")
	flags.BoolVar(&o.DryRun, "dry-run", false, "run the checks and print the plan; change nothing")
	flags.BoolVar(&o.Force, "force", false, "skip the check that the original controllers are stopped")
	flags.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long each wait (garbage collection, APIService availability, adoption) may take")
	_ = cmd.MarkFlagRequired("backup-file")
	_ = cmd.MarkFlagRequired("apiservice-file")
	return cmd
}

// validateMigrate checks the flags of migrate, all of them, before anything is read or changed.
func validateMigrate(o migrate.Options) error {
	var errs []error
	if o.APIServiceFile == "" {
		errs = append(errs, fmt.Errorf("--apiservice-file must name the APIService manifests"))
	}
	if o.BackupFile == "" {
		errs = append(errs, fmt.Errorf("--backup-file must name the backup file"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout must be positive"))
	}
	return utilerrors.NewAggregate(errs)
}
