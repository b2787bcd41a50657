package policy

import (
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

func cpuMemory(requestCPU, requestMemory, limitCPU, limitMemory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(requestCPU), corev1.ResourceMemory: resource.MustParse(requestMemory)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limitCPU), corev1.ResourceMemory: resource.MustParse(limitMemory)},
	}
}

func TestResizeDiff(t *testing.T) {
	burstable := cpuMemory("100m", "64Mi", "1", "1Gi")
	for _, tc := range []struct {
		name      string
		change    func(*corev1.PodTemplateSpec)
		oldPod    bool // the pod predates the resize hash label
		recreate  bool
		images    map[string]string
		resources map[string]corev1.ResourceRequirements
	}{
		{name: "resources only: resize", change: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources = cpuMemory("200m", "128Mi", "2", "2Gi")
		}, resources: map[string]corev1.ResourceRequirements{"main": cpuMemory("200m", "128Mi", "2", "2Gi")}},
		{name: "images and resources: both in place", change: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Image = "nginx:2"
			t.Spec.Containers[0].Resources = cpuMemory("200m", "128Mi", "2", "2Gi")
		}, images: map[string]string{"main": "nginx:2"}, resources: map[string]corev1.ResourceRequirements{"main": cpuMemory("200m", "128Mi", "2", "2Gi")}},
		{name: "image only: no resources in the diff", change: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Image = "nginx:2"
		}, images: map[string]string{"main": "nginx:2"}},
		{name: "QoS change: recreate", change: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources = cpuMemory("1", "1Gi", "1", "1Gi")
		}, recreate: true},
		{name: "resources and command: recreate", change: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources = cpuMemory("200m", "128Mi", "2", "2Gi")
			t.Spec.Containers[0].Command = []string{"sh"}
		}, recreate: true},
		{name: "pod without the resize hash label: recreate", oldPod: true, change: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources = cpuMemory("200m", "128Mi", "2", "2Gi")
		}, recreate: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(1)
			tapp.Spec.Template.Spec.Containers[0].Resources = burstable
			pod := mustPod(t, tapp, "0")
			if tc.oldPod {
				delete(pod.Labels, tapppod.ResizeHashLabel)
			}
			tc.change(&tapp.Spec.Template)
			plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
			if tc.recreate {
				expectPlan(t, plan, nil, nil, nil, nil, []string{"0"})
				if len(plan.Recreates) == 1 && plan.Recreates[0].Reason != "" {
					t.Errorf("reason = %q, want none", plan.Recreates[0].Reason)
				}
				return
			}
			expectPlan(t, plan, nil, nil, nil, []string{"0"}, nil)
			u := plan.InPlaceUpdates[0]
			if len(u.Images) != len(tc.images) || (len(tc.images) > 0 && !equality.Semantic.DeepEqual(u.Images, tc.images)) {
				t.Errorf("images = %v, want %v", u.Images, tc.images)
			}
			if len(u.Resources) != len(tc.resources) || (len(tc.resources) > 0 && !equality.Semantic.DeepEqual(u.Resources, tc.resources)) {
				t.Errorf("resources = %v, want %v", u.Resources, tc.resources)
			}
			if u.Labels[tapppod.ResizeHashLabel] != tapppod.ResizeHash(&tapp.Spec.Template) {
				t.Errorf("resize hash label = %q", u.Labels[tapppod.ResizeHashLabel])
			}
		})
	}
}

func TestInfeasibleResizeRecreates(t *testing.T) {
	tapp := newTApp(1)
	tapp.Spec.Template.Spec.Containers[0].Resources = cpuMemory("100m", "64Mi", "1", "1Gi")
	pod := mustPod(t, tapp, "0")
	tapp.Spec.Template.Spec.Containers[0].Resources = cpuMemory("64", "64Mi", "64", "1Gi")
	plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, []string{"0"}, nil)

	// The executor applied the resize; the kubelet marks it infeasible.
	resized, err := inplace.UpdatedPod(pod, plan.InPlaceUpdates[0].Update, testNow)
	if err != nil {
		t.Fatal(err)
	}
	plan = ComputePlan(tapp, []*corev1.Pod{resized}, nil, testNow.Add(time.Second))
	expectPlan(t, plan, nil, nil, nil, nil, nil)

	resized.Status.Conditions = append(resized.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible, Message: "Node didn't have enough capacity: cpu"})
	plan = ComputePlan(tapp, []*corev1.Pod{resized}, nil, testNow.Add(2*time.Second))
	expectPlan(t, plan, nil, nil, nil, nil, []string{"0"})
	if len(plan.Recreates) == 1 && plan.Recreates[0].Reason == "" {
		t.Error("the recreation of an infeasible resize says nothing")
	}
}
