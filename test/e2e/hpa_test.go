//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestHPA checks that the HPA controller of kube-controller-manager scales a TApp through its scale
// subresource on pod metrics it reads through the aggregator: up when the load per pod is above the target,
// then down when the load falls, with the TApp controller creating and removing the instances.
func TestHPA(t *testing.T) {
	ns := controllerNamespace(t, "hpa")
	metrics := startMetricsAPI(t, ns)
	// 400Mi spread over the pods against a target of 100Mi per pod: 2 pods (200Mi each) become 4 (100Mi
	// each), where the HPA stays.
	metrics.setTotalMemory("400Mi")
	mustKubectlIn(t, nginxTApp("scaled", 2, "nginx:1.25", ""), "apply", "-n", ns, "-f", "-")
	waitInstances(t, ns, "scaled", images(2, "nginx:1.25"))

	ctx := testContext(t, 4*time.Minute)
	_, err := kubeClient.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "scaled"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "scaled"},
			MinReplicas:    ptr.To(int32(1)),
			MaxReplicas:    6,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100Mi"))},
				},
			}},
			// No scale-down stabilization (5 minutes by default), so that the test sees the scale-down.
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0))},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	waitHPA := func(replicas int32) {
		t.Helper()
		eventually(t, 90*time.Second, fmt.Sprintf("the HPA scales the TApp to %d", replicas), func() error {
			hpa, err := kubeClient.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "scaled", metav1.GetOptions{})
			if err != nil {
				return err
			}
			var conditions []string
			for _, c := range hpa.Status.Conditions {
				conditions = append(conditions, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
			}
			tapp, err := tappClient.TKEStackAppsV1().TApps(ns).Get(ctx, "scaled", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if tapp.Spec.Replicas != replicas || hpa.Status.DesiredReplicas != replicas || hpa.Status.CurrentReplicas != replicas {
				return fmt.Errorf("TApp spec.replicas %d; HPA %s (metrics lists served: %d)", tapp.Spec.Replicas,
					describeHPA(hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas, conditions), metrics.requests())
			}
			return nil
		})
		waitInstances(t, ns, "scaled", images(int(replicas), "nginx:1.25"))
	}

	waitHPA(4)
	// The HPA wrote spec.replicas through the scale subresource, so it owns the field.
	tapp := getTApp(t, ns, "scaled")
	if owner := replicasManager(tapp.ManagedFields); owner != "kube-controller-manager" {
		t.Errorf("spec.replicas is managed by %q, want the HPA controller's kube-controller-manager", owner)
	}
	// At 4 pods the load per pod is on target: the HPA holds.
	holdsFor(t, 12*time.Second, "the HPA keeps 4 replicas at the target load", func() error {
		if got := getTApp(t, ns, "scaled").Spec.Replicas; got != 4 {
			return fmt.Errorf("spec.replicas = %d", got)
		}
		return nil
	})

	// The load falls to 60Mi: one pod is enough.
	metrics.setTotalMemory("60Mi")
	waitHPA(1)

	// kubectl shows the reference by kind and the current and desired sizes.
	tb := parseTable(t, mustKubectl(t, "get", "hpa", "-n", ns))
	if got := tb.cell(t, "scaled", "REFERENCE"); got != "TApp/scaled" {
		t.Errorf("REFERENCE = %q, want TApp/scaled", got)
	}
	if got := tb.cell(t, "scaled", "REPLICAS"); got != "1" {
		t.Errorf("REPLICAS = %q, want 1", got)
	}
}

// replicasManager is the manager of spec.replicas in managedFields, or "" when none claims it.
func replicasManager(entries []metav1.ManagedFieldsEntry) string {
	for _, e := range entries {
		if e.FieldsV1 != nil && containsReplicas(e.FieldsV1.Raw) {
			return e.Manager
		}
	}
	return ""
}

func containsReplicas(raw []byte) bool {
	var fields map[string]map[string]interface{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return false
	}
	_, ok := fields["f:spec"]["f:replicas"]
	return ok
}

// describeHPA is the HPA's replica counts and conditions, for failure messages.
func describeHPA(current, desired int32, conditions []string) string {
	return fmt.Sprintf("currentReplicas %d, desiredReplicas %d, conditions: %s", current, desired, strings.Join(conditions, "; "))
}
