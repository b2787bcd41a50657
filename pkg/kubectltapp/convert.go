package kubectltapp

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/yurtconvert"
)

func newConvertCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "convert",
		Short: "Convert a workload into its successor API without restarting its pods",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newConvertYurtAppDaemonCommand(o))
	return cmd
}

func newConvertYurtAppDaemonCommand(o *Options) *cobra.Command {
	var (
		backupFile, dryRun, output string
		timeout                    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "yurtappdaemon YURTAPPDAEMON",
		Short: "Replace a YurtAppDaemon by a YurtAppSet that adopts its workloads: no workload recreated, no pod restarted",
		Long: `convert yurtappdaemon replaces a YurtAppDaemon (apps.openyurt.io/v1alpha1) by a YurtAppSet
(apps.openyurt.io/v1beta1) of the same name whose rendered workloads are the YurtAppDaemon's, and hands the
Deployments or StatefulSets over by adoption: their names and UIDs stay, and no pod is replaced.

Before anything changes it proves that the YurtAppSet controller would keep every workload's pods, and
refuses, saying why, when it would not. Then: the YurtAppDaemon is saved to --backup-file, each workload is
labelled apps.openyurt.io/ref-yurtappset=<name>, the YurtAppDaemon is deleted with orphan propagation, the
YurtAppSet is created, and the command waits until it has adopted every workload. A run that stops midway
is resumed by running it again (the backup file stands in for a deleted YurtAppDaemon).`,
		Example: `  # See the YurtAppSet that would replace YurtAppDaemon web, checked by the server
  kubectl tapp convert yurtappdaemon web -n edge --dry-run=server -o yaml

  # Convert it
  kubectl tapp convert yurtappdaemon web -n edge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch dryRun {
			case "none", yurtconvert.DryRunClient, yurtconvert.DryRunServer:
			default:
				return fmt.Errorf(`--dry-run must be "none", "client" or "server", not %q`, dryRun)
			}
			if output != "" && output != "yaml" {
				return fmt.Errorf(`-o supports only "yaml", not %q`, output)
			}
			s, err := o.connect()
			if err != nil {
				return err
			}
			if backupFile == "" {
				backupFile = fmt.Sprintf("%s-%s.yurtappdaemon.yaml", s.namespace, args[0])
			}
			steps := o.Out
			if output != "" {
				steps = o.ErrOut // stdout holds the YAML only
			}
			c := &yurtconvert.Converter{Kube: s.kube, Yurt: s.clientset, Out: steps, BackupFile: backupFile,
				Timeout: timeout, Interval: time.Second}
			if dryRun != "none" {
				c.DryRun = dryRun
			}
			yas, err := c.Run(cmd.Context(), s.namespace, args[0])
			if err != nil {
				return err
			}
			if output == "yaml" {
				yas.APIVersion, yas.Kind = v1beta1.SchemeGroupVersion.String(), "YurtAppSet"
				return printYAML(o.Out, yas)
			}
			if c.DryRun != "" {
				fmt.Fprintf(o.Out, "dry run (%s): nothing changed; YurtAppSet %s/%s would be created\n", c.DryRun, yas.Namespace, yas.Name)
			}
			return nil
		},
		ValidArgsFunction: o.completeYurtAppDaemon,
	}
	cmd.Flags().StringVar(&backupFile, "backup-file", "", "file the YurtAppDaemon is saved to before it is deleted, and read from when a re-run finds it gone (default ./<namespace>-<name>.yurtappdaemon.yaml)")
	cmd.Flags().StringVar(&dryRun, "dry-run", "none", `"none", "client" (check and print, send nothing) or "server" (also send the YurtAppSet's create as a dry run)`)
	cmd.Flags().StringVarP(&output, "output", "o", "", `"yaml" prints the YurtAppSet`)
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the YurtAppDaemon's deletion and for the adoptions")
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{"none", "client", "server"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func printYAML(w io.Writer, obj metav1.Object) error {
	obj.SetManagedFields(nil)
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// completeYurtAppDaemon completes the names of the YurtAppDaemons of the namespace.
func (o *Options) completeYurtAppDaemon(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	s, err := o.connect()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := s.clientset.OpenYurtAppsV1alpha1().YurtAppDaemons(s.namespace).List(cmd.Context(), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, yad := range list.Items {
		if strings.HasPrefix(yad.Name, toComplete) {
			out = append(out, yad.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
