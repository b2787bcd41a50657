package tapp

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

var testScheme = runtime.NewScheme()

func TestStrategyScope(t *testing.T) {
	s := NewStrategy(testScheme)
	if !s.NamespaceScoped() {
		t.Error("TApps must be namespace scoped")
	}
	if s.AllowCreateOnUpdate() {
		t.Error("AllowCreateOnUpdate must be false")
	}
	if !s.AllowUnconditionalUpdate() {
		t.Error("AllowUnconditionalUpdate must be true")
	}
	st := NewStatusStrategy(testScheme)
	if !st.NamespaceScoped() || st.AllowCreateOnUpdate() {
		t.Error("status strategy: want namespace scoped and no create on update")
	}
}

func TestPrepareForCreate(t *testing.T) {
	for _, tc := range []struct {
		name         string
		selector     *metav1.LabelSelector
		wantSelector string
	}{
		{name: "match labels", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, wantSelector: "app=x"},
		{name: "several labels, sorted", selector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"version": "v1", "app": "nginx", "type": "tapp"}}, wantSelector: "app=nginx,type=tapp,version=v1"},
		{name: "expressions", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"x", "y"}}}}, wantSelector: "app in (x,y)"},
		{name: "no selector", selector: nil, wantSelector: ""},
		{name: "invalid selector", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: "Bogus"}}}, wantSelector: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tapp.Generation = 9
			tapp.Spec.Selector = tc.selector
			tapp.Status = tkestack.TAppStatus{
				ObservedGeneration: 7, Replicas: 5, ReadyReplicas: 4, AppStatus: tkestack.AppFailed,
				ScaleLabelSelector: "client=sent", Statuses: map[string]tkestack.InstanceStatus{"0": tkestack.InstanceRunning},
			}
			spec := *tapp.Spec.DeepCopy()
			NewStrategy(testScheme).PrepareForCreate(context.Background(), tapp)

			want := tkestack.TAppStatus{ScaleLabelSelector: tc.wantSelector}
			if !apiequality.Semantic.DeepEqual(tapp.Status, want) {
				t.Errorf("status = %+v, want %+v", tapp.Status, want)
			}
			if tapp.Generation != 1 {
				t.Errorf("generation = %d, want 1", tapp.Generation)
			}
			if !apiequality.Semantic.DeepEqual(tapp.Spec, spec) {
				t.Errorf("PrepareForCreate changed the spec")
			}
		})
	}
}

func TestPrepareForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name           string
		mutate         func(*tkestack.TApp)
		wantGeneration int64
	}{
		{name: "no change", mutate: func(*tkestack.TApp) {}, wantGeneration: 3},
		{name: "label change only", mutate: func(a *tkestack.TApp) { a.Labels["team"] = "b" }, wantGeneration: 3},
		{name: "annotation change only", mutate: func(a *tkestack.TApp) { a.Annotations = nil }, wantGeneration: 3},
		{name: "status change only", mutate: func(a *tkestack.TApp) { a.Status.Replicas = 100 }, wantGeneration: 3},
		{name: "replicas", mutate: func(a *tkestack.TApp) { a.Spec.Replicas = 3 }, wantGeneration: 4},
		{name: "image", mutate: func(a *tkestack.TApp) { a.Spec.Template.Spec.Containers[0].Image = "nginx:3" }, wantGeneration: 4},
		{name: "statuses", mutate: func(a *tkestack.TApp) {
			a.Spec.Statuses = map[string]tkestack.InstanceStatus{"1": tkestack.InstanceKilled}
		}, wantGeneration: 4},
		{name: "client generation is ignored without spec change", mutate: func(a *tkestack.TApp) { a.Generation = 3 }, wantGeneration: 3},
		// The legacy "DefaultTemplateName" key is never stored (Canonicalize clears it), so resending an
		// unchanged manifest that still uses it must not look like a spec change.
		{name: "legacy spelling of the stored default template name", mutate: func(a *tkestack.TApp) {
			a.Spec.LegacyDefaultTemplateName = a.Spec.DefaultTemplateName
		}, wantGeneration: 3},
		{name: "legacy spelling with a real change", mutate: func(a *tkestack.TApp) {
			a.Spec.LegacyDefaultTemplateName = a.Spec.DefaultTemplateName
			a.Spec.Replicas = 4
		}, wantGeneration: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := validTApp()
			tapp := validTApp()
			tc.mutate(tapp)
			tapp.Status = tkestack.TAppStatus{Replicas: 42, AppStatus: tkestack.AppKilled}
			NewStrategy(testScheme).PrepareForUpdate(context.Background(), tapp, old)

			if !apiequality.Semantic.DeepEqual(tapp.Status, old.Status) {
				t.Errorf("status = %+v, want the stored status %+v", tapp.Status, old.Status)
			}
			if tapp.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", tapp.Generation, tc.wantGeneration)
			}
		})
	}
}

