package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// rollingTApp builds the original's rolling-update fixture from a notation string such as "RU,R,R,K":
// R ready, N not ready, U new image on a non-rolling template, RU new image on the rolling template
// ("rollupdate"), RUN the same but not ready, D terminating, K spec-Killed, C completed (Failed,
// restartPolicy OnFailure). Every id is mapped explicitly; the force template uses forceUpdate 100%.
func rollingTApp(t *testing.T, notation string, maxUnavailable intstr.IntOrString) (*tkestackv1.TApp, []*corev1.Pod) {
	t.Helper()
	states := strings.Split(notation, ",")
	tapp := newTApp(int32(len(states)))
	tapp.Spec.UpdateStrategy.Template = "rollupdate"
	tapp.Spec.UpdateStrategy.MaxUnavailable = &maxUnavailable
	all := intstr.FromString("100%") // the API's default
	tapp.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable = &all
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{
		"stable":      podTemplate("nginx:1", corev1.RestartPolicyOnFailure),
		"rollupdate":  podTemplate("nginx:2", corev1.RestartPolicyOnFailure),
		"forceupdate": podTemplate("nginx:2", corev1.RestartPolicyOnFailure),
	}
	tapp.Spec.Templates = map[string]string{}
	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{}
	var pods []*corev1.Pod
	for i, s := range states {
		id := strconv.Itoa(i)
		tapp.Spec.Templates[id] = "stable"
		pod := mustPod(t, tapp, id)
		pods = append(pods, pod)
		switch s {
		case "R":
		case "N":
			setCond(pod, corev1.PodReady, "False")
		case "U":
			tapp.Spec.Templates[id] = "forceupdate"
		case "RU":
			tapp.Spec.Templates[id] = "rollupdate"
		case "RUN":
			tapp.Spec.Templates[id] = "rollupdate"
			setCond(pod, corev1.PodReady, "False")
		case "D":
			terminate(pod, testNow.Add(30*time.Second))
		case "K":
			tapp.Spec.Statuses[id] = "Killed"
		case "C":
			finish(pod, corev1.PodFailed)
		default:
			t.Fatalf("bad notation %q", s)
		}
	}
	return tapp, pods
}

func TestRollingUpdate(t *testing.T) {
	shared := []struct {
		notation string
		want     []string
	}{
		{"R,R,R", nil},
		{"R,R,N", nil},
		{"R,R,U", []string{"2"}},
		{"R,R,D", nil},
		{"R,R,K", nil},
		{"R,R,C", nil},
		{"RU,R,R,R", []string{"0"}},
		{"RU,R,R,N", nil},
		{"RU,R,R,U", []string{"3"}},
		{"RU,R,R,D", nil},
		{"RU,R,R,K", []string{"0"}},
		{"RU,R,R,C", nil},
		{"RU,RUN,R,C", []string{"1"}},
		{"RUN,RUN,R,R", []string{"0", "1"}},
	}
	type row = struct {
		notation string
		want     []string
	}
	tables := []struct {
		max  intstr.IntOrString
		rows []row
	}{
		{intstr.FromInt32(1), append(append([]row{}, shared...),
			row{"RU,RU,R,R,R", []string{"0"}},
			row{"RU,RU,R,R,N", nil},
			row{"RU,RU,R,R,U", []string{"4"}},
			row{"RU,RU,R,R,D", nil},
			row{"RU,RU,R,R,K", []string{"0"}},
			row{"RU,RU,R,R,C", nil},
			row{"RU,RU,R,R,U,U", []string{"4", "5"}},
		)},
		{intstr.FromString("25%"), append(append([]row{}, shared...),
			row{"RU,RU,R,R,R", []string{"0", "1"}},
			row{"RU,RU,R,R,N", []string{"0"}},
			row{"RU,RU,R,R,U", []string{"0", "4"}},
			row{"RU,RU,R,R,D", []string{"0"}},
			row{"RU,RU,R,R,K", []string{"0"}},
			row{"RU,RU,R,R,C", []string{"0"}},
			row{"RU,RU,R,R,U,U", []string{"4", "5"}},
		)},
	}
	for _, table := range tables {
		for _, tc := range table.rows {
			t.Run(table.max.String()+"/"+tc.notation, func(t *testing.T) {
				tapp, pods := rollingTApp(t, tc.notation, table.max)
				plan := ComputePlan(tapp, pods, nil, testNow)
				_, _, _, got, recreates := ids(plan)
				if !reflect.DeepEqual(got, tc.want) || len(recreates) != 0 {
					t.Fatalf("in-place updates = %v (recreates %v), want %v", got, recreates, tc.want)
				}
				for _, u := range plan.InPlaceUpdates {
					want := tapp.Spec.Templates[u.ID]
					if u.Template != want || !reflect.DeepEqual(u.Images, map[string]string{"main": "nginx:2"}) {
						t.Fatalf("update %s: template %q images %v, want %q nginx:2", u.ID, u.Template, u.Images, want)
					}
				}
			})
		}
	}
}

