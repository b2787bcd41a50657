package validation

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// TestValidateWorkloadTemplatesAsCore: the checks of Deployment and StatefulSet templates accept and refuse
// what the core API accepts and refuses for those workloads.
func TestValidateWorkloadTemplatesAsCore(t *testing.T) {
	ru := func(mu, ms *intstr.IntOrString) func(y *openyurt.YurtAppDaemon) {
		return func(y *openyurt.YurtAppDaemon) {
			dep(y).Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: mu, MaxSurge: ms}
		}
	}
	str := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }
	const ruPath = dtPath + ".spec.strategy.rollingUpdate"
	cases := []struct {
		name   string
		valid  func() *openyurt.YurtAppDaemon
		mutate func(*openyurt.YurtAppDaemon)
		want   []wantErr
	}{
		// Deployment strategy: maxSurge has no upper bound, maxUnavailable is at most 100%.
		{"maxSurge 150%", validDeploymentYAD, ru(nil, str("150%")), nil},
		{"maxSurge 1000%", validDeploymentYAD, ru(str("0%"), str("1000%")), nil},
		{"maxSurge 100%", validDeploymentYAD, ru(nil, str("100%")), nil},
		{"maxSurge larger than replicas", validDeploymentYAD, ru(num(0), num(1000)), nil},
		{"maxSurge 99999999999999999999%", validDeploymentYAD, ru(nil, str("99999999999999999999%")), nil},
		{"maxSurge 150% with maxUnavailable 100%", validDeploymentYAD, ru(str("100%"), str("150%")), nil},
		{"maxSurge 150% with maxUnavailable 150%", validDeploymentYAD, ru(str("150%"), str("150%")),
			[]wantErr{{field.ErrorTypeInvalid, ruPath + ".maxUnavailable"}}},
		{"maxSurge -1%", validDeploymentYAD, ru(nil, str("-1%")), []wantErr{{field.ErrorTypeInvalid, ruPath + ".maxSurge"}}},
		{"maxSurge 1.5%", validDeploymentYAD, ru(nil, str("1.5%")), []wantErr{{field.ErrorTypeInvalid, ruPath + ".maxSurge"}}},
		{"maxSurge %", validDeploymentYAD, ru(nil, str("%")), []wantErr{{field.ErrorTypeInvalid, ruPath + ".maxSurge"}}},
		{"maxSurge empty", validDeploymentYAD, ru(nil, str("")), []wantErr{{field.ErrorTypeInvalid, ruPath + ".maxSurge"}}},
		{"maxSurge 150% and maxUnavailable 0", validDeploymentYAD, ru(num(0), str("150%")), nil},
		{"maxSurge 0% and maxUnavailable 0%", validDeploymentYAD, ru(str("0%"), str("0%")),
			[]wantErr{{field.ErrorTypeInvalid, ruPath + ".maxUnavailable"}}},
		{"maxUnavailable 200%", validDeploymentYAD, ru(str("200%"), nil), []wantErr{{field.ErrorTypeInvalid, ruPath + ".maxUnavailable"}}},
		{"maxUnavailable larger than replicas", validDeploymentYAD, ru(num(50), nil), nil},

		// Deployment deadlines and pod template.
		{"progressDeadlineSeconds negative", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).MinReadySeconds = -5
			dep(y).ProgressDeadlineSeconds = ptr.To[int32](-1)
		}, []wantErr{
			{field.ErrorTypeInvalid, dtPath + ".spec.minReadySeconds"},
			{field.ErrorTypeInvalid, dtPath + ".spec.progressDeadlineSeconds"},
		}},
		{"deployment minReadySeconds negative", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).MinReadySeconds = -1 },
			[]wantErr{{field.ErrorTypeInvalid, dtPath + ".spec.minReadySeconds"}}},
		{"deployment activeDeadlineSeconds", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
		}, []wantErr{{field.ErrorTypeForbidden, dtPath + ".spec.template.spec.activeDeadlineSeconds"}}},
		{"deployment resizePolicy duplicate", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) {
			dep(y).Template.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{
				{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired},
				{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired},
			}
		}, []wantErr{{field.ErrorTypeDuplicate, dtPath + ".spec.template.spec.containers[0].resizePolicy[1].resourceName"}}},
		{"deployment strategy type", validDeploymentYAD, func(y *openyurt.YurtAppDaemon) { dep(y).Strategy.Type = "Blue-Green" },
			[]wantErr{{field.ErrorTypeNotSupported, dtPath + ".spec.strategy.type"}}},

		// StatefulSet fields.
		{"retention policy Delete and Retain", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
		}, nil},
		{"retention policy empty (defaulted)", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
		}, nil},
		{"retention policy whenDeleted Bogus", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Bogus"}
		}, []wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.persistentVolumeClaimRetentionPolicy.whenDeleted"}}},
		{"retention policy whenScaled lower case", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: "delete"}
		}, []wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.persistentVolumeClaimRetentionPolicy.whenScaled"}}},
		{"ordinals start 0 and 5", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
		}, nil},
		{"ordinals start -1", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Ordinals = &appsv1.StatefulSetOrdinals{Start: -1}
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.ordinals.start"}}},
		{"statefulset minReadySeconds negative", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).MinReadySeconds = -3 },
			[]wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.minReadySeconds"}}},
		{"podManagementPolicy", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).PodManagementPolicy = "Random" },
			[]wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.podManagementPolicy"}}},
		{"updateStrategy type", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) { sts(y).UpdateStrategy.Type = "Rolling" },
			[]wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.updateStrategy.type"}}},
		{"statefulset maxUnavailable 150%", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: str("150%")}
		}, []wantErr{{field.ErrorTypeInvalid, stsPath + ".spec.updateStrategy.rollingUpdate.maxUnavailable"}}},
		{"statefulset activeDeadlineSeconds", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
		}, []wantErr{{field.ErrorTypeForbidden, stsPath + ".spec.template.spec.activeDeadlineSeconds"}}},
		{"statefulset resizePolicy unknown resource", validStatefulSetYAD, func(y *openyurt.YurtAppDaemon) {
			sts(y).Template.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: "gpu", RestartPolicy: corev1.NotRequired}}
		}, []wantErr{{field.ErrorTypeNotSupported, stsPath + ".spec.template.spec.containers[0].resizePolicy[0].resourceName"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yad := tc.valid()
			tc.mutate(yad)
			expectErrors(t, ValidateYurtAppDaemon(yad), tc.want...)
			// Updates run the same checks.
			old := tc.valid()
			yad.ResourceVersion = old.ResourceVersion
			expectErrors(t, ValidateYurtAppDaemonUpdate(yad, old), tc.want...)
		})
	}
}

