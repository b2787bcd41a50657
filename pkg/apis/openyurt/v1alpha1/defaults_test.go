package v1alpha1

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// defaulted runs obj through the defaulting funcs registered in a scheme, as the API server does on decode.
func defaulted(t *testing.T, obj runtime.Object) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.Default(obj)
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}},
		}}},
	}
}

func TestSetDefaultsRevisionHistoryLimit(t *testing.T) {
	for name, tc := range map[string]struct {
		in   *int32
		want int32
	}{
		"unset is 10":      {nil, 10},
		"set is kept":      {ptr.To[int32](3), 3},
		"zero is kept":     {ptr.To[int32](0), 0},
		"negative is kept": {ptr.To[int32](-1), -1},
	} {
		t.Run(name, func(t *testing.T) {
			yad := &YurtAppDaemon{Spec: YurtAppDaemonSpec{RevisionHistoryLimit: tc.in}}
			defaulted(t, yad)
			if got := yad.Spec.RevisionHistoryLimit; got == nil || *got != tc.want {
				t.Errorf("revisionHistoryLimit = %v, want %d", got, tc.want)
			}
		})
	}
}

func TestSetDefaultsTemplateSelector(t *testing.T) {
	specSelector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	explicit := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}

	deployment := func(sel *metav1.LabelSelector) *YurtAppDaemon {
		return &YurtAppDaemon{Spec: YurtAppDaemonSpec{
			Selector: specSelector.DeepCopy(),
			WorkloadTemplate: WorkloadTemplate{DeploymentTemplate: &DeploymentTemplateSpec{
				Spec: appsv1.DeploymentSpec{Selector: sel, Template: podTemplate()},
			}},
		}}
	}
	statefulSet := func(sel *metav1.LabelSelector) *YurtAppDaemon {
		return &YurtAppDaemon{Spec: YurtAppDaemonSpec{
			Selector: specSelector.DeepCopy(),
			WorkloadTemplate: WorkloadTemplate{StatefulSetTemplate: &StatefulSetTemplateSpec{
				Spec: appsv1.StatefulSetSpec{Selector: sel, Template: podTemplate()},
			}},
		}}
	}
	templateSelector := func(yad *YurtAppDaemon) *metav1.LabelSelector {
		if t := yad.Spec.WorkloadTemplate.DeploymentTemplate; t != nil {
			return t.Spec.Selector
		}
		return yad.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Selector
	}
	podSpec := func(yad *YurtAppDaemon) *corev1.PodSpec {
		if t := yad.Spec.WorkloadTemplate.DeploymentTemplate; t != nil {
			return &t.Spec.Template.Spec
		}
		return &yad.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Template.Spec
	}

	for name, tc := range map[string]struct {
		yad  *YurtAppDaemon
		want *metav1.LabelSelector
	}{
		"deployment: copied from spec.selector":  {deployment(nil), specSelector},
		"deployment: explicit selector kept":     {deployment(explicit.DeepCopy()), explicit},
		"statefulset: copied from spec.selector": {statefulSet(nil), specSelector},
		"statefulset: explicit selector kept":    {statefulSet(explicit.DeepCopy()), explicit},
	} {
		t.Run(name, func(t *testing.T) {
			defaulted(t, tc.yad)
			got := templateSelector(tc.yad)
			if !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Fatalf("template selector = %v, want %v", got, tc.want)
			}
			if got == tc.yad.Spec.Selector {
				t.Errorf("template selector shares its pointer with spec.selector")
			}
			ports := podSpec(tc.yad).Containers[0].Ports
			if ports[0].Protocol != corev1.ProtocolTCP || ports[1].Protocol != corev1.ProtocolUDP {
				t.Errorf("port protocols = %q, %q, want TCP, UDP", ports[0].Protocol, ports[1].Protocol)
			}
		})
	}

	t.Run("no spec.selector leaves the template selector unset", func(t *testing.T) {
		yad := deployment(nil)
		yad.Spec.Selector = nil
		defaulted(t, yad)
		if got := templateSelector(yad); got != nil {
			t.Errorf("template selector = %v, want nil", got)
		}
	})
}

func TestSetDefaultsNodePoolType(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want NodePoolType
	}{
		"unset is Edge": {"", "Edge"},
		"Cloud is kept": {"Cloud", "Cloud"},
		"Edge is kept":  {"Edge", "Edge"},
		"other is kept": {"Fog", "Fog"},
	} {
		t.Run(name, func(t *testing.T) {
			pool := &NodePool{Spec: NodePoolSpec{Type: tc.in}}
			defaulted(t, pool)
			if pool.Spec.Type != tc.want {
				t.Errorf("type = %q, want %q", pool.Spec.Type, tc.want)
			}
		})
	}
}
