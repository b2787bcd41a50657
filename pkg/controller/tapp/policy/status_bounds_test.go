package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"math/rand"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestStatusCountsWithinBounds: whatever the pods, the counts the controller writes satisfy the server's
// status validation: ready, updated, updated-and-ready and available instances are at most status.replicas,
// and available ones at most the ready ones (the server refuses a status otherwise).
func TestStatusCountsWithinBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	// Running and True are drawn more often than the other values, so most rounds count every kind.
	phases := []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, ""}
	conds := []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionTrue, corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown, ""}
	counted := 0 // rounds in which every count is positive: the pods cover the cases
	for round := 0; round < 2000; round++ {
		tapp := newTApp(int32(rng.Intn(7)))
		tapp.Spec.MinReadySeconds = int32(rng.Intn(3) * 10)
		tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{}
		for id := 0; id < 9; id++ {
			if rng.Intn(4) == 0 {
				tapp.Spec.Statuses[strconv.Itoa(id)] = StatusKilled
			}
		}
		owned := map[int]*corev1.Pod{}
		for id := 0; id < 9; id++ {
			if rng.Intn(3) == 0 {
				continue
			}
			pod := mustPod(t, tapp, strconv.Itoa(id))
			pod.Status.Phase = phases[rng.Intn(len(phases))]
			pod.Status.Conditions = nil
			if c := conds[rng.Intn(len(conds))]; c != "" {
				pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: c,
					LastTransitionTime: metav1.NewTime(testNow.Add(-time.Duration(rng.Intn(30)) * time.Second))})
			}
			if c := conds[rng.Intn(len(conds))]; c != "" {
				pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: InPlaceUpdateGate, Status: c})
			}
			if rng.Intn(5) == 0 {
				now := metav1.NewTime(testNow)
				pod.DeletionTimestamp = &now
			}
			if rng.Intn(3) == 0 {
				pod.Labels[tkestack.TemplateHashLabel] = "stale"
			}
			owned[id] = pod
		}
		s := computeStatus(tapp, owned, newTemplateCache(tapp), testNow)
		for name, v := range map[string]int32{"ready": s.ReadyReplicas, "updated": s.UpdatedReplicas,
			"updatedReady": s.UpdatedReadyReplicas, "available": s.AvailableReplicas} {
			if v > s.Replicas || v < 0 {
				t.Fatalf("round %d: %s %d, replicas %d: %+v", round, name, v, s.Replicas, s)
			}
		}
		if s.AvailableReplicas > s.ReadyReplicas {
			t.Fatalf("round %d: available %d > ready %d: %+v", round, s.AvailableReplicas, s.ReadyReplicas, s)
		}
		if s.ReadyReplicas > 0 && s.UpdatedReadyReplicas > 0 && s.AvailableReplicas > 0 {
			counted++
		}
	}
	if counted < 100 {
		t.Fatalf("only %d of 2000 rounds counted ready, updated and available instances", counted)
	}
}
