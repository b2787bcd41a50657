package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// rollout is a TApp of replicas instances whose pods run the "old" templates (revision app-old: spec.template
// nginx:1 and pool template "other" busybox:1), while the spec now has the "new" ones (revision app-new:
// nginx:2 and busybox:2). Instances listed in onOther run the pool template "other".
func rollout(t *testing.T, replicas int32, onOther ...string) (*tkestackv1.TApp, Revisions, []*corev1.Pod) {
	t.Helper()
	old := newTApp(replicas)
	old.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"other": podTemplate("busybox:1", corev1.RestartPolicyOnFailure)}
	old.Spec.Templates = map[string]string{}
	for _, id := range onOther {
		old.Spec.Templates[id] = "other"
	}
	all := intstr.FromString("100%")
	old.Spec.UpdateStrategy.MaxUnavailable = &all
	var pods []*corev1.Pod
	for n := 0; n < int(replicas); n++ {
		pod := mustPod(t, old, idString(n))
		pod.Labels[tkestack.ControllerRevisionHashLabel] = "app-old"
		pods = append(pods, pod)
	}
	tapp := old.DeepCopy()
	tapp.Spec.Template = podTemplate("nginx:2", corev1.RestartPolicyOnFailure)
	tapp.Spec.TemplatePool["other"] = podTemplate("busybox:2", corev1.RestartPolicyOnFailure)
	revs := Revisions{Update: "app-new", Current: "app-old",
		CurrentTemplates: &RevisionTemplates{Template: old.Spec.Template, TemplatePool: old.Spec.TemplatePool}}
	return tapp, revs, pods
}

func without(pods []*corev1.Pod, ids ...string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range pods {
		if !strings.Contains(","+strings.Join(ids, ",")+",", ","+pod.Labels[tkestack.InstanceIDLabel]+",") {
			out = append(out, pod)
		}
	}
	return out
}

func TestPauseAndPartition(t *testing.T) {
	one := intstr.FromInt32(1)
	cases := []struct {
		name    string
		mutate  func(*tkestackv1.TApp, *Revisions, []*corev1.Pod) []*corev1.Pod
		onOther []string
		// want: ids of each action list, and for each created id the image and revision label of its pod
		creates, deletes, inPlace []string
		created                   map[string]string // id → "image revision"
	}{
		{name: "no control: every instance rolls", inPlace: []string{"0", "1", "2", "3"}},
		{name: "paused: nothing is updated",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Paused = true
				return p
			}},
		{name: "paused: force updates of other templates wait too", onOther: []string{"1", "3"},
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Paused = true
				return p
			}},
		{name: "paused: scale-up creates from the current revision",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Paused, a.Spec.Replicas = true, 6
				return p
			},
			creates: []string{"4", "5"}, created: map[string]string{"4": "nginx:1 app-old", "5": "nginx:1 app-old"}},
		{name: "paused: a deleted pod comes back on the current revision",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Paused = true
				return without(p, "2")
			},
			creates: []string{"2"}, created: map[string]string{"2": "nginx:1 app-old"}},
		{name: "paused: kills and scale-down still delete",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Paused, a.Spec.Replicas = true, 3
				a.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"0": StatusKilled}
				return p
			},
			deletes: []string{"3", "0"}},
		{name: "paused, current revision unknown: scale-up uses the spec",
			mutate: func(a *tkestackv1.TApp, r *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Paused, a.Spec.Replicas = true, 5
				r.CurrentTemplates = nil
				return p
			},
			creates: []string{"4"}, created: map[string]string{"4": "nginx:2 app-new"}},
		{name: "partition 2: low ids keep their revision",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Partition = 2
				return p
			},
			inPlace: []string{"2", "3"}},
		{name: "partition 2 with maxUnavailable 1",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Partition, a.Spec.UpdateStrategy.MaxUnavailable = 2, &one
				return p
			},
			inPlace: []string{"2"}},
		{name: "partition 2: a recreated low id gets the current revision, a high id the update revision",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Partition = 2
				return without(p, "0", "3")
			},
			creates: []string{"0", "3"}, inPlace: []string{"2"},
			created: map[string]string{"0": "nginx:1 app-old", "3": "nginx:2 app-new"}},
		{name: "partition 2 with per-instance templates", onOther: []string{"1", "3"},
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Partition = 2
				return without(p, "1")
			},
			creates: []string{"1"}, inPlace: []string{"2", "3"}, created: map[string]string{"1": "busybox:1 app-old"}},
		{name: "partition above replicas: nothing rolls, scale-up uses the spec above it",
			mutate: func(a *tkestackv1.TApp, _ *Revisions, p []*corev1.Pod) []*corev1.Pod {
				a.Spec.UpdateStrategy.Partition, a.Spec.Replicas = 5, 6
				return p
			},
			creates: []string{"4", "5"}, created: map[string]string{"4": "nginx:1 app-old", "5": "nginx:2 app-new"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp, revs, pods := rollout(t, 4, tc.onOther...)
			if tc.mutate != nil {
				pods = tc.mutate(tapp, &revs, pods)
			}
			plan := ComputePlanWithRevisions(tapp, revs, pods, nil, testNow)
			expectPlan(t, plan, tc.creates, tc.deletes, nil, tc.inPlace, nil)
			if len(plan.Errors) != 0 || len(plan.RevisionLabels) != 0 {
				t.Errorf("errors %v, revision labels %v", plan.Errors, plan.RevisionLabels)
			}
			for _, u := range plan.InPlaceUpdates {
				if u.Labels[tkestack.ControllerRevisionHashLabel] != "app-new" {
					t.Errorf("in-place update of %s sets revision %q, want app-new", u.ID, u.Labels[tkestack.ControllerRevisionHashLabel])
				}
			}
			for id, want := range tc.created {
				pod, err := plan.NewPod(id)
				if err != nil {
					t.Fatalf("NewPod(%s): %v", id, err)
				}
				if got := pod.Spec.Containers[0].Image + " " + pod.Labels[tkestack.ControllerRevisionHashLabel]; got != want {
					t.Errorf("pod %s: %q, want %q", id, got, want)
				}
			}
		})
	}
}

