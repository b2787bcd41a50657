package kubectltapp

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

const testUID = types.UID("tapp-uid")

// testTApp is TApp web in namespace ns with replicas instances of nginx:1 and a pool template "canary"
// running nginx:2, observed at its generation.
func testTApp(replicas int32, mutate ...func(*tkestackv1.TApp)) *tkestackv1.TApp {
	template := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		}
	}
	tapp := &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: testUID, Generation: 3},
		Spec: tkestackv1.TAppSpec{
			Replicas:     replicas,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:     template("nginx:1"),
			TemplatePool: map[string]corev1.PodTemplateSpec{"canary": template("nginx:2")},
		},
		Status: tkestackv1.TAppStatus{ObservedGeneration: 3},
	}
	for _, m := range mutate {
		m(tapp)
	}
	tkestackv1.SetObjectDefaults_TApp(tapp) // as the API server serves it
	return tapp
}

// podOpt changes a pod built by testPod.
type podOpt func(*corev1.Pod)

// testPod is the running, ready pod of instance id of tapp, built from the template the instance runs
// (with its hash labels), on node kwok-0.
func testPod(tapp *tkestackv1.TApp, id string, opts ...podOpt) *corev1.Pod {
	t, err := policy.TemplateFor(tapp, policy.TemplateNameFor(tapp, id))
	if err != nil {
		panic(err)
	}
	pod := tapppod.New(tapppod.Owner{Name: tapp.Name, Namespace: tapp.Namespace, UID: tapp.UID}, id, t)
	pod.UID = types.UID("pod-" + id)
	pod.Spec.NodeName = "kwok-0"
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: policy.InPlaceUpdateGate, Status: corev1.ConditionTrue},
	}
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true})
	}
	for _, o := range opts {
		o(pod)
	}
	return pod
}

func notReady(pod *corev1.Pod) {
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	for i := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[i].Ready = false
	}
}

func staleHash(pod *corev1.Pod) { pod.Labels[tkestack.TemplateHashLabel] = "old" }

func terminating(pod *corev1.Pod) {
	now := metav1.Now()
	pod.DeletionTimestamp = &now
}

func restarts(n int32) podOpt {
	return func(pod *corev1.Pod) {
		for i := range pod.Status.ContainerStatuses {
			pod.Status.ContainerStatuses[i].RestartCount = n
		}
	}
}

func revision(r string) podOpt { return func(pod *corev1.Pod) { pod.Labels[RevisionLabel] = r } }

func finished(phase corev1.PodPhase) podOpt {
	return func(pod *corev1.Pod) {
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Status.Phase = phase
	}
}

func foreignOwner(pod *corev1.Pod) { pod.OwnerReferences[0].UID = "someone-else" }

func killed(ids ...string) func(*tkestackv1.TApp) {
	return func(tapp *tkestackv1.TApp) {
		if tapp.Spec.Statuses == nil {
			tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{}
		}
		for _, id := range ids {
			tapp.Spec.Statuses[id] = policy.StatusKilled
		}
	}
}
