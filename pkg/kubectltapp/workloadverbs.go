package kubectltapp

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/cmd/attach"
	"k8s.io/kubectl/pkg/cmd/exec"
	"k8s.io/kubectl/pkg/cmd/logs"
	"k8s.io/kubectl/pkg/cmd/portforward"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// kubectl's logs, exec, attach and port-forward refuse a TApp (their helpers know only built-in kinds).
// These commands resolve TAPP ID to the instance's pod and run kubectl's own implementations
// (k8s.io/kubectl/pkg/cmd/...) on it, with kubectl's flags, so every flag behaves as in kubectl.

// The waits for a running pod kubectl uses for each verb (--pod-running-timeout defaults).
const (
	logsPodTimeout        = 20 * time.Second
	execPodTimeout        = 60 * time.Second
	attachPodTimeout      = 60 * time.Second
	portForwardPodTimeout = 60 * time.Second
)

// factory returns kubectl's command factory over the plugin's connection flags.
func (o *Options) factory() cmdutil.Factory {
	return cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(o.ConfigFlags))
}

// instancePod returns the pod of instance id of TApp name after checking that the TApp has the instance, that
// it is not killed and that the pod <name>-<id> is controlled by the TApp.
func (o *Options) instancePod(ctx context.Context, name, id string) (*corev1.Pod, error) {
	s, tapp, err := o.connectTo(ctx, name)
	if err != nil {
		return nil, err
	}
	if _, err := CheckIDs(tapp, []string{id}); err != nil {
		return nil, err
	}
	if killed, _ := SplitByKilled(tapp, []string{id}); len(killed) > 0 {
		return nil, fmt.Errorf("instance %s of TApp %s/%s is killed and has no pod: kubectl tapp revive %s %s", id, tapp.Namespace, name, name, id)
	}
	podName := tapppod.Name(name, id)
	pod, err := s.kube.CoreV1().Pods(s.namespace).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("instance %s of TApp %s/%s: %w", id, tapp.Namespace, name, err)
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != tapp.UID {
		return nil, fmt.Errorf("instance %s: pod %s is not controlled by TApp %s/%s", id, podName, tapp.Namespace, name)
	}
	return pod, nil
}

func newLogsCommand(o *Options) *cobra.Command {
	opts := logs.NewLogsOptions(o.IOStreams)
	cmd := &cobra.Command{
		Use:   "logs TAPP ID [-c CONTAINER]",
		Short: "Print the logs of a container of one instance, as kubectl logs does for a pod",
		Long: `Prints the logs of a container in the pod of instance ID of TApp TAPP, with kubectl logs' own
implementation and flags (-f, --tail, --since, --timestamps, -p, --all-containers, -c...).`,
		Example: `  # The logs of instance 0 of TApp web
  kubectl tapp logs web 0

  # Follow the last 20 lines of container nginx of instance 2
  kubectl tapp logs web 2 -c nginx --tail=20 -f`,
		Args:              cobra.RangeArgs(2, 3),
		ValidArgsFunction: o.completeInstanceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, flag := range []string{"selector", "all-pods", "max-log-requests"} {
				if cmd.Flags().Changed(flag) {
					return fmt.Errorf("--%s selects pods by label; an instance names its pod (for a selector use kubectl logs -l)", flag)
				}
			}
			pod, err := o.instancePod(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			opts.Object = pod
			if err := opts.Complete(o.factory(), cmd, append([]string{pod.Name}, args[2:]...)); err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			return opts.RunLogsContext(cmd.Context())
		},
	}
	opts.AddFlags(cmd)
	for _, flag := range []string{"selector", "all-pods", "max-log-requests"} {
		_ = cmd.Flags().MarkHidden(flag)
	}
	setPodRunningTimeoutDefault(cmd, logsPodTimeout)
	return cmd
}

// setPodRunningTimeoutDefault sets the default of kubectl's --pod-running-timeout flag.
func setPodRunningTimeoutDefault(cmd *cobra.Command, d time.Duration) {
	if f := cmd.Flags().Lookup("pod-running-timeout"); f != nil {
		_ = f.Value.Set(d.String())
		f.DefValue = d.String()
	}
}