// TestRollingUpdateSideActions checks the non-update actions of the fixture rows: K is deleted, C migrates,
// D is waited for, and held updates are reported.
func TestRollingUpdateSideActions(t *testing.T) {
	cases := []struct {
		notation string
		deletes  []Delete
		held     []string
	}{
		{"RU,R,R,K", []Delete{{ID: "3", PodName: "app-3", UID: "uid-3", Reason: ReasonKilled}}, nil},
		{"RU,R,R,C", []Delete{{ID: "3", PodName: "app-3", UID: "uid-3", Reason: ReasonMigrate}}, []string{"0"}},
		{"RU,R,R,D", nil, []string{"0"}},
		{"RU,RU,R,R,R", nil, []string{"1"}},
	}
	for _, tc := range cases {
		t.Run(tc.notation, func(t *testing.T) {
			tapp, pods := rollingTApp(t, tc.notation, intstr.FromInt32(1))
			plan := ComputePlan(tapp, pods, nil, testNow)
			if !reflect.DeepEqual(plan.Deletes, tc.deletes) {
				t.Errorf("deletes = %+v, want %+v", plan.Deletes, tc.deletes)
			}
			if !reflect.DeepEqual(heldUpdates(tapp, pods, plan), tc.held) {
				t.Errorf("held = %v, want %v", heldUpdates(tapp, pods, plan), tc.held)
			}
			if len(plan.Creates)+len(plan.ForceDeletes)+len(plan.Recreates) != 0 {
				t.Errorf("unexpected actions %+v", plan)
			}
		})
	}
}

// forceTApp: n ready pods, all moved to a pool template with a new image; the rolling template is the
// default one, so they all take the force path.
func forceTApp(t *testing.T, n int, ready bool, max *intstr.IntOrString) (*tkestackv1.TApp, []*corev1.Pod) {
	tapp := newTApp(int32(n))
	tapp.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable = max
	var pods []*corev1.Pod
	for i := 0; i < n; i++ {
		p := mustPod(t, tapp, strconv.Itoa(i))
		if !ready {
			setCond(p, corev1.PodReady, "False")
		}
		pods = append(pods, p)
	}
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"new": podTemplate("nginx:2", corev1.RestartPolicyOnFailure)}
	tapp.Spec.Templates = map[string]string{}
	for i := 0; i < n; i++ {
		tapp.Spec.Templates[strconv.Itoa(i)] = "new"
	}
	return tapp, pods
}

