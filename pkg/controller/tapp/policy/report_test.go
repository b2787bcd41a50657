package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

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
			status := DesiredStatus(tapp, c.s, revs, nil, c.failure, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
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
	status := DesiredStatus(tapp, Status{Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2, UpdatedReadyReplicas: 2}, Revisions{}, nil, Failure{}, time.Now())
	if c := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppAvailable); !c.LastTransitionTime.Equal(&long) {
		t.Errorf("Available kept its status but its transition time moved to %v", c.LastTransitionTime)
	}
	if c := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppProgressing); c.LastTransitionTime.Equal(&long) {
		t.Errorf("Progressing changed status but kept its transition time")
	}
}

// TestDesiredStatusProgressDeadline: spec.progressDeadlineSeconds turns Progressing False with
// ProgressDeadlineExceeded once a rollout made no progress for that long, measured from
// status.lastProgressTime, which progress, a new revision, the start or the resumption of a rollout move
// to now; without the field nothing of it is reported.
func TestDesiredStatusProgressDeadline(t *testing.T) {
	one := intstr.FromInt32(1)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { v := metav1.NewTime(t0.Add(d)); return &v }
	progressing := func(reason string) []metav1.Condition {
		status := metav1.ConditionTrue
		switch reason {
		case ReasonRolloutPaused:
			status = metav1.ConditionUnknown
		case ReasonProgressDeadlineExceeded:
			status = metav1.ConditionFalse
		}
		return []metav1.Condition{{Type: tkestackv1.TAppProgressing, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(t0)}}
	}
	// stuck: 3 wanted, instance 0 updated but never ready, the others ready on the old revision.
	stuck := Status{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 1}
	// The TApp's status as the last write left it: the same counts, in progress since t0.
	base := func(mutate func(*tkestackv1.TApp)) func() *tkestackv1.TApp {
		return func() *tkestackv1.TApp {
			tapp := defaulted(&tkestackv1.TApp{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
				Spec: tkestackv1.TAppSpec{Replicas: 3, ProgressDeadlineSeconds: ptr.To[int32](600),
					UpdateStrategy: tkestackv1.TAppUpdateStrategy{MaxUnavailable: &one}},
				Status: tkestackv1.TAppStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 1,
					UpdateRevision: "web-new", CurrentRevision: "web-old", LastProgressTime: at(0),
					Conditions: progressing(ReasonRolloutInProgress)},
			})
			if mutate != nil {
				mutate(tapp)
			}
			return tapp
		}
	}
	type want struct {
		progressing  string        // "Status/Reason"
		lastProgress *metav1.Time  // status.lastProgressTime
		recheck      time.Duration // ProgressRecheck
	}
	for _, c := range []struct {
		name string
		tapp func() *tkestackv1.TApp
		s    Status
		now  time.Duration // after t0
		want want
	}{
		{"no progress, deadline not reached: requeued for it", base(nil), stuck, 599 * time.Second,
			want{"True/RolloutInProgress", at(0), time.Second}},
		{"no progress for the deadline: exceeded", base(nil), stuck, 600 * time.Second,
			want{"False/ProgressDeadlineExceeded", at(0), 0}},
		{"long past the deadline: still exceeded", base(nil), stuck, time.Hour,
			want{"False/ProgressDeadlineExceeded", at(0), 0}},
		{"exceeded stays exceeded without progress", base(func(tapp *tkestackv1.TApp) {
			tapp.Status.Conditions = progressing(ReasonProgressDeadlineExceeded)
		}), stuck, time.Hour, want{"False/ProgressDeadlineExceeded", at(0), 0}},
		{"an instance updated resets the clock", base(nil),
			Status{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2}, time.Hour,
			want{"True/RolloutInProgress", at(time.Hour), 600 * time.Second}},
		{"an updated instance ready resets the clock, also after the deadline", base(func(tapp *tkestackv1.TApp) {
			tapp.Status.Conditions = progressing(ReasonProgressDeadlineExceeded)
		}), Status{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 1, UpdatedReadyReplicas: 1}, time.Hour,
			want{"True/RolloutInProgress", at(time.Hour), 600 * time.Second}},
		{"an instance becoming available resets the clock", base(func(tapp *tkestackv1.TApp) {
			tapp.Spec.MinReadySeconds = 30
			tapp.Status.AvailableReplicas = 1
		}), stuck, time.Hour, want{"True/RolloutInProgress", at(time.Hour), 600 * time.Second}},
		{"a new update revision resets the clock", base(func(tapp *tkestackv1.TApp) {
			tapp.Status.UpdateRevision = "web-older"
		}), stuck, time.Hour, want{"True/RolloutInProgress", at(time.Hour), 600 * time.Second}},
		{"counts falling are no progress", base(nil),
			Status{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}, time.Hour,
			want{"False/ProgressDeadlineExceeded", at(0), 0}},
		{"paused: no deadline, the time is kept", base(func(tapp *tkestackv1.TApp) {
			tapp.Spec.UpdateStrategy.Paused = true
		}), stuck, time.Hour, want{"Unknown/RolloutPaused", at(0), 0}},
		{"resumed: the clock starts again", base(func(tapp *tkestackv1.TApp) {
			tapp.Status.Conditions = progressing(ReasonRolloutPaused)
		}), stuck, time.Hour, want{"True/RolloutInProgress", at(time.Hour), 600 * time.Second}},
		{"a rollout starting after a complete one (a scale-up) has the whole deadline", base(func(tapp *tkestackv1.TApp) {
			tapp.Spec.Replicas = 4
			tapp.Status = tkestackv1.TAppStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3,
				UpdatedReadyReplicas: 3, UpdateRevision: "web-new", CurrentRevision: "web-new", LastProgressTime: at(0),
				Conditions: progressing(ReasonRolloutComplete)}
		}), Status{Replicas: 4, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3}, time.Hour,
			want{"True/RolloutInProgress", at(time.Hour), 600 * time.Second}},
		{"complete: no deadline, no recheck", base(nil),
			Status{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3}, time.Hour,
			want{"True/RolloutComplete", at(time.Hour), 0}},
		{"complete without progress keeps the time", base(func(tapp *tkestackv1.TApp) {
			tapp.Status.ReadyReplicas, tapp.Status.AvailableReplicas, tapp.Status.UpdatedReplicas, tapp.Status.UpdatedReadyReplicas = 3, 3, 3, 3
			tapp.Status.Conditions = progressing(ReasonRolloutComplete)
		}), Status{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3}, time.Hour,
			want{"True/RolloutComplete", at(0), 0}},
		{"the deadline just set: the clock starts", base(func(tapp *tkestackv1.TApp) {
			tapp.Status.LastProgressTime = nil
		}), stuck, time.Hour, want{"True/RolloutInProgress", at(time.Hour), 600 * time.Second}},
		{"no deadline: no time, never exceeded", base(func(tapp *tkestackv1.TApp) {
			tapp.Spec.ProgressDeadlineSeconds = nil
		}), stuck, 1000 * time.Hour, want{"True/RolloutInProgress", nil, 0}},
		{"a shorter deadline applies at once", base(func(tapp *tkestackv1.TApp) {
			tapp.Spec.ProgressDeadlineSeconds = ptr.To[int32](60)
		}), stuck, 61 * time.Second, want{"False/ProgressDeadlineExceeded", at(0), 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tapp := c.tapp()
			before := tapp.DeepCopy()
			now := t0.Add(c.now)
			status := DesiredStatus(tapp, c.s, Revisions{Update: "web-new", Current: "web-old"}, nil, Failure{}, now)
			cond := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppProgressing)
			got := want{string(cond.Status) + "/" + cond.Reason, status.LastProgressTime, ProgressRecheck(tapp, &status, now)}
			if got.progressing != c.want.progressing || got.recheck != c.want.recheck ||
				(got.lastProgress == nil) != (c.want.lastProgress == nil) ||
				(got.lastProgress != nil && !got.lastProgress.Equal(c.want.lastProgress)) {
				t.Errorf("got  %s %v recheck %v\nwant %s %v recheck %v", got.progressing, got.lastProgress, got.recheck,
					c.want.progressing, c.want.lastProgress, c.want.recheck)
			}
			if cond.Reason == ReasonProgressDeadlineExceeded && !strings.Contains(cond.Message, fmt.Sprintf("no instance was updated or became ready for spec.progressDeadlineSeconds (%ds, since 2026-01-01T12:00:00Z): 1 of 3 instances updated", *tapp.Spec.ProgressDeadlineSeconds)) {
				t.Errorf("message %q", cond.Message)
			}
			if prev := meta.FindStatusCondition(before.Status.Conditions, tkestackv1.TAppProgressing); prev != nil &&
				prev.Status != cond.Status && !cond.LastTransitionTime.Time.Equal(now) {
				t.Errorf("Progressing changed status at %v but its transition time is %v", now, cond.LastTransitionTime)
			}
			if !equality.Semantic.DeepEqual(before, tapp) {
				t.Errorf("the TApp was modified")
			}
		})
	}
}
