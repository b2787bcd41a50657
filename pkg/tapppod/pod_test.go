package tapppod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewWithoutUIDHasNoOwnerReference(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	pod := New(Owner{Name: "app", Namespace: "ns"}, "0", tmpl)
	if len(pod.OwnerReferences) != 0 {
		t.Fatalf("owner references %v without a TApp uid", pod.OwnerReferences)
	}
	pod = New(Owner{Name: "app", Namespace: "ns", UID: "u"}, "0", tmpl)
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != "u" || ref.Kind != "TApp" {
		t.Fatalf("controller reference %v", ref)
	}
}

func TestNewSharesNothingWithTheTemplate(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Finalizers: []string{"f"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "i"}},
			Volumes:    []corev1.Volume{{Name: "data"}},
		},
	}
	owner := Owner{Name: "app", Namespace: "ns", VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}
	pod := New(owner, "1", tmpl)
	pod.Spec.Containers[0].Image = "changed"
	pod.Finalizers[0] = "changed"
	if tmpl.Spec.Containers[0].Image != "i" || tmpl.Finalizers[0] != "f" || tmpl.Spec.Volumes[0].PersistentVolumeClaim != nil {
		t.Fatalf("New modified or shares the template: %+v", tmpl)
	}
	if got := pod.Spec.Volumes[0].PersistentVolumeClaim; got == nil || got.ClaimName != "data-app-1" {
		t.Fatalf("claim volume %+v", pod.Spec.Volumes[0])
	}
}

// TestPreparedTemplateBuildsTheSamePods: a Template prepared once builds, for every instance, the pod New
// builds from the bare template, and its hashes are the template's.
func TestPreparedTemplateBuildsTheSamePods(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "1"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}
	owner := Owner{Name: "app", Namespace: "ns", UID: "u", ServiceName: "svc",
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}
	prepared := Prepare(tmpl)
	if prepared.TemplateHash != TemplateHash(tmpl) || prepared.UniqHash != UniqHash(tmpl) || prepared.Keys != TemplateKeysValue(tmpl) {
		t.Fatalf("prepared %+v, want the template's hashes and keys", prepared)
	}
	for _, id := range []string{"0", "1", "17"} {
		if got, want := prepared.New(owner, id), New(owner, id, tmpl); !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("instance %s: prepared template built %+v, want %+v", id, got, want)
		}
		if got, want := prepared.Labels(id), Labels(tmpl, id); !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("instance %s: labels %v, want %v", id, got, want)
		}
	}
	a, b := prepared.New(owner, "0"), prepared.New(owner, "0")
	a.Labels["app"], a.Spec.Containers[0].Image = "changed", "changed"
	if b.Labels["app"] != "web" || b.Spec.Containers[0].Image != "i" || tmpl.Spec.Containers[0].Image != "i" {
		t.Error("pods of one prepared template share their labels or spec")
	}
}

// BenchmarkPrepare is the cost of hashing a template once for all the pods built from it (the controller
// for every sync, the pod template check for every write of a template).
func BenchmarkPrepare(b *testing.B) {
	tmpl := goldenTemplate()
	b.ReportAllocs()
	for b.Loop() {
		Prepare(tmpl)
	}
}
