package policy

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// benchPods returns the running, available pods of instances 0..n-1 of tapp as it is now.
func benchPods(b *testing.B, tapp *tkestackv1.TApp, n int) []*corev1.Pod {
	b.Helper()
	pods := make([]*corev1.Pod, 0, n)
	for i := 0; i < n; i++ {
		id := strconv.Itoa(i)
		pod, err := NewPod(tapp, id)
		if err != nil {
			b.Fatal(err)
		}
		pod.UID = types.UID("uid-" + id)
		pod.Spec.NodeName = "node-1"
		pod.Status.Phase = corev1.PodRunning
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Ready: true}}
		setCond(pod, InPlaceUpdateGate, corev1.ConditionTrue)
		setCond(pod, corev1.PodReady, corev1.ConditionTrue)
		pods = append(pods, pod)
	}
	return pods
}

// BenchmarkComputePlan measures one sync of a TApp of 1000 instances: all up to date (Steady), and right
// after an image change with a budget of 100% (InPlace: every pod gets an in-place update).
func BenchmarkComputePlan(b *testing.B) {
	const n = 1000
	for _, bc := range []struct {
		name  string
		image string
	}{{"Steady", "nginx:1"}, {"InPlace", "nginx:2"}} {
		b.Run(bc.name, func(b *testing.B) {
			tapp := newTApp(n)
			all := intstr.FromString("100%")
			tapp.Spec.UpdateStrategy.MaxUnavailable = &all
			pods := benchPods(b, tapp, n)
			tapp.Spec.Template.Spec.Containers[0].Image = bc.image
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				plan := ComputePlan(tapp, pods, nil, testNow)
				if bc.image != "nginx:1" && len(plan.InPlaceUpdates) != n {
					b.Fatalf("%d in-place updates, want %d", len(plan.InPlaceUpdates), n)
				}
			}
		})
	}
}
