package tapp

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/workloop"
)

// TAppLabel on a ControllerRevision names the TApp it belongs to (history.OwnerLabelValue). Ownership is
// decided by the controller reference alone.
const TAppLabel = "apps.tkestack.io/tapp"

// revisionStore is where tapp's ControllerRevisions are read and written.
func (c *Controller) revisionStore() history.Store {
	return history.Store{Lister: c.revisions, Index: c.revisionIndex, Client: c.kubeClient, FieldManager: fieldManager, CountAction: metrics.CountAction}
}

// syncRevisions makes sure the ControllerRevision of tapp's templates exists and is the newest, and returns
// the revisions the plan uses. tapp is a private copy: on a hash collision (a revision of that name with
// other data, or not tapp's) its status.collisionCount is incremented, which changes the name. Templates
// equal to an older revision reuse it (a rollback): its revision number becomes the newest.
//
// The current revision is status.currentRevision; when it is empty (a new TApp) or its ControllerRevision is
// gone, the current revision is the update revision, as for a StatefulSet.
func (c *Controller) syncRevisions(ctx context.Context, tapp *tkestackv1.TApp) (policy.Revisions, error) {
	data, err := policy.RevisionData(tapp)
	if err != nil {
		return policy.Revisions{}, fmt.Errorf("encoding the templates: %w", err)
	}
	owned, err := c.revisionStore().Owned(tapp.Namespace, tapp.UID)
	if err != nil {
		return policy.Revisions{}, err
	}
	update, _, err := c.revisionStore().Ensure(ctx, history.Revision{
		Namespace: tapp.Namespace,
		Owner:     tapp.UID,
		Data:      data,
		Name:      func() string { return policy.RevisionName(tapp) },
		New: func(name string, number int64) *appsv1.ControllerRevision {
			return history.NewControllerRevision(history.Owner{
				Namespace: tapp.Namespace, Name: tapp.Name, Label: TAppLabel, Ref: policy.OwnerReference(tapp),
			}, name, policy.RevisionHash(tapp), data, number)
		},
		CollisionCount: &tapp.Status.CollisionCount,
	}, history.Newest(owned))
	if err != nil {
		return policy.Revisions{}, err
	}
	revs := policy.Revisions{Update: update, Current: update}
	current := tapp.Status.CurrentRevision
	if current == "" || current == update {
		return revs, nil
	}
	for _, r := range owned {
		if r.Name != current {
			continue
		}
		templates, err := policy.DecodeRevision(r.Data.Raw)
		if err != nil {
			klog.FromContext(ctx).Info("Ignoring the current revision: its data cannot be decoded", "revision", current, "err", err)
			return revs, nil
		}
		revs.Current, revs.CurrentTemplates = current, templates
		return revs, nil
	}
	klog.FromContext(ctx).V(2).Info("The current revision is gone; the update revision becomes current", "revision", current)
	return revs, nil
}

// truncateHistory deletes the oldest revisions of tapp beyond spec.revisionHistoryLimit (defaulted by the
// API). The current and update revisions and the revisions pods still carry (controller-revision-hash) are
// never deleted and not counted.
func (c *Controller) truncateHistory(ctx context.Context, tapp *tkestackv1.TApp, keep map[string]bool) error {
	limit := int(*tapp.Spec.RevisionHistoryLimit)
	owned, err := c.revisionStore().Owned(tapp.Namespace, tapp.UID)
	if err != nil {
		return err
	}
	return c.revisionStore().Prune(ctx, owned, limit, func(name string) bool { return keep[name] })
}

// revisionDeleted requeues the TApp that controlled a deleted ControllerRevision, so that it is recreated if
// it is still needed.
func (c *Controller) revisionDeleted(obj any) {
	rev, ok := workloop.Deleted[*appsv1.ControllerRevision](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rev); ref != nil && ref.Kind == tappKind.Kind && ref.APIVersion == tkestackv1.SchemeGroupVersion.String() {
		c.queue.Add(rev.Namespace + "/" + ref.Name)
	}
}
