//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestYurtAppDaemonAdoptsWorkloadsOfYurtAppManager: a per-pool Deployment shaped as yurt-app-manager makes
// them (generated name <yad>-<pool>-<random>, pool-name label and ref-nodepool annotation, the selector's
// labels), orphaned as a migration leaves it, is adopted by a YurtAppDaemon created with the same spec under
// its existing name and UID, and no second Deployment is created for its pool; the other pool gets one.
func TestYurtAppDaemonAdoptsWorkloadsOfYurtAppManager(t *testing.T) {
	t.Parallel()
	ensureLocalPools(t)
	ns := newNamespace(t, "yad-adopt")
	ctx := testContext(t, 5*yadTimeout)
	pool := localPools[0]
	labels := map[string]string{"app": "adopt", poolNameLabel: pool, revisionLabel: "adopt-5d9c7b8f4"}
	orphan := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "adopt-" + pool + "-q8x2m", Namespace: ns, Labels: labels,
			Annotations: map[string]string{"apps.openyurt.io/ref-nodepool": pool}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "adopt", poolNameLabel: pool}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{poolLabel: pool}, TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{Name: "main", Image: "nginx:1.25"}}},
			},
		},
	}
	created, err := kubeClient.AppsV1().Deployments(ns).Create(ctx, orphan, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	yad := createYAD(t, ns, yadObject("adopt", "nginx:1.25", 1, false, map[string]string{localPoolLabel: "true"}))
	yadPollUntil(t, yadTimeout, "the orphan adopted under its name, the other pool provisioned", func() error {
		got, err := children(ctx, ns, yad.UID, false)
		if err != nil {
			return err
		}
		if len(got) != len(localPools) {
			return fmt.Errorf("children in pools %v", sortedKeys(got))
		}
		if c := got[pool]; c.name != orphan.Name || c.uid != string(created.UID) {
			return fmt.Errorf("child of pool %s: %s (uid %s), want the adopted %s (uid %s)", pool, c.name, c.uid, orphan.Name, created.UID)
		}
		return nil
	})
	list, err := kubeClient.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != len(localPools) {
		var names []string
		for _, d := range list.Items {
			names = append(names, d.Name)
		}
		t.Errorf("Deployments %v, want one per pool", names)
	}
	waitPoolPods(t, ns, "adopt", "nginx:1.25", 1, localPools...)
}
