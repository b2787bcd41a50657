package kubectltapp

import (
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// revisionCommands are the rollout verbs that use the TApp's update strategy and revisions.
func revisionCommands(o *Options) []*cobra.Command {
	return []*cobra.Command{newPauseCommand(o, true), newPauseCommand(o, false)}
}

func newPauseCommand(o *Options, pause bool) *cobra.Command {
	use, short, example, done, already := "pause TAPP",
		"Pause the rollout of a TApp: set spec.updateStrategy.paused, so that no instance is updated",
		"  # Stop updating the instances of TApp web\n  kubectl tapp rollout pause web",
		"paused", "is already paused"
	if !pause {
		use, short, example, done, already = "resume TAPP",
			"Resume a paused rollout of a TApp: clear spec.updateStrategy.paused",
			"  # Let the rollout of TApp web go on\n  kubectl tapp rollout resume web",
			"resumed", "is not paused"
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			tapp, err := s.tapps.Get(ctx, args[0], metav1.GetOptions{})
			if err != nil {
				return err
			}
			if rolloutPaused(tapp) == pause {
				// As kubectl rollout pause and resume: asking for the state the object is in is an error.
				return fmt.Errorf("%s%s %s", resourcePrefix, tapp.Name, already)
			}
			patch, err := PausePatch(pause)
			if err != nil {
				return err
			}
			if _, err := s.tapps.Patch(ctx, tapp.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(o.Out, "%s%s %s\n", resourcePrefix, tapp.Name, done)
			return nil
		},
	}
}