func firstIDs(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

func TestForceUpdateStrategy(t *testing.T) {
	cases := []struct {
		max  intstr.IntOrString
		want int
	}{
		{intstr.FromInt32(1), 1},
		{intstr.FromInt32(5), 5},
		{intstr.FromInt32(20), 10},
		{intstr.FromString("10%"), 1},
		{intstr.FromString("50%"), 5},
		{intstr.FromString("100%"), 10},
		{intstr.FromString("1%"), 1}, // rounds up
	}
	for _, tc := range cases {
		t.Run(tc.max.String(), func(t *testing.T) {
			max := tc.max
			tapp, pods := forceTApp(t, 10, true, &max)
			plan := ComputePlan(tapp, pods, nil, testNow)
			// Deterministic: the lowest ids go first.
			expectPlan(t, plan, nil, nil, nil, firstIDs(tc.want), nil)
			if len(heldUpdates(tapp, pods, plan)) != 10-tc.want {
				t.Errorf("held = %v", heldUpdates(tapp, pods, plan))
			}
		})
	}
}

// The original could not run force updates when no pod was available (a broken image could not be fixed
// through a pinned template). Unavailable pods do not consume the budget.
func TestForceUpdateProgressesWithZeroAvailable(t *testing.T) {
	one := intstr.FromInt32(1)
	tapp, pods := forceTApp(t, 4, false, &one)
	plan := ComputePlan(tapp, pods, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, []string{"0", "1", "2", "3"}, nil)

	// Mixed: 0 and 2 unavailable, 1 and 3 available, budget 1. The budget caps the total number of
	// unavailable instances (two already are), so 0 and 2 are updated at once and 1 and 3 are held.
	tapp, pods = forceTApp(t, 4, true, &one)
	setCond(pods[0], corev1.PodReady, "False")
	setCond(pods[2], corev1.PodReady, "False")
	// Make 2 unavailable a different way: mid in-place update.
	setCond(pods[2], corev1.PodReady, "True")
	setCond(pods[2], InPlaceUpdateGate, "False")
	plan = ComputePlan(tapp, pods, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, []string{"0", "2"}, nil)
	if !reflect.DeepEqual(heldUpdates(tapp, pods, plan), []string{"1", "3"}) {
		t.Errorf("held = %v, want [1 3]", heldUpdates(tapp, pods, plan))
	}

	// Budget 3 with one pod unavailable: 0 goes outside the budget, then 1 and 2 use the remaining two.
	three := intstr.FromInt32(3)
	tapp, pods = forceTApp(t, 5, true, &three)
	setCond(pods[0], corev1.PodReady, "False")
	plan = ComputePlan(tapp, pods, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, []string{"0", "1", "2"}, nil)
	if !reflect.DeepEqual(heldUpdates(tapp, pods, plan), []string{"3", "4"}) {
		t.Errorf("held = %v, want [3 4]", heldUpdates(tapp, pods, plan))
	}
}

// TestGetDesiredInstance (adjusted): previous status.statuses and the app status do not change which ids
// are wanted; only spec.statuses Killed removes an id.
func TestDesiredInstances(t *testing.T) {
	prev := map[string]tkestackv1.InstanceStatus{
		"1": "NotCreated", "2": "Pending", "3": "Running", "4": "Updating", "5": "PodFailed", "6": "PodSucc",
		"7": "Killing", "8": "Killed", "9": "Failed", "10": "Succ", "11": "Unknown",
	}
	for _, app := range []tkestackv1.AppStatus{AppRunning, AppSucc, AppFailed} {
		tapp := newTApp(12)
		tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Killed"}
		tapp.Status.Statuses = prev
		tapp.Status.AppStatus = app
		plan := ComputePlan(tapp, nil, nil, testNow)
		expectPlan(t, plan, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}, nil, nil, nil, nil)
		if plan.Status.Instances["0"] != StatusKilled {
			t.Errorf("app %s: instance 0 = %q", app, plan.Status.Instances["0"])
		}
	}
}

func TestDeployTApp(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(2)
	if got := countOf(c.sync(tapp)); got != (counts{creates: 2}) {
		t.Fatalf("first sync %+v", got)
	}
	plan := c.sync(tapp)
	if got := countOf(plan); got != (counts{}) {
		t.Fatalf("second sync %+v", got)
	}
	if plan.Status.App != AppRunning || plan.Status.ReadyReplicas != 2 || plan.Status.UpdatedReadyReplicas != 2 {
		t.Fatalf("status %+v", plan.Status)
	}
}

func TestKillAndRestartInstance(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(3)
	c.sync(tapp)
	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Killed"}
	plan := c.sync(tapp)
	if !reflect.DeepEqual(plan.Deletes, []Delete{{ID: "0", PodName: "app-0", UID: "uid-0", Reason: ReasonKilled}}) {
		t.Fatalf("kill: deletes %+v", plan.Deletes)
	}
	plan = c.sync(tapp)
	if got := countOf(plan); got != (counts{}) || plan.Status.Instances["0"] != StatusKilled || plan.Status.Replicas != 3 {
		t.Fatalf("killed stays down: %+v %+v", got, plan.Status)
	}
	// A killed pod that is still terminating shows Killing and is not deleted again.
	c.add(mustPod(t, newTApp(3), "0"))
	terminate(c.pods["app-0"], testNow.Add(time.Minute))
	plan = c.sync(tapp)
	if got := countOf(plan); got != (counts{}) || plan.Status.Instances["0"] != StatusKilling {
		t.Fatalf("killing: %+v %v", got, plan.Status.Instances)
	}
	delete(c.pods, "app-0")
	// Restart: remove the entry (also works when status still says Killed).
	tapp.Spec.Statuses = nil
	tapp.Status.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Killed"}
	plan = c.sync(tapp)
	expectPlan(t, plan, []string{"0"}, nil, nil, nil, nil)
}

