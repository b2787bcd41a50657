package policy

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/poolplacement"
)

func TestRenderDeploymentAsYurtManager(t *testing.T) {
	yas := newYAS()
	taint := corev1.Taint{Key: "edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	p := pool("beijing", north, taint)
	d, err := RenderDeployment(yas, p, "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "" || d.GenerateName != "web-beijing-" || d.Namespace != "ns" {
		t.Errorf("name %q generateName %q namespace %q", d.Name, d.GenerateName, d.Namespace)
	}
	wantLabels := map[string]string{"app": "web", PoolNameLabel: "beijing", RevisionHashLabel: "web-abc", RefYurtAppSetLabel: "web"}
	if !reflect.DeepEqual(d.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", d.Labels, wantLabels)
	}
	if want := map[string]string{"team": "a", RefNodePoolAnnotation: "beijing"}; !reflect.DeepEqual(d.Annotations, want) {
		t.Errorf("annotations = %v, want %v", d.Annotations, want)
	}
	if want := map[string]string{"app": "web", PoolNameLabel: "beijing"}; !reflect.DeepEqual(d.Spec.Selector.MatchLabels, want) {
		t.Errorf("selector = %v, want %v", d.Spec.Selector.MatchLabels, want)
	}
	if want := map[string]string{"app": "web", PoolNameLabel: "beijing", RevisionHashLabel: "web-abc"}; !reflect.DeepEqual(d.Spec.Template.Labels, want) {
		t.Errorf("pod labels = %v, want %v", d.Spec.Template.Labels, want)
	}
	if want := map[string]string{"disk": "ssd", poolplacement.NodePoolLabel: "beijing"}; !reflect.DeepEqual(d.Spec.Template.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", d.Spec.Template.Spec.NodeSelector, want)
	}
	if !poolplacement.Placed(&d.Spec.Template.Spec, "beijing", p.Spec.Taints) {
		t.Errorf("pods do not tolerate the pool's taints: %+v", d.Spec.Template.Spec.Tolerations)
	}
	if ref := metav1.GetControllerOf(d); ref == nil || ref.UID != testUID || ref.Kind != "YurtAppSet" || ref.APIVersion != "apps.openyurt.io/v1beta1" {
		t.Errorf("controller ref = %+v", ref)
	}
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.19" {
		t.Errorf("replicas %d image %s, want the template's", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
	// The template is not modified.
	if _, ok := yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Labels[PoolNameLabel]; ok {
		t.Errorf("rendering modified the template")
	}
}

func TestRenderStatefulSet(t *testing.T) {
	yas := withStatefulSet(newYAS())
	s, err := RenderStatefulSet(yas, pool("hangzhou", north), "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	if s.GenerateName != "web-hangzhou-" || s.Spec.ServiceName != "web" || s.Labels[PoolNameLabel] != "hangzhou" ||
		s.Spec.Template.Spec.NodeSelector[poolplacement.NodePoolLabel] != "hangzhou" || s.Spec.Selector.MatchLabels[PoolNameLabel] != "hangzhou" {
		t.Errorf("statefulset = %+v", s.ObjectMeta)
	}
	if _, err := RenderDeployment(yas, pool("hangzhou", north), "web-abc"); err == nil {
		t.Errorf("RenderDeployment of a StatefulSet template succeeded")
	}
}

func TestGenerateName(t *testing.T) {
	if got := GenerateName("web", "beijing"); got != "web-beijing-" {
		t.Errorf("GenerateName = %q", got)
	}
	long := strings.Repeat("p", 250)
	if got := GenerateName("web", long); got != "web-" {
		t.Errorf("GenerateName of a long pool = %q, want web-", got)
	}
}

// Tweaks apply in list order to the pools they select, a later one winning.
func TestTweaksOrderAndSelection(t *testing.T) {
	yas := newYAS()
	yas.Spec.Workload.WorkloadTweaks = []v1beta1.WorkloadTweak{
		{Pools: []string{"beijing"}, Tweaks: v1beta1.Tweaks{Replicas: ptr.To[int32](3)}},
		{NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "b"}},
			Tweaks: v1beta1.Tweaks{ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.20"}}}},
		{Pools: []string{"beijing"}, Tweaks: v1beta1.Tweaks{Replicas: ptr.To[int32](5)}},
	}
	bj, err := RenderDeployment(yas, pool("beijing", north), "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	if *bj.Spec.Replicas != 5 || bj.Spec.Template.Spec.Containers[0].Image != "nginx:1.19" {
		t.Errorf("beijing: replicas %d image %s, want 5 (the later tweak) and the template's image", *bj.Spec.Replicas, bj.Spec.Template.Spec.Containers[0].Image)
	}
	hz, err := RenderDeployment(yas, pool("hangzhou", map[string]string{"region": "north", "zone": "b"}), "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	if *hz.Spec.Replicas != 2 || hz.Spec.Template.Spec.Containers[0].Image != "nginx:1.20" {
		t.Errorf("hangzhou: replicas %d image %s, want 2 and nginx:1.20", *hz.Spec.Replicas, hz.Spec.Template.Spec.Containers[0].Image)
	}
}

// Patches apply after the pool's rendering, with {{nodepool-name}} as the pool's name; a patch that
// cannot apply, or would change what identifies the workload (admission refuses both), is a PoolError of
// its pool only.
func TestPatchTweaks(t *testing.T) {
	yas := newYAS()
	yas.Spec.Workload.WorkloadTweaks = []v1beta1.WorkloadTweak{{Pools: []string{"beijing"}, Tweaks: v1beta1.Tweaks{Patches: []v1beta1.Patch{
		{Path: "/metadata/labels/foo", Operation: v1beta1.PatchOperationAdd, Value: &apiextensionsv1.JSON{Raw: []byte(`"bar"`)}},
		{Path: "/spec/template/spec/containers/0/env", Operation: v1beta1.PatchOperationAdd,
			Value: &apiextensionsv1.JSON{Raw: []byte(`[{"name":"POOL","value":"{{nodepool-name}}"}]`)}},
	}}}}
	d, err := RenderDeployment(yas, pool("beijing", north), "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"app": "web", "foo": "bar", PoolNameLabel: "beijing", RevisionHashLabel: "web-abc", RefYurtAppSetLabel: "web"}
	if !reflect.DeepEqual(d.Labels, want) {
		t.Errorf("labels = %v, want %v", d.Labels, want)
	}
	if env := d.Spec.Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Value != "beijing" {
		t.Errorf("env = %+v", env)
	}
	// OpenYurt's own example replaces metadata.labels: the identity labels stay.
	yas.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []v1beta1.Patch{{Path: "/metadata/labels", Operation: v1beta1.PatchOperationAdd,
		Value: &apiextensionsv1.JSON{Raw: []byte(`{"foo":"bar"}`)}}}
	if d, err = RenderDeployment(yas, pool("beijing", north), "web-abc"); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"foo": "bar", PoolNameLabel: "beijing", RevisionHashLabel: "web-abc", RefYurtAppSetLabel: "web"}; !reflect.DeepEqual(d.Labels, want) {
		t.Errorf("labels after replacing metadata.labels = %v, want %v", d.Labels, want)
	}
	for name, patch := range map[string]v1beta1.Patch{
		"no such field":         {Path: "/spec/nothing/here", Operation: v1beta1.PatchOperationReplace, Value: &apiextensionsv1.JSON{Raw: []byte(`1`)}},
		"identity label change": {Path: "/metadata/labels/apps.openyurt.io~1pool-name", Operation: v1beta1.PatchOperationReplace, Value: &apiextensionsv1.JSON{Raw: []byte(`"x"`)}},
	} {
		yas.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []v1beta1.Patch{patch}
		plan, err := ComputePlan(yas, RevisionName(yas), []*v1alpha1.NodePool{pool("beijing", north), pool("hangzhou", north)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := summarize(plan); !reflect.DeepEqual(got.PoolErrors, []string{"beijing"}) || !reflect.DeepEqual(got.Creates, []string{"hangzhou"}) {
			t.Errorf("%s: plan %+v, want beijing refused and hangzhou created", name, got)
		}
	}
}
