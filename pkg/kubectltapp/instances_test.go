package kubectltapp

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestInstanceRows(t *testing.T) {
	canary := func(tapp *tkestackv1.TApp) { tapp.Spec.Templates = map[string]string{"1": "canary"} }
	tests := []struct {
		name string
		tapp *tkestackv1.TApp
		pods func(*tkestackv1.TApp) []*corev1.Pod
		want []InstanceRow
	}{
		{
			name: "running instances, one on a pool template with a revision and restarts",
			tapp: testTApp(2, canary),
			pods: func(tapp *tkestackv1.TApp) []*corev1.Pod {
				return []*corev1.Pod{testPod(tapp, "1", revision("web-abc"), restarts(2)), testPod(tapp, "0")}
			},
			want: []InstanceRow{
				{ID: "0", Pod: "web-0", Template: "default", Revision: none, Status: "Running", Ready: "1/1", Node: "kwok-0", Images: "nginx:1", Restarts: "0", Lifecycle: none},
				{ID: "1", Pod: "web-1", Template: "canary", Revision: "web-abc", Status: "Running", Ready: "1/1", Node: "kwok-0", Images: "nginx:2", Restarts: "2", Lifecycle: none},
			},
		},
		{
			name: "a killed instance and one not created yet show their template's images",
			tapp: testTApp(3, killed("1"), canary),
			pods: func(tapp *tkestackv1.TApp) []*corev1.Pod { return []*corev1.Pod{testPod(tapp, "0")} },
			want: []InstanceRow{
				{ID: "0", Pod: "web-0", Template: "default", Revision: none, Status: "Running", Ready: "1/1", Node: "kwok-0", Images: "nginx:1", Restarts: "0", Lifecycle: none},
				{ID: "1", Pod: none, Template: "canary", Revision: none, Status: "Killed", Ready: none, Node: none, Images: "nginx:2", Restarts: none, Lifecycle: none},
				{ID: "2", Pod: none, Template: "default", Revision: none, Status: "NotCreated", Ready: none, Node: none, Images: "nginx:1", Restarts: none, Lifecycle: none},
			},
		},
		{
			name: "pending, terminating and scaled-away pods; ids sort numerically",
			tapp: testTApp(2),
			pods: func(tapp *tkestackv1.TApp) []*corev1.Pod {
				pending := testPod(tapp, "0", notReady)
				pending.Status.Phase = corev1.PodPending
				pending.Spec.NodeName = ""
				return []*corev1.Pod{testPod(testTApp(11), "10", terminating), pending, testPod(tapp, "1", notReady)}
			},
			want: []InstanceRow{
				{ID: "0", Pod: "web-0", Template: "default", Revision: none, Status: "Pending", Ready: "0/1", Node: none, Images: "nginx:1", Restarts: "0", Lifecycle: none},
				{ID: "1", Pod: "web-1", Template: "default", Revision: none, Status: "Pending", Ready: "0/1", Node: "kwok-0", Images: "nginx:1", Restarts: "0", Lifecycle: none},
				{ID: "10", Pod: "web-10", Template: "default", Revision: none, Status: "Killing", Ready: "1/1", Node: "kwok-0", Images: "nginx:1", Restarts: "0", Lifecycle: none},
			},
		},
		{
			name: "lifecycle states, and the hook that holds a pod",
			tapp: testTApp(3, func(tapp *tkestackv1.TApp) {
				hook := &tkestackv1.LifecycleHook{LabelsHandler: map[string]string{"drain": "true"}, FinalizersHandler: []string{"example.com/lb"}}
				tapp.Spec.Lifecycle = &tkestackv1.TAppLifecycle{PreDelete: hook, InPlaceUpdate: hook}
			}),
			pods: func(tapp *tkestackv1.TApp) []*corev1.Pod {
				normal, waiting, released := testPod(tapp, "0"), testPod(tapp, "1"), testPod(tapp, "2")
				normal.Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStateNormal
				normal.Labels["drain"] = "true"
				waiting.Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStatePreparingDelete
				waiting.Labels["drain"] = "true"
				waiting.Finalizers = []string{"example.com/lb"}
				released.Labels[tkestack.LifecycleStateLabel] = tkestack.LifecycleStatePreparingUpdate
				return []*corev1.Pod{normal, waiting, released}
			},
			want: []InstanceRow{
				{ID: "0", Pod: "web-0", Template: "default", Revision: none, Status: "Running", Ready: "1/1", Node: "kwok-0", Images: "nginx:1", Restarts: "0", Lifecycle: "Normal"},
				{ID: "1", Pod: "web-1", Template: "default", Revision: none, Status: "Running", Ready: "1/1", Node: "kwok-0", Images: "nginx:1", Restarts: "0",
					Lifecycle: "PreparingDelete[preDelete:drain=true,finalizer=example.com/lb]"},
				{ID: "2", Pod: "web-2", Template: "default", Revision: none, Status: "Running", Ready: "1/1", Node: "kwok-0", Images: "nginx:1", Restarts: "0", Lifecycle: "PreparingUpdate"},
			},
		},
		{
			name: "pods of another owner or with a foreign name are not instances",
			tapp: testTApp(1),
			pods: func(tapp *tkestackv1.TApp) []*corev1.Pod {
				renamed := testPod(tapp, "0")
				renamed.Name = "web-00"
				return []*corev1.Pod{testPod(tapp, "0", foreignOwner), renamed}
			},
			want: []InstanceRow{
				{ID: "0", Pod: none, Template: "default", Revision: none, Status: "NotCreated", Ready: none, Node: none, Images: "nginx:1", Restarts: none, Lifecycle: none},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := InstanceRows(tt.tapp, tt.pods(tt.tapp))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d rows, want %d:\n%+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestPrintInstanceRows(t *testing.T) {
	var out bytes.Buffer
	tapp := testTApp(1)
	if err := PrintInstanceRows(&out, InstanceRows(tapp, []*corev1.Pod{testPod(tapp, "0")})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("output:\n%s\nwant a header and one row", out.String())
	}
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "ID POD TEMPLATE REVISION STATUS READY NODE IMAGES RESTARTS CLAIMS LIFECYCLE" {
		t.Errorf("header = %q", lines[0])
	}
	if got := strings.Fields(lines[1]); strings.Join(got, " ") != "0 web-0 default <none> Running 1/1 kwok-0 nginx:1 0 <none> <none>" {
		t.Errorf("row = %q", lines[1])
	}
}

func TestInstanceRowsWithClaims(t *testing.T) {
	tapp := testTApp(4)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, {ObjectMeta: metav1.ObjectMeta{Name: "logs"}}}
	claim := func(name, request, capacity string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}
		c.Status.Phase = phase
		if capacity != "" {
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
		}
		return c
	}
	claims := []*corev1.PersistentVolumeClaim{
		claim("data-web-0", "4Gi", "4Gi", corev1.ClaimBound), claim("logs-web-0", "1Gi", "1Gi", corev1.ClaimBound),
		claim("data-web-1", "4Gi", "2Gi", corev1.ClaimBound), claim("logs-web-1", "1Gi", "", corev1.ClaimPending),
		claim("data-web-2", "4Gi", "", ""),
		claim("data-other-3", "4Gi", "4Gi", corev1.ClaimBound), // another TApp's
	}
	want := []string{"data=4Gi,logs=1Gi", "data=2Gi→4Gi,logs=Pending", "data=Pending,logs=<none>", "data=<none>,logs=<none>"}
	rows := InstanceRowsWithClaims(tapp, []*corev1.Pod{testPod(tapp, "0"), testPod(tapp, "1")}, claims)
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		if r.Claims != want[i] {
			t.Errorf("row %s claims %q, want %q", r.ID, r.Claims, want[i])
		}
	}
	var out bytes.Buffer
	if err := PrintInstanceRows(&out, rows[1:2]); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.TrimSpace(out.String()), " data=2Gi→4Gi,logs=Pending   <none>") {
		t.Errorf("output:\n%s\nwant the claims in the CLAIMS column, before LIFECYCLE", out.String())
	}
}