// TestPausedRollStopsAndResumes walks a roll with maxUnavailable 1 through the tiny cluster: pausing after
// the first instance keeps the others on the old image; resuming finishes the roll.
func TestPausedRollStopsAndResumes(t *testing.T) {
	tapp, revs, pods := rollout(t, 3)
	one := intstr.FromInt32(1)
	tapp.Spec.UpdateStrategy.MaxUnavailable = &one
	plan := ComputePlanWithRevisions(tapp, revs, pods, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, []string{"0"}, nil)
	tapp.Spec.UpdateStrategy.Paused = true
	pods[0].Spec.Containers[0].Image = "nginx:2"
	pods[0].Labels[tkestack.TemplateHashLabel] = plan.InPlaceUpdates[0].Revision
	pods[0].Labels[tkestack.ControllerRevisionHashLabel] = "app-new"
	plan = ComputePlanWithRevisions(tapp, revs, pods, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, nil, nil)
	if plan.Status.UpdatedReplicas != 1 || RolloutComplete(tapp, plan.Status) {
		t.Fatalf("paused mid-way: updated %d, complete %v", plan.Status.UpdatedReplicas, RolloutComplete(tapp, plan.Status))
	}
	tapp.Spec.UpdateStrategy.Paused = false
	plan = ComputePlanWithRevisions(tapp, revs, pods, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, []string{"1"}, nil)
}

func TestRevisionLabels(t *testing.T) {
	tapp, revs, pods := rollout(t, 3)
	// Pod 0 already runs the new template but carries the old revision; pod 1 (held by the partition)
	// runs the old template with a stale revision label; pod 2 has the right label.
	newPod := mustPod(t, tapp, "0")
	newPod.Labels[tkestack.ControllerRevisionHashLabel] = "app-old"
	pods[0] = newPod
	pods[1].Labels[tkestack.ControllerRevisionHashLabel] = "app-older"
	tapp.Spec.UpdateStrategy.Partition = 2
	plan := ComputePlanWithRevisions(tapp, revs, pods, nil, testNow)
	var got []string
	for _, u := range plan.RevisionLabels {
		if len(u.Images) != 0 || len(u.Labels) != 1 {
			t.Errorf("revision relabel of %s is not label-only: %+v", u.ID, u.Update)
		}
		got = append(got, u.ID+"="+u.Labels[tkestack.ControllerRevisionHashLabel])
	}
	if want := []string{"0=app-new", "1=app-old"}; !reflect.DeepEqual(got, want) {
		t.Errorf("revision labels = %v, want %v", got, want)
	}
	expectPlan(t, plan, nil, nil, nil, []string{"2"}, nil)

	// Without revisions (ComputePlan) no revision label is written or checked.
	if plan := ComputePlan(tapp, pods, nil, testNow); len(plan.RevisionLabels) != 0 {
		t.Errorf("ComputePlan relabels revisions: %v", plan.RevisionLabels)
	}
}

