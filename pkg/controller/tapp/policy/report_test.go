package policy

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestDesiredStatus(t *testing.T) {
	one := intstr.FromInt32(1)
	base := func(replicas int32) *tkestackv1.TApp {
		return defaulted(&tkestackv1.TApp{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 4},
			Spec: tkestackv1.TAppSpec{Replicas: replicas, DefaultTemplateName: "default",
				UpdateStrategy: tkestackv1.TAppUpdateStrategy{MaxUnavailable: &one}},
			Status: tkestackv1.TAppStatus{ScaleLabelSelector: "app=web"},
		})
	}
	revs := Revisions{Update: "web-new", Current: "web-old"}
	type want struct {
		available, progressing, paused, failure string // "Status/Reason", "" for absent
		current                                 string
	}
	cond := func(status tkestackv1.TAppStatus, typ string) string {
		c := meta.FindStatusCondition(status.Conditions, typ)
		if c == nil {
			return ""
		}
		if c.ObservedGeneration != 4 {
			return fmt.Sprintf("observedGeneration %d", c.ObservedGeneration)
		}
		return string(c.Status) + "/" + c.Reason
	}
	for _, c := range []struct {
		name    string
		tapp    func() *tkestackv1.TApp
		s       Status
		failure Failure
		want    want
	}{
		{"all ready and updated", func() *tkestackv1.TApp { return base(3) },
			Status{Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3, AvailableReplicas: 3}, Failure{},
			want{"True/MinimumInstancesAvailable", "True/RolloutComplete", "", "", "web-new"}},
		{"fewer ready than the budget allows", func() *tkestackv1.TApp { return base(3) },
			Status{Replicas: 3, ReadyReplicas: 1, UpdatedReplicas: 3, UpdatedReadyReplicas: 1}, Failure{},
			want{"False/MinimumInstancesUnavailable", "True/RolloutInProgress", "", "", "web-new"}},
		{"rollout under way keeps the current revision", func() *tkestackv1.TApp { return base(3) },
			Status{Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 1, UpdatedReadyReplicas: 1}, Failure{},
			want{"True/MinimumInstancesAvailable", "True/RolloutInProgress", "", "", "web-old"}},
		{"paused", func() *tkestackv1.TApp {
			tapp := base(3)
			tapp.Spec.UpdateStrategy.Paused = true
			return tapp
		}, Status{Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 1, UpdatedReadyReplicas: 1}, Failure{},
			want{"True/MinimumInstancesAvailable", "Unknown/RolloutPaused", "True/RolloutPaused", "", "web-old"}},
		{"unpaused drops Paused and a resolved ReplicaFailure", func() *tkestackv1.TApp {
			tapp := base(3)
			tapp.Status.Conditions = []metav1.Condition{
				{Type: tkestackv1.TAppPaused, Status: metav1.ConditionTrue, Reason: ReasonRolloutPaused},
				{Type: tkestackv1.TAppReplicaFailure, Status: metav1.ConditionTrue, Reason: "FailedCreate"},
			}
			return tapp
		}, Status{Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3}, Failure{},
			want{"True/MinimumInstancesAvailable", "True/RolloutComplete", "", "", "web-new"}},
		{"a failure", func() *tkestackv1.TApp { return base(3) },
			Status{Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2, UpdatedReadyReplicas: 2}, Failure{Reason: "FailedCreate", Message: "quota"},
			want{"True/MinimumInstancesAvailable", "True/RolloutInProgress", "", "True/FailedCreate", "web-old"}},
		{"killed instances are not wanted", func() *tkestackv1.TApp {
			tapp := base(3)
			tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"1": StatusKilled}
			return tapp
		}, Status{Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 2, UpdatedReadyReplicas: 2}, Failure{},
			want{"True/MinimumInstancesAvailable", "True/RolloutComplete", "", "", "web-new"}},
		{"minReadySeconds counts available instances", func() *tkestackv1.TApp {
			tapp := base(3)
			tapp.Spec.MinReadySeconds = 30
			return tapp
		}, Status{Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3, AvailableReplicas: 1}, Failure{},
			want{"False/MinimumInstancesUnavailable", "True/RolloutComplete", "", "", "web-new"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tapp := c.tapp()
			status := DesiredStatus(tapp, c.s, revs, nil, c.failure)
			got := want{cond(status, tkestackv1.TAppAvailable), cond(status, tkestackv1.TAppProgressing), cond(status, tkestackv1.TAppPaused),
				cond(status, tkestackv1.TAppReplicaFailure), status.CurrentRevision}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			if status.ObservedGeneration != 4 || status.UpdateRevision != "web-new" || status.ReadyReplicas != c.s.ReadyReplicas ||
				status.ScaleLabelSelector != "app=web" {
				t.Errorf("status %+v", status)
			}
			if len(tapp.Status.Conditions) > 0 && &tapp.Status.Conditions[0] == &status.Conditions[0] {
				t.Errorf("the TApp's conditions were modified in place")
			}
		})
	}
}

// TestDesiredStatusKeepsTransitionTimes: a condition whose status does not change keeps its
// lastTransitionTime; one that changes gets a new one.
func TestDesiredStatusKeepsTransitionTimes(t *testing.T) {
	one := intstr.FromInt32(1)
	long := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	tapp := defaulted(&tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Generation: 1},
		Spec:       tkestackv1.TAppSpec{Replicas: 2, UpdateStrategy: tkestackv1.TAppUpdateStrategy{MaxUnavailable: &one}},
		Status: tkestackv1.TAppStatus{Conditions: []metav1.Condition{
			{Type: tkestackv1.TAppAvailable, Status: metav1.ConditionTrue, Reason: ReasonMinimumInstancesAvailable, LastTransitionTime: long},
			{Type: tkestackv1.TAppProgressing, Status: metav1.ConditionFalse, Reason: "Old", LastTransitionTime: long},
		}},
	})
	status := DesiredStatus(tapp, Status{Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2, UpdatedReadyReplicas: 2}, Revisions{}, nil, Failure{})
	if c := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppAvailable); !c.LastTransitionTime.Equal(&long) {
		t.Errorf("Available kept its status but its transition time moved to %v", c.LastTransitionTime)
	}
	if c := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppProgressing); c.LastTransitionTime.Equal(&long) {
		t.Errorf("Progressing changed status but kept its transition time")
	}
}
