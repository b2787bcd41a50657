package validation

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/install"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// wantErr is one expected error. An empty Type matches any type; it is used only where the error comes from
// podtemplate.ValidatePodTemplateSpec, whose details this package does not own.
type wantErr struct {
	Type  field.ErrorType
	Field string
}

func (w wantErr) String() string { return fmt.Sprintf("%s %s", w.Type, w.Field) }

// expectErrors fails unless errs are exactly want (order ignored).
func expectErrors(t *testing.T, errs field.ErrorList, want ...wantErr) {
	t.Helper()
	for _, problem := range diffErrors(errs, want) {
		t.Error(problem)
	}
}

// diffErrors lists the wanted errors missing from errs and the errors in errs that were not wanted.
func diffErrors(errs field.ErrorList, want []wantErr) []string {
	var got []string
	for _, e := range errs {
		got = append(got, wantErr{Type: e.Type, Field: e.Field}.String())
	}
	var problems []string
	matched := make([]bool, len(errs))
	for _, w := range want {
		found := false
		for i, e := range errs {
			if matched[i] || e.Field != w.Field || (w.Type != "" && e.Type != w.Type) {
				continue
			}
			matched[i], found = true, true
			break
		}
		if !found {
			problems = append(problems, fmt.Sprintf("missing error %v; got [%s]", w, strings.Join(got, "; ")))
		}
	}
	for i, e := range errs {
		if !matched[i] {
			problems = append(problems, fmt.Sprintf("unexpected error %v", e))
		}
	}
	return problems
}

const (
	dtPath  = "spec.workloadTemplate.deploymentTemplate"
	stsPath = "spec.workloadTemplate.statefulSetTemplate"
)

func appSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "nginx",
				Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			}},
		},
	}
}

// validDeploymentYAD is a defaulted, valid YurtAppDaemon with a Deployment template.
func validDeploymentYAD() *openyurt.YurtAppDaemon {
	return &openyurt.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
		Spec: openyurt.YurtAppDaemonSpec{
			Selector:             appSelector(),
			NodePoolSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"nodepool.openyurt.io/type": "edge"}},
			RevisionHistoryLimit: ptr.To[int32](10),
			WorkloadTemplate: openyurt.WorkloadTemplate{
				DeploymentTemplate: &openyurt.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: appsv1.DeploymentSpec{
						Replicas: ptr.To[int32](2),
						Selector: appSelector(),
						Template: podTemplate(),
					},
				},
			},
		},
	}
}

// validStatefulSetYAD is a defaulted, valid YurtAppDaemon with a StatefulSet template whose container
// mounts the claim template "data".
func validStatefulSetYAD() *openyurt.YurtAppDaemon {
	yad := validDeploymentYAD()
	tpl := podTemplate()
	tpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	yad.Spec.WorkloadTemplate = openyurt.WorkloadTemplate{
		StatefulSetTemplate: &openyurt.StatefulSetTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](1),
				Selector:    appSelector(),
				Template:    tpl,
				ServiceName: "web",
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
						},
					},
				}},
			},
		},
	}
	return yad
}

// setSelector sets spec.selector and, as defaulting would, the template's selector.
func setSelector(yad *openyurt.YurtAppDaemon, sel *metav1.LabelSelector) {
	yad.Spec.Selector = sel
	if t := yad.Spec.WorkloadTemplate.DeploymentTemplate; t != nil {
		t.Spec.Selector = sel.DeepCopy()
	}
	if t := yad.Spec.WorkloadTemplate.StatefulSetTemplate; t != nil {
		t.Spec.Selector = sel.DeepCopy()
	}
}

func dep(yad *openyurt.YurtAppDaemon) *appsv1.DeploymentSpec {
	return &yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec
}

func sts(yad *openyurt.YurtAppDaemon) *appsv1.StatefulSetSpec {
	return &yad.Spec.WorkloadTemplate.StatefulSetTemplate.Spec
}

func TestValidateYurtAppDaemonValid(t *testing.T) {
	for name, yad := range map[string]*openyurt.YurtAppDaemon{
		"deployment":  validDeploymentYAD(),
		"statefulset": validStatefulSetYAD(),
		"name of maximum length": func() *openyurt.YurtAppDaemon {
			y := validDeploymentYAD()
			y.Name = strings.Repeat("a", openyurt.MaxYurtAppDaemonNameLength)
			return y
		}(),
		"empty nodepoolSelector selects every pool": func() *openyurt.YurtAppDaemon {
			y := validDeploymentYAD()
			y.Spec.NodePoolSelector = &metav1.LabelSelector{}
			return y
		}(),
		"matchExpressions-only selector": func() *openyurt.YurtAppDaemon {
			y := validDeploymentYAD()
			setSelector(y, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
			}})
			return y
		}(),
		"rolling update with percentages": func() *openyurt.YurtAppDaemon {
			y := validDeploymentYAD()
			mu, ms := intstr.FromString("0%"), intstr.FromString("100%")
			dep(y).Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &mu, MaxSurge: &ms}}
			dep(y).MinReadySeconds = 5
			dep(y).ProgressDeadlineSeconds = ptr.To[int32](600)
			return y
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			expectErrors(t, ValidateYurtAppDaemon(yad))
		})
	}
}

