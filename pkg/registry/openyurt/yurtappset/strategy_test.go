package yurtappset

import (
	"context"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

var testScheme = runtime.NewScheme()

// deploymentYAS is a stored, valid YurtAppSet with a Deployment template and one tweak.
func deploymentYAS() *openyurt.YurtAppSet {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	return &openyurt.YurtAppSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", ResourceVersion: "4", Generation: 2,
			Labels: map[string]string{"team": "a"},
		},
		Spec: openyurt.YurtAppSetSpec{
			NodePoolSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "east"}},
			Pools:                []string{"hangzhou", "beijing"},
			RevisionHistoryLimit: ptr.To[int32](10),
			Workload: openyurt.Workload{
				WorkloadTemplate: openyurt.WorkloadTemplate{DeploymentTemplate: &openyurt.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: appsv1.DeploymentSpec{
						Replicas: ptr.To[int32](2),
						Selector: selector,
						Template: corev1.PodTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
							Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}},
						},
					},
				}},
				WorkloadTweaks: []openyurt.WorkloadTweak{{Pools: []string{"hangzhou"}, Tweaks: openyurt.Tweaks{Replicas: ptr.To[int32](3)}}},
			},
		},
		Status: openyurt.YurtAppSetStatus{ObservedGeneration: 2, CurrentRevision: "web-abc", TotalWorkloads: 2, ReadyWorkloads: 1, UpdatedWorkloads: 2},
	}
}

func TestStrategyScope(t *testing.T) {
	s := NewStrategy(testScheme)
	if !s.NamespaceScoped() || s.AllowCreateOnUpdate() || !s.AllowUnconditionalUpdate() {
		t.Error("want namespace scoped, no create on update, unconditional updates allowed")
	}
}

func TestPrepareForCreate(t *testing.T) {
	yas := deploymentYAS()
	yas.Generation = 8
	spec := *yas.Spec.DeepCopy()
	NewStrategy(testScheme).PrepareForCreate(context.Background(), yas)
	if !apiequality.Semantic.DeepEqual(yas.Status, openyurt.YurtAppSetStatus{}) {
		t.Errorf("status from the client kept: %+v", yas.Status)
	}
	if yas.Generation != 1 {
		t.Errorf("generation = %d, want 1", yas.Generation)
	}
	if !apiequality.Semantic.DeepEqual(yas.Spec, spec) {
		t.Error("PrepareForCreate changed the spec")
	}
}

func TestPrepareForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name           string
		mutate         func(*openyurt.YurtAppSet)
		wantGeneration int64
	}{
		{name: "no change", mutate: func(*openyurt.YurtAppSet) {}, wantGeneration: 2},
		{name: "labels only", mutate: func(y *openyurt.YurtAppSet) { y.Labels["team"] = "b" }, wantGeneration: 2},
		{name: "tweak", mutate: func(y *openyurt.YurtAppSet) { y.Spec.Workload.WorkloadTweaks[0].Tweaks.Replicas = ptr.To[int32](4) }, wantGeneration: 3},
		{name: "pools", mutate: func(y *openyurt.YurtAppSet) { y.Spec.Pools = []string{"shanghai"} }, wantGeneration: 3},
		{name: "image", mutate: func(y *openyurt.YurtAppSet) {
			y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		}, wantGeneration: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := deploymentYAS()
			yas := deploymentYAS()
			tc.mutate(yas)
			yas.Status = openyurt.YurtAppSetStatus{TotalWorkloads: 9}
			NewStrategy(testScheme).PrepareForUpdate(context.Background(), yas, old)
			if !apiequality.Semantic.DeepEqual(yas.Status, old.Status) {
				t.Errorf("status = %+v, want the stored %+v", yas.Status, old.Status)
			}
			if yas.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", yas.Generation, tc.wantGeneration)
			}
		})
	}
}

