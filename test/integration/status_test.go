package integration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

func TestTAppStatusIsolation(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := cs.TKEStackAppsV1().TApps(ns)

	created, err := tapps.Create(ctx, newTApp(ns, "iso", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	// UpdateStatus: status changes, the spec and label changes in the same request are ignored.
	req := created.DeepCopy()
	req.Status.Replicas = 2
	req.Status.ReadyReplicas = 1
	req.Status.ObservedGeneration = 1
	req.Status.AppStatus = "Running"
	req.Status.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Running", "1": "Pending"}
	req.Spec.Replicas = 9
	req.Spec.Template.Spec.Containers[0].Image = "nginx:evil"
	req.Labels = map[string]string{"sneaky": "true"}
	afterStatus, err := tapps.UpdateStatus(ctx, req, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	for _, obj := range []*tkestackv1.TApp{afterStatus, mustGetTApp(t, cs, ns, "iso")} {
		if obj.Status.Replicas != 2 || obj.Status.ReadyReplicas != 1 || obj.Status.AppStatus != "Running" ||
			obj.Status.ObservedGeneration != 1 || obj.Status.Statuses["1"] != "Pending" {
			t.Errorf("status after UpdateStatus = %+v, want replicas 2, ready 1, Running, observedGeneration 1", obj.Status)
		}
		if obj.Spec.Replicas != 2 {
			t.Errorf("spec.replicas after UpdateStatus = %d, want 2 (spec changes on /status are ignored)", obj.Spec.Replicas)
		}
		if img := obj.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.7.9" {
			t.Errorf("image after UpdateStatus = %q, want nginx:1.7.9", img)
		}
		if _, ok := obj.Labels["sneaky"]; ok {
			t.Errorf("labels after UpdateStatus = %v, want the label change ignored", obj.Labels)
		}
		if obj.Generation != 1 {
			t.Errorf("generation after UpdateStatus = %d, want 1", obj.Generation)
		}
		if obj.Status.ScaleLabelSelector != "app=iso" {
			t.Errorf("status.scaleLabelSelector = %q, want app=iso", obj.Status.ScaleLabelSelector)
		}
	}

	// An invalid status is rejected.
	bad := afterStatus.DeepCopy()
	bad.Status.AppStatus = "Exploded"
	if _, err := tapps.UpdateStatus(ctx, bad, metav1.UpdateOptions{}); err == nil || !hasCause(statusError(t, err), "status.appStatus", "") {
		t.Errorf("status update with appStatus Exploded: got %v, want 422 on status.appStatus", err)
	}

	// Update of the main resource: the spec changes, the status change is ignored.
	req = afterStatus.DeepCopy()
	req.Spec.Replicas = 4
	req.Status.Replicas = 0
	req.Status.ReadyReplicas = 0
	req.Status.AppStatus = "Failed"
	afterUpdate, err := tapps.Update(ctx, req, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	for _, obj := range []*tkestackv1.TApp{afterUpdate, mustGetTApp(t, cs, ns, "iso")} {
		if obj.Spec.Replicas != 4 || obj.Generation != 2 {
			t.Errorf("after Update spec.replicas=%d generation=%d, want 4 and 2", obj.Spec.Replicas, obj.Generation)
		}
		if obj.Status.Replicas != 2 || obj.Status.ReadyReplicas != 1 || obj.Status.AppStatus != "Running" {
			t.Errorf("status after Update = %+v, want it unchanged (replicas 2, ready 1, Running)", obj.Status)
		}
	}
}

func TestOpenYurtStatusIsolation(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)

	// YurtAppDaemon.
	yads := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns)
	yad, err := yads.Create(ctx, newYurtAppDaemon(ns, "yad"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create yad: %v", err)
	}
	req := yad.DeepCopy()
	req.Status.NodePools = []string{"pool-a", "pool-b"}
	req.Status.CurrentRevision = "yad-abc"
	req.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "other"}}
	yad, err = yads.UpdateStatus(ctx, req, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("yad update status: %v", err)
	}
	if len(yad.Status.NodePools) != 2 || yad.Status.CurrentRevision != "yad-abc" {
		t.Errorf("yad status = %+v, want nodepools [pool-a pool-b] and currentRevision yad-abc", yad.Status)
	}
	if yad.Spec.NodePoolSelector.MatchLabels["pool"] != "edge" || yad.Generation != 1 {
		t.Errorf("yad spec.nodepoolSelector=%v generation=%d after UpdateStatus, want pool=edge and 1", yad.Spec.NodePoolSelector, yad.Generation)
	}
	req = yad.DeepCopy()
	req.Status = openyurtv1alpha1.YurtAppDaemonStatus{}
	req.Spec.NodePoolSelector = &metav1.LabelSelector{}
	yad, err = yads.Update(ctx, req, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("yad update: %v", err)
	}
	if len(yad.Status.NodePools) != 2 || yad.Status.CurrentRevision != "yad-abc" || yad.Status.TemplateType != "Deployment" {
		t.Errorf("yad status after Update = %+v, want it unchanged", yad.Status)
	}
	if len(yad.Spec.NodePoolSelector.MatchLabels) != 0 || yad.Generation != 2 {
		t.Errorf("yad after Update nodepoolSelector=%v generation=%d, want {} and 2", yad.Spec.NodePoolSelector, yad.Generation)
	}

	// NodePool.
	pools := cs.OpenYurtAppsV1alpha1().NodePools()
	name := uniqueName(t, "pool")
	t.Cleanup(func() { _ = pools.Delete(ctx, name, metav1.DeleteOptions{}) })
	pool, err := pools.Create(ctx, newNodePool(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pool: %v", err)
	}
	preq := pool.DeepCopy()
	preq.Status = openyurtv1alpha1.NodePoolStatus{ReadyNodeNum: 2, UnreadyNodeNum: 1, Nodes: []string{"n1", "n2", "n3"}}
	preq.Spec.Labels = map[string]string{"ignored": "yes"}
	pool, err = pools.UpdateStatus(ctx, preq, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("pool update status: %v", err)
	}
	if pool.Status.ReadyNodeNum != 2 || pool.Status.UnreadyNodeNum != 1 || len(pool.Status.Nodes) != 3 {
		t.Errorf("pool status = %+v, want 2 ready, 1 unready, 3 nodes", pool.Status)
	}
	if len(pool.Spec.Labels) != 0 || pool.Generation != 1 {
		t.Errorf("pool spec.labels=%v generation=%d after UpdateStatus, want none and 1", pool.Spec.Labels, pool.Generation)
	}
	preq = pool.DeepCopy()
	preq.Status = openyurtv1alpha1.NodePoolStatus{}
	preq.Spec.Labels = map[string]string{"kept": "yes"}
	pool, err = pools.Update(ctx, preq, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("pool update: %v", err)
	}
	if pool.Status.ReadyNodeNum != 2 || len(pool.Status.Nodes) != 3 {
		t.Errorf("pool status after Update = %+v, want it unchanged", pool.Status)
	}
	if pool.Spec.Labels["kept"] != "yes" || pool.Generation != 2 {
		t.Errorf("pool after Update spec.labels=%v generation=%d, want kept=yes and 2", pool.Spec.Labels, pool.Generation)
	}
}

func mustGetTApp(t testing.TB, cs *versioned.Clientset, ns, name string) *tkestackv1.TApp {
	t.Helper()
	obj, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s/%s: %v", ns, name, err)
	}
	return obj
}
