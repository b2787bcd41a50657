package bench

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// claimAt is a bound claim requesting request with capacity capacity.
func claimAt(request, capacity string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}},
	}
}

// TestClaimDone: a claim is done at a size only when bound at that capacity with no step of an expansion
// reported, whatever the quantity's format; resizing follows the request, then the reported steps.
func TestClaimDone(t *testing.T) {
	size := resource.MustParse("2Gi")
	with := func(c *corev1.PersistentVolumeClaim, edit func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		edit(c)
		return c
	}
	for _, tc := range []struct {
		name           string
		claim          *corev1.PersistentVolumeClaim
		done, resizing bool
	}{
		{"at the size", claimAt("2Gi", "2Gi"), true, false},
		{"at the size, another format", claimAt("2Gi", "2048Mi"), true, false},
		{"not yet raised", claimAt("1Gi", "1Gi"), false, false},
		{"raised, not expanded", claimAt("2Gi", "1Gi"), false, true},
		{"larger", claimAt("4Gi", "4Gi"), false, false},
		{"pending", with(claimAt("2Gi", "2Gi"), func(c *corev1.PersistentVolumeClaim) { c.Status.Phase = corev1.ClaimPending }), false, false},
		{"no capacity", with(claimAt("2Gi", "2Gi"), func(c *corev1.PersistentVolumeClaim) { c.Status.Capacity = nil }), false, true},
		{"file system resize pending", with(claimAt("2Gi", "2Gi"), func(c *corev1.PersistentVolumeClaim) {
			c.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue}}
		}), false, false},
		{"node resize in progress", with(claimAt("2Gi", "2Gi"), func(c *corev1.PersistentVolumeClaim) {
			c.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizeInProgress}
		}), false, true},
		{"another condition", with(claimAt("2Gi", "2Gi"), func(c *corev1.PersistentVolumeClaim) {
			c.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: "Other", Status: corev1.ConditionTrue}}
		}), true, false},
	} {
		if got := claimDone(tc.claim, size); got != tc.done {
			t.Errorf("%s: claimDone = %v, want %v", tc.name, got, tc.done)
		}
		if got := claimResizing(tc.claim); got != tc.resizing {
			t.Errorf("%s: claimResizing = %v, want %v", tc.name, got, tc.resizing)
		}
	}
}

func claimRuns() []ClaimExpansionRun {
	run := func(kind string, seconds, writes float64, recreated, restarts int) ClaimExpansionRun {
		return ClaimExpansionRun{
			RollRun: RollRun{Kind: kind, Replicas: 100, MaxUnavailable: "25%", Seconds: seconds, Completed: true,
				KubeAPIWritesPerInstance: writes, PodsRecreated: recreated,
				KubeAPIWrites: map[string]int{"PATCH persistentvolumeclaims/status": 400, "PATCH persistentvolumeclaims": 100, "POST events": 100}},
			StorageClass: "standard", SizeBefore: "1Gi", SizeAfter: "2Gi", ClaimsExpanded: 100, ContainerRestarts: restarts,
			TemplateStorageAfter: "2Gi", NewInstanceClaimStorage: "2Gi", TemplateUpdate: "accepted",
		}
	}
	tapp, sts := run(kindTApp, 10, 5, 0, 0), run(kindStatefulSet, 8, 6.4, 0, 0)
	tapp.How, tapp.ClaimStatus = "the TApp controller", "100/100 compatible/ready, VolumeClaimsUpdated True (Updated)"
	tapp.ControllerActions = map[string]int{"expand-claim": 120, "update-status": 20, "expand-claim (error)": 1}
	sts.How, sts.TemplateStorageAfter, sts.NewInstanceClaimStorage = "a client loop", "1Gi", "1Gi"
	sts.TemplateUpdate, sts.TemplateUpdateCode = `StatefulSet.apps "bench" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden`, 422
	return []ClaimExpansionRun{tapp, sts}
}

func TestSetClaimRatios(t *testing.T) {
	runs := claimRuns()
	setClaimRatios(runs)
	if r := runs[0]; r.TimeRatioToStatefulSet != 1.25 || r.WritesRatioToStatefulSet != 0.781 || r.SpeedupVsStatefulSet != 0.8 {
		t.Errorf("TApp: time ×%.3f, writes ×%.3f, speed-up %.3f; want 1.25, 0.781, 0.8", r.TimeRatioToStatefulSet, r.WritesRatioToStatefulSet, r.SpeedupVsStatefulSet)
	}
	if r := runs[1]; r.TimeRatioToStatefulSet != 1 || r.WritesRatioToStatefulSet != 1 {
		t.Errorf("StatefulSet: time ×%.3f, writes ×%.3f; want 1 and 1", r.TimeRatioToStatefulSet, r.WritesRatioToStatefulSet)
	}
	// Without a StatefulSet run there is nothing to compare with.
	alone := claimRuns()[:1]
	setClaimRatios(alone)
	if alone[0].TimeRatioToStatefulSet != 0 || alone[0].WritesRatioToStatefulSet != 0 {
		t.Errorf("TApp alone: ratios %+v, want none", alone[0])
	}
}