// TestRestartFinishedInstance replaces the original's "edit status.statuses" restart: a finished pod that
// does not migrate is kept; deleting it (kubectl delete pod app-1) brings the instance back.
func TestRestartFinishedInstance(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(2)
	tapp.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	c.sync(tapp)
	finish(c.pods["app-1"], corev1.PodFailed)
	for i := 0; i < 2; i++ {
		plan := c.sync(tapp)
		if got := countOf(plan); got != (counts{}) || plan.Status.Instances["1"] != StatusFailed {
			t.Fatalf("finished pod must be kept: %+v %v", got, plan.Status.Instances)
		}
	}
	delete(c.pods, "app-1")
	tapp.Status.Statuses = map[string]tkestackv1.InstanceStatus{"1": "Failed"}
	plan := c.sync(tapp)
	expectPlan(t, plan, []string{"1"}, nil, nil, nil, nil)

	// All instances finished: the app is Succ and nothing is deleted.
	finish(c.pods["app-0"], corev1.PodSucceeded)
	finish(c.pods["app-1"], corev1.PodSucceeded)
	plan = c.sync(tapp)
	if got := countOf(plan); got != (counts{}) || plan.Status.App != AppSucc {
		t.Fatalf("app finished: %+v %s", got, plan.Status.App)
	}
}

func TestUpdateInstance(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(2)
	c.sync(tapp)
	uid0, uid1 := c.pods["app-0"].UID, c.pods["app-1"].UID

	// Pool template with a changed image, id 0 mapped to it → in place.
	img := podTemplate("nginx:2", corev1.RestartPolicyOnFailure)
	// Pool template with a changed restartPolicy, id 1 mapped to it → recreate.
	policy := podTemplate("nginx:1", corev1.RestartPolicyAlways)
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"image": img, "policy": policy}
	tapp.Spec.Templates = map[string]string{"0": "image", "1": "policy"}
	plan := c.sync(tapp)
	expectPlan(t, plan, nil, nil, nil, []string{"0"}, []string{"1"})
	if !reflect.DeepEqual(plan.Recreates[0], Recreate{ID: "1", PodName: "app-1", UID: uid1, Template: "policy"}) {
		t.Errorf("recreate = %+v", plan.Recreates[0])
	}
	if c.pods["app-0"].UID != uid0 || c.pods["app-0"].Spec.Containers[0].Image != "nginx:2" {
		t.Errorf("pod 0 not updated in place")
	}
	plan = c.sync(tapp)
	expectPlan(t, plan, []string{"1"}, nil, nil, nil, nil)
	plan = c.sync(tapp)
	if got := countOf(plan); got != (counts{}) || plan.Status.UpdatedReplicas != 2 {
		t.Fatalf("converged: %+v %+v", got, plan.Status)
	}
	if c.pods["app-1"].Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("pod 1 not recreated from the new template")
	}
}

func TestInstanceFinished(t *testing.T) {
	cases := []struct {
		policy corev1.RestartPolicy
		phase  corev1.PodPhase
		first  counts
		second counts
		status tkestackv1.InstanceStatus
	}{
		{corev1.RestartPolicyAlways, corev1.PodFailed, counts{deletes: 1}, counts{creates: 1}, StatusPodFailed},
		{corev1.RestartPolicyOnFailure, corev1.PodFailed, counts{deletes: 1}, counts{creates: 1}, StatusPodFailed},
		{corev1.RestartPolicyNever, corev1.PodFailed, counts{}, counts{}, StatusFailed},
		{corev1.RestartPolicyOnFailure, corev1.PodSucceeded, counts{}, counts{}, StatusSucc},
		{corev1.RestartPolicyAlways, corev1.PodSucceeded, counts{deletes: 1}, counts{creates: 1}, StatusPodSucc},
	}
	for _, tc := range cases {
		t.Run(string(tc.policy)+"/"+string(tc.phase), func(t *testing.T) {
			c := newCluster(t)
			tapp := newTApp(1)
			tapp.Spec.Template.Spec.RestartPolicy = tc.policy
			c.sync(tapp)
			finish(c.pods["app-0"], tc.phase)
			first := c.sync(tapp)
			if got := countOf(first); got != tc.first || first.Status.Instances["0"] != tc.status {
				t.Fatalf("first sync %+v status %s", got, first.Status.Instances["0"])
			}
			if tc.first.deletes == 1 && first.Deletes[0].Reason != ReasonMigrate {
				t.Fatalf("reason %s", first.Deletes[0].Reason)
			}
			if got := countOf(c.sync(tapp)); got != tc.second {
				t.Fatalf("second sync %+v", got)
			}
		})
	}
	// neverMigrate keeps even a restartPolicy Always pod.
	c := newCluster(t)
	tapp := newTApp(1)
	tapp.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	tapp.Spec.NeverMigrate = true
	c.sync(tapp)
	finish(c.pods["app-0"], corev1.PodFailed)
	if got := countOf(c.sync(tapp)); got != (counts{}) {
		t.Fatalf("neverMigrate: %+v", got)
	}
}

