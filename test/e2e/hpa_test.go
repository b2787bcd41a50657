//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestHPA checks that the HPA controller of kube-controller-manager reads a TApp through its scale
// subresource. There is no metrics server, so only the scale part is asserted.
func TestHPA(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "hpa")
	mustKubectlIn(t, tappManifest("scaled", 2), "apply", "-n", ns, "-f", "-")
	ctx := testContext(t, 90*time.Second)
	_, err := kubeClient.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "scaled"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "scaled"},
			MinReplicas:    ptr.To(int32(1)),
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))},
				},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	eventually(t, 60*time.Second, "the HPA reads the TApp's scale", func() error {
		hpa, err := kubeClient.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "scaled", metav1.GetOptions{})
		if err != nil {
			return err
		}
		var conditions []string
		for _, c := range hpa.Status.Conditions {
			if c.Type == autoscalingv2.AbleToScale {
				if c.Status == corev1.ConditionTrue && c.Reason == "SucceededGetScale" {
					return nil
				}
			}
			conditions = append(conditions, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
		return fmt.Errorf("no AbleToScale=True/SucceededGetScale yet; currentReplicas %d, conditions: %s",
			hpa.Status.CurrentReplicas, strings.Join(conditions, "; "))
	})

	// kubectl shows the reference by kind.
	tb := parseTable(t, mustKubectl(t, "get", "hpa", "-n", ns))
	if got := tb.cell(t, "scaled", "REFERENCE"); got != "TApp/scaled" {
		t.Errorf("REFERENCE = %q, want TApp/scaled", got)
	}
}