// TestValidateYurtAppDaemonStatusContents: revision and pool names are names, condition reasons and
// messages are bounded as the core API bounds a metav1.Condition's.
func TestValidateYurtAppDaemonStatusContents(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*openyurt.YurtAppDaemonStatus)
		want   []wantErr
	}{
		{"valid", func(s *openyurt.YurtAppDaemonStatus) {}, nil},
		{"empty reasons and messages", func(s *openyurt.YurtAppDaemonStatus) {
			s.Conditions[0].Reason, s.Conditions[0].Message = "", ""
		}, nil},
		{"reasons of every allowed form", func(s *openyurt.YurtAppDaemonStatus) {
			s.Conditions[0].Reason, s.Conditions[1].Reason = "A", "Reason_A,ReasonB:c_"
		}, nil},
		{"message at the bound", func(s *openyurt.YurtAppDaemonStatus) {
			s.Conditions[0].Message = strings.Repeat("m", maxConditionMessageLength)
		}, nil},
		{"message above the bound", func(s *openyurt.YurtAppDaemonStatus) {
			s.Conditions[1].Message = strings.Repeat("m", maxConditionMessageLength+1)
		}, []wantErr{{field.ErrorTypeTooLong, "status.conditions[1].message"}}},
		{"reason above the bound", func(s *openyurt.YurtAppDaemonStatus) {
			s.Conditions[0].Reason = strings.Repeat("R", maxConditionReasonLength+1)
		}, []wantErr{{field.ErrorTypeTooLong, "status.conditions[0].reason"}}},
		{"reason with spaces", func(s *openyurt.YurtAppDaemonStatus) { s.Conditions[0].Reason = "not ready" },
			[]wantErr{{field.ErrorTypeInvalid, "status.conditions[0].reason"}}},
		{"reason starting with a digit", func(s *openyurt.YurtAppDaemonStatus) { s.Conditions[1].Reason = "1Reason" },
			[]wantErr{{field.ErrorTypeInvalid, "status.conditions[1].reason"}}},
		{"reason ending with a colon", func(s *openyurt.YurtAppDaemonStatus) { s.Conditions[1].Reason = "Reason:" },
			[]wantErr{{field.ErrorTypeInvalid, "status.conditions[1].reason"}}},
		{"currentRevision not a name", func(s *openyurt.YurtAppDaemonStatus) { s.CurrentRevision = "Web_Rev" },
			[]wantErr{{field.ErrorTypeInvalid, "status.currentRevision"}}},
		{"currentRevision too long", func(s *openyurt.YurtAppDaemonStatus) { s.CurrentRevision = strings.Repeat("r", 254) },
			[]wantErr{{field.ErrorTypeInvalid, "status.currentRevision"}}},
		{"nodepool not a label", func(s *openyurt.YurtAppDaemonStatus) { s.NodePools = []string{"hangzhou", "pool.a"} },
			[]wantErr{{field.ErrorTypeInvalid, "status.nodepools[1]"}}},
		{"nodepool empty", func(s *openyurt.YurtAppDaemonStatus) { s.NodePools = []string{""} },
			[]wantErr{{field.ErrorTypeRequired, "status.nodepools[0]"}}},
		{"nodepool upper case", func(s *openyurt.YurtAppDaemonStatus) { s.NodePools = []string{"HangZhou"} },
			[]wantErr{{field.ErrorTypeInvalid, "status.nodepools[0]"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldObj := validDeploymentYAD()
			newObj := oldObj.DeepCopy()
			newObj.Status = openyurt.YurtAppDaemonStatus{
				ObservedGeneration: 1,
				CurrentRevision:    "web-5d8c7f9b6",
				TemplateType:       openyurt.DeploymentTemplateType,
				NodePools:          []string{"beijing", "hangzhou"},
				Conditions: []openyurt.YurtAppDaemonCondition{
					{Type: openyurt.WorkLoadProvisioned, Status: corev1.ConditionTrue, Reason: "AllPoolsProvisioned", Message: "every selected pool (2) has a Deployment"},
					{Type: openyurt.WorkLoadUpdated, Status: corev1.ConditionFalse, Reason: "WorkloadsOutdated", Message: "1 of 2"},
				},
			}
			tc.mutate(&newObj.Status)
			expectErrors(t, ValidateYurtAppDaemonStatusUpdate(newObj, oldObj), tc.want...)
		})
	}
}
