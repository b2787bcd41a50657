package yurtappset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
)

// defaultRevisionHistoryLimit applies when spec.revisionHistoryLimit is unset.
const defaultRevisionHistoryLimit = 10

func (c *Controller) revisionStore() history.Store {
	return history.Store{Lister: c.revisions, Client: c.kubeClient, FieldManager: fieldManager, CountAction: metrics.CountAction}
}

// syncRevision makes sure the ControllerRevision of yas's spec.workload exists and is the newest, and
// returns its name. yas is a private copy: a hash collision increments its status.collisionCount; a
// workload equal to an older revision reuses it (renumbered as the newest).
func (c *Controller) syncRevision(ctx context.Context, yas *v1beta1.YurtAppSet) (string, error) {
	data, err := policy.WorkloadJSON(yas)
	if err != nil {
		return "", fmt.Errorf("encoding spec.workload: %w", err)
	}
	owned, err := c.revisionStore().Owned(yas.Namespace, yas.UID)
	if err != nil {
		return "", err
	}
	newest := history.Newest(owned)
	owner := history.Owner{Namespace: yas.Namespace, Name: yas.Name, Label: policy.RefYurtAppSetLabel,
		Ref: *metav1.NewControllerRef(yas, policy.ControllerKind)}
	name, renumbered, err := c.revisionStore().Ensure(ctx, history.Revision{
		Namespace: yas.Namespace,
		Owner:     yas.UID,
		Data:      data,
		Name:      func() string { return policy.RevisionName(yas) },
		New: func(name string, number int64) *appsv1.ControllerRevision {
			return history.NewControllerRevision(owner, name, policy.RevisionHash(yas), data, number)
		},
		CollisionCount: &yas.Status.CollisionCount,
	}, newest)
	if err != nil {
		return "", err
	}
	if renumbered {
		c.recorder.Eventf(yas, corev1.EventTypeNormal, "RevisionReused", "spec.workload matches revision %s: it is now revision %d", name, newest+1)
	}
	return name, nil
}

// truncateHistory deletes the oldest revisions beyond spec.revisionHistoryLimit; the current revision and
// those live workloads carry are kept and not counted.
func (c *Controller) truncateHistory(ctx context.Context, yas *v1beta1.YurtAppSet, current string, inUse map[string]bool) error {
	limit := defaultRevisionHistoryLimit
	if l := yas.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	owned, err := c.revisionStore().Owned(yas.Namespace, yas.UID)
	if err != nil {
		return err
	}
	return c.revisionStore().Prune(ctx, owned, limit, func(name string) bool { return name == current || inUse[name] })
}

func controlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}
