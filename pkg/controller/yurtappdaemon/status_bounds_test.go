package yurtappdaemon

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/validation"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/actions"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

// TestDesiredStatusPassesValidation: the status the controller writes is one the server accepts, even when
// the failures' messages and the conflicts it reports are longer than a condition message may be.
func TestDesiredStatusPassesValidation(t *testing.T) {
	now := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	yad := &v1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "7", Generation: 3},
		Spec: v1alpha1.YurtAppDaemonSpec{WorkloadTemplate: v1alpha1.WorkloadTemplate{
			DeploymentTemplate: &v1alpha1.DeploymentTemplateSpec{}}},
	}
	long := strings.Repeat("conflict with a foreign Deployment; ", 3000)
	plan := &policy.Plan{Kind: v1alpha1.TemplateType(openyurt.DeploymentTemplateType), Revision: "web-5d8c7f9b6", Status: policy.Status{
		NodePools: []string{"beijing", "hangzhou"}, TemplateType: v1alpha1.TemplateType(openyurt.DeploymentTemplateType), CurrentRevision: "web-5d8c7f9b6",
		Conditions: []v1alpha1.YurtAppDaemonCondition{
			{Type: policy.ConditionProvisioned, Status: corev1.ConditionFalse, Reason: policy.ReasonWorkloadConflict, Message: long},
			{Type: policy.ConditionUpdated, Status: corev1.ConditionFalse, Reason: policy.ReasonWorkloadsOutdated, Message: long},
		},
	}}
	var failures []actions.Failure
	for i := 0; i < 3; i++ {
		failures = append(failures, actions.Failure{Reason: ReasonFailedCreate, Message: strings.Repeat("é", 20000)})
	}
	status := desiredStatus(yad, yad, "web-5d8c7f9b6", plan, failures, now)
	if len(status.Conditions) != 3 {
		t.Fatalf("conditions: %+v", status.Conditions)
	}
	newObj := &openyurt.YurtAppDaemon{}
	withStatus := yad.DeepCopy()
	withStatus.Status = status
	if err := v1alpha1.Convert_v1alpha1_YurtAppDaemon_To_openyurt_YurtAppDaemon(withStatus, newObj, nil); err != nil {
		t.Fatal(err)
	}
	oldObj := &openyurt.YurtAppDaemon{}
	if err := v1alpha1.Convert_v1alpha1_YurtAppDaemon_To_openyurt_YurtAppDaemon(yad, oldObj, nil); err != nil {
		t.Fatal(err)
	}
	if errs := validation.ValidateYurtAppDaemonStatusUpdate(newObj, oldObj); len(errs) > 0 {
		t.Fatalf("the server would refuse the controller's status: %v", errs.ToAggregate())
	}
	for _, c := range status.Conditions {
		if len(c.Message) < actions.MaxConditionMessageLength/2 {
			t.Errorf("condition %s: message cut to %d bytes", c.Type, len(c.Message))
		}
	}
}