func TestValidateYurtAppDaemon(t *testing.T) {
	cases := []struct {
		name   string
		base   func() *openyurt.YurtAppDaemon
		mutate func(*openyurt.YurtAppDaemon)
		want   []wantErr
	}{
		// metadata
		{"metadata is validated", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { y.Namespace = "" },
			[]wantErr{{field.ErrorTypeRequired, "metadata.namespace"}}},
		{"name is a DNS subdomain", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { y.Name = "Web_1" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name"}}},
		{"name leaves room for the revision hash", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Name = strings.Repeat("a", openyurt.MaxYurtAppDaemonNameLength+1)
		}, []wantErr{{field.ErrorTypeInvalid, "metadata.name"}}},

		// spec.selector
		{"selector is required", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { y.Spec.Selector = nil },
			[]wantErr{{field.ErrorTypeRequired, "spec.selector"}}},
		{"selector is a valid label selector", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			setSelector(y, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "bad key": "x"}})
		}, []wantErr{{field.ErrorTypeInvalid, "spec.selector.matchLabels"}}},
		{"selector is not empty", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { setSelector(y, &metav1.LabelSelector{}) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.selector"}}},

		// spec.nodepoolSelector
		{"nodepoolSelector is required", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { y.Spec.NodePoolSelector = nil },
			[]wantErr{{field.ErrorTypeRequired, "spec.nodepoolSelector"}}},
		{"nodepoolSelector is a valid label selector", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"type": "not a value"}}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.nodepoolSelector.matchLabels"}}},

		// spec.revisionHistoryLimit
		{"revisionHistoryLimit is not negative", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.RevisionHistoryLimit = ptr.To[int32](-1)
		}, []wantErr{{field.ErrorTypeInvalid, "spec.revisionHistoryLimit"}}},

		// spec.workloadTemplate
		{"a template is required", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate = openyurt.WorkloadTemplate{}
		}, []wantErr{{field.ErrorTypeRequired, "spec.workloadTemplate"}}},
		{"only one template", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.StatefulSetTemplate = validStatefulSetYAD().Spec.WorkloadTemplate.StatefulSetTemplate
		}, []wantErr{{field.ErrorTypeForbidden, "spec.workloadTemplate"}}},

		// common template rules, Deployment
		{"template labels are valid", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Labels["bad key"] = "x"
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".metadata.labels"}}},
		{"template annotations are valid", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Annotations = map[string]string{"bad key": "x"}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".metadata.annotations"}}},
		{"template labels match spec.selector", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Labels = map[string]string{"app": "db"}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".metadata.labels"}}},
		{"template selector equals spec.selector", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "x": "y"}}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.selector"}}},
		{"template selector is set", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).Selector = nil },
			[]wantErr{{field.ErrorTypeRequired, dtPath + ".spec.selector"}}},
		{"pod template labels match spec.selector", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).Template.Labels = map[string]string{"app": "db"}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.template.metadata.labels"}}},
		{"pod template is validated", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).Template.Spec.Containers = nil },
			[]wantErr{{"", dtPath + ".spec.template.spec.containers"}}},
		{"pod restartPolicy is Always", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		}, []wantErr{{field.ErrorTypeNotSupported, dtPath + ".spec.template.spec.restartPolicy"}}},

		// Deployment spec
		{"deployment replicas not negative", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).Replicas = ptr.To[int32](-1) },
			[]wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.replicas"}}},
		{"deployment minReadySeconds not negative", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).MinReadySeconds = -1 },
			[]wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.minReadySeconds"}}},
		{"deployment revisionHistoryLimit not negative", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).RevisionHistoryLimit = ptr.To[int32](-1)
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.revisionHistoryLimit"}}},
		{"deployment progressDeadlineSeconds > minReadySeconds", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).MinReadySeconds = 30
			dep(y).ProgressDeadlineSeconds = ptr.To[int32](30)
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.progressDeadlineSeconds"}}},
		{"deployment strategy type", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).Strategy.Type = "BlueGreen" },
			[]wantErr{{field.ErrorTypeNotSupported, dtPath + ".spec.strategy.type"}}},
		{"deployment rollingUpdate only with RollingUpdate", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{}}
		}, []wantErr{{field.ErrorTypeForbidden, dtPath + ".spec.strategy.rollingUpdate"}}},
		{"deployment maxUnavailable at most 100%", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			v := intstr.FromString("101%")
			dep(y).Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &v}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.strategy.rollingUpdate.maxUnavailable"}}},
		{"deployment maxSurge not negative", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			v := intstr.FromInt32(-1)
			dep(y).Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &v}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.strategy.rollingUpdate.maxSurge"}}},
		{"deployment maxSurge is a percentage", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			v := intstr.FromString("ten")
			dep(y).Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &v}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.strategy.rollingUpdate.maxSurge"}}},
		{"deployment maxUnavailable and maxSurge not both zero", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			mu, ms := intstr.FromInt32(0), intstr.FromString("0%")
			dep(y).Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &mu, MaxSurge: &ms}
		}, []wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.strategy.rollingUpdate.maxUnavailable"}}},

		// common template rules, StatefulSet
		{"statefulset template labels match spec.selector", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.StatefulSetTemplate.Labels = nil
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".metadata.labels"}}},
		{"statefulset template selector equals spec.selector", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.selector"}}},
		{"statefulset pod template labels match spec.selector", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Template.Labels = nil
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.template.metadata.labels"}}},
		{"statefulset pod template is validated", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Template.Spec.Containers = nil
		}, []wantErr{{"", stsPath + ".spec.template.spec.containers"}}},
		{"statefulset pod restartPolicy is Always", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, []wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.template.spec.restartPolicy"}}},

		// StatefulSet spec
		{"statefulset replicas not negative", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).Replicas = ptr.To[int32](-1) },
			[]wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.replicas"}}},
		{"statefulset minReadySeconds not negative", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).MinReadySeconds = -1 },
			[]wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.minReadySeconds"}}},
		{"statefulset revisionHistoryLimit not negative", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).RevisionHistoryLimit = ptr.To[int32](-1)
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.revisionHistoryLimit"}}},
		{"statefulset podManagementPolicy", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).PodManagementPolicy = "Random" },
			[]wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.podManagementPolicy"}}},
		{"statefulset updateStrategy type", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).UpdateStrategy.Type = "Recreate" },
			[]wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.updateStrategy.type"}}},
		{"statefulset partition is not supported", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)}}
		}, []wantErr{{field.ErrorTypeForbidden, stsPath + ".spec.updateStrategy.rollingUpdate.partition"}}},
		{"statefulset rollingUpdate only with RollingUpdate", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{}}
		}, []wantErr{{field.ErrorTypeForbidden, stsPath + ".spec.updateStrategy.rollingUpdate"}}},
		{"statefulset maxUnavailable above zero", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			v := intstr.FromString("0%")
			sts(y).UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &v}
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.updateStrategy.rollingUpdate.maxUnavailable"}}},
		{"statefulset serviceName is a DNS label", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).ServiceName = "web.svc" },
			[]wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.serviceName"}}},

		// volumeClaimTemplates
		{"claim template name required", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates = append(sts(y).VolumeClaimTemplates, *sts(y).VolumeClaimTemplates[0].DeepCopy())
			sts(y).VolumeClaimTemplates[1].Name = ""
		}, []wantErr{{field.ErrorTypeRequired, stsPath + ".spec.volumeClaimTemplates[1].metadata.name"}}},
		{"claim template name is a DNS label", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates = append(sts(y).VolumeClaimTemplates, *sts(y).VolumeClaimTemplates[0].DeepCopy())
			sts(y).VolumeClaimTemplates[1].Name = "Logs"
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.volumeClaimTemplates[1].metadata.name"}}},
		{"claim template names unique", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates = append(sts(y).VolumeClaimTemplates, *sts(y).VolumeClaimTemplates[0].DeepCopy())
		}, []wantErr{{field.ErrorTypeDuplicate, stsPath + ".spec.volumeClaimTemplates[1].metadata.name"}}},
		{"claim template labels valid", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates[0].Labels = map[string]string{"bad key": "x"}
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.volumeClaimTemplates[0].metadata.labels"}}},
		{"claim template accessModes required", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates[0].Spec.AccessModes = nil
		}, []wantErr{{field.ErrorTypeRequired, stsPath + ".spec.volumeClaimTemplates[0].spec.accessModes"}}},
		{"claim template accessModes supported", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteSometimes"}
		}, []wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.volumeClaimTemplates[0].spec.accessModes[0]"}}},
		{"claim template storage request required", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates[0].Spec.Resources.Requests = nil
		}, []wantErr{{field.ErrorTypeRequired, stsPath + ".spec.volumeClaimTemplates[0].spec.resources.requests[storage]"}}},
		{"claim template storage request positive", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.volumeClaimTemplates[0].spec.resources.requests[storage]"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yad := tc.base()
			tc.mutate(yad)
			expectErrors(t, ValidateYurtAppDaemon(yad), tc.want...)
		})
	}
}

