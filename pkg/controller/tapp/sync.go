package tapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// sync brings one TApp closer to its spec: it records its templates as a ControllerRevision, computes the
// plan from the cache, executes it unless the cache is known to be behind the controller's own writes,
// drives in-place updates in progress, prunes unused templates when asked and old revisions, and writes
// the status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	tapp, err := c.tapps.TApps(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	// The API server defaults every TApp it serves; the policy never fills in a default itself. A TApp
	// without them did not come from it: nothing is planned for it.
	if missing := policy.Undefaulted(tapp); len(missing) > 0 {
		c.recorder.Eventf(tapp, corev1.EventTypeWarning, ReasonUndefaulted,
			"Not syncing: the TApp lacks the fields the API server defaults (%s)", strings.Join(missing, ", "))
		return nil
	}
	// Whether the caches show this controller's earlier writes (of pods, and of claims: expansions) is asked
	// before the pods and claims are listed, as Kubernetes' controllers do: asked after, the caches could show
	// them while the plan was computed from a list taken before they did, and the plan would make them again.
	satisfied := c.expectations.Satisfied(key, c.cached(namespace))
	planning := c.clock.Now()
	pods, err := c.podsOf(tapp)
	if err != nil {
		return err
	}
	claims, err := c.claimsOf(tapp)
	if err != nil {
		return err
	}
	var failures []actions.Failure
	var errs []error
	finalized := false
	// A private copy: syncRevisions raises status.collisionCount on a hash collision.
	tapp = tapp.DeepCopy()
	var revisions policy.Revisions
	if tapp.DeletionTimestamp == nil {
		if revisions, err = c.syncRevisions(ctx, tapp); err != nil {
			errs = append(errs, err)
		}
	}
	plan := policy.ApplyLifecycle(tapp, pods, policy.OrderPlan(tapp, pods, policy.ComputePlanWithStorage(tapp, revisions, c.storage(tapp), pods, c.nodeState, c.clock.Now())))
	if len(plan.Creates) > 0 {
		plan.Topology = c.topology()
	}
	claimPlan := policy.PlanClaims(tapp, claims)
	claimPlan.OwnerChanges = policy.PlanClaimRetention(tapp, pods, claims)
	c.planCosts.observe(key, c.clock.Since(planning))
	if tapp.DeletionTimestamp == nil {
		if satisfied {
			failures = c.execute(ctx, key, tapp, pods, plan, claimPlan)
		} else {
			klog.FromContext(ctx).V(4).Info("Waiting for the informer to show earlier writes", "pending", c.expectations.Pending(key))
		}
		failures = append(failures, c.progressInPlace(ctx, tapp, pods, plan)...)
		if err := c.pruneUnusedTemplates(ctx, tapp); err != nil {
			errs = append(errs, err)
		}
		if revisions.Update != "" {
			keep := policy.RevisionsInUse(pods)
			keep[revisions.Update], keep[revisions.Current] = true, true
			if err := c.truncateHistory(ctx, tapp, keep); err != nil {
				errs = append(errs, err)
			}
		}
	} else if satisfied {
		// Only a TApp with the preDelete finalizer gets a plan while it is being deleted.
		var deletionFailures []actions.Failure
		deletionFailures, finalized, err = c.executeDeletion(ctx, key, tapp, pods, plan)
		failures = append(failures, deletionFailures...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Once its finalizer is removed the TApp is gone or going: its status is not written any more.
	if !finalized {
		if err := c.writeStatus(ctx, key, tapp, plan, revisions, failures); err != nil {
			errs = append(errs, err)
		}
	}
	if plan.RequeueAfter > 0 {
		c.queue.AddAfter(key, plan.RequeueAfter)
	}
	return errors.Join(append(errs, actions.Errors(failures)...)...)
}

// cached looks pods and claims of namespace up by name in their caches, for the expectations.
func (c *Controller) cached(namespace string) func(writtenObject) metav1.Object {
	return func(o writtenObject) metav1.Object {
		if o.claim {
			if claim, err := c.claims.PersistentVolumeClaims(namespace).Get(o.name); err == nil {
				return claim
			}
			return nil
		}
		if pod, err := c.pods.Pods(namespace).Get(o.name); err == nil {
			return pod
		}
		return nil
	}
}

// unusedTemplates returns the templatePool entries that nothing refers to: not spec.templates, not
// spec.defaultTemplateName, not spec.updateStrategy.template.
func unusedTemplates(tapp *tkestackv1.TApp) []string {
	used := map[string]bool{tapp.Spec.DefaultTemplateName: true, tapp.Spec.UpdateStrategy.Template: true}
	for _, t := range tapp.Spec.Templates {
		used[t] = true
	}
	var out []string
	for name := range tapp.Spec.TemplatePool {
		if !used[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// pruneUnusedTemplates removes unused templatePool entries when spec.autoDeleteUnusedTemplate is set. It
// sends a merge patch that deletes only those entries, with the resourceVersion it decided from as a
// precondition: if a user changed the TApp meanwhile, the patch fails with a Conflict and the decision is
// taken again from the new version, so a concurrent edit is never overwritten.
func (c *Controller) pruneUnusedTemplates(ctx context.Context, tapp *tkestackv1.TApp) error {
	if !tapp.Spec.AutoDeleteUnusedTemplate {
		return nil
	}
	unused := unusedTemplates(tapp)
	if len(unused) == 0 {
		return nil
	}
	pool := map[string]any{}
	for _, name := range unused {
		pool[name] = nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": tapp.ResourceVersion},
		"spec":     map[string]any{"templatePool": pool},
	})
	if err != nil {
		return err
	}
	_, err = c.client.TKEStackAppsV1().TApps(tapp.Namespace).Patch(ctx, tapp.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return fmt.Errorf("removing unused templates %v: %w", unused, err)
	}
	c.recorder.Eventf(tapp, corev1.EventTypeNormal, ReasonTemplatesPruned, "Removed unused templates %v from spec.templatePool", unused)
	metrics.CountAction("prune-templates", nil)
	return nil
}
