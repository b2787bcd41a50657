package yurtappdaemon

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

func (h *harness) deploymentPatches() []clienttesting.PatchAction {
	var out []clienttesting.PatchAction
	for _, a := range h.kube.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && a.GetResource().Resource == "deployments" {
			out = append(out, p)
		}
	}
	return out
}

// yurtAppManagerDeployment is the Deployment of pool that yurt-app-manager created for the YurtAppDaemon
// web, as the garbage collector leaves it once the CRD object was deleted with orphan propagation.
func yurtAppManagerDeployment(pool string) *appsv1.Deployment {
	labels := map[string]string{"app": "web", policy.PoolNameLabel: pool, policy.RevisionHashLabel: "web-5d9c7b"}
	podLabels := map[string]string{"app": "web", policy.PoolNameLabel: pool, policy.RevisionHashLabel: "web-5d9c7b"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + pool + "-q8x2m", GenerateName: "web-" + pool + "-", Namespace: "ns",
			UID: types.UID("yam-" + pool), Labels: labels, ResourceVersion: "3",
			Annotations: map[string]string{policy.RefNodePoolAnnotation: pool}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", policy.PoolNameLabel: pool}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{policy.NodePoolLabel: pool},
					Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}}},
		},
	}
}

func TestYurtAppManagerWorkloadsAreAdoptedUnderTheirNames(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge"), testPool("b", "edge")), yurtAppManagerDeployment("a"), yurtAppManagerDeployment("b"))
	h.converge()
	patches := h.deploymentPatches()
	if len(patches) != 2 {
		t.Fatalf("%d deployment patches, want 2 adoptions", len(patches))
	}
	for _, p := range patches {
		pool := strings.TrimSuffix(strings.TrimPrefix(p.GetName(), "web-"), "-q8x2m")
		if !strings.Contains(string(p.GetPatch()), `"uid":"yam-`+pool+`"`) || !strings.Contains(string(p.GetPatch()), `"uid":"yad-uid"`) {
			t.Errorf("adoption patch of %s: %s", p.GetName(), p.GetPatch())
		}
	}
	deps := h.deployments()
	if len(deps) != 2 {
		t.Fatalf("deployments %v, want only the two adopted ones", keys(deps))
	}
	for _, pool := range []string{"a", "b"} {
		d := deps["web-"+pool+"-q8x2m"]
		if d == nil || d.UID != types.UID("yam-"+pool) || !metav1.IsControlledBy(d, h.yad()) {
			t.Errorf("pool %s: %+v", pool, d)
		}
	}
	if c := condition(h.yad(), policy.ConditionProvisioned); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("WorkLoadProvisioned = %+v", c)
	}
}

func TestNothingIsAdoptedWhileTheYurtAppDaemonIsBeingDeleted(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge")), yurtAppManagerDeployment("a"))
	h.show()
	// The API server has the deletion; the cache does not show it yet.
	h.updateYAD(func(yad *v1alpha1.YurtAppDaemon) {
		yad.DeletionTimestamp = &metav1.Time{}
		yad.Finalizers = []string{"orphan"}
	})
	_ = h.sync()
	if p := h.deploymentPatches(); len(p) != 0 {
		t.Errorf("adopted for a YurtAppDaemon being deleted: %v", p)
	}
	if _, created := h.deployments()["web-a"]; created {
		t.Errorf("created a child for a pool being adopted")
	}
}

func TestChildWhosePodsTheSelectorNoLongerMatchesIsReleased(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge")))
	h.converge()
	d := h.deployments()["web-a"]
	if d == nil {
		t.Fatal("web-a not created")
	}
	d.Spec.Template.Labels["app"] = "debug"
	_, err := h.kube.AppsV1().Deployments("ns").Update(context.Background(), d, metav1.UpdateOptions{})
	h.must(err)
	h.show()
	h.kube.ClearActions()
	_ = h.sync()
	patches := h.deploymentPatches()
	if len(patches) != 1 || patches[0].GetName() != "web-a" || !strings.Contains(string(patches[0].GetPatch()), `"$patch":"delete"`) ||
		!strings.Contains(string(patches[0].GetPatch()), `"uid":"`+string(d.UID)+`"`) {
		t.Fatalf("release patches %v", patches)
	}
	released := h.deployments()["web-a"]
	if metav1.GetControllerOf(released) != nil || released.UID != d.UID {
		t.Errorf("released %+v", released.ObjectMeta)
	}
	requireEvent(t, h.events(), "Normal Released Released Deployment web-a")
	// From now on it holds the child's name: a conflict, never written.
	h.kube.ClearActions()
	h.converge()
	for _, w := range h.writes() {
		if strings.HasSuffix(w, " web-a") {
			t.Errorf("released workload written: %s", w)
		}
	}
	if c := condition(h.yad(), policy.ConditionProvisioned); c == nil || c.Reason != policy.ReasonWorkloadConflict {
		t.Errorf("WorkLoadProvisioned = %+v", c)
	}
}

func TestOrphanWorkloadEventsEnqueueTheSelectingYurtAppDaemons(t *testing.T) {
	h := newHarness(t, objs(testYAD(), testPool("a", "edge")))
	h.show()
	for h.ctrl.queue.Len() > 0 {
		key, _ := h.ctrl.queue.Get()
		h.ctrl.queue.Done(key)
	}
	other := yurtAppManagerDeployment("a")
	other.Spec.Template.Labels = map[string]string{"app": "other"}
	h.ctrl.childAdded(other)
	if n := h.ctrl.queue.Len(); n != 0 {
		t.Fatalf("an orphan the selector does not match enqueued %d keys", n)
	}
	h.ctrl.childAdded(yurtAppManagerDeployment("a"))
	if key, _ := h.ctrl.queue.Get(); key != "ns/web" {
		t.Errorf("enqueued %q, want ns/web", key)
	}
}