func TestStatusPrepareForUpdate(t *testing.T) {
	old := validTApp()
	tapp := validTApp()
	tapp.Spec.Replicas = 10
	tapp.Spec.Template.Spec.Containers[0].Image = "evil:1"
	tapp.Labels = map[string]string{"team": "b", "new": "x"}
	tapp.Annotations = nil
	tapp.Finalizers = []string{"example.com/f"}
	tapp.Status = tkestack.TAppStatus{
		ObservedGeneration: 3, Replicas: 3, ReadyReplicas: 3, AppStatus: tkestack.AppSucc, ScaleLabelSelector: "app=x",
	}
	newStatus := *tapp.Status.DeepCopy()

	NewStatusStrategy(testScheme).PrepareForUpdate(context.Background(), tapp, old)

	if !apiequality.Semantic.DeepEqual(tapp.Spec, old.Spec) {
		t.Errorf("spec = %+v, want the stored spec", tapp.Spec)
	}
	if !reflect.DeepEqual(tapp.Labels, old.Labels) {
		t.Errorf("labels = %v, want %v", tapp.Labels, old.Labels)
	}
	if !reflect.DeepEqual(tapp.Annotations, old.Annotations) {
		t.Errorf("annotations = %v, want %v", tapp.Annotations, old.Annotations)
	}
	if len(tapp.Finalizers) != 0 {
		t.Errorf("finalizers = %v, want the stored (none)", tapp.Finalizers)
	}
	if !apiequality.Semantic.DeepEqual(tapp.Status, newStatus) {
		t.Errorf("status = %+v, want the new status %+v", tapp.Status, newStatus)
	}
	if tapp.Generation != old.Generation {
		t.Errorf("generation = %d, want %d", tapp.Generation, old.Generation)
	}
}

func resetPaths(t *testing.T, m map[fieldpath.APIVersion]*fieldpath.Set) map[fieldpath.APIVersion][]string {
	t.Helper()
	out := map[fieldpath.APIVersion][]string{}
	for v, set := range m {
		set.Iterate(func(p fieldpath.Path) { out[v] = append(out[v], p.String()) })
		sort.Strings(out[v])
	}
	return out
}

func TestGetResetFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  map[fieldpath.APIVersion]*fieldpath.Set
		want map[fieldpath.APIVersion][]string
	}{
		{
			name: "main",
			got:  NewStrategy(testScheme).GetResetFields(),
			want: map[fieldpath.APIVersion][]string{"apps.tkestack.io/v1": {".status"}},
		},
		{
			name: "status",
			got:  NewStatusStrategy(testScheme).GetResetFields(),
			want: map[fieldpath.APIVersion][]string{"apps.tkestack.io/v1": {".metadata.annotations", ".metadata.labels", ".spec"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resetPaths(t, tc.got); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reset fields = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCanonicalize(t *testing.T) {
	tapp := validTApp()
	tapp.Spec.LegacyDefaultTemplateName = "canary"
	tapp.Spec.DefaultTemplateName = "canary"
	NewStrategy(testScheme).Canonicalize(tapp)
	if tapp.Spec.LegacyDefaultTemplateName != "" {
		t.Errorf("LegacyDefaultTemplateName = %q, want it cleared", tapp.Spec.LegacyDefaultTemplateName)
	}
	if tapp.Spec.DefaultTemplateName != "canary" {
		t.Errorf("DefaultTemplateName = %q, want canary kept", tapp.Spec.DefaultTemplateName)
	}

	// The status strategy never touches the spec.
	tapp.Spec.LegacyDefaultTemplateName = "canary"
	NewStatusStrategy(testScheme).Canonicalize(tapp)
	if tapp.Spec.LegacyDefaultTemplateName != "canary" {
		t.Errorf("status Canonicalize cleared LegacyDefaultTemplateName")
	}
}

func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		legacy string
		want   int
	}{
		{name: "legacy field set", legacy: "canary", want: 1},
		{name: "legacy field empty", legacy: "", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tapp.Spec.LegacyDefaultTemplateName = tc.legacy
			s := NewStrategy(testScheme)
			for which, warnings := range map[string][]string{
				"create": s.WarningsOnCreate(context.Background(), tapp),
				"update": s.WarningsOnUpdate(context.Background(), tapp, validTApp()),
			} {
				if len(warnings) != tc.want {
					t.Fatalf("%s warnings = %q, want %d", which, warnings, tc.want)
				}
				for _, w := range warnings {
					if !strings.Contains(w, "spec.DefaultTemplateName") || !strings.Contains(w, `"canary"`) {
						t.Errorf("%s warning %q does not name spec.DefaultTemplateName and its value", which, w)
					}
				}
			}
			if w := NewStatusStrategy(testScheme).WarningsOnUpdate(context.Background(), tapp, validTApp()); len(w) != 0 {
				t.Errorf("status warnings = %q, want none", w)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mutate    func(*tkestack.TApp)
		wantField string
	}{
		{name: "valid", mutate: func(*tkestack.TApp) {}},
		{name: "no containers", mutate: func(a *tkestack.TApp) { a.Spec.Template.Spec.Containers = nil }, wantField: "spec.template.spec.containers"},
		{name: "negative replicas", mutate: func(a *tkestack.TApp) { a.Spec.Replicas = -1 }, wantField: "spec.replicas"},
		{name: "missing selector", mutate: func(a *tkestack.TApp) { a.Spec.Selector = nil }, wantField: "spec.selector"},
		{name: "legacy conflicts", mutate: func(a *tkestack.TApp) { a.Spec.LegacyDefaultTemplateName = "canary" }, wantField: "spec.DefaultTemplateName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tc.mutate(tapp)
			s := NewStrategy(testScheme)
			checkErrors(t, "Validate", s.Validate(context.Background(), tapp), tc.wantField)
			checkErrors(t, "ValidateUpdate", s.ValidateUpdate(context.Background(), tapp, validTApp()), tc.wantField)
		})
	}
}

// checkErrors wants no errors when wantField is empty, else at least one error on wantField.
func checkErrors(t *testing.T, what string, errs field.ErrorList, wantField string) {
	t.Helper()
	if wantField == "" {
		if len(errs) != 0 {
			t.Errorf("%s: errors = %v, want none", what, errs)
		}
		return
	}
	for _, e := range errs {
		if e.Field == wantField {
			return
		}
	}
	t.Errorf("%s: errors = %v, want one on %s", what, errs, wantField)
}

func TestValidateUpdateSelectorImmutable(t *testing.T) {
	old := validTApp()
	tapp := validTApp()
	tapp.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x", "v": "2"}}
	tapp.Spec.Template.Labels["v"] = "2"
	canary := tapp.Spec.TemplatePool["canary"]
	canary.Labels = map[string]string{"app": "x", "v": "2"}
	tapp.Spec.TemplatePool["canary"] = canary
	errs := NewStrategy(testScheme).ValidateUpdate(context.Background(), tapp, old)
	if len(errs) != 1 || errs[0].Field != "spec.selector" {
		t.Errorf("errors = %v, want one on spec.selector", errs)
	}
}

func TestStatusValidateUpdate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mutate    func(*tkestack.TApp)
		wantField string
	}{
		{name: "valid", mutate: func(a *tkestack.TApp) { a.Status.ReadyReplicas = 2 }},
		{name: "invalid spec is not checked", mutate: func(a *tkestack.TApp) { a.Spec.Template.Spec.Containers = nil }},
		{name: "negative replicas", mutate: func(a *tkestack.TApp) { a.Status.Replicas = -1 }, wantField: "status.replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tc.mutate(tapp)
			errs := NewStatusStrategy(testScheme).ValidateUpdate(context.Background(), tapp, validTApp())
			checkErrors(t, "status ValidateUpdate", errs, tc.wantField)
		})
	}
}

func TestGetAttrsAndMatch(t *testing.T) {
	tapp := validTApp()
	ls, fs, err := GetAttrs(tapp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ls, labels.Set(tapp.Labels)) {
		t.Errorf("labels = %v, want %v", ls, tapp.Labels)
	}
	if fs["metadata.name"] != "web" || fs["metadata.namespace"] != "default" {
		t.Errorf("fields = %v, want metadata.name and metadata.namespace", fs)
	}
	if _, _, err := GetAttrs(&tkestack.TAppList{}); err == nil {
		t.Error("GetAttrs of a list: want an error")
	}

	for _, tc := range []struct {
		label, field string
		want         bool
	}{
		{label: "team=a", field: "metadata.name=web", want: true},
		{label: "team=b", field: "", want: false},
		{label: "", field: "metadata.namespace=other", want: false},
	} {
		ls, _ := labels.Parse(tc.label)
		fs, _ := fields.ParseSelector(tc.field)
		pred := Match(ls, fs)
		got, err := pred.Matches(tapp)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.label, tc.field, got, tc.want)
		}
	}
}