func newExecCommand(o *Options) *cobra.Command {
	opts := &exec.ExecOptions{
		StreamOptions: exec.StreamOptions{IOStreams: o.IOStreams},
		Executor:      &exec.DefaultRemoteExecutor{},
	}
	cmd := &cobra.Command{
		Use:   "exec TAPP ID [-c CONTAINER] [flags] -- COMMAND [args...]",
		Short: "Execute a command in a container of one instance, as kubectl exec does in a pod",
		Long: `Runs COMMAND in a container of the pod of instance ID of TApp TAPP, with kubectl exec's own
implementation and flags (-i, -t, -q, -c...).`,
		Example: `  # Run date in instance 0 of TApp web
  kubectl tapp exec web 0 -- date

  # An interactive shell in container nginx of instance 1
  kubectl tapp exec -it web 1 -c nginx -- sh`,
		ValidArgsFunction: o.completeInstanceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if len(args) < 2 || dash >= 0 && dash != 2 || dash < 0 && len(args) > 2 {
				return cmdutil.UsageErrorf(cmd, "expected TAPP ID -- COMMAND [args...]")
			}
			pod, err := o.instancePod(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			// kubectl exec's own arguments: the pod, then the command after the dash.
			podArgs := append([]string{pod.Name}, args[2:]...)
			podDash := -1
			if dash >= 0 {
				podDash = 1
			}
			if err := opts.Complete(o.factory(), cmd, podArgs, podDash); err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			return opts.Run()
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, execPodTimeout)
	cmdutil.AddContainerVarFlags(cmd, &opts.ContainerName, opts.ContainerName)
	cmd.Flags().BoolVarP(&opts.Stdin, "stdin", "i", opts.Stdin, "Pass stdin to the container")
	cmd.Flags().BoolVarP(&opts.TTY, "tty", "t", opts.TTY, "Stdin is a TTY")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", opts.Quiet, "Only print output from the remote session")
	_ = cmd.RegisterFlagCompletionFunc("container", o.completeContainers)
	return cmd
}

func newAttachCommand(o *Options) *cobra.Command {
	opts := attach.NewAttachOptions(o.IOStreams)
	cmd := &cobra.Command{
		Use:   "attach TAPP ID [-c CONTAINER]",
		Short: "Attach to the running process of a container of one instance, as kubectl attach does",
		Long: `Attaches to the process already running in a container of the pod of instance ID of TApp TAPP,
with kubectl attach's own implementation and flags (-i, -t, -q, -c, --detach-keys...).`,
		Example: `  # The output of the main process of instance 0 of TApp web
  kubectl tapp attach web 0

  # Send stdin to container nginx of instance 1, in a terminal
  kubectl tapp attach web 1 -c nginx -it`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: o.completeInstanceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pod, err := o.instancePod(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			opts.Pod = pod
			if err := opts.Complete(o.factory(), cmd, []string{pod.Name}); err != nil {
				return err
			}
			opts.CommandName = "kubectl tapp attach"
			if err := opts.Validate(); err != nil {
				return err
			}
			return opts.Run()
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, attachPodTimeout)
	cmdutil.AddContainerVarFlags(cmd, &opts.ContainerName, opts.ContainerName)
	cmd.Flags().BoolVarP(&opts.Stdin, "stdin", "i", opts.Stdin, "Pass stdin to the container")
	cmd.Flags().BoolVarP(&opts.TTY, "tty", "t", opts.TTY, "Stdin is a TTY")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", opts.Quiet, "Only print output from the remote session")
	cmd.Flags().StringVar(&opts.DetachKeys, "detach-keys", "ctrl-p,ctrl-q", "Override the key sequence for detaching a container")
	_ = cmd.RegisterFlagCompletionFunc("container", o.completeContainers)
	return cmd
}

func newPortForwardCommand(o *Options) *cobra.Command {
	opts := portforward.NewDefaultPortForwardOptions(o.IOStreams)
	cmd := &cobra.Command{
		Use:   "port-forward TAPP ID [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N]",
		Short: "Forward local ports to one instance, as kubectl port-forward does to a pod",
		Long: `Forwards local ports to the pod of instance ID of TApp TAPP, with kubectl port-forward's own
implementation and flags (--address, named container ports...).`,
		Example: `  # Listen on local port 8080, forwarding to port 80 of instance 0 of TApp web
  kubectl tapp port-forward web 0 8080:80

  # A random local port, forwarding to the container port named http of instance 2
  kubectl tapp port-forward web 2 :http`,
		Args:              cobra.MinimumNArgs(3),
		ValidArgsFunction: o.completePortForwardArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pod, err := o.instancePod(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if err := opts.Complete(o.factory(), cmd, append([]string{pod.Name}, args[2:]...)); err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			return opts.RunPortForwardContext(cmd.Context())
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, portForwardPodTimeout)
	cmd.Flags().StringSliceVar(&opts.Address, "address", []string{"localhost"}, "Addresses to listen on (comma separated). Only accepts IP addresses or localhost as a value. When localhost is supplied, kubectl will try to bind on both 127.0.0.1 and ::1 and will fail if neither of these addresses are available to bind.")
	return cmd
}
