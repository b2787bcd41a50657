package policy

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

var testNow = metav1.NewTime(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))

func podTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
	}
}

// newYAD returns a YurtAppDaemon "ns/web" (UID yad-uid) selecting pods app=web and the pools labelled
// role=edge, with a Deployment template of 2 replicas running nginx:1.25.
func newYAD() *v1alpha1.YurtAppDaemon {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	return &v1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "yad-uid", Generation: 1},
		Spec: v1alpha1.YurtAppDaemonSpec{
			Selector:         sel,
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "edge"}},
			WorkloadTemplate: v1alpha1.WorkloadTemplate{DeploymentTemplate: &v1alpha1.DeploymentTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "a"}},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](2),
					Selector: sel.DeepCopy(),
					Template: podTemplate("nginx:1.25"),
				},
			}},
			RevisionHistoryLimit: ptr.To[int32](10),
		},
	}
}

// toStatefulSet switches the template of yad to a StatefulSet with the same pod template.
func toStatefulSet(yad *v1alpha1.YurtAppDaemon) *v1alpha1.YurtAppDaemon {
	d := yad.Spec.WorkloadTemplate.DeploymentTemplate
	yad.Spec.WorkloadTemplate = v1alpha1.WorkloadTemplate{StatefulSetTemplate: &v1alpha1.StatefulSetTemplateSpec{
		ObjectMeta: d.ObjectMeta,
		Spec: appsv1.StatefulSetSpec{
			Replicas:    d.Spec.Replicas,
			Selector:    d.Spec.Selector,
			ServiceName: "web",
			Template:    d.Spec.Template,
		},
	}}
	return yad
}

func pool(name string, labels map[string]string, taints ...corev1.Taint) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       v1alpha1.NodePoolSpec{Type: "Edge", Taints: taints},
	}
}

func edge(name string, taints ...corev1.Taint) *v1alpha1.NodePool {
	return pool(name, map[string]string{"role": "edge"}, taints...)
}

func taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

// liveDeployment renders the Deployment of p as the API server would hold it: with a UID, a creation time
// (minute offset from testNow) and a status showing a finished rollout.
func liveDeployment(t *testing.T, yad *v1alpha1.YurtAppDaemon, p *v1alpha1.NodePool, minute int) *appsv1.Deployment {
	t.Helper()
	d, err := RenderDeployment(yad, p, RevisionName(yad))
	if err != nil {
		t.Fatalf("RenderDeployment(%s): %v", p.Name, err)
	}
	d.UID = types.UID("uid-" + d.Name)
	d.ResourceVersion = "7"
	d.Generation = 1
	d.CreationTimestamp = metav1.NewTime(testNow.Add(time.Duration(minute) * time.Minute))
	want := ptr.Deref(d.Spec.Replicas, 1)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: want, ReadyReplicas: want, UpdatedReplicas: want}
	return d
}

func liveStatefulSet(t *testing.T, yad *v1alpha1.YurtAppDaemon, p *v1alpha1.NodePool, minute int) *appsv1.StatefulSet {
	t.Helper()
	s, err := RenderStatefulSet(yad, p, RevisionName(yad))
	if err != nil {
		t.Fatalf("RenderStatefulSet(%s): %v", p.Name, err)
	}
	s.UID = types.UID("uid-" + s.Name)
	s.ResourceVersion = "7"
	s.Generation = 1
	s.CreationTimestamp = metav1.NewTime(testNow.Add(time.Duration(minute) * time.Minute))
	want := ptr.Deref(s.Spec.Replicas, 1)
	s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: want, ReadyReplicas: want, UpdatedReplicas: want}
	return s
}

func names[T any](items []T, name func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}
