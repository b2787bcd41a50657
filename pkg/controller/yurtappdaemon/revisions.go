package yurtappdaemon

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

// YurtAppDaemonLabel on a ControllerRevision names the YurtAppDaemon it belongs to
// (history.OwnerLabelValue). Ownership is decided by the controller ownerReference alone.
const YurtAppDaemonLabel = "apps.openyurt.io/yurtappdaemon"

// revisionStore is where the YurtAppDaemons' ControllerRevisions are read and written.
func (c *Controller) revisionStore() history.Store {
	return history.Store{Lister: c.revisions, Index: c.revisionIndex, Client: c.kubeClient, FieldManager: fieldManager, CountAction: metrics.CountAction}
}

func controlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}

// newRevision returns the ControllerRevision of yad's current template. Its history.HashLabel is
// policy.Revision (policy.RevisionHashLabel is another label: the revision a child was rendered from).
func newRevision(yad *v1alpha1.YurtAppDaemon, name string, data []byte, number int64) *appsv1.ControllerRevision {
	return history.NewControllerRevision(history.Owner{
		Namespace: yad.Namespace, Name: yad.Name, Label: YurtAppDaemonLabel,
		Ref: *metav1.NewControllerRef(yad, policy.ControllerKind),
	}, name, policy.Revision(yad), data, number)
}

// syncRevision makes sure the ControllerRevision of yad's current template exists and is the newest, and
// returns its name (policy.RevisionName). yad is a private copy: on a hash collision (a revision of that
// name with other data, or not ours) its status.collisionCount is incremented, which changes the name.
// A template equal to an older revision reuses it (a rollback): its revision number becomes the newest.
func (c *Controller) syncRevision(ctx context.Context, yad *v1alpha1.YurtAppDaemon) (string, error) {
	data, err := policy.TemplateJSON(yad)
	if err != nil {
		return "", fmt.Errorf("encoding the workload template: %w", err)
	}
	owned, err := c.revisionStore().Owned(yad.Namespace, yad.UID)
	if err != nil {
		return "", err
	}
	newest := history.Newest(owned)
	name, renumbered, err := c.revisionStore().Ensure(ctx, history.Revision{
		Namespace: yad.Namespace,
		Owner:     yad.UID,
		Data:      data,
		Name:      func() string { return policy.RevisionName(yad) },
		New: func(name string, number int64) *appsv1.ControllerRevision {
			return newRevision(yad, name, data, number)
		},
		CollisionCount: &yad.Status.CollisionCount,
	}, newest)
	if err != nil {
		return "", err
	}
	if renumbered {
		c.recorder.Eventf(yad, corev1.EventTypeNormal, "RevisionReused", "Template matches revision %s: it is now revision %d", name, newest+1)
	}
	return name, nil
}

// truncateHistory deletes the oldest revisions of yad beyond spec.revisionHistoryLimit (default 10). The
// current revision and the revisions live children still carry are never deleted and not counted.
func (c *Controller) truncateHistory(ctx context.Context, yad *v1alpha1.YurtAppDaemon, current string, inUse map[string]bool) error {
	limit := 10
	if l := yad.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	owned, err := c.revisionStore().Owned(yad.Namespace, yad.UID)
	if err != nil {
		return err
	}
	return c.revisionStore().Prune(ctx, owned, limit, func(name string) bool { return name == current || inUse[name] })
}
