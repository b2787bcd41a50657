package yurtconvert

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	yadpolicy "github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

// newYAD is a YurtAppDaemon "web" in "ns" over the pools labelled region=north, with a Deployment
// template whose own selector differs from spec.selector (the YurtAppDaemon controller ignores it).
func newYAD() *v1alpha1.YurtAppDaemon {
	return &v1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "yad-uid",
			Labels:      map[string]string{"team": "a"},
			Annotations: map[string]string{"note": "x", corev1.LastAppliedConfigAnnotation: "{}"}},
		Spec: v1alpha1.YurtAppDaemonSpec{
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			NodePoolSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"region": "north"}},
			RevisionHistoryLimit: ptr.To[int32](3),
			WorkloadTemplate: v1alpha1.WorkloadTemplate{DeploymentTemplate: &v1alpha1.DeploymentTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](2),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
						Spec: corev1.PodSpec{
							NodeSelector: map[string]string{"disk": "ssd"},
							Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
							Containers:   []corev1.Container{{Name: "nginx", Image: "nginx:1.19"}},
						},
					},
				},
			}},
		},
	}
}

func withStatefulSet(yad *v1alpha1.YurtAppDaemon) *v1alpha1.YurtAppDaemon {
	d := yad.Spec.WorkloadTemplate.DeploymentTemplate
	yad.Spec.WorkloadTemplate.DeploymentTemplate = nil
	yad.Spec.WorkloadTemplate.StatefulSetTemplate = &v1alpha1.StatefulSetTemplateSpec{
		ObjectMeta: d.ObjectMeta,
		Spec: appsv1.StatefulSetSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template,
			ServiceName: "web"},
	}
	return yad
}

func testPools() []*v1alpha1.NodePool {
	north := map[string]string{"region": "north"}
	return []*v1alpha1.NodePool{
		{ObjectMeta: metav1.ObjectMeta{Name: "beijing", Labels: north},
			Spec: v1alpha1.NodePoolSpec{Taints: []corev1.Taint{{Key: "edge", Value: "yes", Effect: corev1.TaintEffectNoSchedule}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "hangzhou", Labels: north}},
		{ObjectMeta: metav1.ObjectMeta{Name: "shanghai", Labels: map[string]string{"region": "south"}}},
	}
}

// children renders what the YurtAppDaemon controller created for the pools it selects: named, with UIDs.
func children(t *testing.T, yad *v1alpha1.YurtAppDaemon, pools []*v1alpha1.NodePool) Workloads {
	t.Helper()
	selected, err := yadpolicy.SelectPools(yad, pools)
	if err != nil {
		t.Fatal(err)
	}
	var w Workloads
	rev := yadpolicy.RevisionName(yad)
	for i, p := range selected {
		uid := types.UID("uid-" + p.Name)
		created := metav1.NewTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC))
		if yad.Spec.WorkloadTemplate.DeploymentTemplate != nil {
			d, err := yadpolicy.RenderDeployment(yad, p, rev)
			if err != nil {
				t.Fatal(err)
			}
			d.UID, d.CreationTimestamp = uid, created
			w.Deployments = append(w.Deployments, d)
		} else {
			s, err := yadpolicy.RenderStatefulSet(yad, p, rev)
			if err != nil {
				t.Fatal(err)
			}
			s.UID, s.CreationTimestamp = uid, created
			w.StatefulSets = append(w.StatefulSets, s)
		}
	}
	return w
}

