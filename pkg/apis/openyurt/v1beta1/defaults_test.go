package v1beta1

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestSetDefaultsNodePoolType(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		in, want NodePoolType
	}{
		"unset is Edge": {"", Edge},
		"Cloud is kept": {Cloud, Cloud},
	} {
		t.Run(name, func(t *testing.T) {
			pool := &NodePool{Spec: NodePoolSpec{Type: tc.in}}
			scheme.Default(pool)
			if pool.Spec.Type != tc.want {
				t.Errorf("type = %q, want %q", pool.Spec.Type, tc.want)
			}
			list := &NodePoolList{Items: []NodePool{{Spec: NodePoolSpec{Type: tc.in}}}}
			scheme.Default(list)
			if list.Items[0].Spec.Type != tc.want {
				t.Errorf("list item type = %q, want %q", list.Items[0].Spec.Type, tc.want)
			}
		})
	}
}

func TestSetDefaultsYurtAppSet(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	three := int32(3)
	for name, tc := range map[string]struct {
		limit     *int32
		wantLimit int32
	}{
		"unset revisionHistoryLimit is 10":   {nil, 10},
		"a set revisionHistoryLimit is kept": {&three, 3},
	} {
		t.Run(name, func(t *testing.T) {
			yas := &YurtAppSet{Spec: YurtAppSetSpec{
				RevisionHistoryLimit: tc.limit,
				Workload: Workload{WorkloadTemplate: WorkloadTemplate{DeploymentTemplate: &DeploymentTemplateSpec{
					Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
					}}},
				}}},
			}}
			scheme.Default(yas)
			if got := yas.Spec.RevisionHistoryLimit; got == nil || *got != tc.wantLimit {
				t.Errorf("revisionHistoryLimit = %v, want %d", got, tc.wantLimit)
			}
			port := yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Ports[0]
			if port.Protocol != corev1.ProtocolTCP {
				t.Errorf("port protocol = %q, want TCP", port.Protocol)
			}
		})
	}
}
