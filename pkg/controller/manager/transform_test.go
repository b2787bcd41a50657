package manager

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestStripManagedFields: the informers keep pods and TApps without managed fields and everything else of
// them; what is not an object passes unchanged.
func TestStripManagedFields(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Labels: map[string]string{"app": "web"}, ManagedFields: managed},
		Spec: corev1.PodSpec{NodeName: "n1"}}
	tapp := &tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: managed}, Spec: tkestackv1.TAppSpec{Replicas: 3}}
	for _, obj := range []metav1.Object{pod, tapp} {
		out, err := stripManagedFields(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(metav1.Object)
		if got.GetManagedFields() != nil {
			t.Errorf("%s kept its managed fields", got.GetName())
		}
	}
	if pod.Labels["app"] != "web" || pod.Spec.NodeName != "n1" || tapp.Spec.Replicas != 3 {
		t.Errorf("more than the managed fields changed: %+v, %+v", pod, tapp)
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/web-0", Obj: pod}
	if out, err := stripManagedFields(tombstone); err != nil || out != any(tombstone) {
		t.Errorf("tombstone: %v, %v", out, err)
	}
}
