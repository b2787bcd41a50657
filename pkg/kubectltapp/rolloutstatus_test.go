package kubectltapp

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestEvaluateRollout(t *testing.T) {
	now := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	readySince := func(at time.Time) podOpt {
		return func(pod *corev1.Pod) { pod.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at) }
	}
	pods := func(opts map[string][]podOpt) func(*tkestackv1.TApp) []*corev1.Pod {
		return func(tapp *tkestackv1.TApp) []*corev1.Pod {
			var out []*corev1.Pod
			for id, o := range opts {
				out = append(out, testPod(tapp, id, o...))
			}
			return out
		}
	}
	all := func(n int, extra map[string][]podOpt) map[string][]podOpt {
		m := map[string][]podOpt{}
		for i := 0; i < n; i++ {
			m[string(rune('0'+i))] = nil
		}
		for id, o := range extra {
			m[id] = o
		}
		return m
	}
	tests := []struct {
		name       string
		tapp       *tkestackv1.TApp
		pods       func(*tkestackv1.TApp) []*corev1.Pod
		wantDone   bool
		wantFailed bool
		wantMsg    string
		wantCheck  time.Duration
	}{
		{name: "every instance updated and available", tapp: testTApp(3), pods: pods(all(3, nil)),
			wantDone: true, wantMsg: `TApp "web" successfully rolled out: 3 instances updated and available`},
		{name: "spec not observed yet", tapp: testTApp(3, func(tapp *tkestackv1.TApp) { tapp.Status.ObservedGeneration = 2 }),
			pods: pods(all(3, nil)), wantMsg: "spec update to be observed"},
		{name: "an instance on the old template", tapp: testTApp(3), pods: pods(all(3, map[string][]podOpt{"1": {staleHash}})),
			wantMsg: "2 out of 3 instances have been updated"},
		{name: "an instance without a pod", tapp: testTApp(3), pods: pods(all(2, nil)),
			wantMsg: "2 out of 3 instances have been updated"},
		{name: "a terminating pod is not updated", tapp: testTApp(2), pods: pods(all(2, map[string][]podOpt{"0": {terminating}})),
			wantMsg: "1 out of 2 instances have been updated"},
		{name: "updated but not ready", tapp: testTApp(3), pods: pods(all(3, map[string][]podOpt{"2": {notReady}})),
			wantMsg: "2 of 3 updated instances are available"},
		{name: "in the middle of an in-place update", tapp: testTApp(2),
			pods:    pods(all(2, map[string][]podOpt{"0": {func(p *corev1.Pod) { p.Status.Conditions[1].Status = corev1.ConditionFalse }}})),
			wantMsg: "1 of 2 updated instances are available"},
		{name: "killed instances are not waited for", tapp: testTApp(3, killed("1")), pods: pods(all(1, map[string][]podOpt{"2": nil})),
			wantDone: true, wantMsg: "2 instances updated and available"},
		{name: "instances on a pool template use its hash", tapp: testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.Templates = map[string]string{"1": "canary"} }),
			pods: pods(all(2, nil)), wantDone: true},
		{name: "a pod built from the default template does not satisfy a pool instance",
			tapp: testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.Templates = map[string]string{"1": "canary"} }),
			pods: func(tapp *tkestackv1.TApp) []*corev1.Pod {
				return []*corev1.Pod{testPod(tapp, "0"), testPod(testTApp(2), "1")}
			},
			wantMsg: "1 out of 2 instances have been updated"},
		{name: "pods of another owner are ignored", tapp: testTApp(1), pods: pods(map[string][]podOpt{"0": {foreignOwner}}),
			wantMsg: "0 out of 1 instances have been updated"},
		{name: "an instance that finished for good fails the rollout", tapp: testTApp(2),
			pods: pods(all(2, map[string][]podOpt{"1": {finished(corev1.PodFailed)}})), wantFailed: true, wantMsg: "instances 1 finished"},
		{name: "a missing template fails the rollout", tapp: testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.Templates = map[string]string{"0": "gone"} }),
			pods: func(*tkestackv1.TApp) []*corev1.Pod {
				return []*corev1.Pod{testPod(testTApp(2), "0"), testPod(testTApp(2), "1")}
			},
			wantFailed: true, wantMsg: "0→gone"},
		{name: "a deleted TApp fails the rollout", tapp: testTApp(1, func(tapp *tkestackv1.TApp) {
			now := metav1.Now()
			tapp.DeletionTimestamp = &now
		}), pods: pods(all(1, nil)), wantFailed: true, wantMsg: "being deleted"},
		{name: "a ReplicaFailure is shown while waiting", tapp: testTApp(1, func(tapp *tkestackv1.TApp) {
			tapp.Status.Conditions = []metav1.Condition{{Type: "ReplicaFailure", Status: metav1.ConditionTrue, Reason: "FailedCreate", Message: "quota exceeded"}}
		}), pods: pods(nil), wantMsg: "(FailedCreate: quota exceeded)"},
		{name: "instances below the partition are not waited for", tapp: testTApp(4, func(tapp *tkestackv1.TApp) { tapp.Spec.UpdateStrategy.Partition = 2 }),
			pods:     pods(all(4, map[string][]podOpt{"0": {staleHash}, "1": {staleHash}})),
			wantDone: true, wantMsg: "2 instances with id >= 2 (partition) updated and available"},
		{name: "instances from the partition up are waited for", tapp: testTApp(4, func(tapp *tkestackv1.TApp) { tapp.Spec.UpdateStrategy.Partition = 2 }),
			pods:    pods(all(4, map[string][]podOpt{"0": {staleHash}, "3": {staleHash}})),
			wantMsg: "1 out of 2 instances with id >= 2 (partition) have been updated"},
		{name: "a paused rollout keeps waiting and says so", tapp: testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.UpdateStrategy.Paused = true }),
			pods: pods(all(2, map[string][]podOpt{"1": {staleHash}})), wantMsg: "the rollout is paused"},
		{name: "the update revision is named when done", tapp: testTApp(1, func(tapp *tkestackv1.TApp) { tapp.Status.UpdateRevision = "web-7d9f" }),
			pods: pods(all(1, nil)), wantDone: true, wantMsg: "at revision web-7d9f"},
		{name: "ready for less than minReadySeconds: not available yet, checked again when it is",
			tapp:    testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.MinReadySeconds = 30 }),
			pods:    pods(all(2, map[string][]podOpt{"1": {readySince(now.Add(-10 * time.Second))}})),
			wantMsg: "1 of 2 updated instances are available", wantCheck: 20 * time.Second},
		{name: "ready for minReadySeconds", tapp: testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.MinReadySeconds = 30 }),
			pods:     pods(all(2, map[string][]podOpt{"0": {readySince(now.Add(-30 * time.Second))}, "1": {readySince(now.Add(-time.Hour))}})),
			wantDone: true},
		{name: "no replicas", tapp: testTApp(0), pods: pods(nil), wantDone: true, wantMsg: "0 instances updated"},
		{name: "a progress deadline exceeded fails the rollout at once", tapp: testTApp(2, deadlineExceeded(3)),
			pods: pods(all(2, map[string][]podOpt{"1": {staleHash}})), wantFailed: true,
			wantMsg: `TApp "web" exceeded its progress deadline: no progress for 600s`},
		{name: "a progress deadline exceeded for an older generation is waited out", tapp: testTApp(2, deadlineExceeded(2)),
			pods: pods(all(2, map[string][]podOpt{"1": {staleHash}})), wantMsg: "1 out of 2 instances have been updated"},
		{name: "a progress deadline exceeded but every instance available: done", tapp: testTApp(2, deadlineExceeded(3)),
			pods: pods(all(2, nil)), wantDone: true},
		{name: "progressing in progress is waited for", tapp: testTApp(2, func(tapp *tkestackv1.TApp) {
			tapp.Status.Conditions = []metav1.Condition{{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "RolloutInProgress", ObservedGeneration: 3}}
		}), pods: pods(all(2, map[string][]podOpt{"1": {notReady}})), wantMsg: "1 of 2 updated instances are available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EvaluateRollout(tt.tapp, tt.pods(tt.tapp), now)
			if got.Done != tt.wantDone || got.Failed != tt.wantFailed || !strings.Contains(got.Message, tt.wantMsg) || got.RecheckAfter != tt.wantCheck {
				t.Errorf("EvaluateRollout = %+v, want done=%v failed=%v, recheck after %s and a message containing %q",
					got, tt.wantDone, tt.wantFailed, tt.wantCheck, tt.wantMsg)
			}
		})
	}
}

// deadlineExceeded gives the TApp the Progressing condition of a progress deadline exceeded, observed at
// generation.
func deadlineExceeded(generation int64) func(*tkestackv1.TApp) {
	return func(tapp *tkestackv1.TApp) {
		tapp.Status.Conditions = []metav1.Condition{{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
			ObservedGeneration: generation, Message: "no progress for 600s"}}
	}
}
