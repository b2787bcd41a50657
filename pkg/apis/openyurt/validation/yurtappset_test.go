package validation

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

const (
	yasDT     = "spec.workload.workloadTemplate.deploymentTemplate"
	yasSTS    = "spec.workload.workloadTemplate.statefulSetTemplate"
	yasTweak0 = "spec.workload.workloadTweaks[0]"
)

func validYurtAppSet() *openyurt.YurtAppSet {
	return &openyurt.YurtAppSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: openyurt.YurtAppSetSpec{
			NodePoolSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "east"}},
			Pools:                []string{"hangzhou", "beijing"},
			RevisionHistoryLimit: ptr.To[int32](10),
			Workload: openyurt.Workload{
				WorkloadTemplate: openyurt.WorkloadTemplate{DeploymentTemplate: &openyurt.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: appsv1.DeploymentSpec{
						Replicas: ptr.To[int32](2),
						Selector: appSelector(),
						Template: podTemplate(),
					},
				}},
				WorkloadTweaks: []openyurt.WorkloadTweak{{
					Pools: []string{"hangzhou"},
					Tweaks: openyurt.Tweaks{
						Replicas:        ptr.To[int32](3),
						ContainerImages: []openyurt.ContainerImage{{Name: "nginx", TargetImage: "nginx:1.20"}},
						Patches: []openyurt.Patch{
							{Path: "/metadata/labels/tier", Operation: openyurt.PatchOperationAdd, Value: jsonValue(`"edge"`)},
							{Path: "/spec/template/spec/nodeSelector/region", Operation: openyurt.PatchOperationAdd, Value: jsonValue(`"{{nodepool-name}}"`)},
						},
					},
				}},
			},
		},
	}
}

func validStatefulSetYurtAppSet() *openyurt.YurtAppSet {
	yas := validYurtAppSet()
	yas.Spec.Workload.WorkloadTemplate = openyurt.WorkloadTemplate{StatefulSetTemplate: &openyurt.StatefulSetTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       appsv1.StatefulSetSpec{Selector: appSelector(), ServiceName: "web", Template: podTemplate()},
	}}
	return yas
}

func jsonValue(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }

func tweakPatch(op openyurt.PatchOperation, path, raw string) openyurt.Patch {
	p := openyurt.Patch{Operation: op, Path: path}
	if raw != "" {
		p.Value = jsonValue(raw)
	}
	return p
}

