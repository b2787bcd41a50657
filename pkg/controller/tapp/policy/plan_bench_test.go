package policy

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

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
			pods := make([]*corev1.Pod, 0, n)
			for i := 0; i < n; i++ {
				pods = append(pods, mustPod(b, tapp, strconv.Itoa(i)))
			}
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
