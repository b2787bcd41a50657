package kubectltapp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	tappinformers "github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions"
)

func newRolloutCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND TAPP",
		Short: "Manage the rollout of a TApp, as kubectl rollout does for a StatefulSet",
	}
	cmd.AddCommand(newRolloutStatusCommand(o), newRolloutRestartCommand(o))
	cmd.AddCommand(revisionCommands(o)...)
	return cmd
}

func newRolloutStatusCommand(o *Options) *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status TAPP",
		Short: "Wait until every instance of a TApp runs its current template and is available",
		Long: `Watches the TApp and its pods until the controller has observed the latest spec and every wanted
instance (not killed, not below the update partition) runs the current version of its template and is
available. Exits non-zero when the rollout cannot finish (an instance finished for good, a template is
missing, the TApp is deleted) or when --timeout passes.`,
		Example: `  # Wait for the rollout of TApp web, at most 5 minutes
  kubectl tapp rollout status web --timeout=5m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if !watch {
				tapp, err := s.tapps.Get(ctx, args[0], metav1.GetOptions{})
				if err != nil {
					return err
				}
				pods, err := s.podsOf(ctx, tapp)
				if err != nil {
					return err
				}
				state := EvaluateRollout(tapp, pods, time.Now())
				fmt.Fprintln(o.Out, state.Message)
				if state.Failed {
					return errors.New("rollout failed")
				}
				return nil
			}
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			return s.watchRollout(ctx, args[0], func(msg string) { fmt.Fprintln(o.Out, msg) })
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "Watch the rollout until it finishes; with false, print its state once")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "How long to wait before giving up (e.g. 30s, 5m); 0 waits forever")
	return cmd
}

// watchRollout watches the TApp and the pods of its selector and evaluates the rollout on every change,
// calling report with each new message, until the rollout is done (nil), fails, or ctx ends.
func (s *session) watchRollout(ctx context.Context, name string, report func(string)) error {
	tapp, err := s.tapps.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(tapp.Spec.Selector)
	if err != nil {
		return fmt.Errorf("selector of TApp %s/%s: %w", s.namespace, name, err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	tappFactory := tappinformers.NewSharedInformerFactoryWithOptions(s.clientset, 0,
		tappinformers.WithNamespace(s.namespace),
		tappinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	podFactory := informers.NewSharedInformerFactoryWithOptions(s.kube, 0,
		informers.WithNamespace(s.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	tappInformer := tappFactory.TKEStackApps().V1().TApps()
	podInformer := podFactory.Core().V1().Pods()

	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { notify() },
		UpdateFunc: func(interface{}, interface{}) { notify() },
		DeleteFunc: func(interface{}) { notify() },
	}
	for _, informer := range []cache.SharedIndexInformer{tappInformer.Informer(), podInformer.Informer()} {
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
	}
	tappFactory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	// The informers stop when ctx ends: end it before waiting for them.
	defer func() {
		stop()
		tappFactory.Shutdown()
		podFactory.Shutdown()
	}()
	for typ, synced := range tappFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return waitError(ctx, fmt.Errorf("the %v cache did not sync", typ))
		}
	}
	for typ, synced := range podFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return waitError(ctx, fmt.Errorf("the %v cache did not sync", typ))
		}
	}
	notify()

	last := ""
	var recheck <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return waitError(ctx, ctx.Err())
		case <-changed:
		case <-recheck:
		}
		current, err := tappInformer.Lister().TApps(s.namespace).Get(name)
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("TApp %s/%s was deleted", s.namespace, name)
		}
		if err != nil {
			return err
		}
		if current.UID != tapp.UID {
			return fmt.Errorf("TApp %s/%s was deleted and created again", s.namespace, name)
		}
		pods, err := podInformer.Lister().Pods(s.namespace).List(labels.Everything())
		if err != nil {
			return err
		}
		state := EvaluateRollout(current, pods, time.Now())
		if state.Message != last {
			report(state.Message)
			last = state.Message
		}
		switch {
		case state.Failed:
			return errors.New("rollout failed")
		case state.Done:
			return nil
		}
		recheck = nil
		if state.RecheckAfter > 0 {
			recheck = time.After(state.RecheckAfter)
		}
	}
}

// waitError is the error of a wait that ctx ended: kubectl's timeout message when its deadline passed.
func waitError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errors.New("timed out waiting for the condition")
	}
	return err
}

func newRolloutRestartCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "restart TAPP",
		Short: "Roll every instance: set the restartedAt annotation on spec.template and every templatePool entry",
		Long: `Sets the annotation ` + RestartedAtAnnotation + ` to the current time on the metadata of spec.template
and of every spec.templatePool entry, so that every template changes and the TApp controller rolls every
instance within its update budgets. Follow it with kubectl tapp rollout status.`,
		Example: `  # Roll every instance of TApp web, then wait for it
  kubectl tapp rollout restart web && kubectl tapp rollout status web`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, tapp, err := o.connectTo(ctx, args[0])
			if err != nil {
				return err
			}
			if rolloutPaused(tapp) {
				return fmt.Errorf("can't restart paused TApp %s/%s (run rollout resume first)", tapp.Namespace, tapp.Name)
			}
			patch, err := RestartPatch(tapp, time.Now())
			if err != nil {
				return err
			}
			if _, err := s.tapps.Patch(ctx, tapp.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(o.Out, "%s%s restarted\n", resourcePrefix, tapp.Name)
			return nil
		},
	}
}