func TestValidateYurtAppSet(t *testing.T) {
	firstContainer := func(y *openyurt.YurtAppSet) string {
		return y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Name
	}
	for name, tc := range map[string]struct {
		mutate func(*openyurt.YurtAppSet)
		base   func() *openyurt.YurtAppSet
		want   []wantErr
	}{
		"valid":                    {mutate: func(*openyurt.YurtAppSet) {}},
		"valid StatefulSet":        {base: validStatefulSetYurtAppSet, mutate: func(*openyurt.YurtAppSet) {}},
		"no pools and no selector": {mutate: func(y *openyurt.YurtAppSet) { y.Spec.Pools, y.Spec.NodePoolSelector = nil, nil }},
		"replace of a missing label": {mutate: func(y *openyurt.YurtAppSet) {
			y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches[0].Operation = openyurt.PatchOperationReplace
		}},
		"image of an init container": {mutate: func(y *openyurt.YurtAppSet) {
			spec := &y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec
			spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile}}
			y.Spec.Workload.WorkloadTweaks[0].Tweaks.ContainerImages = []openyurt.ContainerImage{{Name: "init", TargetImage: "busybox:2"}}
		}},
		"patch fixing what the template lacks is not blamed on the template twice": {mutate: func(y *openyurt.YurtAppSet) {
			y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{tweakPatch(openyurt.PatchOperationReplace, "/spec/replicas", `5`)}
		}},
		"neither template": {
			mutate: func(y *openyurt.YurtAppSet) { y.Spec.Workload.WorkloadTemplate = openyurt.WorkloadTemplate{} },
			want:   []wantErr{{field.ErrorTypeRequired, "spec.workload.workloadTemplate"}},
		},
		"both templates": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate.StatefulSetTemplate = validStatefulSetYurtAppSet().Spec.Workload.WorkloadTemplate.StatefulSetTemplate
			},
			want: []wantErr{{field.ErrorTypeForbidden, "spec.workload.workloadTemplate"}},
		},
		"template without selector": {
			mutate: func(y *openyurt.YurtAppSet) { y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Selector = nil },
			want:   []wantErr{{field.ErrorTypeRequired, yasDT + ".spec.selector"}},
		},
		"empty template selector": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Selector = &metav1.LabelSelector{}
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasDT + ".spec.selector"}},
		},
		"selector not matching the pod labels": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Selector.MatchLabels["app"] = "other"
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasDT + ".spec.template.metadata.labels"}},
		},
		"workload labels need not match its selector": {
			mutate: func(y *openyurt.YurtAppSet) { y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Labels = nil },
		},
		"StatefulSet selector not matching the pod labels": {
			base: validStatefulSetYurtAppSet,
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate.StatefulSetTemplate.Spec.Selector.MatchLabels["app"] = "other"
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasSTS + ".spec.template.metadata.labels"}},
		},
		"invalid pod template (the YurtAppDaemon rules)": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = ""
			},
			want: []wantErr{{"", yasDT + ".spec.template.spec.containers[0].image"}},
		},
		"negative template replicas": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](-1)
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasDT + ".spec.replicas"}},
		},
		"negative revisionHistoryLimit": {
			mutate: func(y *openyurt.YurtAppSet) { y.Spec.RevisionHistoryLimit = ptr.To[int32](-1) },
			want:   []wantErr{{field.ErrorTypeInvalid, "spec.revisionHistoryLimit"}},
		},
		"invalid nodepoolSelector": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.NodePoolSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: "Bogus"}}}
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.nodepoolSelector.matchExpressions[0].operator"}},
		},
		"invalid and repeated pool names": {
			mutate: func(y *openyurt.YurtAppSet) { y.Spec.Pools = []string{"Bad_Pool", "", "beijing", "beijing"} },
			want: []wantErr{{field.ErrorTypeInvalid, "spec.pools[0]"}, {field.ErrorTypeRequired, "spec.pools[1]"},
				{field.ErrorTypeDuplicate, "spec.pools[3]"}},
		},
		"name too long for the ref label": {
			mutate: func(y *openyurt.YurtAppSet) { y.Name = strings.Repeat("a", 64) },
			want:   []wantErr{{field.ErrorTypeInvalid, "metadata.name"}},
		},
		"dotted name with a StatefulSet template": {
			base:   validStatefulSetYurtAppSet,
			mutate: func(y *openyurt.YurtAppSet) { y.Name = "web.v2" },
			want:   []wantErr{{field.ErrorTypeInvalid, "metadata.name"}},
		},
		"dotted name with a Deployment template": {mutate: func(y *openyurt.YurtAppSet) { y.Name = "web.v2" }},
		"tweak: invalid selector and pools": {
			mutate: func(y *openyurt.YurtAppSet) {
				tw := &y.Spec.Workload.WorkloadTweaks[0]
				tw.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
				tw.Pools = []string{"UPPER"}
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".nodepoolSelector.matchLabels"}, {field.ErrorTypeInvalid, yasTweak0 + ".pools[0]"}},
		},
		"tweak: negative replicas": {
			mutate: func(y *openyurt.YurtAppSet) { y.Spec.Workload.WorkloadTweaks[0].Tweaks.Replicas = ptr.To[int32](-2) },
			want:   []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.replicas"}},
		},
		"tweak: image of a container the template lacks": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.ContainerImages[0].Name = firstContainer(y) + "-x"
			},
			want: []wantErr{{field.ErrorTypeNotFound, yasTweak0 + ".tweaks.containerImages[0].name"}},
		},
		"tweak: image problems": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.ContainerImages = []openyurt.ContainerImage{
					{Name: "nginx", TargetImage: ""}, {Name: "nginx", TargetImage: " nginx:1 "}, {Name: "", TargetImage: "x"},
				}
			},
			want: []wantErr{{field.ErrorTypeRequired, yasTweak0 + ".tweaks.containerImages[0].targetImage"},
				{field.ErrorTypeDuplicate, yasTweak0 + ".tweaks.containerImages[1].name"},
				{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.containerImages[1].targetImage"},
				{field.ErrorTypeRequired, yasTweak0 + ".tweaks.containerImages[2].name"}},
		},
		"tweak: patch field problems": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{
					{Path: "", Operation: openyurt.PatchOperationRemove},
					{Path: "metadata/labels/a", Operation: openyurt.PatchOperationRemove},
					{Path: "/metadata/labels/a", Operation: "move"},
					{Path: "/metadata/labels/a", Operation: ""},
					{Path: "/metadata/labels/a", Operation: openyurt.PatchOperationAdd},
				}
			},
			want: []wantErr{{field.ErrorTypeRequired, yasTweak0 + ".tweaks.patches[0].path"},
				{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.patches[1].path"},
				{field.ErrorTypeNotSupported, yasTweak0 + ".tweaks.patches[2].operation"},
				{field.ErrorTypeRequired, yasTweak0 + ".tweaks.patches[3].operation"},
				{field.ErrorTypeRequired, yasTweak0 + ".tweaks.patches[4].value"}},
		},
		"tweak: patch under a missing parent": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = append(y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches,
					tweakPatch(openyurt.PatchOperationAdd, "/spec/template/spec/tolerations/-", `{"key":"k","operator":"Exists"}`))
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.patches[2]"}},
		},
		"tweak: remove of a missing key": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{tweakPatch(openyurt.PatchOperationRemove, "/metadata/annotations/x", "")}
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.patches[0]"}},
		},
		"tweak: patch of a field the kind lacks": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{tweakPatch(openyurt.PatchOperationAdd, "/spec/serviceName", `"x"`)}
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.patches[0]"}},
		},
		"tweak: patch changing the pool label": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{
					tweakPatch(openyurt.PatchOperationReplace, "/metadata/labels/apps.openyurt.io~1pool-name", `"other"`)}
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.patches[0]"}},
		},
		"tweak: patch making the workload invalid": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{
					tweakPatch(openyurt.PatchOperationReplace, "/spec/template/spec/containers/0/image", `""`)}
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.patches"}},
		},
		"tweak: StatefulSet patch on a Deployment-only field": {
			base: validStatefulSetYurtAppSet,
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{tweakPatch(openyurt.PatchOperationAdd, "/spec/strategy", `{}`)}
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasTweak0 + ".tweaks.patches[0]"}},
		},
		"tweak: each tweak is checked alone": {
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTweaks = append(y.Spec.Workload.WorkloadTweaks, openyurt.WorkloadTweak{
					NodePoolSelector: &metav1.LabelSelector{},
					Tweaks:           openyurt.Tweaks{Patches: []openyurt.Patch{tweakPatch(openyurt.PatchOperationReplace, "/metadata/labels/tier", `"core"`)}},
				}, openyurt.WorkloadTweak{
					Tweaks: openyurt.Tweaks{Patches: []openyurt.Patch{tweakPatch(openyurt.PatchOperationRemove, "/metadata/labels/tier", "")}},
				})
			},
			want: []wantErr{{field.ErrorTypeInvalid, "spec.workload.workloadTweaks[2].tweaks.patches[0]"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			base := tc.base
			if base == nil {
				base = validYurtAppSet
			}
			yas := base()
			tc.mutate(yas)
			expectErrors(t, ValidateYurtAppSet(yas), tc.want...)
		})
	}
}