func TestStatusPrepareForUpdate(t *testing.T) {
	old := deploymentYAS()
	yas := deploymentYAS()
	yas.Spec.Pools = nil
	yas.Labels = map[string]string{"team": "b"}
	yas.Status = openyurt.YurtAppSetStatus{TotalWorkloads: 3, ReadyWorkloads: 3}
	NewStatusStrategy(testScheme).PrepareForUpdate(context.Background(), yas, old)
	if !apiequality.Semantic.DeepEqual(yas.Spec, old.Spec) || !reflect.DeepEqual(yas.Labels, old.Labels) {
		t.Error("a status write changed the spec or labels")
	}
	if yas.Status.TotalWorkloads != 3 || yas.Status.ReadyWorkloads != 3 {
		t.Errorf("status = %+v, want the written one", yas.Status)
	}
}

func TestValidateThroughStrategy(t *testing.T) {
	ctx := context.Background()
	s := NewStrategy(testScheme)
	if errs := s.Validate(ctx, deploymentYAS()); len(errs) != 0 {
		t.Fatalf("valid YurtAppSet refused: %v", errs)
	}
	bad := deploymentYAS()
	bad.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{{Path: "/spec/template/spec/tolerations/0", Operation: openyurt.PatchOperationRemove}}
	errs := s.Validate(ctx, bad)
	if len(errs) != 1 || errs[0].Field != "spec.workload.workloadTweaks[0].tweaks.patches[0]" {
		t.Errorf("create errors = %v, want one at the patch", errs)
	}
	if errs := s.ValidateUpdate(ctx, bad, deploymentYAS()); len(errs) != 1 {
		t.Errorf("update errors = %v, want one", errs)
	}
	status := deploymentYAS()
	status.Status.TotalWorkloads = -1
	if errs := NewStatusStrategy(testScheme).ValidateUpdate(ctx, status, deploymentYAS()); len(errs) != 1 || errs[0].Field != "status.totalWorkloads" {
		t.Errorf("status errors = %v, want status.totalWorkloads", errs)
	}
}

func TestWarnings(t *testing.T) {
	yas := deploymentYAS()
	if w := NewStrategy(testScheme).WarningsOnCreate(context.Background(), yas); len(w) != 0 {
		t.Errorf("warnings for a YurtAppSet selecting pools: %v", w)
	}
	yas.Spec.Pools, yas.Spec.NodePoolSelector = nil, nil
	yas.Spec.Workload.WorkloadTweaks[0].Pools = nil
	w := NewStrategy(testScheme).WarningsOnUpdate(context.Background(), yas, deploymentYAS())
	if len(w) != 2 || !strings.Contains(w[0], "spec.nodepoolSelector") || !strings.Contains(w[1], "workloadTweaks[0]") {
		t.Errorf("warnings = %q, want one for the spec and one for the tweak", w)
	}
}

func TestResetFields(t *testing.T) {
	main := NewStrategy(testScheme).GetResetFields()[resetFieldsVersion]
	if main == nil || !main.Has(fieldpath.MakePathOrDie("status")) || main.Has(fieldpath.MakePathOrDie("spec")) {
		t.Errorf("main reset fields = %v, want status only", main)
	}
	status := NewStatusStrategy(testScheme).GetResetFields()[resetFieldsVersion]
	if status == nil || !status.Has(fieldpath.MakePathOrDie("spec")) || status.Has(fieldpath.MakePathOrDie("status")) {
		t.Errorf("status reset fields = %v, want spec and metadata", status)
	}
}

func TestTable(t *testing.T) {
	table, err := tableConvertor.ConvertToTable(context.Background(), deploymentYAS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if want := []string{"Name", "Total", "Ready", "Updated", "Age", "Workload", "NodePoolSelector", "Pools"}; !reflect.DeepEqual(names, want) {
		t.Errorf("columns = %v, want %v", names, want)
	}
	want := []interface{}{"web", int64(2), int64(1), int64(2), "<unknown>", "Deployment", "zone=east", "hangzhou,beijing"}
	if len(table.Rows) != 1 || !reflect.DeepEqual(table.Rows[0].Cells, want) {
		t.Errorf("rows = %#v, want one row %#v", table.Rows, want)
	}
	bare := &openyurt.YurtAppSet{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	table, err = tableConvertor.ConvertToTable(context.Background(), bare, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []interface{}{"bare", int64(0), int64(0), int64(0), "<unknown>", "", "<none>", "<none>"}
	if len(table.Rows) != 1 || !reflect.DeepEqual(table.Rows[0].Cells, want) {
		t.Errorf("rows = %#v, want one row %#v", table.Rows, want)
	}
}
