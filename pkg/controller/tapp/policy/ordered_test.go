package policy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestOrderPlan(t *testing.T) {
	type podState int
	const (
		ready podState = iota
		notReady
		pending
		gone // terminating
	)
	tests := []struct {
		name     string
		parallel bool
		replicas int32
		killed   []string
		pods     map[string]podState
		newImage bool // the template's image changed (in-place updates), with maxUnavailable 100%
		creates  []string
		deletes  []string
		inplace  []string
	}{
		{name: "Parallel: the plan as computed", parallel: true, replicas: 3, creates: []string{"0", "1", "2"}},
		{name: "OrderedReady from nothing: only instance 0", replicas: 3, creates: []string{"0"}},
		{name: "OrderedReady: the next once the lower ones are Running and Ready", replicas: 3, pods: map[string]podState{"0": ready}, creates: []string{"1"}},
		{name: "OrderedReady: waits while a lower instance is not Ready", replicas: 3, pods: map[string]podState{"0": notReady}},
		{name: "OrderedReady: waits while a lower instance is Pending", replicas: 3, pods: map[string]podState{"0": pending}},
		{name: "OrderedReady: a lower instance gone is created first", replicas: 3, pods: map[string]podState{"1": ready}, creates: []string{"0"}},
		{name: "OrderedReady: killed instances do not hold the higher ones", replicas: 3, killed: []string{"1"}, pods: map[string]podState{"0": ready}, creates: []string{"2"}},
		{name: "Parallel scale-down: all at once", parallel: true, replicas: 1, pods: map[string]podState{"0": ready, "1": ready, "2": ready}, deletes: []string{"2", "1"}},
		{name: "OrderedReady scale-down: the highest first", replicas: 1, pods: map[string]podState{"0": ready, "1": ready, "2": ready}, deletes: []string{"2"}},
		{name: "OrderedReady scale-down: none while a pod terminates", replicas: 1, pods: map[string]podState{"0": ready, "1": ready, "2": gone}},
		{name: "OrderedReady kills: the highest first", replicas: 3, killed: []string{"0", "2"}, pods: map[string]podState{"0": ready, "1": ready, "2": ready}, deletes: []string{"2"}},
		{name: "OrderedReady scale-down and kill together: one, the highest", replicas: 2, killed: []string{"0"}, pods: map[string]podState{"0": ready, "1": ready, "2": ready}, deletes: []string{"2"}},
		{name: "Parallel update: the budget's worth", parallel: true, replicas: 3, newImage: true, pods: map[string]podState{"0": ready, "1": ready, "2": ready}, inplace: []string{"0", "1", "2"}},
		{name: "OrderedReady update: one at a time", replicas: 3, newImage: true, pods: map[string]podState{"0": ready, "1": ready, "2": ready}, inplace: []string{"0"}},
		{name: "OrderedReady update: none while another instance is not Ready", replicas: 3, newImage: true, pods: map[string]podState{"0": ready, "1": ready, "2": notReady}},
		{name: "OrderedReady update: none while a pod terminates", replicas: 2, newImage: true, pods: map[string]podState{"0": ready, "1": ready, "2": gone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tapp := newTApp(tt.replicas)
			if !tt.parallel {
				tapp.Spec.PodManagementPolicy = tkestackv1.OrderedReadyPodManagement
			}
			var pods []*corev1.Pod
			for id, state := range tt.pods {
				pod := mustPod(t, tapp, id)
				switch state {
				case notReady:
					setCond(pod, corev1.PodReady, corev1.ConditionFalse)
				case pending:
					pod.Status.Phase = corev1.PodPending
					setCond(pod, corev1.PodReady, corev1.ConditionFalse)
				case gone:
					terminate(pod, testNow)
				}
				pods = append(pods, pod)
			}
			for _, id := range tt.killed {
				if tapp.Spec.Statuses == nil {
					tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{}
				}
				tapp.Spec.Statuses[id] = "Killed"
			}
			if tt.newImage {
				all := intstr.FromString("100%")
				tapp.Spec.UpdateStrategy.MaxUnavailable = &all
				tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			}
			plan := OrderPlan(tapp, pods, ComputePlan(tapp, pods, nil, testNow))
			expectPlan(t, plan, tt.creates, tt.deletes, nil, tt.inplace, nil)
		})
	}
}
