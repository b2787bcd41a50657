package validation

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/install"
	v1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// notFoundTemplates is the first n NotFound errors of spec.templates keyed 0..49999, in sorted key order.
func notFoundTemplates(n int) []wantErr {
	keys := make([]string, 0, 50000)
	for i := 0; i < 50000; i++ {
		keys = append(keys, strconv.Itoa(i))
	}
	sort.Strings(keys)
	out := make([]wantErr, 0, n)
	for _, k := range keys[:n] {
		out = append(out, wantErr{field.ErrorTypeNotFound, "spec.templates[" + k + "]", ""})
	}
	return out
}

// wantErr is one expected error: its type, its full path and, if set, a substring of its detail.
type wantErr struct {
	typ    field.ErrorType
	field  string
	detail string
}

// assertErrors checks that errs are exactly want, in any order.
func assertErrors(t *testing.T, errs field.ErrorList, want []wantErr) {
	t.Helper()
	got := make([]string, 0, len(errs))
	for _, err := range errs {
		got = append(got, string(err.Type)+" "+err.Field)
	}
	expected := make([]string, 0, len(want))
	for _, w := range want {
		expected = append(expected, string(w.typ)+" "+w.field)
	}
	sort.Strings(got)
	sort.Strings(expected)
	if strings.Join(got, "\n") != strings.Join(expected, "\n") {
		t.Fatalf("errors differ\n got: %q\nwant: %q\nfull: %v", got, expected, errs)
	}
	for _, w := range want {
		if w.detail == "" {
			continue
		}
		found := false
		for _, err := range errs {
			if err.Type == w.typ && err.Field == w.field && strings.Contains(err.Detail, w.detail) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s error on %s with detail containing %q: %v", w.typ, w.field, w.detail, errs)
		}
	}
}

func podTemplate(image string, extraLabels map[string]string) corev1.PodTemplateSpec {
	labels := map[string]string{"app": "web"}
	for k, v := range extraLabels {
		labels[k] = v
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:         "nginx",
				Image:        image,
				Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}
}

func intOrStr(v intstr.IntOrString) *intstr.IntOrString { return &v }

// validTApp returns a defaulted TApp that uses every feature validation looks at.
func validTApp() *tkestack.TApp {
	return &tkestack.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
		Spec: tkestack.TAppSpec{
			Replicas:     3,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:     ptr.To(podTemplate("nginx:1.7.9", nil)),
			TemplatePool: map[string]corev1.PodTemplateSpec{"canary": podTemplate("nginx:1.8.1", map[string]string{"track": "canary"})},
			Templates:    map[string]string{"1": "canary"},
			Statuses:     map[string]tkestack.InstanceStatus{"2": tkestack.InstanceKilled},
			UpdateStrategy: tkestack.TAppUpdateStrategy{
				Template:       "default",
				MaxUnavailable: intOrStr(intstr.FromInt32(1)),
				ForceUpdate:    tkestack.ForceUpdateStrategy{MaxUnavailable: intOrStr(intstr.FromString("100%"))},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim("data")},
			ServiceName:          "web",
			DefaultTemplateName:  "default",
		},
	}
}

func claim(name string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
}