func TestInstanceDeleted(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(3)
	c.sync(tapp)
	delete(c.pods, "app-1")
	expectPlan(t, c.sync(tapp), []string{"1"}, nil, nil, nil, nil)
}

func TestRampUp(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(2)
	c.sync(tapp)
	tapp.Spec.Replicas = 4
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"new": podTemplate("nginx:2", corev1.RestartPolicyOnFailure)}
	tapp.Spec.Templates = map[string]string{"2": "new", "3": "new"}
	expectPlan(t, c.sync(tapp), []string{"2", "3"}, nil, nil, nil, nil)
	for _, id := range []string{"0", "1"} {
		if c.pods["app-"+id].Spec.Containers[0].Image != "nginx:1" {
			t.Errorf("pod %s changed", id)
		}
	}
	for _, id := range []string{"2", "3"} {
		if c.pods["app-"+id].Spec.Containers[0].Image != "nginx:2" {
			t.Errorf("pod %s not created from its template", id)
		}
	}
}

func TestShrinkDown(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(4)
	c.sync(tapp)
	tapp.Spec.Replicas = 1
	terminate(c.pods["app-2"], testNow.Add(time.Minute)) // already going away: waited for, not deleted again
	plan := c.sync(tapp)
	expectPlan(t, plan, nil, []string{"3", "1"}, nil, nil, nil)
	for _, d := range plan.Deletes {
		if d.Reason != ReasonScaleDown {
			t.Errorf("reason %s", d.Reason)
		}
	}
	if plan.Status.Instances["2"] != StatusKilling || plan.Status.Instances["3"] != StatusRunning {
		t.Errorf("statuses %v", plan.Status.Instances)
	}
	delete(c.pods, "app-2")
	plan = c.sync(tapp)
	if got := countOf(plan); got != (counts{}) || len(plan.Status.Instances) != 1 || plan.Status.Replicas != 1 {
		t.Fatalf("after shrink: %+v %+v", got, plan.Status)
	}
}

func TestShrinkDownDeletesEveryInstanceAbove(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(4)
	c.sync(tapp)
	tapp.Spec.Replicas = 1
	plan := c.sync(tapp)
	// Highest id first, as a StatefulSet scales down.
	expectPlan(t, plan, nil, []string{"3", "2", "1"}, nil, nil, nil)
	for _, d := range plan.Deletes {
		if d.Reason != ReasonScaleDown {
			t.Errorf("pod %s deleted for %s, want %s", d.PodName, d.Reason, ReasonScaleDown)
		}
	}
	if plan.Status.Instances["0"] != StatusRunning {
		t.Errorf("instance 0 = %s, want Running", plan.Status.Instances["0"])
	}
}

func TestKillApp(t *testing.T) {
	c := newCluster(t)
	tapp := newTApp(2)
	c.sync(tapp)
	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Killed", "1": "Killed"}
	expectPlan(t, c.sync(tapp), nil, []string{"1", "0"}, nil, nil, nil)
	plan := c.sync(tapp)
	if plan.Status.App != AppKilled || plan.Status.Replicas != 2 {
		t.Fatalf("status %+v", plan.Status)
	}
}