func TestYurtAppSetIsBuiltFromTheYurtAppDaemon(t *testing.T) {
	yad := newYAD()
	yas, err := YurtAppSet(yad)
	if err != nil {
		t.Fatal(err)
	}
	want := &v1beta1.YurtAppSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps.openyurt.io/v1beta1", Kind: "YurtAppSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"team": "a"},
			Annotations: map[string]string{"note": "x", ConvertedFromAnnotation: "yad-uid"}},
		Spec: v1beta1.YurtAppSetSpec{
			NodePoolSelector:     yad.Spec.NodePoolSelector,
			RevisionHistoryLimit: ptr.To[int32](3),
			Workload: v1beta1.Workload{WorkloadTemplate: v1beta1.WorkloadTemplate{DeploymentTemplate: &v1beta1.DeploymentTemplateSpec{
				ObjectMeta: yad.Spec.WorkloadTemplate.DeploymentTemplate.ObjectMeta,
				Spec:       yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec,
			}}},
		},
	}
	// The YurtAppDaemon renders its workloads with spec.selector, not the template's.
	want.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Selector = yad.Spec.Selector
	if !equality.Semantic.DeepEqual(yas, want) {
		t.Errorf("got\n%+v\nwant\n%+v", yas, want)
	}
	if yad.Annotations[corev1.LastAppliedConfigAnnotation] == "" || yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Selector.MatchLabels["tier"] != "front" {
		t.Error("the YurtAppDaemon was changed")
	}

	sts, err := YurtAppSet(withStatefulSet(newYAD()))
	if err != nil {
		t.Fatal(err)
	}
	if s := sts.Spec.Workload.WorkloadTemplate.StatefulSetTemplate; s == nil || s.Spec.ServiceName != "web" ||
		!equality.Semantic.DeepEqual(s.Spec.Selector, yad.Spec.Selector) || sts.Spec.Workload.WorkloadTemplate.DeploymentTemplate != nil {
		t.Errorf("statefulSetTemplate not carried over: %+v", sts.Spec.Workload.WorkloadTemplate)
	}

	for name, broken := range map[string]func(*v1alpha1.YurtAppDaemon){
		"no selector": func(y *v1alpha1.YurtAppDaemon) { y.Spec.Selector = nil },
		"no template": func(y *v1alpha1.YurtAppDaemon) { y.Spec.WorkloadTemplate = v1alpha1.WorkloadTemplate{} },
	} {
		y := newYAD()
		broken(y)
		if _, err := YurtAppSet(y); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		yad  func() *v1alpha1.YurtAppDaemon
		// edit changes the YurtAppSet or the live workloads after they are built
		edit func(yas *v1beta1.YurtAppSet, w *Workloads)
		want string // a part of the refusal, "" for none
	}{
		{name: "deployments", yad: newYAD},
		{name: "statefulsets", yad: func() *v1alpha1.YurtAppDaemon { return withStatefulSet(newYAD()) }},
		{name: "a pool without its workload yet", yad: newYAD, edit: func(_ *v1beta1.YurtAppSet, w *Workloads) {
			w.Deployments = w.Deployments[:1]
		}},
		{name: "no pool selected", yad: func() *v1alpha1.YurtAppDaemon {
			y := newYAD()
			y.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"region": "none"}}
			return y
		}},
		{name: "pools differ", yad: newYAD, edit: func(yas *v1beta1.YurtAppSet, _ *Workloads) {
			yas.Spec.Pools = []string{"shanghai"}
		}, want: "the YurtAppDaemon selects pools [beijing, hangzhou], the YurtAppSet [beijing, hangzhou, shanghai]"},
		{name: "template differs", yad: newYAD, edit: func(yas *v1beta1.YurtAppSet, _ *Workloads) {
			yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		}, want: "pool beijing: the pod templates differ"},
		{name: "selector differs", yad: newYAD, edit: func(yas *v1beta1.YurtAppSet, _ *Workloads) {
			yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Selector.MatchLabels["tier"] = "front"
		}, want: "the workload selectors differ"},
		{name: "replicas differ", yad: newYAD, edit: func(yas *v1beta1.YurtAppSet, _ *Workloads) {
			yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](5)
		}, want: "the workload specs differ outside the pod template"},
		{name: "a tweak", yad: newYAD, edit: func(yas *v1beta1.YurtAppSet, _ *Workloads) {
			yas.Spec.Workload.WorkloadTweaks = []v1beta1.WorkloadTweak{{Pools: []string{"hangzhou"},
				Tweaks: v1beta1.Tweaks{ContainerImages: []v1beta1.ContainerImage{{Name: "nginx", TargetImage: "nginx:2"}}}}}
		}, want: "pool hangzhou: the pod templates differ"},
		{name: "an image edited by hand", yad: newYAD, edit: func(_ *v1beta1.YurtAppSet, w *Workloads) {
			w.Deployments[1].Spec.Template.Spec.Containers[0].Image = "nginx:hotfix"
		}, want: "Deployment web-hangzhou (pool hangzhou): its pod template is not what the YurtAppSet renders"},
		{name: "yurt-app-manager's rendering still running", yad: newYAD, edit: func(_ *v1beta1.YurtAppSet, w *Workloads) {
			d := w.Deployments[0]
			d.Annotations[yadpolicy.AdoptedTemplateAnnotation] = d.Labels[openyurt.RevisionHashLabel]
			d.Spec.Template.Spec.NodeSelector = map[string]string{openyurt.NodePoolLabel: "beijing"}
		}, want: "Deployment web-beijing (pool beijing): its pod template is not what the YurtAppSet renders, so its pods would be replaced"},
		{name: "two workloads for a pool", yad: newYAD, edit: func(_ *v1beta1.YurtAppSet, w *Workloads) {
			d := w.Deployments[1].DeepCopy()
			d.Name, d.UID = "web-hangzhou-old", "uid-old"
			w.Deployments = append(w.Deployments, d)
		}, want: "Deployment web-hangzhou-old (pool \"hangzhou\") would be deleted by the YurtAppSet (Duplicate)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yad := tc.yad()
			pools := testPools()
			live := children(t, yad, pools)
			yas, err := YurtAppSet(yad)
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				tc.edit(yas, &live)
			}
			err = Check(yad, yas, pools, live)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want a refusal with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("refusal %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestChildren(t *testing.T) {
	yad := newYAD()
	live := children(t, yad, testPools())
	// a workload of another owner, and a resumed run's orphan labelled for the YurtAppSet
	other := live.Deployments[0].DeepCopy()
	other.Name, other.UID = "other", "uid-other"
	other.OwnerReferences[0].UID = "someone-else"
	orphan := live.Deployments[1].DeepCopy()
	orphan.OwnerReferences = nil
	orphan.Labels[openyurt.YurtAppSetOwnerLabel] = "web"
	orphan.UID = "uid-orphan"
	live.Deployments = append(live.Deployments[:1], other, orphan)
	got := Children(yad, "", live)
	want := []Handed{{Pool: "beijing", Kind: "Deployment", Name: "web-beijing", UID: "uid-beijing"},
		{Pool: "hangzhou", Kind: "Deployment", Name: "web-hangzhou", UID: "uid-orphan"}}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
