package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

// NewEtcdCertsCommand returns the etcd-certs subcommand: it prints the Secrets with the certificates of the
// etcd of artifacts/deploy (pkg/etcdpki), the install step before `kubectl apply -k artifacts/deploy`.
func NewEtcdCertsCommand(ctx context.Context) *cobra.Command {
	d := etcdpki.DefaultDeployment
	validity := etcdpki.DefaultValidity
	cmd := &cobra.Command{
		Use:   "etcd-certs",
		Short: "Print the Secrets with a new CA and the certificates of the bundled etcd (kubectl apply -f -)",
		Long: "etcd-certs issues a new CA and, signed by it, the serving and peer certificates of the etcd members of " +
			"artifacts/deploy (10-etcd.yaml) and the client certificate tapp-apiserver connects with (20-deployment.yaml), " +
			"and prints them as two Secrets: --members-secret for the members and --client-secret for the server. " +
			"etcd requires client certificates of that CA on its client and peer ports, so only tapp-apiserver and the " +
			"members can reach the data. The CA's key is not kept: run it again (and restart etcd and the server) to renew. " +
			"See docs/install.md.",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			secrets, err := d.Secrets(validity)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, s := range secrets {
				raw, err := yaml.Marshal(s)
				if err != nil {
					return err
				}
				if i > 0 {
					fmt.Fprintln(out, "---")
				}
				if _, err := out.Write(raw); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.SetContext(ctx)
	flags := cmd.Flags()
	flags.StringVar(&d.Namespace, "namespace", d.Namespace, "namespace of the etcd and of tapp-apiserver")
	flags.StringVar(&d.StatefulSet, "statefulset", d.StatefulSet, "the etcd StatefulSet, whose pods are the members")
	flags.StringVar(&d.Service, "service", d.Service, "the headless Service that names the members")
	flags.StringVar(&d.ClientService, "client-service", d.ClientService, "the Service in front of all members")
	flags.IntVar(&d.Members, "members", d.Members, "number of members (--initial-cluster of 10-etcd.yaml)")
	flags.StringVar(&d.MembersSecret, "members-secret", d.MembersSecret, "the Secret the members mount")
	flags.StringVar(&d.ClientSecret, "client-secret", d.ClientSecret, "the Secret tapp-apiserver mounts")
	flags.DurationVar(&validity, "validity", validity, "how long the certificates are valid")
	return cmd
}