func TestValidateYurtAppSetRenderedErrorSaysWhy(t *testing.T) {
	yas := validYurtAppSet()
	yas.Spec.Workload.WorkloadTweaks[0].Tweaks.Patches = []openyurt.Patch{
		tweakPatch(openyurt.PatchOperationReplace, "/spec/template/spec/containers/0/image", `""`)}
	errs := ValidateYurtAppSet(yas)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "spec.template.spec.containers[0].image") ||
		!strings.Contains(errs[0].Detail, "Deployment") {
		t.Errorf("errors %v do not name the Deployment's field", errs)
	}
}

func TestValidateYurtAppSetUpdate(t *testing.T) {
	for name, tc := range map[string]struct {
		base   func() *openyurt.YurtAppSet
		mutate func(*openyurt.YurtAppSet)
		want   []wantErr
	}{
		"tweaks and pools may change": {
			base: validYurtAppSet,
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Pools = []string{"shanghai"}
				y.Spec.Workload.WorkloadTweaks = nil
			},
		},
		"kind change": {
			base: validYurtAppSet,
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate = validStatefulSetYurtAppSet().Spec.Workload.WorkloadTemplate
			},
			want: []wantErr{{field.ErrorTypeForbidden, "spec.workload.workloadTemplate"}},
		},
		"StatefulSet serviceName": {
			base: validStatefulSetYurtAppSet,
			mutate: func(y *openyurt.YurtAppSet) {
				y.Spec.Workload.WorkloadTemplate.StatefulSetTemplate.Spec.ServiceName = "other"
			},
			want: []wantErr{{field.ErrorTypeInvalid, yasSTS + ".spec.serviceName"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			old := tc.base()
			old.ResourceVersion = "1"
			updated := old.DeepCopy()
			tc.mutate(updated)
			expectErrors(t, ValidateYurtAppSetUpdate(updated, old), tc.want...)
		})
	}
}

