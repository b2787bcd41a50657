package yurtappdaemon

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/statuswrite"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

func (c *Controller) now() metav1.Time {
	return metav1.NewTime(c.clock.Now())
}

// desiredStatus returns the status to report: the plan's view (nodepools, templateType, currentRevision,
// WorkLoadProvisioned and WorkLoadUpdated, whose message carries the workload counts) when there is a
// plan, observedGeneration and collisionCount always, and WorkLoadFailure True with the failures' reasons
// and messages (actions.Summary), or removed when there are none. Conditions keep their transition time while their status
// does not change. revision, when not empty, is the current revision (also without a plan).
func desiredStatus(cached, yad *v1alpha1.YurtAppDaemon, revision string, plan *policy.Plan, failures []actions.Failure, now metav1.Time) v1alpha1.YurtAppDaemonStatus {
	status := cached.Status.DeepCopy()
	status.ObservedGeneration = yad.Generation
	count := int32(0)
	if yad.Status.CollisionCount != nil {
		count = *yad.Status.CollisionCount
	}
	status.CollisionCount = &count
	if kind, err := policy.TemplateType(yad); err == nil {
		status.TemplateType = kind
	}
	if revision != "" {
		status.CurrentRevision = revision
	}
	if plan != nil {
		s := plan.Status
		s.Conditions = append([]v1alpha1.YurtAppDaemonCondition(nil), s.Conditions...)
		for i := range s.Conditions {
			if s.Conditions[i].Type == policy.ConditionUpdated {
				s.Conditions[i].Message += fmt.Sprintf(" (workloads: %d, ready: %d, updated: %d)", s.Workloads, s.ReadyWorkloads, s.UpdatedWorkloads)
			}
		}
		policy.ApplyStatus(status, s, now)
	}
	reason, message, ok := actions.Summary(failures)
	if !ok {
		status.Conditions = policy.RemoveCondition(status.Conditions, policy.ConditionFailure)
	} else {
		status.Conditions = policy.SetCondition(status.Conditions, v1alpha1.YurtAppDaemonCondition{
			Type: policy.ConditionFailure, Status: corev1.ConditionTrue, Reason: reason, Message: message,
		}, now)
	}
	// The server refuses a status whose condition message is longer than the core API allows; the
	// Provisioned message names every conflict, which has no bound of its own.
	for i := range status.Conditions {
		status.Conditions[i].Message = actions.TruncateMessage(status.Conditions[i].Message)
	}
	return *status
}

// writeStatus writes status when it differs from the YurtAppDaemon's (statuswrite: retried on a fresh read
// after a conflict).
func (c *Controller) writeStatus(ctx context.Context, cached *v1alpha1.YurtAppDaemon, status v1alpha1.YurtAppDaemonStatus) error {
	return statuswrite.Write(ctx, c.client.OpenYurtAppsV1alpha1().YurtAppDaemons(cached.Namespace), cached.Name, cached,
		func(cur *v1alpha1.YurtAppDaemon) (*v1alpha1.YurtAppDaemon, bool) {
			if cur.UID != cached.UID || apiequality.Semantic.DeepEqual(status, cur.Status) {
				return cur, false
			}
			updated := cur.DeepCopy()
			updated.Status = status
			return updated, true
		}, fieldManager, metrics)
}