func TestRevisionNameAndData(t *testing.T) {
	a := newTApp(1)
	b := a.DeepCopy()
	b.Spec.Replicas, b.Spec.UpdateStrategy.Paused = 5, true
	if RevisionName(a) != RevisionName(b) {
		t.Errorf("revision depends on fields other than the templates")
	}
	b.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"x": podTemplate("nginx:1", corev1.RestartPolicyAlways)}
	if RevisionName(a) == RevisionName(b) {
		t.Errorf("templatePool is not part of the revision")
	}
	c := a.DeepCopy()
	count := int32(1)
	c.Status.CollisionCount = &count
	if RevisionName(a) == RevisionName(c) {
		t.Errorf("collisionCount does not change the name")
	}
	if name := RevisionName(a); !strings.HasPrefix(name, "app-") || len(name) != len("app-")+10 {
		t.Errorf("name %q", name)
	}
	long := a.DeepCopy()
	long.Name = strings.Repeat("x", 80)
	if n := RevisionName(long); len(n) > 63 {
		t.Errorf("long name %q is not a label value", n)
	}
	data, err := RevisionData(b)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRevision(data)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := b.DeepCopy()
	rebuilt.Spec.Template, rebuilt.Spec.TemplatePool = back.Template, back.TemplatePool
	if RevisionName(rebuilt) != RevisionName(b) || tapppod.TemplateHash(&back.Template) != tapppod.TemplateHash(&b.Spec.Template) {
		t.Errorf("decoded templates hash differently")
	}
}

// TestMinReadySeconds: a pod counts as available (status and update budgets) only once it has been ready
// for spec.minReadySeconds; the plan asks to be requeued when the next one becomes available.
func TestMinReadySeconds(t *testing.T) {
	one := intstr.FromInt32(1)
	readyFor := func(pod *corev1.Pod, d time.Duration) {
		for i := range pod.Status.Conditions {
			if pod.Status.Conditions[i].Type == corev1.PodReady {
				pod.Status.Conditions[i].LastTransitionTime = metav1.NewTime(testNow.Add(-d))
			}
		}
	}
	cases := []struct {
		name         string
		minReady     int32
		readyFor     []time.Duration // per pod 0..3
		inPlace      []string
		available    int32
		requeueAfter time.Duration
	}{
		{name: "minReadySeconds 0: every ready pod is available", readyFor: []time.Duration{0, 0, 0, 0},
			inPlace: []string{"0"}, available: 4},
		{name: "all ready long enough", minReady: 10, readyFor: []time.Duration{time.Minute, time.Minute, time.Minute, time.Minute},
			inPlace: []string{"0"}, available: 4},
		{name: "a pod ready for 4s of 10 uses the budget: instance 0 waits, 3 is updated outside it", minReady: 10,
			readyFor: []time.Duration{time.Minute, time.Minute, time.Minute, 4 * time.Second},
			inPlace:  []string{"3"}, available: 3, requeueAfter: 6 * time.Second},
		{name: "the pod not yet available is itself updated outside the budget", minReady: 10,
			readyFor: []time.Duration{4 * time.Second, time.Minute, time.Minute, time.Minute},
			inPlace:  []string{"0"}, available: 3, requeueAfter: 6 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp, revs, pods := rollout(t, 4)
			tapp.Spec.UpdateStrategy.MaxUnavailable = &one
			tapp.Spec.MinReadySeconds = tc.minReady
			for i, d := range tc.readyFor {
				readyFor(pods[i], d)
			}
			plan := ComputePlanWithRevisions(tapp, revs, pods, nil, testNow)
			expectPlan(t, plan, nil, nil, nil, tc.inPlace, nil)
			if plan.Status.AvailableReplicas != tc.available || plan.RequeueAfter != tc.requeueAfter {
				t.Errorf("available %d requeue %s, want %d %s", plan.Status.AvailableReplicas, plan.RequeueAfter, tc.available, tc.requeueAfter)
			}
		})
	}
}