func TestForceDeletePod(t *testing.T) {
	past, future := testNow.Add(-time.Second), testNow.Add(20*time.Second)
	cases := []struct {
		name      string
		force     bool
		node      NodeState
		nodeName  string
		deadline  time.Time
		nilLookup bool
		want      []string
		requeue   time.Duration
	}{
		{"NotReady node", true, NodeNotReady, "n1", past, false, []string{"1"}, 0},
		{"Unknown node", true, NodeUnknown, "n1", past, false, []string{"1"}, 0},
		{"missing node", true, NodeMissing, "n1", past, false, []string{"1"}, 0},
		{"Ready node waits", true, NodeReady, "n1", past, false, nil, 0},
		{"node without Ready condition waits", true, NodeNoCondition, "n1", past, false, nil, 0},
		{"forceDeletePod off", false, NodeNotReady, "n1", past, false, nil, 0},
		{"unscheduled pod", true, NodeNotReady, "", past, false, nil, 0},
		{"grace period not over", true, NodeNotReady, "n1", future, false, nil, 20 * time.Second},
		{"no node lookup", true, NodeNotReady, "n1", past, true, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp := newTApp(2)
			tapp.Spec.ForceDeletePod = tc.force
			pods := []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1")}
			pods[1].Spec.NodeName = tc.nodeName
			terminate(pods[1], tc.deadline)
			var lookup NodeLookup = func(name string) NodeState {
				if name != "n1" {
					return NodeReady
				}
				return tc.node
			}
			if tc.nilLookup {
				lookup = nil
			}
			plan := ComputePlan(tapp, pods, lookup, testNow)
			expectPlan(t, plan, nil, nil, tc.want, nil, nil)
			if len(tc.want) > 0 && plan.ForceDeletes[0].Reason != ReasonNodeLost {
				t.Errorf("reason %s", plan.ForceDeletes[0].Reason)
			}
			if plan.RequeueAfter != tc.requeue {
				t.Errorf("requeueAfter = %v, want %v", plan.RequeueAfter, tc.requeue)
			}
		})
	}

	// Force deletion applies to killed and scaled-away pods too; then the id is recreated when wanted.
	tapp := newTApp(2)
	tapp.Spec.ForceDeletePod = true
	tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"0": "Killed"}
	p0, p1, p5 := mustPod(t, tapp, "0"), mustPod(t, tapp, "1"), mustPod(t, tapp, "5")
	for _, p := range []*corev1.Pod{p0, p1, p5} {
		terminate(p, past)
	}
	plan := ComputePlan(tapp, []*corev1.Pod{p0, p1, p5}, func(string) NodeState { return NodeMissing }, testNow)
	expectPlan(t, plan, nil, nil, []string{"5", "1", "0"}, nil, nil)
	// Once they are gone, the wanted id 1 is recreated; killed 0 and excess 5 are not.
	expectPlan(t, ComputePlan(tapp, nil, nil, testNow), []string{"1"}, nil, nil, nil, nil)
}

func TestOwnershipAndConflicts(t *testing.T) {
	tapp := newTApp(3)
	foreign := mustPod(t, tapp, "1")
	foreign.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: boolPtr(true)}}
	// An orphan holding the name of instance 2 that the selector does not match: not adopted.
	orphan := mustPod(t, tapp, "2")
	orphan.OwnerReferences = nil
	orphan.Labels["app"] = "other"
	// A pod of ours whose label was edited to claim id 0: deleted as stray; it does not count as pod 0.
	relabeled := mustPod(t, tapp, "0")
	relabeled.Name = "app-7"
	relabeled.UID = "uid-x"
	// A pod of ours with a non-numeric id.
	bad := mustPod(t, tapp, "0")
	bad.Name = "app-zz"
	bad.UID = "uid-zz"
	bad.Labels[tkestack.InstanceIDLabel] = "zz"
	// Another TApp's pod in the same namespace carrying our label: ignored.
	other := mustPod(t, tapp, "0")
	other.Name = "other-0"
	other.OwnerReferences[0].UID = "other-uid"

	plan := ComputePlan(tapp, []*corev1.Pod{foreign, orphan, relabeled, bad, other}, nil, testNow)
	expectPlan(t, plan, []string{"0"}, []string{"", ""}, nil, nil, nil)
	wantDeletes := []Delete{
		{PodName: "app-7", UID: "uid-x", Reason: ReasonStray},
		{PodName: "app-zz", UID: "uid-zz", Reason: ReasonStray},
	}
	if !reflect.DeepEqual(plan.Deletes, wantDeletes) {
		t.Errorf("deletes = %+v", plan.Deletes)
	}
	wantConflicts := []Conflict{
		{ID: "1", PodName: "app-1", Owner: "ReplicaSet rs (uid rs-uid)"},
		{ID: "2", PodName: "app-2", Owner: "no controller"},
	}
	if !reflect.DeepEqual(plan.Conflicts, wantConflicts) {
		t.Errorf("conflicts = %+v", plan.Conflicts)
	}
	if plan.Status.Instances["1"] != StatusNotCreated || len(plan.Status.Instances) != 3 {
		t.Errorf("statuses %v", plan.Status.Instances)
	}

	// A stray of ours holding the name of a wanted id: wait for it, no create and no conflict.
	stray := mustPod(t, tapp, "1")
	stray.Labels[tkestack.InstanceIDLabel] = "01"
	plan = ComputePlan(tapp, []*corev1.Pod{stray}, nil, testNow)
	expectPlan(t, plan, []string{"0", "2"}, []string{""}, nil, nil, nil)
	if len(plan.Conflicts) != 0 {
		t.Errorf("conflicts %+v", plan.Conflicts)
	}
}

