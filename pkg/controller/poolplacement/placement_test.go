package poolplacement

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestPinKeepsTemplateAndIsPlaced(t *testing.T) {
	taints := []corev1.Taint{{Key: "edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}, {Key: "gpu", Effect: corev1.TaintEffectNoExecute}}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"disk": "ssd"},
		Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
		Affinity:     &corev1.Affinity{},
	}}
	if Placed(&tmpl.Spec, "beijing", taints) {
		t.Fatalf("an unpinned template is reported placed")
	}
	Pin(&tmpl, "beijing", taints)
	if want := map[string]string{"disk": "ssd", NodePoolLabel: "beijing"}; !reflect.DeepEqual(tmpl.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", tmpl.Spec.NodeSelector, want)
	}
	want := []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists},
		{Key: "edge", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if !reflect.DeepEqual(tmpl.Spec.Tolerations, want) {
		t.Errorf("tolerations = %+v, want %+v", tmpl.Spec.Tolerations, want)
	}
	if tmpl.Spec.Affinity == nil {
		t.Errorf("affinity dropped")
	}
	if !Placed(&tmpl.Spec, "beijing", taints) || Placed(&tmpl.Spec, "hangzhou", taints) {
		t.Errorf("Placed is wrong after Pin")
	}
	if Placed(&tmpl.Spec, "beijing", append(taints, corev1.Taint{Key: "new", Effect: corev1.TaintEffectNoSchedule})) {
		t.Errorf("a new taint is reported tolerated")
	}
	if Hash("beijing", taints) != Hash("beijing", []corev1.Taint{taints[1], taints[0]}) || Hash("beijing", taints) == Hash("hangzhou", taints) {
		t.Errorf("Hash depends on taint order or ignores the pool name")
	}
}