func TestValidateYurtAppSetStatus(t *testing.T) {
	for name, tc := range map[string]struct {
		status openyurt.YurtAppSetStatus
		want   []wantErr
	}{
		"valid": {status: openyurt.YurtAppSetStatus{ObservedGeneration: 2, CurrentRevision: "web-5d8f", TotalWorkloads: 2, ReadyWorkloads: 1,
			Conditions: []openyurt.YurtAppSetCondition{{Type: openyurt.AppSetPoolFound, Status: corev1.ConditionTrue, Reason: "FoundPools"}}}},
		"negative counts": {
			status: openyurt.YurtAppSetStatus{ObservedGeneration: -1, CollisionCount: ptr.To[int32](-1), ReadyWorkloads: -1, UpdatedWorkloads: -1, TotalWorkloads: -1},
			want: []wantErr{{field.ErrorTypeInvalid, "status.observedGeneration"}, {field.ErrorTypeInvalid, "status.collisionCount"},
				{field.ErrorTypeInvalid, "status.readyWorkloads"}, {field.ErrorTypeInvalid, "status.updatedWorkloads"},
				{field.ErrorTypeInvalid, "status.totalWorkloads"}},
		},
		"conditions": {
			status: openyurt.YurtAppSetStatus{CurrentRevision: "Not_A_Name", Conditions: []openyurt.YurtAppSetCondition{
				{Type: "Bogus", Status: corev1.ConditionTrue},
				{Type: openyurt.AppSetAppReady, Status: "Maybe", Reason: "has space"},
				{Type: openyurt.AppSetAppReady, Status: corev1.ConditionFalse},
			}},
			want: []wantErr{{field.ErrorTypeInvalid, "status.currentRevision"},
				{field.ErrorTypeNotSupported, "status.conditions[0].type"},
				{field.ErrorTypeNotSupported, "status.conditions[1].status"}, {field.ErrorTypeInvalid, "status.conditions[1].reason"},
				{field.ErrorTypeDuplicate, "status.conditions[2].type"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			old := validYurtAppSet()
			old.ResourceVersion = "1"
			updated := old.DeepCopy()
			updated.Status = tc.status
			expectErrors(t, ValidateYurtAppSetStatusUpdate(updated, old), tc.want...)
		})
	}
}