func TestValidateYurtAppDaemonUpdate(t *testing.T) {
	cases := []struct {
		name   string
		old    func() *openyurt.YurtAppDaemon
		mutate func(*openyurt.YurtAppDaemon)
		want   []wantErr
	}{
		{"template, replicas and strategy may change", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).Template.Spec.Containers[0].Image = "nginx:1.28"
			dep(y).Replicas = ptr.To[int32](5)
			dep(y).Strategy.Type = appsv1.RecreateDeploymentStrategyType
			y.Spec.NodePoolSelector = &metav1.LabelSelector{}
		}, nil},
		{"statefulset template may change", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Template.Spec.Containers[0].Image = "nginx:1.28"
		}, nil},
		{"metadata update rules apply", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { y.ResourceVersion = "" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.resourceVersion"}}},
		{"new spec is validated", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).Replicas = ptr.To[int32](-1) },
			[]wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.replicas"}}},
		{"selector is immutable", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			setSelector(y, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}})
			y.Spec.WorkloadTemplate.DeploymentTemplate.Labels["tier"] = "front"
			dep(y).Template.Labels["tier"] = "front"
		}, []wantErr{{field.ErrorTypeInvalid, "spec.selector"}}},
		{"deployment to statefulset is forbidden", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate = validStatefulSetYAD().Spec.WorkloadTemplate
		}, []wantErr{{field.ErrorTypeForbidden, "spec.workloadTemplate"}}},
		{"statefulset to deployment is forbidden", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			y.Spec.WorkloadTemplate = validDeploymentYAD().Spec.WorkloadTemplate
		}, []wantErr{{field.ErrorTypeForbidden, "spec.workloadTemplate"}}},
		{"volumeClaimTemplates are immutable", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.volumeClaimTemplates"}}},
		{"serviceName is immutable", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).ServiceName = "web2" },
			[]wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.serviceName"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldObj := tc.old()
			newObj := oldObj.DeepCopy()
			tc.mutate(newObj)
			expectErrors(t, ValidateYurtAppDaemonUpdate(newObj, oldObj), tc.want...)
		})
	}
}

