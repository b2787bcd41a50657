package yurtappdaemon

import (
	"context"
	"reflect"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

var testScheme = runtime.NewScheme()

func appSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
}

func podTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
	}
}

// deploymentYAD is a stored, valid YurtAppDaemon with a Deployment template.
func deploymentYAD() *openyurt.YurtAppDaemon {
	return &openyurt.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", ResourceVersion: "4", Generation: 2,
			Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "a"},
		},
		Spec: openyurt.YurtAppDaemonSpec{
			Selector:             appSelector(),
			NodePoolSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{openyurt.NodePoolTypeLabel: "edge"}},
			RevisionHistoryLimit: ptr.To[int32](10),
			WorkloadTemplate: openyurt.WorkloadTemplate{
				DeploymentTemplate: &openyurt.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: appsv1.DeploymentSpec{
						Replicas: ptr.To[int32](2),
						Selector: appSelector(),
						Template: podTemplate("nginx:1"),
					},
				},
			},
		},
		Status: openyurt.YurtAppDaemonStatus{
			ObservedGeneration: 2, CurrentRevision: "web-abc", TemplateType: openyurt.DeploymentTemplateType,
			NodePools: []string{"hangzhou", "beijing"},
		},
	}
}

// statefulSetYAD is deploymentYAD with a StatefulSet template instead.
func statefulSetYAD() *openyurt.YurtAppDaemon {
	yad := deploymentYAD()
	yad.Spec.WorkloadTemplate = openyurt.WorkloadTemplate{
		StatefulSetTemplate: &openyurt.StatefulSetTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](1),
				Selector:    appSelector(),
				Template:    podTemplate("nginx:1"),
				ServiceName: "web",
			},
		},
	}
	yad.Status.TemplateType = openyurt.StatefulSetTemplateType
	return yad
}

func TestStrategyScope(t *testing.T) {
	s := NewStrategy(testScheme)
	if !s.NamespaceScoped() || s.AllowCreateOnUpdate() || !s.AllowUnconditionalUpdate() {
		t.Error("want namespace scoped, no create on update, unconditional updates allowed")
	}
	if !NewStatusStrategy(testScheme).NamespaceScoped() {
		t.Error("status strategy must be namespace scoped")
	}
}

func TestPrepareForCreate(t *testing.T) {
	for _, tc := range []struct {
		name string
		yad  func() *openyurt.YurtAppDaemon
		want openyurt.TemplateType
	}{
		{name: "deployment", yad: deploymentYAD, want: openyurt.DeploymentTemplateType},
		{name: "statefulset", yad: statefulSetYAD, want: openyurt.StatefulSetTemplateType},
		{name: "no template", yad: func() *openyurt.YurtAppDaemon {
			y := deploymentYAD()
			y.Spec.WorkloadTemplate = openyurt.WorkloadTemplate{}
			return y
		}, want: ""},
		{name: "status type from the client is ignored", yad: func() *openyurt.YurtAppDaemon {
			y := deploymentYAD()
			y.Status.TemplateType = openyurt.StatefulSetTemplateType
			return y
		}, want: openyurt.DeploymentTemplateType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yad := tc.yad()
			yad.Generation = 8
			yad.Status.CollisionCount = ptr.To[int32](3)
			spec := *yad.Spec.DeepCopy()
			NewStrategy(testScheme).PrepareForCreate(context.Background(), yad)
			want := openyurt.YurtAppDaemonStatus{TemplateType: tc.want}
			if !apiequality.Semantic.DeepEqual(yad.Status, want) {
				t.Errorf("status = %+v, want %+v", yad.Status, want)
			}
			if yad.Generation != 1 {
				t.Errorf("generation = %d, want 1", yad.Generation)
			}
			if !apiequality.Semantic.DeepEqual(yad.Spec, spec) {
				t.Error("PrepareForCreate changed the spec")
			}
		})
	}
}

func TestPrepareForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name           string
		mutate         func(*openyurt.YurtAppDaemon)
		wantGeneration int64
	}{
		{name: "no change", mutate: func(*openyurt.YurtAppDaemon) {}, wantGeneration: 2},
		{name: "labels only", mutate: func(y *openyurt.YurtAppDaemon) { y.Labels["team"] = "b" }, wantGeneration: 2},
		{name: "image", mutate: func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		}, wantGeneration: 3},
		{name: "node pool selector", mutate: func(y *openyurt.YurtAppDaemon) { y.Spec.NodePoolSelector = nil }, wantGeneration: 3},
		{name: "revision history limit", mutate: func(y *openyurt.YurtAppDaemon) { y.Spec.RevisionHistoryLimit = ptr.To[int32](3) }, wantGeneration: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := deploymentYAD()
			yad := deploymentYAD()
			tc.mutate(yad)
			yad.Status = openyurt.YurtAppDaemonStatus{TemplateType: openyurt.StatefulSetTemplateType}
			NewStrategy(testScheme).PrepareForUpdate(context.Background(), yad, old)
			if !apiequality.Semantic.DeepEqual(yad.Status, old.Status) {
				t.Errorf("status = %+v, want the stored %+v", yad.Status, old.Status)
			}
			if yad.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", yad.Generation, tc.wantGeneration)
			}
		})
	}
}