func boolPtr(b bool) *bool { return &b }

func TestInitContainerImageChangeRecreates(t *testing.T) {
	tapp := newTApp(2)
	tapp.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1"}}
	pods := []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1")}
	tapp.Spec.Template.Spec.InitContainers[0].Image = "busybox:2"
	plan := ComputePlan(tapp, pods, nil, testNow)
	// Rolling template, maxUnavailable 1: one at a time, by recreation, never in place.
	expectPlan(t, plan, nil, nil, nil, nil, []string{"0"})
	if !reflect.DeepEqual(heldUpdates(tapp, pods, plan), []string{"1"}) {
		t.Errorf("held %v", heldUpdates(tapp, pods, plan))
	}
}

func TestInPlaceMetadataTarget(t *testing.T) {
	tapp := newTApp(1)
	tapp.Spec.Template.Labels["tier"] = "front"
	tapp.Spec.Template.Annotations = map[string]string{"note": "x", "keep": "1", PortMappingAnnotation: "tmpl"}
	pod := mustPod(t, tapp, "0")
	pod.Labels["external"] = "added-by-someone"
	pod.Annotations["external"] = "y"
	pod.Annotations[PortMappingAnnotation] = "allocated"

	delete(tapp.Spec.Template.Labels, "tier")
	delete(tapp.Spec.Template.Annotations, "note")
	delete(tapp.Spec.Template.Annotations, PortMappingAnnotation)
	tapp.Spec.Template.Labels["version"] = "2"
	plan := ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, []string{"0"}, nil)
	u := plan.InPlaceUpdates[0]
	if u.Template != "default" || len(u.Images) != 0 {
		t.Errorf("template %q images %v", u.Template, u.Images)
	}
	wantLabels := map[string]string{
		"app": "web", "version": "2", tkestack.InstanceIDLabel: "0",
		tkestack.TemplateHashLabel: tapppod.TemplateHash(&tapp.Spec.Template), tkestack.UniqHashLabel: tapppod.UniqHash(&tapp.Spec.Template),
		tapppod.ResizeHashLabel: tapppod.ResizeHash(&tapp.Spec.Template),
	}
	if !reflect.DeepEqual(u.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", u.Labels, wantLabels)
	}
	if !reflect.DeepEqual(u.RemoveLabels, []string{"tier"}) {
		t.Errorf("removeLabels = %v, want [tier]", u.RemoveLabels)
	}
	wantAnn := map[string]string{"keep": "1", tapppod.TemplateKeysAnnotation: `{"labels":["app","version"],"annotations":["keep"]}`}
	if !reflect.DeepEqual(u.Annotations, wantAnn) {
		t.Errorf("annotations = %v, want %v", u.Annotations, wantAnn)
	}
	if !reflect.DeepEqual(u.RemoveAnnotations, []string{"note"}) {
		t.Errorf("removeAnnotations = %v, want [note] (portmapping and foreign keys are kept)", u.RemoveAnnotations)
	}

	// Applying it converges: the next plan has nothing to do.
	c := newCluster(t)
	c.add(pod)
	c.sync(tapp)
	if _, ok := pod.Labels["tier"]; ok || pod.Labels["external"] == "" || pod.Annotations[PortMappingAnnotation] != "allocated" {
		t.Errorf("pod after update: %v %v", pod.Labels, pod.Annotations)
	}
	if got := countOf(c.sync(tapp)); got != (counts{}) {
		t.Errorf("not converged: %+v", got)
	}
}

func TestInPlaceFallsBackToRecreate(t *testing.T) {
	// Same uniq hash label but the pod lacks a container of the template (label tampering or legacy pod).
	tapp := newTApp(1)
	pod := mustPod(t, tapp, "0")
	pod.Spec.Containers[0].Name = "renamed"
	tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	expectPlan(t, ComputePlan(tapp, []*corev1.Pod{pod}, nil, testNow), nil, nil, nil, nil, []string{"0"})

	// Pods from the original controller (decimal fnv hash labels) that run their template are relabelled,
	// not recreated (see adopt_test.go).
	tapp = newTApp(2)
	legacy := []*corev1.Pod{mustPod(t, tapp, "0"), mustPod(t, tapp, "1")}
	for _, p := range legacy {
		p.Labels[tkestack.TemplateHashLabel] = "1234567890123"
		p.Labels[tkestack.UniqHashLabel] = "9876543210"
	}
	plan := ComputePlan(tapp, legacy, nil, testNow)
	expectPlan(t, plan, nil, nil, nil, nil, nil)
	if len(plan.Relabels) != 2 {
		t.Errorf("relabels = %+v", plan.Relabels)
	}
}