func TestValidateYurtAppDaemonStatusUpdate(t *testing.T) {
	validStatus := func(y *openyurt.YurtAppDaemon) {
		y.Status = openyurt.YurtAppDaemonStatus{
			ObservedGeneration: 3,
			CollisionCount:     ptr.To[int32](1),
			CurrentRevision:    "web-5d8c7f9b6",
			TemplateType:       openyurt.DeploymentTemplateType,
			NodePools:          []string{"beijing", "hangzhou"},
			Conditions: []openyurt.YurtAppDaemonCondition{
				{Type: openyurt.WorkLoadProvisioned, Status: corev1.ConditionTrue},
				{Type: openyurt.WorkLoadUpdated, Status: corev1.ConditionFalse},
				{Type: openyurt.WorkLoadFailure, Status: corev1.ConditionUnknown},
			},
		}
	}
	cases := []struct {
		name   string
		mutate func(*openyurt.YurtAppDaemon)
		want   []wantErr
	}{
		{"valid status", func(y *openyurt.YurtAppDaemon) {}, nil},
		{"metadata update rules apply", func(y *openyurt.YurtAppDaemon) { y.ResourceVersion = "" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.resourceVersion"}}},
		{"observedGeneration not negative", func(y *openyurt.YurtAppDaemon) { y.Status.ObservedGeneration = -1 },
			[]wantErr{{field.ErrorTypeInvalid, "status.observedGeneration"}}},
		{"collisionCount not negative", func(y *openyurt.YurtAppDaemon) { y.Status.CollisionCount = ptr.To[int32](-1) },
			[]wantErr{{field.ErrorTypeInvalid, "status.collisionCount"}}},
		{"condition type supported", func(y *openyurt.YurtAppDaemon) { y.Status.Conditions[1].Type = "Ready" },
			[]wantErr{{field.ErrorTypeNotSupported, "status.conditions[1].type"}}},
		{"condition types unique", func(y *openyurt.YurtAppDaemon) { y.Status.Conditions[2].Type = openyurt.WorkLoadProvisioned },
			[]wantErr{{field.ErrorTypeDuplicate, "status.conditions[2].type"}}},
		{"condition status supported", func(y *openyurt.YurtAppDaemon) { y.Status.Conditions[0].Status = "Yes" },
			[]wantErr{{field.ErrorTypeNotSupported, "status.conditions[0].status"}}},
		{"templateType supported", func(y *openyurt.YurtAppDaemon) { y.Status.TemplateType = "DaemonSet" },
			[]wantErr{{field.ErrorTypeNotSupported, "status.templateType"}}},
		{"nodepools unique", func(y *openyurt.YurtAppDaemon) { y.Status.NodePools = []string{"a", "b", "a"} },
			[]wantErr{{field.ErrorTypeDuplicate, "status.nodepools[2]"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldObj := validDeploymentYAD()
			newObj := oldObj.DeepCopy()
			validStatus(newObj)
			tc.mutate(newObj)
			expectErrors(t, ValidateYurtAppDaemonStatusUpdate(newObj, oldObj), tc.want...)
		})
	}
}

func validNodePool() *openyurt.NodePool {
	return &openyurt.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "hangzhou", ResourceVersion: "1",
			Labels: map[string]string{"nodepool.openyurt.io/type": "edge"}},
		Spec: openyurt.NodePoolSpec{
			Type:        openyurt.Edge,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{openyurt.NodePoolLabel: "hangzhou"}},
			Labels:      map[string]string{"region": "east"},
			Annotations: map[string]string{"example.com/owner": "team a"},
			Taints: []corev1.Taint{
				{Key: "example.com/edge", Value: "true", Effect: corev1.TaintEffectNoSchedule},
				{Key: "example.com/edge", Value: "true", Effect: corev1.TaintEffectNoExecute},
			},
			LeaderElectionStrategy: openyurt.ElectionStrategyRandom,
			LeaderReplicas:         1,
			PoolScopeMetadata:      openyurt.DefaultPoolScopeMetadata(),
		},
	}
}