func TestRenderClaimExpansion(t *testing.T) {
	res := &Results{ClaimExpansion: claimRuns()}
	setClaimRatios(res.ClaimExpansion)
	res.Targets = evaluateTargets(res)
	md := renderMarkdown(res)
	for _, s := range []string{
		"### 4d. Volume claim expansion (maxUnavailable 25%)",
		"One claim template `data` per instance, 1Gi → 2Gi, StorageClass `standard`",
		"| TApp | 10.00 | 1.25× | 0.00 / 0.00 | 100 of 100 | 0 | 0 | 0 | 0 | 5.00 | 0.78× |",
		"| StatefulSet | 8.00 | 1.00× |",
		"- **StatefulSet**: a client loop. Raising `spec.volumeClaimTemplates[0]` storage: refused (422): `StatefulSet.apps \"bench\" is invalid: spec: Forbidden:",
		"The claim template says 1Gi afterwards; an instance added afterwards (N→N+1) got a claim of 1Gi.",
		"status.volumeClaims `data` 100/100 compatible/ready, VolumeClaimsUpdated True (Updated).",
		"The controller's API actions during the expansion: expand-claim 120, update-status 20, expand-claim (error) 1.\n",
		"| TApp | 500 | 0 | PATCH persistentvolumeclaims/status 400, PATCH persistentvolumeclaims 100 |",
		"| claim expansion: TApp pods recreated + container restarts | 0 | 0 pods | yes |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("results.md has no %q:\n%s", s, md)
		}
	}
	// A TApp pod restarted: the target is missed.
	res.ClaimExpansion[0].ContainerRestarts = 2
	if got := evaluateTargets(res); len(got) != 1 || got[0].Met || got[0].Value != 2 {
		t.Errorf("targets with 2 restarts: %+v, want one, missed, value 2", got)
	}
}

// TestParseCounter: the samples of one labelled counter, whatever else the exposition holds.
func TestParseCounter(t *testing.T) {
	text := `# HELP tapp_controller_actions_total API actions of the TApp controller.
# TYPE tapp_controller_actions_total counter
tapp_controller_actions_total{action="expand-claim",result="success"} 1204
tapp_controller_actions_total{action="expand-claim",result="error"} 2
tapp_controller_actions_totally{action="x",result="success"} 5
tapp_controller_sync_duration_seconds_count{result="success"} 40
apiserver_request_total{code="201",verb="POST",resource="pods"} 3
`
	samples, err := parseCounter(strings.NewReader(text), "tapp_controller_actions_total")
	if err != nil {
		t.Fatal(err)
	}
	want := []metricSample{
		{labels: map[string]string{"action": "expand-claim", "result": "success"}, value: 1204},
		{labels: map[string]string{"action": "expand-claim", "result": "error"}, value: 2},
	}
	if !reflect.DeepEqual(samples, want) {
		t.Errorf("samples %+v, want %+v", samples, want)
	}
}

func TestTAppClaimState(t *testing.T) {
	tapp := &tkestackv1.TApp{Status: tkestackv1.TAppStatus{
		VolumeClaims: []tkestackv1.TAppVolumeClaimStatus{
			{VolumeClaimName: "other", CompatibleReplicas: 1, CompatibleReadyReplicas: 1},
			{VolumeClaimName: claimTemplateName, CompatibleReplicas: 1000, CompatibleReadyReplicas: 998},
		},
		Conditions: []metav1.Condition{{Type: tkestackv1.TAppVolumeClaimsUpdated, Status: metav1.ConditionFalse, Reason: "Updating"}},
	}}
	if got, want := tappClaimState(tapp), "1000/998 compatible/ready, VolumeClaimsUpdated False (Updating)"; got != want {
		t.Errorf("tappClaimState = %q, want %q", got, want)
	}
	if got := claimStatusText(&tkestackv1.TApp{}); got != "" {
		t.Errorf("claimStatusText without status.volumeClaims = %q, want empty", got)
	}
}