func TestGatesAndErrors(t *testing.T) {
	tapp := newTApp(4)
	tapp.Spec.Templates = map[string]string{"3": "missing"}
	p0 := mustPod(t, tapp, "0")
	dropCond(p0, InPlaceUpdateGate)
	setCond(p0, corev1.PodReady, "False")
	p1 := mustPod(t, tapp, "1")
	p2 := mustPod(t, tapp, "2")
	dropCond(p2, InPlaceUpdateGate)
	plan := ComputePlan(tapp, []*corev1.Pod{p2, p1, p0}, nil, testNow)
	wantGates := []Gate{{PodName: "app-0", Action: GateTrue}, {PodName: "app-2", Action: GateTrue}}
	if !reflect.DeepEqual(plan.Gates, wantGates) {
		t.Errorf("gates = %+v, want %+v", plan.Gates, wantGates)
	}
	// A pod the plan updates in place is left to the update.
	tapp.Spec.Template.Labels["version"] = "2"
	plan = ComputePlan(tapp, []*corev1.Pod{p2, p1, p0}, nil, testNow)
	if len(plan.InPlaceUpdates) != 1 || plan.InPlaceUpdates[0].ID != "0" || !reflect.DeepEqual(plan.Gates, wantGates[1:]) {
		t.Errorf("in-place updates %+v, gates %+v; want 0 updated and the gate of 2", plan.InPlaceUpdates, plan.Gates)
	}
	if len(plan.Creates) != 0 || len(plan.Errors) != 1 || plan.Errors[0].ID != "3" || plan.Errors[0].Template != "missing" {
		t.Errorf("creates %v errors %+v", plan.Creates, plan.Errors)
	}
}

func TestDeletingTAppDoesNothing(t *testing.T) {
	tapp := newTApp(3)
	pods := []*corev1.Pod{mustPod(t, tapp, "0")}
	ts := metav1.NewTime(testNow)
	tapp.DeletionTimestamp = &ts
	tapp.Spec.Replicas = 0
	plan := ComputePlan(tapp, pods, nil, testNow)
	if got := countOf(plan); got != (counts{}) || plan.Status.Instances["0"] != StatusRunning {
		t.Fatalf("%+v %v", got, plan.Status.Instances)
	}
}

func TestMaxUnavailable(t *testing.T) {
	i := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }
	s := func(x string) *intstr.IntOrString { v := intstr.FromString(x); return &v }
	cases := []struct {
		v     *intstr.IntOrString
		total int
		want  int
	}{
		{nil, 10, 0}, // never met: the API defaults the budgets (Undefaulted)
		{s("100%"), 7, 7},
		{i(3), 10, 3},
		{i(-2), 10, 0},
		{i(0), 10, 0},
		{s("25%"), 5, 2},
		{s("25%"), 4, 1},
		{s("1%"), 0, 1},
		{s("0%"), 10, 0},
		{s("150%"), 4, 6},
		{s("abc"), 10, 0}, // refused by validation
	}
	for _, tc := range cases {
		if got := MaxUnavailable(tc.v, tc.total); got != tc.want {
			t.Errorf("MaxUnavailable(%v, %d) = %d, want %d", tc.v, tc.total, got, tc.want)
		}
	}
}

// TestPlanDeterministic: the input order of pods never changes the plan.
func TestPlanDeterministic(t *testing.T) {
	tapp, pods := rollingTApp(t, "RU,RU,R,R,U,U,K,C", intstr.FromString("25%"))
	want := ComputePlan(tapp, pods, nil, testNow)
	for r := 0; r < 20; r++ {
		shuffled := append([]*corev1.Pod{}, pods...)
		for i := range shuffled {
			j := (i*7 + r*3) % len(shuffled)
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
		}
		if got := ComputePlan(tapp, shuffled, nil, testNow); !reflect.DeepEqual(got, want) {
			t.Fatalf("plan depends on pod order:\n%+v\n%+v", got, want)
		}
	}
}