func TestValidateNodePool(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*openyurt.NodePool)
		want   []wantErr
	}{
		{"valid", func(p *openyurt.NodePool) {}, nil},
		{"valid cloud pool without selector", func(p *openyurt.NodePool) { p.Spec.Type = openyurt.Cloud; p.Spec.Selector = nil }, nil},
		{"edge pool on the host network", func(p *openyurt.NodePool) { p.Spec.HostNetwork = true }, nil},
		{"cloud pool not on the host network", func(p *openyurt.NodePool) { p.Spec.Type = openyurt.Cloud; p.Spec.HostNetwork = true },
			[]wantErr{{field.ErrorTypeInvalid, "spec.hostNetwork"}}},
		{"name of 63 characters", func(p *openyurt.NodePool) { p.Name = strings.Repeat("p", 63) }, nil},
		{"cluster-scoped", func(p *openyurt.NodePool) { p.Namespace = "default" },
			[]wantErr{{field.ErrorTypeForbidden, "metadata.namespace"}}},
		{"name is a DNS label", func(p *openyurt.NodePool) { p.Name = "east.hangzhou" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name"}}},
		{"name is at most 63 characters", func(p *openyurt.NodePool) { p.Name = strings.Repeat("p", 64) },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name"}}},
		{"type required", func(p *openyurt.NodePool) { p.Spec.Type = "" },
			[]wantErr{{field.ErrorTypeRequired, "spec.type"}}},
		{"type supported", func(p *openyurt.NodePool) { p.Spec.Type = "edge" },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.type"}}},
		{"selector valid", func(p *openyurt.NodePool) {
			p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Like"}}}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.selector.matchExpressions[0].operator"}}},
		{"labels valid", func(p *openyurt.NodePool) { p.Spec.Labels["zone"] = "not valid" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.labels"}}},
		{"annotations valid", func(p *openyurt.NodePool) { p.Spec.Annotations["bad key"] = "x" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.annotations"}}},
		{"taint key required", func(p *openyurt.NodePool) { p.Spec.Taints[0].Key = "" },
			[]wantErr{{field.ErrorTypeRequired, "spec.taints[0].key"}}},
		{"taint key qualified name", func(p *openyurt.NodePool) { p.Spec.Taints[0].Key = "edge node" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.taints[0].key"}}},
		{"taint value label value", func(p *openyurt.NodePool) { p.Spec.Taints[1].Value = "yes please" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.taints[1].value"}}},
		{"taint effect required", func(p *openyurt.NodePool) { p.Spec.Taints[0].Effect = "" },
			[]wantErr{{field.ErrorTypeRequired, "spec.taints[0].effect"}}},
		{"taint effect supported", func(p *openyurt.NodePool) { p.Spec.Taints[0].Effect = "NoEntry" },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.taints[0].effect"}}},
		{"taints unique by key and effect", func(p *openyurt.NodePool) {
			p.Spec.Taints[1].Effect = corev1.TaintEffectNoSchedule
			p.Spec.Taints[1].Value = "other"
		}, []wantErr{{field.ErrorTypeDuplicate, "spec.taints[1]"}}},
		{"leader election, mark with a selector", func(p *openyurt.NodePool) {
			p.Spec.EnableLeaderElection, p.Spec.InterConnectivity, p.Spec.LeaderReplicas = true, true, 3
			p.Spec.LeaderElectionStrategy = openyurt.ElectionStrategyMark
			p.Spec.LeaderNodeLabelSelector = map[string]string{"nodepool.openyurt.io/leader": "true"}
		}, nil},
		{"leader election strategy required", func(p *openyurt.NodePool) { p.Spec.LeaderElectionStrategy = "" },
			[]wantErr{{field.ErrorTypeRequired, "spec.leaderElectionStrategy"}}},
		{"leader election strategy supported", func(p *openyurt.NodePool) { p.Spec.LeaderElectionStrategy = "Random" },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.leaderElectionStrategy"}}},
		{"mark requires a leader selector", func(p *openyurt.NodePool) { p.Spec.LeaderElectionStrategy = openyurt.ElectionStrategyMark },
			[]wantErr{{field.ErrorTypeRequired, "spec.leaderNodeLabelSelector"}}},
		{"leader selector labels valid", func(p *openyurt.NodePool) { p.Spec.LeaderNodeLabelSelector = map[string]string{"bad key": "x"} },
			[]wantErr{{field.ErrorTypeInvalid, "spec.leaderNodeLabelSelector"}}},
		{"leader selector values valid", func(p *openyurt.NodePool) {
			p.Spec.LeaderElectionStrategy = openyurt.ElectionStrategyMark
			p.Spec.LeaderNodeLabelSelector = map[string]string{"leader": "not valid"}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.leaderNodeLabelSelector"}}},
		{"leader replicas at least 1", func(p *openyurt.NodePool) { p.Spec.LeaderReplicas = 0 },
			[]wantErr{{field.ErrorTypeInvalid, "spec.leaderReplicas"}}},
		{"leader replicas not negative", func(p *openyurt.NodePool) { p.Spec.LeaderReplicas = -2 },
			[]wantErr{{field.ErrorTypeInvalid, "spec.leaderReplicas"}}},
		{"pool scope metadata version and resource required", func(p *openyurt.NodePool) {
			p.Spec.PoolScopeMetadata = append(p.Spec.PoolScopeMetadata, metav1.GroupVersionResource{Group: "apps"})
		}, []wantErr{{field.ErrorTypeRequired, "spec.poolScopeMetadata[2].version"}, {field.ErrorTypeRequired, "spec.poolScopeMetadata[2].resource"}}},
		{"pool scope metadata names valid", func(p *openyurt.NodePool) {
			p.Spec.PoolScopeMetadata = append(p.Spec.PoolScopeMetadata, metav1.GroupVersionResource{Group: "Apps", Version: "v1", Resource: "deploy ments"})
		}, []wantErr{{field.ErrorTypeInvalid, "spec.poolScopeMetadata[2].group"}, {field.ErrorTypeInvalid, "spec.poolScopeMetadata[2].resource"}}},
		{"pool scope metadata distinct", func(p *openyurt.NodePool) {
			p.Spec.PoolScopeMetadata = append(p.Spec.PoolScopeMetadata, p.Spec.PoolScopeMetadata[0])
		}, []wantErr{{field.ErrorTypeDuplicate, "spec.poolScopeMetadata[2]"}}},
		{"leader annotation an older version could not read", func(p *openyurt.NodePool) {
			p.Annotations = map[string]string{openyurt.LeaderReplicasAnnotation: "02"}
		}, []wantErr{{field.ErrorTypeInvalid, "metadata.annotations[nodepool.tapp.io/leaderReplicas]"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool := validNodePool()
			tc.mutate(pool)
			expectErrors(t, ValidateNodePool(pool), tc.want...)
		})
	}
}

func TestValidateNodePoolUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*openyurt.NodePool)
		want   []wantErr
	}{
		{"labels, annotations and taints may change", func(p *openyurt.NodePool) {
			p.Spec.Labels["region"] = "west"
			p.Spec.Annotations = nil
			p.Spec.Taints = p.Spec.Taints[:1]
		}, nil},
		{"metadata update rules apply", func(p *openyurt.NodePool) { p.Name = "shanghai" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name"}}},
		{"leader fields may change", func(p *openyurt.NodePool) {
			p.Spec.EnableLeaderElection, p.Spec.LeaderReplicas = true, 2
			p.Spec.PoolScopeMetadata = append(p.Spec.PoolScopeMetadata, metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
		}, nil},
		{"interConnectivity immutable", func(p *openyurt.NodePool) { p.Spec.InterConnectivity = true },
			[]wantErr{{field.ErrorTypeInvalid, "spec.interConnectivity"}}},
		{"new spec is validated", func(p *openyurt.NodePool) { p.Spec.Taints[0].Effect = "NoEntry" },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.taints[0].effect"}}},
		{"type is immutable", func(p *openyurt.NodePool) { p.Spec.Type = openyurt.Cloud },
			[]wantErr{{field.ErrorTypeInvalid, "spec.type"}}},
		{"hostNetwork is immutable", func(p *openyurt.NodePool) { p.Spec.HostNetwork = true },
			[]wantErr{{field.ErrorTypeInvalid, "spec.hostNetwork"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldObj := validNodePool()
			newObj := oldObj.DeepCopy()
			tc.mutate(newObj)
			expectErrors(t, ValidateNodePoolUpdate(newObj, oldObj), tc.want...)
		})
	}
}

func TestValidateNodePoolStatusUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*openyurt.NodePool)
		want   []wantErr
	}{
		{"valid status", func(p *openyurt.NodePool) {}, nil},
		{"metadata update rules apply", func(p *openyurt.NodePool) { p.ResourceVersion = "" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.resourceVersion"}}},
		{"readyNodeNum not negative", func(p *openyurt.NodePool) { p.Status.ReadyNodeNum = -1 },
			[]wantErr{{field.ErrorTypeInvalid, "status.readyNodeNum"}}},
		{"unreadyNodeNum not negative", func(p *openyurt.NodePool) { p.Status.UnreadyNodeNum = -1 },
			[]wantErr{{field.ErrorTypeInvalid, "status.unreadyNodeNum"}}},
		{"leaders valid", func(p *openyurt.NodePool) {
			p.Status.LeaderEndpoints = []openyurt.Leader{{NodeName: "n1", Address: "10.0.0.1"}, {NodeName: "n2", Address: "fd00::2"}}
			p.Status.LeaderNum = 2
			p.Status.Conditions = []openyurt.NodePoolCondition{{Type: openyurt.LeaderReady, Status: corev1.ConditionTrue}}
		}, nil},
		{"leader fields checked", func(p *openyurt.NodePool) {
			p.Status.LeaderEndpoints = []openyurt.Leader{{NodeName: "n1", Address: "10.0.0.1"}, {NodeName: "n1", Address: "host"}, {}}
			p.Status.LeaderNum = 2
			p.Status.Conditions = []openyurt.NodePoolCondition{{Type: openyurt.LeaderReady, Status: "Yes"}, {Type: openyurt.LeaderReady, Status: corev1.ConditionTrue}}
		}, []wantErr{
			{field.ErrorTypeDuplicate, "status.leaderEndpoints[1].nodeName"}, {field.ErrorTypeInvalid, "status.leaderEndpoints[1].address"},
			{field.ErrorTypeRequired, "status.leaderEndpoints[2].nodeName"}, {field.ErrorTypeRequired, "status.leaderEndpoints[2].address"},
			{field.ErrorTypeInvalid, "status.leaderNum"},
			{field.ErrorTypeNotSupported, "status.conditions[0].status"}, {field.ErrorTypeDuplicate, "status.conditions[1].type"},
		}},
		{"nodes unique", func(p *openyurt.NodePool) { p.Status.Nodes = []string{"n1", "n1"} },
			[]wantErr{{field.ErrorTypeDuplicate, "status.nodes[1]"}}},
		{"nodes are node names", func(p *openyurt.NodePool) { p.Status.Nodes = []string{"n1", "BAD NAME!", ""} },
			[]wantErr{{field.ErrorTypeInvalid, "status.nodes[1]"}, {field.ErrorTypeInvalid, "status.nodes[2]"}}},
		{"many bad node names are limited", func(p *openyurt.NodePool) {
			p.Status.Nodes = nil
			for i := 0; i < 1000; i++ {
				p.Status.Nodes = append(p.Status.Nodes, fmt.Sprintf("BAD %d", i))
			}
		}, append(invalidNodes(10), wantErr{field.ErrorTypeInvalid, "status.nodes[10]"})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldObj := validNodePool()
			newObj := oldObj.DeepCopy()
			newObj.Status = openyurt.NodePoolStatus{ReadyNodeNum: 2, UnreadyNodeNum: 1, Nodes: []string{"n1", "n2", "n3"}}
			tc.mutate(newObj)
			expectErrors(t, ValidateNodePoolStatusUpdate(newObj, oldObj), tc.want...)
		})
	}
}

// Manifests as users write them: no template selector, no revisionHistoryLimit, no port protocol, no pool type.
const (
	deploymentYADManifest = `
apiVersion: apps.openyurt.io/v1alpha1
kind: YurtAppDaemon
metadata:
  name: nginx
  namespace: default
spec:
  selector:
    matchLabels:
      app: nginx
  nodepoolSelector:
    matchLabels:
      nodepool.openyurt.io/type: edge
  workloadTemplate:
    deploymentTemplate:
      metadata:
        labels:
          app: nginx
      spec:
        replicas: 2
        strategy:
          type: RollingUpdate
          rollingUpdate:
            maxUnavailable: 1
            maxSurge: 25%
        template:
          metadata:
            labels:
              app: nginx
          spec:
            containers:
            - name: nginx
              image: nginx:1.27
              ports:
              - name: http
                containerPort: 80
              resources:
                requests:
                  cpu: 100m
                  memory: 64Mi
                limits:
                  memory: 128Mi
`
	statefulSetYADManifest = `
apiVersion: apps.openyurt.io/v1alpha1
kind: YurtAppDaemon
metadata:
  name: redis
  namespace: edge
spec:
  selector:
    matchExpressions:
    - key: app
      operator: In
      values: [redis]
  nodepoolSelector: {}
  revisionHistoryLimit: 3
  workloadTemplate:
    statefulSetTemplate:
      metadata:
        labels:
          app: redis
      spec:
        serviceName: redis
        replicas: 1
        podManagementPolicy: Parallel
        updateStrategy:
          type: RollingUpdate
        template:
          metadata:
            labels:
              app: redis
          spec:
            containers:
            - name: redis
              image: redis:7
              ports:
              - containerPort: 6379
              volumeMounts:
              - name: data
                mountPath: /data
        volumeClaimTemplates:
        - metadata:
            name: data
          spec:
            accessModes: [ReadWriteOnce]
            resources:
              requests:
                storage: 1Gi
`
	nodePoolManifest = `
apiVersion: apps.openyurt.io/v1alpha1
kind: NodePool
metadata:
  name: hangzhou
  labels:
    nodepool.openyurt.io/type: edge
spec:
  selector:
    matchLabels:
      apps.openyurt.io/nodepool: hangzhou
  labels:
    topology.example.com/region: east
  annotations:
    example.com/contact: edge-team
  taints:
  - key: node.example.com/edge
    value: "true"
    effect: NoSchedule
`
)

// decodeDefaultConvert decodes a v1alpha1 manifest, defaults it through the scheme and converts it to the
// internal type in out.
func decodeDefaultConvert(t *testing.T, manifest string, versioned, out runtime.Object) {
	t.Helper()
	scheme := runtime.NewScheme()
	install.Install(scheme)
	if err := yaml.UnmarshalStrict([]byte(manifest), versioned); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	scheme.Default(versioned)
	if err := scheme.Convert(versioned, out, nil); err != nil {
		t.Fatalf("converting to internal: %v", err)
	}
}

func TestValidateManifests(t *testing.T) {
	t.Run("deployment YurtAppDaemon", func(t *testing.T) {
		var yad openyurt.YurtAppDaemon
		decodeDefaultConvert(t, deploymentYADManifest, &v1alpha1.YurtAppDaemon{}, &yad)
		if yad.Spec.RevisionHistoryLimit == nil || *yad.Spec.RevisionHistoryLimit != openyurt.DefaultRevisionHistoryLimit {
			t.Errorf("revisionHistoryLimit not defaulted: %v", yad.Spec.RevisionHistoryLimit)
		}
		if s := yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Selector; s == nil || s.MatchLabels["app"] != "nginx" {
			t.Errorf("template selector not defaulted: %v", s)
		}
		expectErrors(t, ValidateYurtAppDaemon(&yad))
	})
	t.Run("statefulset YurtAppDaemon", func(t *testing.T) {
		var yad openyurt.YurtAppDaemon
		decodeDefaultConvert(t, statefulSetYADManifest, &v1alpha1.YurtAppDaemon{}, &yad)
		if p := yad.Spec.WorkloadTemplate.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Ports[0].Protocol; p != corev1.ProtocolTCP {
			t.Errorf("port protocol not defaulted: %q", p)
		}
		expectErrors(t, ValidateYurtAppDaemon(&yad))
	})
	t.Run("without defaulting the deployment YurtAppDaemon is invalid", func(t *testing.T) {
		var versioned v1alpha1.YurtAppDaemon
		if err := yaml.UnmarshalStrict([]byte(deploymentYADManifest), &versioned); err != nil {
			t.Fatal(err)
		}
		scheme := runtime.NewScheme()
		install.Install(scheme)
		var yad openyurt.YurtAppDaemon
		if err := scheme.Convert(&versioned, &yad, nil); err != nil {
			t.Fatal(err)
		}
		expectErrors(t, ValidateYurtAppDaemon(&yad), wantErr{field.ErrorTypeRequired, dtPath + ".spec.selector"})
	})
	t.Run("NodePool", func(t *testing.T) {
		var pool openyurt.NodePool
		decodeDefaultConvert(t, nodePoolManifest, &v1alpha1.NodePool{}, &pool)
		if pool.Spec.Type != openyurt.Edge {
			t.Errorf("type not defaulted: %q", pool.Spec.Type)
		}
		expectErrors(t, ValidateNodePool(&pool))
	})
}

// TestDiffErrors guards the helper the table tests rely on: it must report missing and unexpected errors.
func TestDiffErrors(t *testing.T) {
	errs := field.ErrorList{field.Required(field.NewPath("spec", "a"), ""), field.Invalid(field.NewPath("spec", "b"), 1, "")}
	for name, tc := range map[string]struct {
		want     []wantErr
		problems int
	}{
		"exact":      {[]wantErr{{field.ErrorTypeInvalid, "spec.b"}, {field.ErrorTypeRequired, "spec.a"}}, 0},
		"any type":   {[]wantErr{{"", "spec.b"}, {field.ErrorTypeRequired, "spec.a"}}, 0},
		"missing":    {[]wantErr{{field.ErrorTypeRequired, "spec.a"}, {field.ErrorTypeInvalid, "spec.b"}, {field.ErrorTypeInvalid, "spec.c"}}, 1},
		"wrong type": {[]wantErr{{field.ErrorTypeRequired, "spec.a"}, {field.ErrorTypeRequired, "spec.b"}}, 2},
		"unexpected": {[]wantErr{{field.ErrorTypeRequired, "spec.a"}}, 1},
	} {
		if got := diffErrors(errs, tc.want); len(got) != tc.problems {
			t.Errorf("%s: got problems %q, want %d", name, got, tc.problems)
		}
	}
}

// invalidNodes is the Invalid errors of status.nodes[0..n-1].
func invalidNodes(n int) []wantErr {
	out := make([]wantErr, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, wantErr{field.ErrorTypeInvalid, fmt.Sprintf("status.nodes[%d]", i)})
	}
	return out
}
