package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BenchmarkComputePlan measures one sync of a TApp of 1000 instances: all up to date (Steady), right after
// an image change with a budget of 100% (InPlace: every pod gets an in-place update), and right after a
// migration from the original controller (Foreign: every pod carries foreign hash labels and runs its
// template, so it is judged by content and relabelled).
func BenchmarkComputePlan(b *testing.B) {
	const n = 1000
	for _, bc := range []struct {
		name    string
		image   string
		foreign bool
		want    func(*Plan) int
	}{
		{"Steady", "nginx:1", false, func(p *Plan) int { return n - len(p.InPlaceUpdates) - len(p.Relabels) }},
		{"InPlace", "nginx:2", false, func(p *Plan) int { return len(p.InPlaceUpdates) }},
		{"Foreign", "nginx:1", true, func(p *Plan) int { return len(p.Relabels) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tapp := newTApp(n)
			all := intstr.FromString("100%")
			tapp.Spec.UpdateStrategy.MaxUnavailable = &all
			pods := make([]*corev1.Pod, 0, n)
			for i := 0; i < n; i++ {
				pod := mustPod(b, tapp, strconv.Itoa(i))
				if bc.foreign {
					pod.Labels[tkestack.TemplateHashLabel], pod.Labels[tkestack.UniqHashLabel] = "1234567890123", "9876543210"
				}
				pods = append(pods, pod)
			}
			tapp.Spec.Template.Spec.Containers[0].Image = bc.image
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if got := bc.want(ComputePlan(tapp, pods, nil, testNow)); got != n {
					b.Fatalf("%d pods as expected, want %d", got, n)
				}
			}
		})
	}
}
