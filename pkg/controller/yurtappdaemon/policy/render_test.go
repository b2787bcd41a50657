package policy

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

func TestRenderDeployment(t *testing.T) {
	yad := newYAD()
	pt := &yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template
	pt.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	pt.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	required := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}}}}
	pt.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required}}
	before := yad.DeepCopy()
	p := edge("beijing",
		taint("zone", "bj", corev1.TaintEffectNoSchedule),
		taint("edge", "", corev1.TaintEffectNoExecute),
		taint("dedicated", "gpu", corev1.TaintEffectNoSchedule), // tolerated by the template
		taint("zone", "bj", corev1.TaintEffectNoSchedule),       // listed twice
	)

	d, err := RenderDeployment(yad, p, "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(yad, before) {
		t.Errorf("RenderDeployment mutated the YurtAppDaemon")
	}
	if d.Name != "web-beijing" || d.Namespace != "ns" || d.Kind != "Deployment" || d.APIVersion != "apps/v1" {
		t.Errorf("identity = %s %s %s/%s", d.APIVersion, d.Kind, d.Namespace, d.Name)
	}
	wantLabels := map[string]string{"app": "web", PoolNameLabel: "beijing", RevisionHashLabel: "web-abc"}
	if !reflect.DeepEqual(d.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", d.Labels, wantLabels)
	}
	wantAnn := map[string]string{"team": "a", RefNodePoolAnnotation: "beijing", PlacementHashAnnotation: PlacementHash(p)}
	if !reflect.DeepEqual(d.Annotations, wantAnn) {
		t.Errorf("annotations = %v, want %v", d.Annotations, wantAnn)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "apps.openyurt.io/v1alpha1", Kind: "YurtAppDaemon", Name: "web", UID: "yad-uid",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if !reflect.DeepEqual(d.OwnerReferences, wantOwner) {
		t.Errorf("ownerReferences = %+v, want %+v", d.OwnerReferences, wantOwner)
	}
	wantSel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", PoolNameLabel: "beijing"}}
	if !reflect.DeepEqual(d.Spec.Selector, wantSel) {
		t.Errorf("selector = %v, want %v", d.Spec.Selector, wantSel)
	}
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2", *d.Spec.Replicas)
	}
	tmpl := d.Spec.Template
	if want := map[string]string{"app": "web", PoolNameLabel: "beijing", RevisionHashLabel: "web-abc"}; !reflect.DeepEqual(tmpl.Labels, want) {
		t.Errorf("pod labels = %v, want %v", tmpl.Labels, want)
	}
	if want := map[string]string{"disk": "ssd", NodePoolLabel: "beijing"}; !reflect.DeepEqual(tmpl.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", tmpl.Spec.NodeSelector, want)
	}
	if tmpl.Spec.Affinity == nil || tmpl.Spec.Affinity.NodeAffinity == nil ||
		!reflect.DeepEqual(tmpl.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, required) {
		t.Errorf("required node affinity was not kept: %+v", tmpl.Spec.Affinity)
	}
	wantTols := []corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpExists},
		{Key: "edge", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "zone", Operator: corev1.TolerationOpEqual, Value: "bj", Effect: corev1.TaintEffectNoSchedule},
	}
	if !reflect.DeepEqual(tmpl.Spec.Tolerations, wantTols) {
		t.Errorf("tolerations = %+v, want %+v", tmpl.Spec.Tolerations, wantTols)
	}
}

func TestRenderAffinityWithoutNodeAffinity(t *testing.T) {
	yad := newYAD()
	anti := &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
		Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}
	yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: anti}
	d, err := RenderDeployment(yad, edge("a"), "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Affinity{PodAntiAffinity: anti}
	if !reflect.DeepEqual(d.Spec.Template.Spec.Affinity, want) {
		t.Errorf("affinity = %+v, want %+v", d.Spec.Template.Spec.Affinity, want)
	}
	if want := map[string]string{NodePoolLabel: "a"}; !reflect.DeepEqual(d.Spec.Template.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", d.Spec.Template.Spec.NodeSelector, want)
	}
	if d.Spec.Template.Spec.Tolerations != nil {
		t.Errorf("tolerations = %v, want none for a pool without taints", d.Spec.Template.Spec.Tolerations)
	}
}

func TestRenderSelectorWithOnlyExpressions(t *testing.T) {
	yad := newYAD()
	expr := []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}
	yad.Spec.Selector = &metav1.LabelSelector{MatchExpressions: expr}
	d, err := RenderDeployment(yad, edge("a"), "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.LabelSelector{MatchLabels: map[string]string{PoolNameLabel: "a"}, MatchExpressions: expr}
	if !reflect.DeepEqual(d.Spec.Selector, want) {
		t.Errorf("selector = %+v, want %+v", d.Spec.Selector, want)
	}
	if yad.Spec.Selector.MatchLabels != nil {
		t.Errorf("the YurtAppDaemon selector was mutated")
	}
}