func TestValidateTApp(t *testing.T) {
	const vct0 = "spec.volumeClaimTemplates[0]"
	cases := []struct {
		name   string
		mutate func(*tkestack.TApp)
		want   []wantErr
	}{
		// Positive cases.
		{name: "valid", mutate: func(*tkestack.TApp) {}},
		{name: "no budgets (not defaulted)", mutate: func(a *tkestack.TApp) {
			a.Spec.UpdateStrategy.MaxUnavailable, a.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable = nil, nil
		}},
		{name: "percent budgets", mutate: func(a *tkestack.TApp) {
			a.Spec.UpdateStrategy.MaxUnavailable = intOrStr(intstr.FromString("1%"))
			a.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable = intOrStr(intstr.FromString("50%"))
		}},
		{name: "pool templates and legacy name that agrees", mutate: func(a *tkestack.TApp) {
			a.Spec.DefaultTemplateName, a.Spec.LegacyDefaultTemplateName, a.Spec.UpdateStrategy.Template = "canary", "canary", "canary"
		}},
		{name: "zero replicas and ids beyond replicas", mutate: func(a *tkestack.TApp) {
			a.Spec.Replicas = 0
			a.Spec.Templates = map[string]string{"0": "canary", "99999": "default"}
		}},
		{name: "selector with expressions", mutate: func(a *tkestack.TApp) {
			a.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}},
			}}
		}},
		{name: "longest pod name at the 63-character hostname limit", mutate: func(a *tkestack.TApp) {
			a.Name = strings.Repeat("a", 61) // "aaa…-2" is 63 characters
		}},

		// metadata.name
		{
			name:   "name not a DNS subdomain",
			mutate: func(a *tkestack.TApp) { a.Name = "Web_App" },
			want:   []wantErr{{field.ErrorTypeInvalid, "metadata.name", ""}},
		},
		{
			name: "pod name longer than 253 characters",
			mutate: func(a *tkestack.TApp) {
				a.Spec.ServiceName = ""
				a.Name = strings.Repeat("a", 250)
				a.Spec.Replicas = 1000 // "<name>-999" has 254 characters
			},
			want: []wantErr{
				{field.ErrorTypeInvalid, "metadata.name", "must be no more than 253 characters"},
				// the claim's PVC name "data-<name>-999" is too long as well
				{field.ErrorTypeInvalid, "spec.volumeClaimTemplates[0].metadata.name", "no more than 253 characters"},
			},
		},
		{
			name:   "pod hostname longer than 63 characters with serviceName",
			mutate: func(a *tkestack.TApp) { a.Name = strings.Repeat("a", 62) },
			want:   []wantErr{{field.ErrorTypeInvalid, "metadata.name", "hostname because spec.serviceName is set"}},
		},
		{
			name: "ids in spec.templates count for the hostname length",
			mutate: func(a *tkestack.TApp) {
				a.Name = strings.Repeat("a", 59)
				a.Spec.Templates = map[string]string{"1000": "canary"} // "<name>-1000" has 64 characters
			},
			want: []wantErr{{field.ErrorTypeInvalid, "metadata.name", "63"}},
		},

		// spec.replicas
		{
			name:   "negative replicas",
			mutate: func(a *tkestack.TApp) { a.Spec.Replicas = -1 },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.replicas", "greater than or equal to 0"}},
		},
		{
			name:   "too many replicas",
			mutate: func(a *tkestack.TApp) { a.Spec.Replicas = tkestack.MaxReplicas + 1 },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.replicas", "less than or equal to 100000"}},
		},

		// spec.selector
		{
			name:   "nil selector",
			mutate: func(a *tkestack.TApp) { a.Spec.Selector = nil },
			want:   []wantErr{{field.ErrorTypeRequired, "spec.selector", ""}},
		},
		{
			name:   "empty selector",
			mutate: func(a *tkestack.TApp) { a.Spec.Selector = &metav1.LabelSelector{} },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.selector", "empty selector is invalid for TApp"}},
		},
		{
			name: "invalid selector",
			mutate: func(a *tkestack.TApp) {
				a.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "bad key!": "x"}}
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.selector.matchLabels", ""}},
		},
		{
			name:   "selector does not match spec.template",
			mutate: func(a *tkestack.TApp) { a.Spec.Template.Labels = map[string]string{"app": "other"} },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.template.metadata.labels", "does not match"}},
		},
		{
			name: "selector does not match a pool template",
			mutate: func(a *tkestack.TApp) {
				a.Spec.TemplatePool["canary"] = podTemplate("nginx", nil)
				a.Spec.TemplatePool["canary"].Labels["app"] = "other"
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.templatePool[canary].metadata.labels", "does not match"}},
		},

		// spec.templatePool keys
		{
			name:   "pool name default is reserved",
			mutate: func(a *tkestack.TApp) { a.Spec.TemplatePool["default"] = podTemplate("nginx", nil) },
			want:   []wantErr{{field.ErrorTypeForbidden, "spec.templatePool[default]", "reserved"}},
		},
		{
			name:   "pool name not a label value",
			mutate: func(a *tkestack.TApp) { a.Spec.TemplatePool["bad name!"] = podTemplate("nginx", nil) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.templatePool[bad name!]", ""}},
		},

		// template references
		{
			name:   "spec.templates names a missing template",
			mutate: func(a *tkestack.TApp) { a.Spec.Templates["1"] = "missing" },
			want:   []wantErr{{field.ErrorTypeNotFound, "spec.templates[1]", ""}},
		},
		{
			name:   "defaultTemplateName names a missing template",
			mutate: func(a *tkestack.TApp) { a.Spec.DefaultTemplateName = "missing" },
			want:   []wantErr{{field.ErrorTypeNotFound, "spec.defaultTemplateName", ""}},
		},
		{
			name:   "updateStrategy.template names a missing template",
			mutate: func(a *tkestack.TApp) { a.Spec.UpdateStrategy.Template = "missing" },
			want:   []wantErr{{field.ErrorTypeNotFound, "spec.updateStrategy.template", ""}},
		},

		// instance ids
		{
			name: "spec.templates keys are not canonical ids",
			mutate: func(a *tkestack.TApp) {
				a.Spec.Templates = map[string]string{"01": "canary", "-1": "canary", "x": "canary", "100000": "canary"}
			},
			want: []wantErr{
				{field.ErrorTypeInvalid, "spec.templates", `4 keys are not instance ids (must be a non-negative integer instance id less than 100000), e.g. "-1", "01", "100000"`},
			},
		},
		{
			name:   "one spec.templates key too large",
			mutate: func(a *tkestack.TApp) { a.Spec.Templates = map[string]string{"100000": "canary"} },
			want: []wantErr{
				{field.ErrorTypeInvalid, "spec.templates[100000]", "must be a non-negative integer instance id less than 100000"},
			},
		},
		{
			name: "50000 spec.templates keys naming a missing template",
			mutate: func(a *tkestack.TApp) {
				a.Spec.Templates = map[string]string{}
				for i := 0; i < 50000; i++ {
					a.Spec.Templates[strconv.Itoa(i)] = "missing"
				}
			},
			want: append(notFoundTemplates(10), wantErr{field.ErrorTypeInvalid, "spec.templates[10005]", "and 49990 more errors on spec.templates[*]"}),
		},
		{
			name: "50000 spec.statuses keys that are no ids",
			mutate: func(a *tkestack.TApp) {
				a.Spec.Statuses = map[string]tkestack.InstanceStatus{}
				for i := 0; i < 50000; i++ {
					a.Spec.Statuses["x"+strconv.Itoa(i)] = "Sleeping"
				}
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.statuses", "50000 keys are not instance ids"}},
		},
		{
			name: "spec.statuses key is not an id",
			mutate: func(a *tkestack.TApp) {
				a.Spec.Statuses = map[string]tkestack.InstanceStatus{"+2": tkestack.InstanceKilled}
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.statuses[+2]", "must be a non-negative integer instance id"}},
		},

		// spec.statuses values
		{
			name:   "spec.statuses value other than Killed",
			mutate: func(a *tkestack.TApp) { a.Spec.Statuses["2"] = tkestack.InstanceRunning },
			want:   []wantErr{{field.ErrorTypeNotSupported, "spec.statuses[2]", `"Killed"`}},
		},

		// budgets
		{
			name:   "maxUnavailable zero",
			mutate: func(a *tkestack.TApp) { a.Spec.UpdateStrategy.MaxUnavailable = intOrStr(intstr.FromInt32(0)) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable", "must be greater than or equal to 1"}},
		},
		{
			name:   "maxUnavailable 0%",
			mutate: func(a *tkestack.TApp) { a.Spec.UpdateStrategy.MaxUnavailable = intOrStr(intstr.FromString("0%")) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable", "must be a percentage between 1% and 100%"}},
		},
		{
			name:   "maxUnavailable not a percentage",
			mutate: func(a *tkestack.TApp) { a.Spec.UpdateStrategy.MaxUnavailable = intOrStr(intstr.FromString("five")) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.updateStrategy.maxUnavailable", "must be an integer or a percentage such as '50%'"}},
		},
		{
			name: "forceUpdate.maxUnavailable above 100%",
			mutate: func(a *tkestack.TApp) {
				a.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable = intOrStr(intstr.FromString("101%"))
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.updateStrategy.forceUpdate.maxUnavailable", "must be a percentage between 1% and 100%"}},
		},
		{
			name: "forceUpdate.maxUnavailable negative",
			mutate: func(a *tkestack.TApp) {
				a.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable = intOrStr(intstr.FromInt32(-1))
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.updateStrategy.forceUpdate.maxUnavailable", "must be greater than or equal to 1"}},
		},

		// rollout controls
		{
			name: "paused, partition and revisionHistoryLimit set",
			mutate: func(a *tkestack.TApp) {
				limit := int32(0)
				a.Spec.UpdateStrategy.Paused, a.Spec.UpdateStrategy.Partition, a.Spec.RevisionHistoryLimit = true, 3, &limit
			},
		},
		{
			name:   "partition negative",
			mutate: func(a *tkestack.TApp) { a.Spec.UpdateStrategy.Partition = -1 },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.updateStrategy.partition", "must be greater than or equal to 0"}},
		},
		{
			name:   "partition above the replica bound",
			mutate: func(a *tkestack.TApp) { a.Spec.UpdateStrategy.Partition = tkestack.MaxReplicas + 1 },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.updateStrategy.partition", "must be less than or equal to 100000"}},
		},
		{
			name: "revisionHistoryLimit negative",
			mutate: func(a *tkestack.TApp) {
				limit := int32(-1)
				a.Spec.RevisionHistoryLimit = &limit
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.revisionHistoryLimit", "must be greater than or equal to 0"}},
		},
		{
			name:   "minReadySeconds negative",
			mutate: func(a *tkestack.TApp) { a.Spec.MinReadySeconds = -1 },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.minReadySeconds", "must be greater than or equal to 0"}},
		},
		{
			name:   "progressDeadlineSeconds above minReadySeconds",
			mutate: func(a *tkestack.TApp) { a.Spec.MinReadySeconds, a.Spec.ProgressDeadlineSeconds = 10, ptr.To[int32](11) },
		},
		{
			name:   "progressDeadlineSeconds without minReadySeconds",
			mutate: func(a *tkestack.TApp) { a.Spec.ProgressDeadlineSeconds = ptr.To[int32](600) },
		},
		{
			name:   "progressDeadlineSeconds negative",
			mutate: func(a *tkestack.TApp) { a.Spec.ProgressDeadlineSeconds = ptr.To[int32](-1) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.progressDeadlineSeconds", "must be greater than or equal to 0"}},
		},
		{
			name:   "progressDeadlineSeconds zero",
			mutate: func(a *tkestack.TApp) { a.Spec.ProgressDeadlineSeconds = ptr.To[int32](0) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.progressDeadlineSeconds", "must be greater than minReadySeconds"}},
		},
		{
			name:   "progressDeadlineSeconds equal to minReadySeconds",
			mutate: func(a *tkestack.TApp) { a.Spec.MinReadySeconds, a.Spec.ProgressDeadlineSeconds = 30, ptr.To[int32](30) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.progressDeadlineSeconds", "must be greater than minReadySeconds"}},
		},
		{
			name:   "progressDeadlineSeconds below minReadySeconds",
			mutate: func(a *tkestack.TApp) { a.Spec.MinReadySeconds, a.Spec.ProgressDeadlineSeconds = 30, ptr.To[int32](20) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.progressDeadlineSeconds", "must be greater than minReadySeconds"}},
		},
		{
			name:   "spreadPolicy None",
			mutate: func(a *tkestack.TApp) { a.Spec.SpreadPolicy = tkestack.SpreadPolicyNone },
		},
		{
			name:   "spreadPolicy Spread",
			mutate: func(a *tkestack.TApp) { a.Spec.SpreadPolicy = tkestack.SpreadPolicySpread },
		},
		{
			name:   "spreadPolicy unknown",
			mutate: func(a *tkestack.TApp) { a.Spec.SpreadPolicy = "none" },
			want:   []wantErr{{field.ErrorTypeNotSupported, "spec.spreadPolicy", `"Spread", "None"`}},
		},
		{
			name: "claim retention policy Delete and Retain",
			mutate: func(a *tkestack.TApp) {
				a.Spec.PersistentVolumeClaimRetentionPolicy = &tkestack.TAppPersistentVolumeClaimRetentionPolicy{
					WhenDeleted: tkestack.DeletePersistentVolumeClaimRetentionPolicyType,
					WhenScaled:  tkestack.RetainPersistentVolumeClaimRetentionPolicyType,
				}
			},
		},
		{
			name:   "podManagementPolicy OrderedReady",
			mutate: func(a *tkestack.TApp) { a.Spec.PodManagementPolicy = tkestack.OrderedReadyPodManagement },
		},
		{
			name:   "podManagementPolicy unknown",
			mutate: func(a *tkestack.TApp) { a.Spec.PodManagementPolicy = "Ordered" },
			want:   []wantErr{{field.ErrorTypeNotSupported, "spec.podManagementPolicy", `"Parallel", "OrderedReady"`}},
		},
		{
			name: "claim retention policy unknown values",
			mutate: func(a *tkestack.TApp) {
				a.Spec.PersistentVolumeClaimRetentionPolicy = &tkestack.TAppPersistentVolumeClaimRetentionPolicy{
					WhenDeleted: "delete",
					WhenScaled:  "",
				}
			},
			want: []wantErr{
				{field.ErrorTypeNotSupported, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted", `"Retain", "Delete"`},
				{field.ErrorTypeNotSupported, "spec.persistentVolumeClaimRetentionPolicy.whenScaled", ""},
			},
		},

		// pod templates
		{
			name:   "spec.template is validated as a pod template",
			mutate: func(a *tkestack.TApp) { a.Spec.Template.Spec.Containers[0].Image = "" },
			want:   []wantErr{{field.ErrorTypeRequired, "spec.template.spec.containers[0].image", ""}},
		},
		{
			name: "pool templates are validated as pod templates",
			mutate: func(a *tkestack.TApp) {
				tpl := a.Spec.TemplatePool["canary"]
				tpl.Spec.Containers[0].VolumeMounts[0].Name = "missing"
				a.Spec.TemplatePool["canary"] = tpl
			},
			want: []wantErr{{field.ErrorTypeNotFound, "spec.templatePool[canary].spec.containers[0].volumeMounts[0].name", ""}},
		},
		{
			name: "volume mounts resolve only to existing claims",
			mutate: func(a *tkestack.TApp) {
				a.Spec.VolumeClaimTemplates = nil
			},
			want: []wantErr{
				{field.ErrorTypeNotFound, "spec.template.spec.containers[0].volumeMounts[0].name", ""},
				{field.ErrorTypeNotFound, "spec.templatePool[canary].spec.containers[0].volumeMounts[0].name", ""},
			},
		},

		// volumeClaimTemplates
		{
			name: "claim name not a DNS label",
			mutate: func(a *tkestack.TApp) {
				a.Spec.VolumeClaimTemplates = append(a.Spec.VolumeClaimTemplates, claim("Logs.v1"))
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.volumeClaimTemplates[1].metadata.name", ""}},
		},
		{
			name: "duplicate claim name",
			mutate: func(a *tkestack.TApp) {
				a.Spec.VolumeClaimTemplates = append(a.Spec.VolumeClaimTemplates, claim("data"))
			},
			want: []wantErr{{field.ErrorTypeDuplicate, "spec.volumeClaimTemplates[1].metadata.name", ""}},
		},
		{
			name: "PVC name longer than 253 characters",
			mutate: func(a *tkestack.TApp) {
				a.Spec.ServiceName = ""
				a.Name = strings.Repeat("a", 200)
				long := strings.Repeat("b", 60) // "<claim>-<name>-2" has 263 characters
				a.Spec.VolumeClaimTemplates = append(a.Spec.VolumeClaimTemplates, claim(long))
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.volumeClaimTemplates[1].metadata.name", "no more than 253 characters"}},
		},
		{
			name:   "claim without access modes",
			mutate: func(a *tkestack.TApp) { a.Spec.VolumeClaimTemplates[0].Spec.AccessModes = nil },
			want:   []wantErr{{field.ErrorTypeRequired, vct0 + ".spec.accessModes", ""}},
		},
		{
			name: "claim with unsupported access mode",
			mutate: func(a *tkestack.TApp) {
				a.Spec.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, "ReadWriteSome"}
			},
			want: []wantErr{{field.ErrorTypeNotSupported, vct0 + ".spec.accessModes[1]", ""}},
		},
		{
			name:   "claim without storage request",
			mutate: func(a *tkestack.TApp) { a.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests = nil },
			want:   []wantErr{{field.ErrorTypeRequired, vct0 + ".spec.resources.requests[storage]", ""}},
		},
		{
			name: "claim with zero storage request",
			mutate: func(a *tkestack.TApp) {
				a.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
			},
			want: []wantErr{{field.ErrorTypeInvalid, vct0 + ".spec.resources.requests[storage]", "greater than zero"}},
		},

		// spec.serviceName
		{
			name:   "serviceName not a DNS label",
			mutate: func(a *tkestack.TApp) { a.Spec.ServiceName = "web.svc" },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.serviceName", ""}},
		},

		// legacy DefaultTemplateName
		{
			name:   "legacy DefaultTemplateName conflicts",
			mutate: func(a *tkestack.TApp) { a.Spec.LegacyDefaultTemplateName = "canary" },
			want: []wantErr{{field.ErrorTypeInvalid, "spec.DefaultTemplateName",
				"conflicts with spec.defaultTemplateName; set only defaultTemplateName"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tc.mutate(tapp)
			assertErrors(t, ValidateTApp(tapp), tc.want)
		})
	}
}

func TestValidateTAppRequiresNamespace(t *testing.T) {
	tapp := validTApp()
	tapp.Namespace = ""
	assertErrors(t, ValidateTApp(tapp), []wantErr{{field.ErrorTypeRequired, "metadata.namespace", ""}})
}

func TestValidateTAppName(t *testing.T) {
	cases := []struct {
		name   string
		prefix bool
		valid  bool
	}{
		{"web", false, true},
		{"web.example", false, true},
		{"web-", true, true},
		{"web-", false, false},
		{"Web", false, false},
		{"web_1", false, false},
		{strings.Repeat("a", 254), false, false},
	}
	for _, tc := range cases {
		if msgs := ValidateTAppName(tc.name, tc.prefix); (len(msgs) == 0) != tc.valid {
			t.Errorf("ValidateTAppName(%q, %v) = %v, want valid=%v", tc.name, tc.prefix, msgs, tc.valid)
		}
	}
}

func TestValidateTAppUpdate(t *testing.T) {
	cases := []struct {
		name    string
		oldName string // name of both objects, if not the default
		mutate  func(*tkestack.TApp)
		want    []wantErr
	}{
		{name: "scale and retarget templates", mutate: func(a *tkestack.TApp) {
			a.Spec.Replicas = 5
			a.Spec.Templates = map[string]string{"4": "canary"}
			a.Spec.UpdateStrategy.Template = "canary"
		}},
		{
			name: "selector is immutable",
			mutate: func(a *tkestack.TApp) {
				a.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}}
				a.Spec.Template.Labels["tier"] = "front"
				a.Spec.TemplatePool["canary"].Labels["tier"] = "front"
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.selector", "field is immutable"}},
		},
		{
			name:   "the whole spec is validated",
			mutate: func(a *tkestack.TApp) { a.Spec.Templates["1"] = "missing" },
			want:   []wantErr{{field.ErrorTypeNotFound, "spec.templates[1]", ""}},
		},
		{
			name:    "the name length is checked against the new replicas",
			oldName: strings.Repeat("a", 61), // "<name>-2" fits in 63 characters, "<name>-99" does not
			mutate:  func(a *tkestack.TApp) { a.Spec.Replicas = 100 },
			want:    []wantErr{{field.ErrorTypeInvalid, "metadata.name", "hostname"}},
		},
		{
			name:   "resourceVersion is required",
			mutate: func(a *tkestack.TApp) { a.ResourceVersion = "" },
			want:   []wantErr{{field.ErrorTypeInvalid, "metadata.resourceVersion", ""}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldTApp := validTApp()
			if tc.oldName != "" {
				oldTApp.Name = tc.oldName
			}
			newTApp := oldTApp.DeepCopy()
			tc.mutate(newTApp)
			assertErrors(t, ValidateTAppUpdate(newTApp, oldTApp), tc.want)
		})
	}
}

func TestValidateTAppStatusUpdate(t *testing.T) {
	allStatuses := map[string]tkestack.InstanceStatus{}
	for i, s := range SupportedInstanceStatuses {
		allStatuses[strconv.Itoa(i)] = tkestack.InstanceStatus(s)
	}
	if len(allStatuses) != 11 {
		t.Fatalf("expected 11 instance statuses, got %d", len(allStatuses))
	}
	cases := []struct {
		name   string
		mutate func(*tkestack.TAppStatus)
		want   []wantErr
	}{
		{name: "every instance status", mutate: func(s *tkestack.TAppStatus) {
			s.Replicas, s.ReadyReplicas, s.UpdatedReplicas, s.UpdatedReadyReplicas = 11, 1, 1, 1
			s.Statuses = allStatuses
			s.AppStatus = tkestack.AppRunning
		}},
		{name: "no app status yet", mutate: func(s *tkestack.TAppStatus) { s.AppStatus = "" }},
		{name: "revisions", mutate: func(s *tkestack.TAppStatus) {
			count := int32(2)
			s.CurrentRevision, s.UpdateRevision, s.CollisionCount = "web-5f6c8d9b7a", "web-0a1b2c3d4e", &count
		}},
		{
			name: "bad revisions",
			mutate: func(s *tkestack.TAppStatus) {
				count := int32(-1)
				s.CurrentRevision, s.UpdateRevision, s.CollisionCount = "Web_1", "-", &count
			},
			want: []wantErr{
				{field.ErrorTypeInvalid, "status.collisionCount", "must be greater than or equal to 0"},
				{field.ErrorTypeInvalid, "status.currentRevision", ""},
				{field.ErrorTypeInvalid, "status.updateRevision", ""},
			},
		},
		{
			name: "negative counters",
			mutate: func(s *tkestack.TAppStatus) {
				s.ObservedGeneration, s.Replicas, s.ReadyReplicas, s.UpdatedReplicas, s.UpdatedReadyReplicas, s.AvailableReplicas = -1, -1, -1, -1, -1, -1
			},
			want: []wantErr{
				{field.ErrorTypeInvalid, "status.observedGeneration", ""},
				{field.ErrorTypeInvalid, "status.replicas", ""},
				{field.ErrorTypeInvalid, "status.readyReplicas", ""},
				{field.ErrorTypeInvalid, "status.updatedReplicas", ""},
				{field.ErrorTypeInvalid, "status.updatedReadyReplicas", ""},
				{field.ErrorTypeInvalid, "status.availableReplicas", ""},
			},
		},
		{
			name: "status.statuses key is not an id",
			mutate: func(s *tkestack.TAppStatus) {
				s.Statuses = map[string]tkestack.InstanceStatus{"a": tkestack.InstanceRunning}
			},
			want: []wantErr{{field.ErrorTypeInvalid, "status.statuses[a]", "must be a non-negative integer instance id"}},
		},
		{
			name:   "status.statuses unknown value",
			mutate: func(s *tkestack.TAppStatus) { s.Statuses = map[string]tkestack.InstanceStatus{"0": "Sleeping"} },
			want:   []wantErr{{field.ErrorTypeNotSupported, "status.statuses[0]", ""}},
		},
		{
			name:   "unknown appStatus",
			mutate: func(s *tkestack.TAppStatus) { s.AppStatus = "Sleeping" },
			want:   []wantErr{{field.ErrorTypeNotSupported, "status.appStatus", ""}},
		},
		{
			name: "many status.statuses keys that are no ids",
			mutate: func(s *tkestack.TAppStatus) {
				s.Statuses = map[string]tkestack.InstanceStatus{"a": "Running", "b": "Running", "-0": "Running"}
			},
			want: []wantErr{{field.ErrorTypeInvalid, "status.statuses", `3 keys are not instance ids`}},
		},
	}
	for _, appStatus := range SupportedAppStatuses {
		cases = append(cases, struct {
			name   string
			mutate func(*tkestack.TAppStatus)
			want   []wantErr
		}{name: "app status " + appStatus, mutate: func(s *tkestack.TAppStatus) { s.AppStatus = tkestack.AppStatus(appStatus) }})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldTApp := validTApp()
			newTApp := oldTApp.DeepCopy()
			tc.mutate(&newTApp.Status)
			assertErrors(t, ValidateTAppStatusUpdate(newTApp, oldTApp), tc.want)
		})
	}
}

// TestValidateTAppStatusUpdateDerivedNames: a status write may not raise the highest instance id past what the
// TApp's name allows, since every later spec write would then be refused on metadata.name.
func TestValidateTAppStatusUpdateDerivedNames(t *testing.T) {
	cases := []struct {
		name     string
		tappName string
		service  string
		claim    string
		old      map[string]tkestack.InstanceStatus
		statuses map[string]tkestack.InstanceStatus
		want     []wantErr
	}{
		{name: "248-character name, id 99999", tappName: strings.Repeat("a", 248),
			statuses: map[string]tkestack.InstanceStatus{"99999": "Running"},
			want: []wantErr{
				{field.ErrorTypeInvalid, "status.statuses", "pod name"},
				{field.ErrorTypeInvalid, "status.statuses", "claim name"},
			}},
		{name: "235-character name, id 9999 fits", tappName: strings.Repeat("a", 235),
			statuses: map[string]tkestack.InstanceStatus{"9999": "Running"}},
		{name: "hostname bound with serviceName", tappName: strings.Repeat("a", 59), service: "svc",
			statuses: map[string]tkestack.InstanceStatus{"9999": "Running"},
			want:     []wantErr{{field.ErrorTypeInvalid, "status.statuses", "hostname"}}},
		{name: "claim name bound", tappName: strings.Repeat("a", 200), claim: strings.Repeat("c", 49),
			statuses: map[string]tkestack.InstanceStatus{"999": "Running"},
			want:     []wantErr{{field.ErrorTypeInvalid, "status.statuses", "claim name"}}},
		{name: "an id that does not rise is not checked again", tappName: strings.Repeat("a", 248),
			old:      map[string]tkestack.InstanceStatus{"99999": "Running"},
			statuses: map[string]tkestack.InstanceStatus{"99999": "Killed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldTApp := validTApp()
			oldTApp.Name = tc.tappName
			oldTApp.Spec.ServiceName = tc.service
			oldTApp.Status.Statuses = tc.old
			if tc.claim != "" {
				oldTApp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claim(tc.claim)}
			}
			newTApp := oldTApp.DeepCopy()
			newTApp.Status.Statuses = tc.statuses
			assertErrors(t, ValidateTAppStatusUpdate(newTApp, oldTApp), tc.want)
			if len(tc.want) == 0 && tc.old == nil {
				// What the status write leaves must still take a label-only spec write.
				labelled := newTApp.DeepCopy()
				labelled.Labels = map[string]string{"touched": "1"}
				assertErrors(t, ValidateTAppUpdate(labelled, newTApp), nil)
			}
		})
	}
}

// tutorialDir holds every TApp manifest of the tutorial and the source notes, as shipped in artifacts/examples.
const tutorialDir = "../../../../artifacts/examples/tutorial"

// TestValidateManifests decodes every manifest of tutorialDir, defaults and converts it as the server does, and
// expects it to be valid.
func TestValidateManifests(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)

	files, err := filepath.Glob(filepath.Join(tutorialDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("expected the 15 manifests of the tutorial and the notes in %s, found %d", tutorialDir, len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			tapp := decodeManifest(t, scheme, file)
			if errs := ValidateTApp(tapp); len(errs) != 0 {
				t.Fatalf("unexpected errors: %v", errs)
			}
		})
	}
}

func TestLegacyDefaultTemplateNameManifest(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	tapp := decodeManifest(t, scheme, filepath.Join(tutorialDir, "tutorial-auto-delete-unused-template.yaml"))
	if tapp.Spec.DefaultTemplateName != "test4" {
		t.Errorf("defaultTemplateName = %q, want the legacy value test4", tapp.Spec.DefaultTemplateName)
	}
	if tapp.Spec.UpdateStrategy.Template != "test3" {
		t.Errorf("updateStrategy.template = %q, want test3", tapp.Spec.UpdateStrategy.Template)
	}
	// The legacy key naming a missing template is reported on the resolved field.
	delete(tapp.Spec.TemplatePool, "test4")
	assertErrors(t, ValidateTApp(tapp), []wantErr{{field.ErrorTypeNotFound, "spec.defaultTemplateName", ""}})
}

func decodeManifest(t *testing.T, scheme *runtime.Scheme, file string) *tkestack.TApp {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	versioned := &v1.TApp{}
	if err := yaml.UnmarshalStrict(data, versioned); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	scheme.Default(versioned)
	internal := &tkestack.TApp{}
	if err := scheme.Convert(versioned, internal, nil); err != nil {
		t.Fatalf("convert %s: %v", file, err)
	}
	if internal.Namespace == "" {
		internal.Namespace = "default" // the registry sets it from the request
	}
	return internal
}