func TestStatusPrepareForUpdate(t *testing.T) {
	old := deploymentYAD()
	yad := statefulSetYAD()
	yad.Labels = map[string]string{"x": "y"}
	yad.Annotations = nil
	yad.Status = openyurt.YurtAppDaemonStatus{
		ObservedGeneration: 2, CurrentRevision: "web-def", TemplateType: openyurt.DeploymentTemplateType,
		NodePools:  []string{"hangzhou"},
		Conditions: []openyurt.YurtAppDaemonCondition{{Type: openyurt.WorkLoadProvisioned, Status: corev1.ConditionTrue}},
	}
	want := *yad.Status.DeepCopy()
	s := NewStatusStrategy(testScheme)
	s.PrepareForUpdate(context.Background(), yad, old)
	if !apiequality.Semantic.DeepEqual(yad.Spec, old.Spec) {
		t.Error("status update changed the spec")
	}
	if !reflect.DeepEqual(yad.Labels, old.Labels) || !reflect.DeepEqual(yad.Annotations, old.Annotations) {
		t.Errorf("labels %v annotations %v, want the stored ones", yad.Labels, yad.Annotations)
	}
	if !apiequality.Semantic.DeepEqual(yad.Status, want) {
		t.Errorf("status = %+v, want %+v", yad.Status, want)
	}
	if yad.Generation != old.Generation {
		t.Errorf("generation = %d, want %d", yad.Generation, old.Generation)
	}
	if errs := s.ValidateUpdate(context.Background(), yad, old); len(errs) != 0 {
		t.Errorf("errors = %v, want none", errs)
	}
	yad.Status.TemplateType = "DaemonSet"
	if errs := s.ValidateUpdate(context.Background(), yad, old); !hasError(errs, "status.templateType") {
		t.Errorf("errors = %v, want one on status.templateType", errs)
	}
}

func hasError(errs field.ErrorList, fld string) bool {
	for _, e := range errs {
		if e.Field == fld {
			return true
		}
	}
	return false
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		yad       func() *openyurt.YurtAppDaemon
		wantField string
	}{
		{name: "deployment", yad: deploymentYAD},
		{name: "statefulset", yad: statefulSetYAD},
		{name: "no selector", yad: func() *openyurt.YurtAppDaemon {
			y := deploymentYAD()
			y.Spec.Selector = nil
			return y
		}, wantField: "spec.selector"},
		{name: "no namespace", yad: func() *openyurt.YurtAppDaemon {
			y := deploymentYAD()
			y.Namespace = ""
			return y
		}, wantField: "metadata.namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := NewStrategy(testScheme).Validate(context.Background(), tc.yad())
			if tc.wantField == "" && len(errs) != 0 {
				t.Errorf("errors = %v, want none", errs)
			}
			if tc.wantField != "" && !hasError(errs, tc.wantField) {
				t.Errorf("errors = %v, want one on %s", errs, tc.wantField)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, yad  func() *openyurt.YurtAppDaemon
		wantField string
	}{
		{name: "same", old: deploymentYAD, yad: deploymentYAD},
		{name: "kind change", old: deploymentYAD, yad: statefulSetYAD, wantField: "spec.workloadTemplate"},
		{name: "selector change", old: deploymentYAD, yad: func() *openyurt.YurtAppDaemon {
			y := deploymentYAD()
			y.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "v": "2"}}
			return y
		}, wantField: "spec.selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := NewStrategy(testScheme).ValidateUpdate(context.Background(), tc.yad(), tc.old())
			if tc.wantField == "" && len(errs) != 0 {
				t.Errorf("errors = %v, want none", errs)
			}
			if tc.wantField != "" && !hasError(errs, tc.wantField) {
				t.Errorf("errors = %v, want one on %s", errs, tc.wantField)
			}
		})
	}
}

func resetPaths(m map[fieldpath.APIVersion]*fieldpath.Set) map[fieldpath.APIVersion][]string {
	out := map[fieldpath.APIVersion][]string{}
	for v, set := range m {
		set.Iterate(func(p fieldpath.Path) { out[v] = append(out[v], p.String()) })
		sort.Strings(out[v])
	}
	return out
}

func TestGetResetFields(t *testing.T) {
	if got, want := resetPaths(NewStrategy(testScheme).GetResetFields()),
		map[fieldpath.APIVersion][]string{"apps.openyurt.io/v1alpha1": {".status"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("main reset fields = %v, want %v", got, want)
	}
	if got, want := resetPaths(NewStatusStrategy(testScheme).GetResetFields()),
		map[fieldpath.APIVersion][]string{"apps.openyurt.io/v1alpha1": {".metadata.annotations", ".metadata.labels", ".spec"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("status reset fields = %v, want %v", got, want)
	}
}

func TestGetAttrs(t *testing.T) {
	ls, fs, err := GetAttrs(deploymentYAD())
	if err != nil {
		t.Fatal(err)
	}
	if ls.Get("team") != "a" || fs.Get("metadata.name") != "web" || fs.Get("metadata.namespace") != "default" {
		t.Errorf("labels %v fields %v", ls, fs)
	}
	if _, _, err := GetAttrs(&openyurt.NodePool{}); err == nil {
		t.Error("GetAttrs of a NodePool: want an error")
	}
}
