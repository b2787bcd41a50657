package kubectltapp

import (
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

func newKillCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "kill TAPP ID...",
		Short: "Kill instances: set spec.statuses[ID] to Killed, so that their pods are deleted and kept down",
		Example: `  # Kill instances 1 and 3 of TApp web
  kubectl tapp kill web 1 3`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.setKilled(cmd, args[0], args[1:], true) },
	}
}

func newReviveCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "revive TAPP ID...",
		Short: "Revive killed instances: remove their Killed entry from spec.statuses, so that they are created again",
		Example: `  # Bring instance 1 of TApp web back
  kubectl tapp revive web 1`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.setKilled(cmd, args[0], args[1:], false) },
	}
}

// setKilled kills (kill true) or revives instances with one merge patch of spec.statuses. Instances already
// in the wanted state are reported and left out of the patch.
func (o *Options) setKilled(cmd *cobra.Command, name string, ids []string, kill bool) error {
	s, err := o.connect()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	tapp, err := s.tapps.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ids, err = CheckIDs(tapp, ids)
	if err != nil {
		return err
	}
	killed, alive := SplitByKilled(tapp, ids)
	change, unchanged, done, already := alive, killed, "killed", "already killed"
	if !kill {
		change, unchanged, done, already = killed, alive, "revived", "not killed"
	}
	for _, id := range unchanged {
		fmt.Fprintf(o.Out, "%s%s instance %s %s\n", resourcePrefix, name, id, already)
	}
	if len(change) == 0 {
		return nil
	}
	patch, err := StatusesPatch(change, kill)
	if err != nil {
		return err
	}
	if _, err := s.tapps.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	for _, id := range change {
		fmt.Fprintf(o.Out, "%s%s instance %s %s\n", resourcePrefix, name, id, done)
	}
	return nil
}

func newRestartCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "restart TAPP ID...",
		Short: "Restart instances: delete their pods, which the TApp controller recreates",
		Long: `Deletes the pod of each instance, on the condition that it is still the pod seen (its UID), so that
the TApp controller creates a new pod for the instance. Killed instances have no pod: revive them instead.`,
		Example: `  # Restart instance 2 of TApp web
  kubectl tapp restart web 2`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			name := args[0]
			tapp, err := s.tapps.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			ids, err := CheckIDs(tapp, args[1:])
			if err != nil {
				return err
			}
			if killed, _ := SplitByKilled(tapp, ids); len(killed) > 0 {
				return fmt.Errorf("instances %q of TApp %s/%s are killed and have no pod: revive them instead", killed, tapp.Namespace, name)
			}
			for _, id := range ids {
				podName := tapppod.Name(name, id)
				pod, err := s.kube.CoreV1().Pods(s.namespace).Get(ctx, podName, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("instance %s: %w", id, err)
				}
				if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != tapp.UID {
					return fmt.Errorf("instance %s: pod %s is not controlled by TApp %s/%s", id, podName, tapp.Namespace, name)
				}
				uid := pod.UID
				err = s.kube.CoreV1().Pods(s.namespace).Delete(ctx, podName, metav1.DeleteOptions{
					Preconditions: &metav1.Preconditions{UID: &uid}})
				if err != nil {
					return fmt.Errorf("instance %s: %w", id, err)
				}
				fmt.Fprintf(o.Out, "%s%s instance %s restarted (pod %s deleted)\n", resourcePrefix, name, id, podName)
			}
			return nil
		},
	}
}
