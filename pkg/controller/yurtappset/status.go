package yurtappset

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/statuswrite"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset/policy"
)

var conditionOrder = []v1beta1.YurtAppSetConditionType{policy.ConditionPoolFound, policy.ConditionAppDispatched,
	policy.ConditionAppDeleted, policy.ConditionAppUpdated, policy.ConditionAppReady}

// desiredStatus returns the status to report: observedGeneration and collisionCount always, the current
// revision when known, the plan's counts and conditions when there is a plan, and the conditions a failed
// write or read turned False. Conditions keep their transition time while their status does not change.
func (c *Controller) desiredStatus(cached, yas *v1beta1.YurtAppSet, revision string, plan *policy.Plan, r *syncResult) v1beta1.YurtAppSetStatus {
	now := metav1.NewTime(c.clock.Now())
	status := cached.Status.DeepCopy()
	status.ObservedGeneration = yas.Generation
	count := int32(0)
	if yas.Status.CollisionCount != nil {
		count = *yas.Status.CollisionCount
	}
	status.CollisionCount = &count
	if revision != "" {
		status.CurrentRevision = revision
	}
	if plan != nil {
		status.TotalWorkloads = plan.Status.TotalWorkloads
		status.ReadyWorkloads = plan.Status.ReadyWorkloads
		status.UpdatedWorkloads = plan.Status.UpdatedWorkloads
		for _, cond := range plan.Status.Conditions {
			if failed, ok := r.conditions[cond.Type]; ok {
				cond = failed
			}
			status.Conditions = policy.SetCondition(status.Conditions, cond, now)
		}
	}
	if plan == nil {
		for _, t := range conditionOrder {
			if cond, ok := r.conditions[t]; ok {
				status.Conditions = policy.SetCondition(status.Conditions, cond, now)
			}
		}
	}
	for i := range status.Conditions {
		status.Conditions[i].Message = actions.TruncateMessage(status.Conditions[i].Message)
	}
	return *status
}

// writeStatus writes status when it differs from the YurtAppSet's (retried on a fresh read after a conflict).
func (c *Controller) writeStatus(ctx context.Context, cached *v1beta1.YurtAppSet, status v1beta1.YurtAppSetStatus) error {
	return statuswrite.Write(ctx, c.client.OpenYurtAppsV1beta1().YurtAppSets(cached.Namespace), cached.Name, cached,
		func(cur *v1beta1.YurtAppSet) (*v1beta1.YurtAppSet, bool) {
			if cur.UID != cached.UID || apiequality.Semantic.DeepEqual(status, cur.Status) {
				return cur, false
			}
			updated := cur.DeepCopy()
			updated.Status = status
			return updated, true
		}, fieldManager, metrics)
}
