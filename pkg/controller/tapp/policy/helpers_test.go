package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"reflect"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

var testNow = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

func podTemplate(image string, policy corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			RestartPolicy: policy,
			Containers:    []corev1.Container{{Name: "main", Image: image}},
		},
	}
}

// newTApp returns a TApp "ns/app" with spec.template running nginx:1 (restartPolicy OnFailure).
func newTApp(replicas int32) *tkestackv1.TApp {
	one := intstr.FromInt32(1)
	all := intstr.FromString("100%")
	return defaulted(&tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "tapp-uid"},
		Spec: tkestackv1.TAppSpec{
			Replicas:            replicas,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:            podTemplate("nginx:1", corev1.RestartPolicyOnFailure),
			DefaultTemplateName: "default",
			UpdateStrategy: tkestackv1.TAppUpdateStrategy{
				Template:       "default",
				MaxUnavailable: &one,
				ForceUpdate:    tkestackv1.ForceUpdateStrategy{MaxUnavailable: &all},
			},
		},
	})
}

// defaulted applies the API's defaulting, as the API server does to every TApp it serves: the policy
// decides on defaulted TApps only (Undefaulted).
func defaulted(tapp *tkestackv1.TApp) *tkestackv1.TApp {
	tkestackv1.SetObjectDefaults_TApp(tapp)
	return tapp
}

// mustPod builds the pod of id from the TApp as it is now, Running and Ready, with the gate condition True.
func mustPod(t testing.TB, tapp *tkestackv1.TApp, id string) *corev1.Pod {
	t.Helper()
	pod, err := NewPod(tapp, id)
	if err != nil {
		t.Fatalf("NewPod(%s): %v", id, err)
	}
	pod.UID = types.UID("uid-" + id)
	pod.Spec.NodeName = "node-1"
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Ready: true}}
	setCond(pod, InPlaceUpdateGate, corev1.ConditionTrue)
	setCond(pod, corev1.PodReady, corev1.ConditionTrue)
	return pod
}

func setCond(pod *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			pod.Status.Conditions[i].Status = s
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: s})
}

func dropCond(pod *corev1.Pod, t corev1.PodConditionType) {
	var out []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	pod.Status.Conditions = out
}

func terminate(pod *corev1.Pod, at time.Time) {
	ts := metav1.NewTime(at)
	pod.DeletionTimestamp = &ts
}

func finish(pod *corev1.Pod, phase corev1.PodPhase) {
	pod.Status.Phase = phase
	setCond(pod, corev1.PodReady, corev1.ConditionFalse)
}

func ids(plan *Plan) (creates, deletes, force, inplace, recreates []string) {
	creates = append([]string{}, plan.Creates...)
	for _, d := range plan.Deletes {
		deletes = append(deletes, d.ID)
	}
	for _, d := range plan.ForceDeletes {
		force = append(force, d.ID)
	}
	for _, u := range plan.InPlaceUpdates {
		inplace = append(inplace, u.ID)
	}
	for _, r := range plan.Recreates {
		recreates = append(recreates, r.ID)
	}
	return
}

// expectPlan asserts the ids of every action list, in order. nil and empty are equal.
func expectPlan(t *testing.T, plan *Plan, creates, deletes, force, inplace, recreates []string) {
	t.Helper()
	c, d, f, i, r := ids(plan)
	for _, x := range []struct {
		name      string
		got, want []string
	}{{"Creates", c, creates}, {"Deletes", d, deletes}, {"ForceDeletes", f, force}, {"InPlaceUpdates", i, inplace}, {"Recreates", r, recreates}} {
		if len(x.got) == 0 && len(x.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(x.got, x.want) {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
}

// cluster is a tiny fake: it applies a plan the way an executor would, with pods vanishing at once on
// delete and new pods becoming Running and Ready at once (like the original's fake client).
type cluster struct {
	t    *testing.T
	pods map[string]*corev1.Pod
}

func newCluster(t *testing.T) *cluster { return &cluster{t: t, pods: map[string]*corev1.Pod{}} }

func (c *cluster) list() []*corev1.Pod {
	var names []string
	for n := range c.pods {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*corev1.Pod
	for _, n := range names {
		out = append(out, c.pods[n])
	}
	return out
}

func (c *cluster) add(pods ...*corev1.Pod) {
	for _, p := range pods {
		c.pods[p.Name] = p
	}
}

func (c *cluster) sync(tapp *tkestackv1.TApp) *Plan {
	plan := ComputePlan(tapp, c.list(), func(string) NodeState { return NodeReady }, testNow)
	for _, id := range plan.Creates {
		c.add(mustPod(c.t, tapp, id))
	}
	for _, d := range append(append([]Delete{}, plan.Deletes...), plan.ForceDeletes...) {
		delete(c.pods, d.PodName)
	}
	for _, r := range plan.Recreates {
		delete(c.pods, r.PodName)
	}
	for _, u := range plan.InPlaceUpdates {
		// The engine applies the update, and the kubelet finishes it at once (as after Complete, no state
		// is left).
		pod := c.pods[u.PodName]
		updated, err := inplace.UpdatedPod(pod, u.Update, testNow)
		if err != nil {
			c.t.Fatalf("apply %+v: %v", u, err)
		}
		delete(updated.Annotations, inplace.StateAnnotation)
		*pod = *updated
	}
	return plan
}

type counts struct{ creates, deletes, force, updates, recreates int }

func countOf(p *Plan) counts {
	return counts{len(p.Creates), len(p.Deletes), len(p.ForceDeletes), len(p.InPlaceUpdates), len(p.Recreates)}
}

// heldUpdates returns, in ascending id order, the ids of the live instance pods of the snapshot that are
// not on their template (or carry foreign hashes) and that the plan neither updates in place, relabels,
// recreates nor deletes: the updates a budget held back.
func heldUpdates(tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *Plan) []string {
	acted := map[string]bool{}
	for _, u := range append(append([]InPlaceUpdate{}, plan.InPlaceUpdates...), plan.Relabels...) {
		acted[u.PodName] = true
	}
	for _, r := range plan.Recreates {
		acted[r.PodName] = true
	}
	for _, d := range plan.Deletes {
		acted[d.PodName] = true
	}
	var held []string
	for _, pod := range pods {
		id, _ := InstanceID(pod)
		n, ok := ParseID(id)
		if !ok || n >= int(tapp.Spec.Replicas) || IsKilled(tapp, id) || !IsControlledBy(pod, tapp) ||
			isTerminating(pod) || isFinished(pod) || acted[pod.Name] {
			continue
		}
		tmpl, err := TemplateFor(tapp, TemplateNameFor(tapp, id))
		if err != nil || (pod.Labels[tkestack.TemplateHashLabel] == tapppod.TemplateHash(tmpl) && !ForeignHashes(pod)) {
			continue
		}
		held = append(held, id)
	}
	sort.Slice(held, func(i, j int) bool { return ordinal(held[i]) < ordinal(held[j]) })
	return held
}
