package policy

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
)

const testUID = types.UID("yas-uid")

// newYAS returns a YurtAppSet "web" in "ns" with a Deployment template (nginx:1.19, 2 replicas), selecting
// the pools labelled region=north.
func newYAS() *v1beta1.YurtAppSet {
	return &v1beta1.YurtAppSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: testUID, Generation: 1},
		Spec: v1beta1.YurtAppSetSpec{
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "north"}},
			Workload: v1beta1.Workload{WorkloadTemplate: v1beta1.WorkloadTemplate{DeploymentTemplate: &v1beta1.DeploymentTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "a"}},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](2),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
						Spec: corev1.PodSpec{
							NodeSelector: map[string]string{"disk": "ssd"},
							Containers:   []corev1.Container{{Name: "nginx", Image: "nginx:1.19"}},
						},
					},
				},
			}}},
		},
	}
}

func withStatefulSet(yas *v1beta1.YurtAppSet) *v1beta1.YurtAppSet {
	d := yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate
	yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate = nil
	yas.Spec.Workload.WorkloadTemplate.StatefulSetTemplate = &v1beta1.StatefulSetTemplateSpec{
		ObjectMeta: d.ObjectMeta,
		Spec:       appsv1.StatefulSetSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template, ServiceName: "web"},
	}
	return yas
}

func pool(name string, labels map[string]string, taints ...corev1.Taint) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1alpha1.NodePoolSpec{Taints: taints}}
}

var north = map[string]string{"region": "north"}

// live returns the Deployment the API server stores for a rendering: named, with a UID, the fields it
// defaults, and a status whose controller observed it with every replica ready and updated.
func live(d *appsv1.Deployment, name string, created time.Time) *appsv1.Deployment {
	d = d.DeepCopy()
	d.Name = name
	d.UID = types.UID("uid-" + name)
	d.ResourceVersion = "7"
	d.Generation = 1
	d.CreationTimestamp = metav1.NewTime(created)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	d.Spec.Template.Spec.DNSPolicy = corev1.DNSClusterFirst
	d.Spec.Template.Spec.SchedulerName = "default-scheduler"
	d.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	d.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{}
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		c.TerminationMessagePath = "/dev/termination-log"
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
		c.ImagePullPolicy = corev1.PullIfNotPresent
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: *d.Spec.Replicas, ReadyReplicas: *d.Spec.Replicas, UpdatedReplicas: *d.Spec.Replicas}
	return d
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
