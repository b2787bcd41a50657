package kubectltapp

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	tkestackclient "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/typed/tkestack/v1"
)

// resourcePrefix names a TApp in the plugin's output, as kubectl names objects: tapp.apps.tkestack.io/<name>.
const resourcePrefix = "tapp.apps.tkestack.io/"

// Options are the flags and streams every command shares.
type Options struct {
	// ConfigFlags are kubectl's connection flags (--kubeconfig, --context, -n, --server, --as, ...).
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
}

// NewCommand returns the root command of kubectl-tapp, writing to streams.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "kubectl-tapp",
		Short: "Look at and act on the instances and rollouts of TApps",
		Long: `kubectl tapp shows the instances of a TApp (apps.tkestack.io/v1), kills, revives and restarts
single instances, and manages the TApp's rollouts as kubectl rollout does for a StatefulSet. logs, exec,
attach and port-forward act on one instance's pod with kubectl's own implementations, and set image changes
the images of the TApp's templates. convert yurtappdaemon replaces a YurtAppDaemon by a YurtAppSet that adopts
its workloads without restarting a pod. Shell completion: kubectl tapp completion --help.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl tapp"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	o.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newInstancesCommand(o), newKillCommand(o), newReviveCommand(o), newRestartCommand(o), newRolloutCommand(o))
	cmd.AddCommand(newLogsCommand(o), newExecCommand(o), newAttachCommand(o), newPortForwardCommand(o), newSetCommand(o))
	cmd.AddCommand(newConvertCommand(o))
	o.addCompletions(cmd)
	return cmd
}

// session is a connection to the cluster in the namespace of the flags.
type session struct {
	namespace string
	kube      kubernetes.Interface
	tapps     tkestackclient.TAppInterface
	clientset versioned.Interface
}

// connectTo connects to the cluster and reads the TApp name of the session's namespace.
func (o *Options) connectTo(ctx context.Context, name string) (*session, *tkestackv1.TApp, error) {
	s, err := o.connect()
	if err != nil {
		return nil, nil, err
	}
	tapp, err := s.tapps.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	return s, tapp, nil
}

func (o *Options) connect() (*session, error) {
	config, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	namespace, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	clientset, err := versioned.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return &session{namespace: namespace, kube: kube, clientset: clientset,
		tapps: clientset.TKEStackAppsV1().TApps(namespace)}, nil
}

// podsOf lists the pods that the TApp's selector matches.
func (s *session) podsOf(ctx context.Context, tapp *tkestackv1.TApp) ([]*corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(tapp.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of TApp %s/%s: %w", tapp.Namespace, tapp.Name, err)
	}
	list, err := s.kube.CoreV1().Pods(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pods, nil
}

// claimsOf returns the claims of the TApp's namespace, or nil when it has no claim templates.
func (s *session) claimsOf(ctx context.Context, tapp *tkestackv1.TApp) ([]*corev1.PersistentVolumeClaim, error) {
	if len(tapp.Spec.VolumeClaimTemplates) == 0 {
		return nil, nil
	}
	list, err := s.kube.CoreV1().PersistentVolumeClaims(s.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	claims := make([]*corev1.PersistentVolumeClaim, 0, len(list.Items))
	for i := range list.Items {
		claims = append(claims, &list.Items[i])
	}
	return claims, nil
}

func newInstancesCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "instances TAPP",
		Short: "List the instances of a TApp: id, pod, template, revision, status, readiness, node, images, restarts, claims",
		Example: `  # The instances of TApp web in namespace prod
  kubectl tapp instances web -n prod`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, tapp, err := o.connectTo(ctx, args[0])
			if err != nil {
				return err
			}
			pods, err := s.podsOf(ctx, tapp)
			if err != nil {
				return err
			}
			claims, err := s.claimsOf(ctx, tapp)
			if err != nil {
				return err
			}
			return PrintInstanceRows(o.Out, InstanceRowsWithClaims(tapp, pods, claims))
		},
	}
}
