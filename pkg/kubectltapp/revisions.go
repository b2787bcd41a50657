package kubectltapp

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// revisionCommands are the rollout verbs that use the TApp's update strategy and revisions.
func revisionCommands(o *Options) []*cobra.Command {
	return []*cobra.Command{newPauseCommand(o, true), newPauseCommand(o, false), newHistoryCommand(o), newUndoCommand(o)}
}

// revisionsOf returns the TApp and its ControllerRevisions, oldest first.
func (s *session) revisionsOf(ctx context.Context, name string) (*tkestackv1.TApp, []*appsv1.ControllerRevision, error) {
	tapp, err := s.tapps.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	list, err := s.kube.AppsV1().ControllerRevisions(s.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	return tapp, OwnedRevisions(tapp, list.Items), nil
}

func newHistoryCommand(o *Options) *cobra.Command {
	var revision int64
	cmd := &cobra.Command{
		Use:   "history TAPP",
		Short: "List the revisions of a TApp's templates (its ControllerRevisions), or show one with --revision",
		Example: `  # The revisions of TApp web
  kubectl tapp rollout history web

  # The templates of revision 3
  kubectl tapp rollout history web --revision=3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.connect()
			if err != nil {
				return err
			}
			tapp, owned, err := s.revisionsOf(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if revision > 0 {
				rev, err := RollbackTarget(tapp, owned, revision)
				if err != nil {
					return err
				}
				templates, err := DecodeRevision(rev)
				if err != nil {
					return err
				}
				out, err := yaml.Marshal(templates)
				if err != nil {
					return err
				}
				fmt.Fprintf(o.Out, "%s%s with revision #%d (%s)\n%s", resourcePrefix, tapp.Name, rev.Revision, rev.Name, out)
				return nil
			}
			fmt.Fprintf(o.Out, "%s%s\n", resourcePrefix, tapp.Name)
			if len(owned) == 0 {
				fmt.Fprintln(o.Out, "No rollout history found.")
				return nil
			}
			w := printers.GetNewTabWriter(o.Out)
			fmt.Fprintln(w, "REVISION\tNAME\tROLE\tCHANGE-CAUSE")
			for _, r := range HistoryRows(tapp, owned) {
				role := r.Role
				if role == "" {
					role = "-"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", r.Revision, r.Name, role, r.ChangeCause)
			}
			return w.Flush()
		},
	}
	cmd.Flags().Int64Var(&revision, "revision", 0, "Show the templates of this revision")
	return cmd
}

func newUndoCommand(o *Options) *cobra.Command {
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo TAPP",
		Short: "Roll a TApp back to the templates of an earlier revision",
		Long: `Writes the templates of a ControllerRevision of the TApp back to spec.template and spec.templatePool
(replacing them), so that the controller rolls the instances to them. Without --to-revision, the revision
before the current one.`,
		Example: `  # Back to the previous templates
  kubectl tapp rollout undo web

  # Back to revision 2
  kubectl tapp rollout undo web --to-revision=2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			tapp, owned, err := s.revisionsOf(ctx, args[0])
			if err != nil {
				return err
			}
			rev, err := RollbackTarget(tapp, owned, toRevision)
			if err != nil {
				return err
			}
			templates, err := DecodeRevision(rev)
			if err != nil {
				return err
			}
			if SameTemplates(tapp, templates) {
				fmt.Fprintf(o.Out, "%s%s skipped rollback (current templates already match revision %d)\n", resourcePrefix, tapp.Name, rev.Revision)
				return nil
			}
			patch, err := UndoPatch(tapp, templates)
			if err != nil {
				return err
			}
			if _, err := s.tapps.Patch(ctx, tapp.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(o.Out, "%s%s rolled back to revision %d (%s)\n", resourcePrefix, tapp.Name, rev.Revision, rev.Name)
			return nil
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to roll back to; 0 means the one before the current")
	return cmd
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
			ctx := cmd.Context()
			s, tapp, err := o.connectTo(ctx, args[0])
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
