package policy

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestShouldMigrate(t *testing.T) {
	cases := []struct {
		name         string
		policy       corev1.RestartPolicy
		phase        corev1.PodPhase
		rejected     bool // bound to a node, no container statuses
		neverMigrate bool
		want         bool
	}{
		{"rejected by kubelet, Never", corev1.RestartPolicyNever, corev1.PodSucceeded, true, false, true},
		{"rejected by kubelet, neverMigrate", corev1.RestartPolicyNever, corev1.PodSucceeded, true, true, false},
		{"Always failed", corev1.RestartPolicyAlways, corev1.PodFailed, false, false, true},
		{"Always succeeded", corev1.RestartPolicyAlways, corev1.PodSucceeded, false, false, true},
		{"OnFailure failed", corev1.RestartPolicyOnFailure, corev1.PodFailed, false, false, true},
		{"OnFailure succeeded", corev1.RestartPolicyOnFailure, corev1.PodSucceeded, false, false, false},
		{"Never failed", corev1.RestartPolicyNever, corev1.PodFailed, false, false, false},
		{"empty policy is Always", "", corev1.PodFailed, false, false, true},
		{"neverMigrate Always", corev1.RestartPolicyAlways, corev1.PodFailed, false, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(1)
			tapp.Spec.NeverMigrate = tc.neverMigrate
			tapp.Spec.Template.Spec.RestartPolicy = tc.policy
			pod := mustPod(t, tapp, "0")
			finish(pod, tc.phase)
			if tc.rejected {
				pod.Status.ContainerStatuses = nil
			}
			if got := ShouldMigrate(tapp, pod); got != tc.want {
				t.Fatalf("ShouldMigrate = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestInstanceStatus is the original's table (replicas 17, template OnFailure). Rows 9, 10 and 16 are
// adjusted on purpose: the previous status.statuses is not sticky; a wanted id without a pod is NotCreated
// (and is created by the plan), which is how a finished instance is restarted.
func TestInstanceStatus(t *testing.T) {
	tapp := newTApp(17)
	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"7": "Killed", "8": "Killed", "16": "Running"}
	tapp.Status.Statuses = map[string]tkestackv1.InstanceStatus{
		"9": "Failed", "10": "Succ", "11": "Running", "12": "Succ", "15": "Killed", "16": "Killed",
	}
	var pods []*corev1.Pod
	add := func(id string, f func(*corev1.Pod)) {
		p := mustPod(t, tapp, id)
		f(p)
		pods = append(pods, p)
	}
	add("1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending; dropCond(p, corev1.PodReady) })
	add("2", func(p *corev1.Pod) { dropCond(p, corev1.PodReady) })
	add("3", func(p *corev1.Pod) { finish(p, corev1.PodSucceeded) })
	add("4", func(p *corev1.Pod) { finish(p, corev1.PodFailed) })
	add("5", func(p *corev1.Pod) { p.Status.Phase = corev1.PodUnknown })
	add("6", func(p *corev1.Pod) { terminate(p, testNow) })
	add("7", func(p *corev1.Pod) {})
	add("12", func(p *corev1.Pod) { finish(p, corev1.PodSucceeded); terminate(p, testNow) })
	add("13", func(p *corev1.Pod) {})
	add("14", func(p *corev1.Pod) { setCond(p, corev1.PodReady, corev1.ConditionFalse) })
	add("15", func(p *corev1.Pod) {})

	want := map[string]tkestackv1.InstanceStatus{
		"0":  StatusNotCreated,
		"1":  StatusPending,
		"2":  StatusRunning,
		"3":  StatusSucc,
		"4":  StatusPodFailed,
		"5":  StatusUnknown,
		"6":  StatusKilling,
		"7":  StatusRunning,
		"8":  StatusKilled,
		"9":  StatusNotCreated, // original: Failed (sticky)
		"10": StatusNotCreated, // original: Succ (sticky)
		"11": StatusNotCreated,
		"12": StatusSucc,
		"13": StatusRunning,
		"14": StatusPending,
		"15": StatusRunning,
		"16": StatusNotCreated, // original: Killed until the new pod is seen
	}
	got := InstanceStatuses(tapp, pods)
	if !reflect.DeepEqual(got, want) {
		for id := range want {
			if got[id] != want[id] {
				t.Errorf("instance %s = %q, want %q", id, got[id], want[id])
			}
		}
		t.Fatalf("statuses = %v", got)
	}
}

func TestInstanceStatusExtra(t *testing.T) {
	tapp := newTApp(2)
	updating := mustPod(t, tapp, "0")
	setCond(updating, InPlaceUpdateGate, "False")
	setCond(updating, corev1.PodReady, "False")
	excess := mustPod(t, tapp, "5")
	terminate(excess, testNow)
	foreign := mustPod(t, tapp, "1")
	foreign.OwnerReferences[0].UID = "other"

	got := InstanceStatuses(tapp, []*corev1.Pod{updating, excess, foreign})
	want := map[string]tkestackv1.InstanceStatus{"0": StatusUpdating, "1": StatusNotCreated, "5": StatusKilling}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("statuses = %v, want %v", got, want)
	}
}

func TestAppStatus(t *testing.T) {
	type S = tkestackv1.InstanceStatus
	cases := []struct {
		in   []S
		want tkestackv1.AppStatus
	}{
		{nil, AppPending},
		{[]S{StatusKilled}, AppKilled},
		{[]S{StatusSucc}, AppSucc},
		{[]S{StatusFailed}, AppFailed},
		{[]S{StatusKilled, StatusFailed}, AppFailed},
		{[]S{StatusSucc, StatusFailed}, AppFailed},
		{[]S{StatusKilled, StatusSucc}, AppSucc},
		{[]S{StatusKilled, StatusSucc, StatusFailed}, AppFailed},
	}
	alive := []S{StatusNotCreated, StatusPending, StatusRunning, StatusKilling, StatusUnknown, StatusPodFailed, StatusPodSucc, StatusUpdating}
	others := []S{StatusKilled, StatusFailed, StatusSucc, StatusRunning}
	for _, a := range alive {
		cases = append(cases, struct {
			in   []S
			want tkestackv1.AppStatus
		}{[]S{a}, AppRunning})
		for _, o := range others {
			cases = append(cases, struct {
				in   []S
				want tkestackv1.AppStatus
			}{[]S{a, o}, AppRunning})
		}
	}
	for _, tc := range cases {
		m := map[string]tkestackv1.InstanceStatus{}
		for i, s := range tc.in {
			m[strconv.Itoa(i)] = s
		}
		if got := AppStatus(m); got != tc.want {
			t.Errorf("AppStatus(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStatusCounts(t *testing.T) {
	tapp := newTApp(6)
	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"4": "Killed"}
	p0 := mustPod(t, tapp, "0") // ready, old template after the change below
	p1 := mustPod(t, tapp, "1") // not ready, old
	setCond(p1, corev1.PodReady, "False")
	tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	p2 := mustPod(t, tapp, "2") // ready, updated
	p3 := mustPod(t, tapp, "3") // updated, not ready
	setCond(p3, corev1.PodReady, "False")
	p4 := mustPod(t, tapp, "4") // killed but still running and ready: ready, not "updated"
	p7 := mustPod(t, tapp, "7") // excess, terminating, ready
	terminate(p7, testNow.Add(time.Minute))
	// id 5: no pod → NotCreated.

	st := ComputeStatus(tapp, []*corev1.Pod{p0, p1, p2, p3, p4, p7})
	want := Status{
		Instances: map[string]tkestackv1.InstanceStatus{
			"0": StatusRunning, "1": StatusPending, "2": StatusRunning, "3": StatusPending,
			"4": StatusRunning, "5": StatusNotCreated, "7": StatusKilling,
		},
		App:                  AppRunning,
		Replicas:             6,
		ReadyReplicas:        3,
		UpdatedReplicas:      2,
		UpdatedReadyReplicas: 1,
		AvailableReplicas:    2,
	}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("status =\n%+v\nwant\n%+v", st, want)
	}
}
