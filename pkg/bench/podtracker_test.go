package bench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

func TestResourcesKey(t *testing.T) {
	requirements := func(reqCPU, reqMemory, limCPU, limMemory string) corev1.ResourceRequirements {
		q := resource.MustParse
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q(reqCPU), corev1.ResourceMemory: q(reqMemory)},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q(limCPU), corev1.ResourceMemory: q(limMemory)},
		}
	}
	for _, tc := range []struct {
		name string
		a, b corev1.ResourceRequirements
		same bool
	}{
		{"same values in other formats", requirements("10m", "16Mi", "0.1", "64Mi"), requirements("0.01", "16777216", "100m", "67108864"), true},
		{"a cpu request differs", requirements("10m", "16Mi", "100m", "64Mi"), requirements("20m", "16Mi", "100m", "64Mi"), false},
		{"a memory limit differs", requirements("10m", "16Mi", "100m", "64Mi"), requirements("10m", "16Mi", "100m", "128Mi"), false},
		{"requests and limits swapped", requirements("10m", "16Mi", "100m", "64Mi"), requirements("100m", "64Mi", "10m", "16Mi"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resourcesKey(tc.a) == resourcesKey(tc.b); got != tc.same {
				t.Errorf("resourcesKey(a) == resourcesKey(b) is %v, want %v: %q, %q", got, tc.same, resourcesKey(tc.a), resourcesKey(tc.b))
			}
		})
	}
	if got, want := resourcesKey(requirements("10m", "16Mi", "100m", "64Mi")), "requests cpu 10m memory 16Mi, limits cpu 100m memory 64Mi"; got != want {
		t.Errorf("resourcesKey = %q, want %q", got, want)
	}
}

func TestComparePods(t *testing.T) {
	before := map[types.UID]int32{"a": 0, "b": 2, "gone": 1}
	after := map[types.UID]int32{"a": 1, "b": 2, "new": 0}
	if kept, restarts, recreated := comparePods(before, after); kept != 2 || restarts != 1 || recreated != 1 {
		t.Errorf("comparePods = kept %d, restarts %d, recreated %d; want 2, 1, 1", kept, restarts, recreated)
	}
}