func TestRenderStatefulSet(t *testing.T) {
	yad := toStatefulSet(newYAD())
	vct := []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	yad.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.VolumeClaimTemplates = vct
	s, err := RenderStatefulSet(yad, edge("hangzhou", taint("k", "v", corev1.TaintEffectNoSchedule)), "web-abc")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "web-hangzhou" || s.Namespace != "ns" || s.Kind != "StatefulSet" {
		t.Errorf("identity = %s %s/%s", s.Kind, s.Namespace, s.Name)
	}
	if s.Spec.ServiceName != "web" || !reflect.DeepEqual(s.Spec.VolumeClaimTemplates, vct) || *s.Spec.Replicas != 2 {
		t.Errorf("statefulset fields not kept: %+v", s.Spec)
	}
	if want := map[string]string{"app": "web", PoolNameLabel: "hangzhou"}; !reflect.DeepEqual(s.Spec.Selector.MatchLabels, want) {
		t.Errorf("selector = %v, want %v", s.Spec.Selector.MatchLabels, want)
	}
	if want := map[string]string{"app": "web", PoolNameLabel: "hangzhou", RevisionHashLabel: "web-abc"}; !reflect.DeepEqual(s.Labels, want) {
		t.Errorf("labels = %v, want %v", s.Labels, want)
	}
	if want := map[string]string{NodePoolLabel: "hangzhou"}; !reflect.DeepEqual(s.Spec.Template.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", s.Spec.Template.Spec.NodeSelector, want)
	}
	if want := []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}}; !reflect.DeepEqual(s.Spec.Template.Spec.Tolerations, want) {
		t.Errorf("tolerations = %v, want %v", s.Spec.Template.Spec.Tolerations, want)
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.UID != "yad-uid" || !*ref.BlockOwnerDeletion {
		t.Errorf("controller ref = %+v", ref)
	}
}

func TestRenderLongNames(t *testing.T) {
	yad := newYAD()
	yad.Name = strings.Repeat("y", 50)
	p1 := edge(strings.Repeat("p", 60) + "-1")
	p2 := edge(strings.Repeat("p", 60) + "-2")
	d1, err1 := RenderDeployment(yad, p1, RevisionName(yad))
	d2, err2 := RenderDeployment(yad, p2, RevisionName(yad))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if d1.Name == d2.Name || len(d1.Name) > 52 || len(d2.Name) > 52 {
		t.Errorf("names %q and %q must differ and be ≤ 52", d1.Name, d2.Name)
	}
	if d1.Labels[PoolNameLabel] != p1.Name || d1.Spec.Template.Spec.NodeSelector[NodePoolLabel] != p1.Name {
		t.Errorf("the pool labels must carry the full pool name")
	}
}

func TestRenderErrors(t *testing.T) {
	cases := []struct {
		name string
		yad  func() *v1alpha1.YurtAppDaemon
		pool *v1alpha1.NodePool
		rev  string
		want string
	}{
		{"pool name too long for a label", newYAD, edge(strings.Repeat("p", 64)), "web-abc", "cannot be used as a label value"},
		{"no deployment template", func() *v1alpha1.YurtAppDaemon { return toStatefulSet(newYAD()) }, edge("a"), "web-abc", "no deploymentTemplate"},
		{"no selector", func() *v1alpha1.YurtAppDaemon { y := newYAD(); y.Spec.Selector = nil; return y }, edge("a"), "web-abc", "no selector"},
		{"bad revision", newYAD, edge("a"), strings.Repeat("r", 64), "not a valid label value"},
		{"empty revision", newYAD, edge("a"), "", "not a valid label value"},
		{"nil pool", newYAD, nil, "web-abc", "no NodePool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RenderDeployment(tc.yad(), tc.pool, tc.rev)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := RenderStatefulSet(newYAD(), edge("a"), "web-abc"); err == nil || !strings.Contains(err.Error(), "no statefulSetTemplate") {
		t.Errorf("RenderStatefulSet of a Deployment template: err = %v", err)
	}
}

func TestPoolTolerationsAndPlacementHash(t *testing.T) {
	a := edge("a", taint("x", "1", corev1.TaintEffectNoSchedule), taint("y", "", corev1.TaintEffectPreferNoSchedule))
	b := edge("a", taint("y", "", corev1.TaintEffectPreferNoSchedule), taint("x", "1", corev1.TaintEffectNoSchedule))
	want := []corev1.Toleration{
		{Key: "x", Operator: corev1.TolerationOpEqual, Value: "1", Effect: corev1.TaintEffectNoSchedule},
		{Key: "y", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule},
	}
	if got := PoolTolerations(a); !reflect.DeepEqual(got, want) {
		t.Errorf("PoolTolerations = %+v, want %+v", got, want)
	}
	if PlacementHash(a) != PlacementHash(b) {
		t.Errorf("PlacementHash depends on the order of taints")
	}
	now := metav1.Now()
	c := b.DeepCopy()
	c.Spec.Taints[0].TimeAdded = &now
	if PlacementHash(a) != PlacementHash(c) {
		t.Errorf("PlacementHash depends on timeAdded")
	}
	for name, other := range map[string]*v1alpha1.NodePool{
		"taint removed": edge("a", taint("x", "1", corev1.TaintEffectNoSchedule)),
		"value changed": edge("a", taint("x", "2", corev1.TaintEffectNoSchedule), taint("y", "", corev1.TaintEffectPreferNoSchedule)),
		"other pool":    edge("b", taint("x", "1", corev1.TaintEffectNoSchedule), taint("y", "", corev1.TaintEffectPreferNoSchedule)),
	} {
		if PlacementHash(other) == PlacementHash(a) {
			t.Errorf("%s: PlacementHash unchanged", name)
		}
	}
}
