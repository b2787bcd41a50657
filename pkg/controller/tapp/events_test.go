package tapp

import (
	"context"
	"errors"
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/controllertest"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// drainEvents returns the events recorded so far, in order, and empties the recorder.
func drainEvents(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// eventsWithReason returns the events whose reason is reason.
func eventsWithReason(events []string, reason string) []string {
	var out []string
	for _, e := range events {
		if parts := strings.SplitN(e, " ", 3); len(parts) >= 2 && parts[1] == reason {
			out = append(out, e)
		}
	}
	return out
}

// running creates the TApp's pods, makes them Running and Ready and shows them in the cache. It returns the
// pods by name and drains the creation events.
func (h *harness) running() map[string]*corev1.Pod {
	h.t.Helper()
	if err := h.sync(); err != nil {
		h.t.Fatal(err)
	}
	h.markRunning()
	byName := map[string]*corev1.Pod{}
	for _, pod := range h.showPods() {
		byName[pod.Name] = pod
	}
	// Let the controller settle (readiness gates, status) before the change under test.
	if err := h.sync(); err != nil {
		h.t.Fatal(err)
	}
	drainEvents(h.recorder)
	return byName
}

// specPatches returns the patches of pods' main resource (in-place updates), not of pods/status.
func (h *harness) specPatches() []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range h.actions("patch", "pods") {
		if a.GetSubresource() == "" {
			out = append(out, a)
		}
	}
	return out
}

func (h *harness) apiPod(name string) *corev1.Pod {
	h.t.Helper()
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return pod
}

func TestSyncDeleteEvents(t *testing.T) {
	tests := []struct {
		name     string
		replicas int32
		change   func(*tkestackv1.TApp)
		// wantDeleted are the pods deleted, wantEvents the exact events of the sync that deletes them.
		wantDeleted []string
		wantEvents  []string
		// wantRecreated: the instance is created again, on a later sync.
		wantRecreated string
	}{
		{
			name:     "kill",
			replicas: 2,
			change: func(tapp *tkestackv1.TApp) {
				tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"1": policy.StatusKilled}
			},
			wantDeleted: []string{"web-1"},
			wantEvents:  []string{"Normal Killing Killing instance 1: deleted pod web-1"},
		},
		{
			name:        "scale down",
			replicas:    3,
			change:      func(tapp *tkestackv1.TApp) { tapp.Spec.Replicas = 1 },
			wantDeleted: []string{"web-1", "web-2"},
			wantEvents: []string{
				"Normal SuccessfulDelete Deleted pod web-1 (ScaleDown)",
				"Normal SuccessfulDelete Deleted pod web-2 (ScaleDown)",
			},
		},
		{
			name:     "env var added",
			replicas: 1,
			change: func(tapp *tkestackv1.TApp) {
				tapp.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
			},
			wantDeleted:   []string{"web-0"},
			wantEvents:    []string{`Normal Recreating Deleted pod web-0 to recreate it with template "default" (the change cannot be applied in place)`},
			wantRecreated: "web-0",
		},
		{
			name:     "port changed",
			replicas: 1,
			change: func(tapp *tkestackv1.TApp) {
				tapp.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
			},
			wantDeleted:   []string{"web-0"},
			wantEvents:    []string{`Normal Recreating Deleted pod web-0 to recreate it with template "default" (the change cannot be applied in place)`},
			wantRecreated: "web-0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tapp := testTApp(tt.replicas)
			h := newHarness(t, tapp)
			pods := h.running()
			creates := len(h.actions("create", "pods"))
			changed := tapp.DeepCopy()
			tt.change(changed)
			changed.Generation = 2
			h.setTApp(changed)
			if err := h.sync(); err != nil {
				t.Fatal(err)
			}

			var deleted []string
			for _, a := range h.actions("delete", "pods") {
				d := a.(clienttesting.DeleteActionImpl)
				deleted = append(deleted, d.Name)
				pre := d.DeleteOptions.Preconditions
				if pre == nil || pre.UID == nil || *pre.UID != pods[d.Name].UID {
					t.Errorf("delete of %s: preconditions %+v, want UID %s", d.Name, pre, pods[d.Name].UID)
				}
				if d.DeleteOptions.GracePeriodSeconds != nil {
					t.Errorf("delete of %s: grace period %d, want the pod's own", d.Name, *d.DeleteOptions.GracePeriodSeconds)
				}
			}
			sort.Strings(deleted)
			if fmt.Sprint(deleted) != fmt.Sprint(tt.wantDeleted) {
				t.Fatalf("deleted %v, want %v", deleted, tt.wantDeleted)
			}
			events := drainEvents(h.recorder)
			sort.Strings(events)
			if fmt.Sprint(events) != fmt.Sprint(tt.wantEvents) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(tt.wantEvents, "\n"))
			}
			if got := h.specPatches(); len(got) != 0 {
				t.Errorf("%d in-place patches of pods, want none", len(got))
			}
			if got := len(h.actions("create", "pods")); got != creates {
				t.Fatalf("a pod was created in the sync that deleted its predecessor (%d creates, want %d)", got, creates)
			}

			// The cache still shows the deleted pods: nothing more happens.
			if err := h.sync(); err != nil {
				t.Fatal(err)
			}
			if got := len(h.actions("delete", "pods")); got != len(tt.wantDeleted) {
				t.Errorf("stale cache: %d deletes, want %d", got, len(tt.wantDeleted))
			}
			if got := len(h.actions("create", "pods")); got != creates {
				t.Errorf("stale cache: %d creates, want %d", got, creates)
			}

			h.showPods()
			if err := h.sync(); err != nil {
				t.Fatal(err)
			}
			wantCreates := creates
			if tt.wantRecreated != "" {
				wantCreates++
			}
			if got := len(h.actions("create", "pods")); got != wantCreates {
				t.Fatalf("%d creates once the cache shows the deletions, want %d", got, wantCreates)
			}
			if tt.wantRecreated == "" {
				return
			}
			pod := h.apiPod(tt.wantRecreated)
			if pod.UID == pods[tt.wantRecreated].UID {
				t.Errorf("pod %s still has its old UID", pod.Name)
			}
			if !apiequality.Semantic.DeepEqual(pod.Spec.Containers[0].Env, changed.Spec.Template.Spec.Containers[0].Env) ||
				!apiequality.Semantic.DeepEqual(pod.Spec.Containers[0].Ports, changed.Spec.Template.Spec.Containers[0].Ports) {
				t.Errorf("recreated pod has container %+v, want the new template's", pod.Spec.Containers[0])
			}
			want, _ := policy.NewPod(changed, "0")
			if pod.Labels[tkestack.TemplateHashLabel] != want.Labels[tkestack.TemplateHashLabel] {
				t.Errorf("recreated pod has template hash %q, want %q", pod.Labels[tkestack.TemplateHashLabel], want.Labels[tkestack.TemplateHashLabel])
			}
			if got := eventsWithReason(drainEvents(h.recorder), "SuccessfulCreate"); len(got) != 1 || !strings.HasSuffix(got[0], "Created pod "+tt.wantRecreated) {
				t.Errorf("create events = %q", got)
			}
		})
	}
}

func TestSyncReportsDeleteFailureWithAPIMessage(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		message string
	}{
		{name: "internal error", err: apierrors.NewInternalError(errors.New("etcdserver: request timed out")),
			message: "Internal error occurred: etcdserver: request timed out"},
		{name: "forbidden", err: apierrors.NewForbidden(podsGVR.GroupResource(), "web-1", errors.New("denied by the admission webhook")),
			message: `pods "web-1" is forbidden: denied by the admission webhook`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tapp := testTApp(2)
			h := newHarness(t, tapp)
			h.running()
			failing := true
			h.kube.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
				if failing {
					return true, nil, tt.err
				}
				return false, nil, nil
			})
			killed := tapp.DeepCopy()
			killed.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"1": policy.StatusKilled}
			killed.Generation = 2
			h.setTApp(killed)

			if err := h.sync(); err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("sync error = %v, want the API's message %q (retry with backoff)", err, tt.message)
			}
			want := "Warning FailedDelete delete pod web-1 (Killed): " + tt.message
			if got := eventsWithReason(drainEvents(h.recorder), "FailedDelete"); len(got) != 1 || got[0] != want {
				t.Errorf("FailedDelete events = %q, want [%q]", got, want)
			}
			cond := meta.FindStatusCondition(h.storedTApp().Status.Conditions, tkestackv1.TAppReplicaFailure)
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "FailedDelete" || !strings.Contains(cond.Message, tt.message) || cond.ObservedGeneration != 2 {
				t.Fatalf("ReplicaFailure condition = %+v", cond)
			}
			h.apiPod("web-1") // still there

			// A failed delete is not waited for: the next sync tries again, and clears the condition once it works.
			failing = false
			h.setTApp(h.storedTApp())
			if err := h.sync(); err != nil {
				t.Fatal(err)
			}
			if got := len(h.actions("delete", "pods")); got != 2 {
				t.Fatalf("%d delete attempts, want 2", got)
			}
			if got := eventsWithReason(drainEvents(h.recorder), "Killing"); len(got) != 1 {
				t.Errorf("Killing events after the retry = %q", got)
			}
			if cond := meta.FindStatusCondition(h.storedTApp().Status.Conditions, tkestackv1.TAppReplicaFailure); cond != nil {
				t.Errorf("ReplicaFailure condition after a successful delete = %+v", cond)
			}
		})
	}
}

func TestSyncForceDeletesTerminatingPodOnLostNode(t *testing.T) {
	past := time.Now().Add(-time.Minute)
	tests := []struct {
		name        string
		forceDelete bool
		node        *corev1.ConditionStatus // nil: the node does not exist
		deadline    time.Time               // the pod's deletionTimestamp
		wantForce   bool
	}{
		{name: "node NotReady, deadline passed", forceDelete: true, node: ptrTo(corev1.ConditionFalse), deadline: past, wantForce: true},
		{name: "node Unknown, deadline passed", forceDelete: true, node: ptrTo(corev1.ConditionUnknown), deadline: past, wantForce: true},
		{name: "node missing, deadline passed", forceDelete: true, deadline: past, wantForce: true},
		{name: "node Ready", forceDelete: true, node: ptrTo(corev1.ConditionTrue), deadline: past},
		{name: "node NotReady, deadline to come", forceDelete: true, node: ptrTo(corev1.ConditionFalse), deadline: time.Now().Add(time.Hour)},
		{name: "node NotReady, forceDeletePod unset", node: ptrTo(corev1.ConditionFalse), deadline: past},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tapp := testTApp(1)
			tapp.Spec.ForceDeletePod = tt.forceDelete
			h := newHarness(t, tapp)
			h.running()
			if tt.node != nil {
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
					Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: *tt.node}}}}
				if err := h.kubeInf.Core().V1().Nodes().Informer().GetIndexer().Add(node); err != nil {
					t.Fatal(err)
				}
			}
			// The pod was deleted gracefully on node-a; deletionTimestamp is when its grace period ends.
			pod := h.apiPod("web-0")
			pod.Spec.NodeName = "node-a"
			pod.DeletionTimestamp = &metav1.Time{Time: tt.deadline}
			pod.DeletionGracePeriodSeconds = ptrTo(int64(30))
			if err := h.kube.Tracker().Update(podsGVR, pod, "ns"); err != nil {
				t.Fatal(err)
			}
			h.showPods()
			if err := h.sync(); err != nil {
				t.Fatal(err)
			}

			deletes := h.actions("delete", "pods")
			forced := eventsWithReason(drainEvents(h.recorder), "ForceDeleted")
			if !tt.wantForce {
				if len(deletes) != 0 || len(forced) != 0 {
					t.Fatalf("%d deletes, ForceDeleted events %q; want none", len(deletes), forced)
				}
				return
			}
			if len(deletes) != 1 {
				t.Fatalf("%d deletes, want 1", len(deletes))
			}
			d := deletes[0].(clienttesting.DeleteActionImpl)
			opts := d.DeleteOptions
			if d.Name != "web-0" || opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 ||
				opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != pod.UID {
				t.Fatalf("delete = %s grace %v preconditions %+v, want web-0 with grace 0 and UID %s",
					d.Name, opts.GracePeriodSeconds, opts.Preconditions, pod.UID)
			}
			if want := "Warning ForceDeleted Force-deleted pod web-0: its node is lost"; len(forced) != 1 || forced[0] != want {
				t.Errorf("ForceDeleted events = %q, want [%q]", forced, want)
			}
			if got := len(h.actions("create", "pods")); got != 1 {
				t.Errorf("%d creates in the sync that force-deleted, want only the first one", got)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// kubeletFinishInPlace reports, for every pod with an in-place update in progress, its containers running
// their new images, as the kubelet would after restarting them.
func (h *harness) kubeletFinishInPlace() int {
	list, err := h.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for i := range list.Items {
		pod := list.Items[i].DeepCopy()
		if !inplace.InProgress(pod) {
			continue
		}
		for j := range pod.Status.ContainerStatuses {
			cs := &pod.Status.ContainerStatuses[j]
			cs.Image = pod.Spec.Containers[j].Image
			cs.ImageID = cs.Image + "@sha256:2"
			cs.RestartCount++
		}
		if _, err := h.kube.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			h.t.Fatal(err)
		}
		n++
	}
	return n
}

func TestSyncProgressingConditionFollowsRollingUpdate(t *testing.T) {
	tapp := testTApp(3)
	h := newHarness(t, tapp)
	h.running()
	assertConditions := func(stage, progressingReason, progressingMessage string, available metav1.ConditionStatus, generation int64) {
		t.Helper()
		status := h.storedTApp().Status
		p := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppProgressing)
		if p == nil || p.Status != metav1.ConditionTrue || p.Reason != progressingReason || p.Message != progressingMessage || p.ObservedGeneration != generation {
			t.Fatalf("%s: Progressing = %+v, want True %s %q", stage, p, progressingReason, progressingMessage)
		}
		a := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppAvailable)
		if a == nil || a.Status != available {
			t.Fatalf("%s: Available = %+v, want %s", stage, a, available)
		}
	}
	assertConditions("before the update", "RolloutComplete", "all 3 instances run their current template and are ready", metav1.ConditionTrue, 1)

	h.updateImage(tapp, "nginx:2")
	h.showPods()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	// web-0 is being updated in place: updated, not ready; the budget of 1 holds web-1 and web-2.
	if pod := h.apiPod("web-0"); !inplace.InProgress(pod) || pod.Spec.Containers[0].Image != "nginx:2" {
		t.Fatalf("web-0: in progress %v, image %s", inplace.InProgress(pod), pod.Spec.Containers[0].Image)
	}
	assertConditions("during the update", "RolloutInProgress", "1 of 3 instances updated, 0 of them ready", metav1.ConditionTrue, 2)
	if got := h.storedTApp().Status.Statuses["0"]; got != policy.StatusUpdating {
		t.Errorf("status of instance 0 = %q, want %q", got, policy.StatusUpdating)
	}

	for round := 0; ; round++ {
		if round == 10 {
			t.Fatal("the rolling update did not complete in 10 rounds")
		}
		if h.kubeletFinishInPlace() == 0 {
			done := true
			for _, pod := range h.showPods() {
				done = done && pod.Spec.Containers[0].Image == "nginx:2" && inplace.GateStatus(pod) == corev1.ConditionTrue
			}
			if done {
				break
			}
		}
		h.showPods()
		if err := h.sync(); err != nil {
			t.Fatal(err)
		}
		if round < 4 {
			status := h.storedTApp().Status
			if p := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppProgressing); status.UpdatedReadyReplicas < 3 && (p == nil || p.Reason != "RolloutInProgress") {
				t.Fatalf("round %d: %d of 3 updated and ready, Progressing = %+v", round, status.UpdatedReadyReplicas, p)
			}
		}
	}
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	assertConditions("after the update", "RolloutComplete", "all 3 instances run their current template and are ready", metav1.ConditionTrue, 2)
	if status := h.storedTApp().Status; status.UpdatedReadyReplicas != 3 || status.ReadyReplicas != 3 {
		t.Errorf("status = %+v", status)
	}
}

func TestSyncAvailableCondition(t *testing.T) {
	tests := []struct {
		name           string
		maxUnavailable intstr.IntOrString
		ready          int
		want           metav1.ConditionStatus
		reason         string
		message        string
	}{
		{name: "all ready", maxUnavailable: intstr.FromInt32(1), ready: 3, want: metav1.ConditionTrue,
			reason: "MinimumInstancesAvailable", message: "3 of 3 instances ready, at least 2 required"},
		{name: "one unavailable within budget", maxUnavailable: intstr.FromInt32(1), ready: 2, want: metav1.ConditionTrue,
			reason: "MinimumInstancesAvailable", message: "2 of 3 instances ready, at least 2 required"},
		{name: "two unavailable beyond budget", maxUnavailable: intstr.FromInt32(1), ready: 1, want: metav1.ConditionFalse,
			reason: "MinimumInstancesUnavailable", message: "1 of 3 instances ready, at least 2 required"},
		{name: "two unavailable within a budget of 2", maxUnavailable: intstr.FromInt32(2), ready: 1, want: metav1.ConditionTrue,
			reason: "MinimumInstancesAvailable", message: "1 of 3 instances ready, at least 1 required"},
		{name: "percentage rounded up", maxUnavailable: intstr.FromString("50%"), ready: 1, want: metav1.ConditionTrue,
			reason: "MinimumInstancesAvailable", message: "1 of 3 instances ready, at least 1 required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tapp := testTApp(3)
			tapp.Spec.UpdateStrategy.MaxUnavailable = &tt.maxUnavailable
			h := newHarness(t, tapp)
			h.running()
			for n := tt.ready; n < 3; n++ {
				pod := h.apiPod(fmt.Sprintf("web-%d", n))
				for i := range pod.Status.Conditions {
					if pod.Status.Conditions[i].Type == corev1.PodReady {
						pod.Status.Conditions[i].Status = corev1.ConditionFalse
					}
				}
				if _, err := h.kube.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			h.showPods()
			if err := h.sync(); err != nil {
				t.Fatal(err)
			}
			status := h.storedTApp().Status
			if status.ReadyReplicas != int32(tt.ready) {
				t.Fatalf("readyReplicas = %d, want %d", status.ReadyReplicas, tt.ready)
			}
			a := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppAvailable)
			if a == nil || a.Status != tt.want || a.Reason != tt.reason || a.Message != tt.message {
				t.Errorf("Available = %+v, want %s %s %q", a, tt.want, tt.reason, tt.message)
			}
			wantProgressing := "RolloutComplete"
			if tt.ready < 3 {
				wantProgressing = "RolloutInProgress"
			}
			if p := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppProgressing); p == nil || p.Status != metav1.ConditionTrue || p.Reason != wantProgressing {
				t.Errorf("Progressing = %+v, want True %s", p, wantProgressing)
			}
		})
	}
}

func TestSyncNeverModifiesCacheObjects(t *testing.T) {
	tapp := testTApp(3)
	two := intstr.FromInt32(2)
	tapp.Spec.UpdateStrategy.MaxUnavailable = &two
	h := newHarness(t, tapp)
	h.running()
	// web-1 disappears (evicted): it is created again; web-2 is killed: deleted; the image changes: web-0 is
	// updated in place.
	if err := h.kube.CoreV1().Pods("ns").Delete(context.Background(), "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.showPods()
	changed := tapp.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	changed.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"2": policy.StatusKilled}
	changed.Generation = 2
	h.setTApp(changed)
	h.kube.ClearActions()
	h.tapps.ClearActions()

	podIndexer := h.kubeInf.Core().V1().Pods().Informer().GetIndexer()
	tappIndexer := h.tappInf.TKEStackApps().V1().TApps().Informer().GetIndexer()
	snapshot := map[string]runtime.Object{}
	for _, indexer := range []cache.Indexer{podIndexer, tappIndexer} {
		for _, obj := range indexer.List() {
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			snapshot[fmt.Sprintf("%T %s", obj, key)] = obj.(runtime.Object).DeepCopyObject()
		}
	}
	if len(snapshot) != 3 {
		t.Fatalf("cache holds %d objects, want the TApp and 2 pods", len(snapshot))
	}

	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	// The sync did all three kinds of write, and the status.
	if got := h.actions("create", "pods"); len(got) != 1 || got[0].(clienttesting.CreateAction).GetObject().(*corev1.Pod).Name != "web-1" {
		t.Errorf("creates = %v, want web-1", got)
	}
	if got := h.actions("delete", "pods"); len(got) != 1 || got[0].(clienttesting.DeleteActionImpl).Name != "web-2" {
		t.Errorf("deletes = %v, want web-2", got)
	}
	if got := h.specPatches(); len(got) != 1 || got[0].(clienttesting.PatchActionImpl).Name != "web-0" {
		t.Errorf("in-place patches = %v, want web-0", got)
	}
	if len(h.tapps.Actions()) == 0 {
		t.Error("no status write")
	}

	after := map[string]runtime.Object{}
	for _, indexer := range []cache.Indexer{podIndexer, tappIndexer} {
		for _, obj := range indexer.List() {
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			after[fmt.Sprintf("%T %s", obj, key)] = obj.(runtime.Object)
		}
	}
	if len(after) != len(snapshot) {
		t.Errorf("cache holds %d objects after the sync, want %d", len(after), len(snapshot))
	}
	for key, want := range snapshot {
		if got := after[key]; !apiequality.Semantic.DeepEqual(got, want) {
			t.Errorf("cache object %s was modified by the sync:\n got %+v\nwant %+v", key, got, want)
		}
	}
}

func TestPodEventsEnqueueTheControllingTApp(t *testing.T) {
	controller := true
	ref := func(apiVersion, kind, name string, uid types.UID, isController bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &isController}
	}
	tappRef := ref(tkestackv1.SchemeGroupVersion.String(), "TApp", "web", "tapp-uid", controller)
	pod := func(labels map[string]string, refs ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "pod-uid", ResourceVersion: "1",
			Labels: labels, OwnerReferences: refs}}
	}
	matching := map[string]string{"app": "web"}
	other := map[string]string{"app": "db"}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{name: "controlled by the TApp", pod: pod(matching, tappRef), want: []string{"ns/web"}},
		{name: "controlled by the TApp, labels not matching", pod: pod(other, tappRef), want: []string{"ns/web"}},
		{name: "controller reference with another UID", pod: pod(matching, ref(tappRef.APIVersion, "TApp", "web", "old-uid", true))},
		{name: "controller reference to a TApp not in the cache", pod: pod(matching, ref(tappRef.APIVersion, "TApp", "api", "api-uid", true))},
		{name: "controlled by a ReplicaSet of the same name", pod: pod(matching, ref("apps/v1", "ReplicaSet", "web", "tapp-uid", true))},
		{name: "TApp kind of another group", pod: pod(matching, ref("example.com/v1", "TApp", "web", "tapp-uid", true))},
		{name: "another kind of the TApp's group", pod: pod(matching, ref(tappRef.APIVersion, "TAppSet", "web", "tapp-uid", true))},
		// A pod without controller holding an instance's name (web-0) is a conflict of that TApp, whatever
		// its labels: it is told when the pod changes or goes away.
		{name: "owned by the TApp but not as controller, labels not matching", pod: pod(other, ref(tappRef.APIVersion, "TApp", "web", "tapp-uid", false)), want: []string{"ns/web"}},
		{name: "no owner, labels not matching", pod: pod(other), want: []string{"ns/web"}},
		// An orphan may hold an instance's name: the TApps selecting it are told (see enqueueSelecting).
		{name: "no owner, labels matching", pod: pod(matching), want: []string{"ns/web"}},
	}
	handlers := []struct {
		name string
		call func(c *Controller, pod *corev1.Pod)
	}{
		{"podAdded", func(c *Controller, pod *corev1.Pod) { c.podAdded(pod) }},
		{"podUpdated", func(c *Controller, pod *corev1.Pod) {
			old := pod.DeepCopy()
			old.ResourceVersion = "0"
			c.podUpdated(old, pod)
		}},
		{"podDeleted", func(c *Controller, pod *corev1.Pod) { c.podDeleted(pod) }},
		{"podDeleted tombstone", func(c *Controller, pod *corev1.Pod) {
			c.podDeleted(cache.DeletedFinalStateUnknown{Key: "ns/web-0", Obj: pod})
		}},
	}
	for _, handler := range handlers {
		for _, tt := range tests {
			t.Run(handler.name+"/"+tt.name, func(t *testing.T) {
				h := newHarness(t, testTApp(1))
				// Another TApp of the namespace whose selector never matches.
				db := testTApp(1)
				db.Name, db.UID = "db", "db-uid"
				db.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}}
				h.setTApp(db)
				if got := queued(h.ctrl); len(got) != 0 {
					t.Fatalf("queue before the event = %v", got)
				}
				handler.call(h.ctrl, tt.pod)
				if got := h.told(len(tt.want)); fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("queued %v, want %v", got, tt.want)
				}
			})
		}
	}
}

func TestPodUpdatedEnqueuesPreviousAndNewController(t *testing.T) {
	tests := []struct {
		name     string
		oldRefs  []metav1.OwnerReference
		newRefs  []metav1.OwnerReference
		labels   map[string]string
		sameRV   bool
		wantKeys []string
	}{
		{name: "released by web", oldRefs: []metav1.OwnerReference{tappOwner("web", "tapp-uid")},
			labels: map[string]string{"app": "other"}, wantKeys: []string{"ns/web"}},
		{name: "moved from web to db", oldRefs: []metav1.OwnerReference{tappOwner("web", "tapp-uid")},
			newRefs: []metav1.OwnerReference{tappOwner("db", "db-uid")}, labels: map[string]string{"app": "other"},
			wantKeys: []string{"ns/db", "ns/web"}},
		{name: "periodic resync", oldRefs: []metav1.OwnerReference{tappOwner("web", "tapp-uid")},
			newRefs: []metav1.OwnerReference{tappOwner("web", "tapp-uid")}, sameRV: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testTApp(1))
			db := testTApp(1)
			db.Name, db.UID = "db", "db-uid"
			db.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}}
			h.setTApp(db)
			old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "pod-uid", ResourceVersion: "1",
				Labels: tt.labels, OwnerReferences: tt.oldRefs}}
			pod := old.DeepCopy()
			pod.OwnerReferences = tt.newRefs
			if !tt.sameRV {
				pod.ResourceVersion = "2"
			}
			h.ctrl.podUpdated(old, pod)
			if got := h.told(len(tt.wantKeys)); fmt.Sprint(got) != fmt.Sprint(tt.wantKeys) {
				t.Errorf("queued %v, want %v", got, tt.wantKeys)
			}
		})
	}
}

func tappOwner(name string, uid types.UID) metav1.OwnerReference {
	controller := true
	return metav1.OwnerReference{APIVersion: tkestackv1.SchemeGroupVersion.String(), Kind: "TApp", Name: name, UID: uid, Controller: &controller}
}

// queued empties the controller's queue and returns its keys, sorted.
func queued(c *Controller) []string { return controllertest.Drain(c.queue) }

// batchMarker is a key no TApp has, queued after the pod event batch by told.
const batchMarker = "told/marker"

// told returns the TApps the handlers called so far queued, at once or after the pod event batch, sorted:
// which TApps are told, not when (TestPodEventsAreBatched tests when). It queues a marker after the same
// batch, steps the harness's clock past it until the queue holds the marker and n keys besides, and
// empties the queue; the marker makes it wait for the batch when no TApp is to be told.
func (h *harness) told(n int) []string {
	h.t.Helper()
	h.ctrl.queue.AddAfter(batchMarker, podEventBatch)
	controllertest.StepUntilQueued(h.t, h.clock, h.ctrl.queue, podEventBatch, n+1)
	var keys []string
	for _, key := range queued(h.ctrl) {
		if key != batchMarker {
			keys = append(keys, key)
		}
	}
	return keys
}

// TestPodEventsAreBatched: the events of a TApp's pods within podEventBatch make one sync, queued once the
// batch of the first has passed on the controller's clock; a deletion is queued at once.
func TestPodEventsAreBatched(t *testing.T) {
	h := newHarness(t, testTApp(3))
	pod := func(id, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + id, Namespace: "ns", UID: types.UID("uid-" + id),
			ResourceVersion: rv, OwnerReferences: []metav1.OwnerReference{tappOwner("web", "tapp-uid")}}}
	}
	start := h.clock.Now()
	h.ctrl.podAdded(pod("0", "1"))
	h.clock.Step(podEventBatch / 2)
	h.ctrl.podAdded(pod("1", "1"))
	h.ctrl.podUpdated(pod("0", "1"), pod("0", "2"))
	if got := h.ctrl.queue.Len(); got != 0 {
		t.Fatalf("%d TApps queued before the batch passed", got)
	}
	// Step the clock a tenth of the batch at a time, giving the queue a moment after each step, until the
	// TApp is queued: not before the first event's batch has passed. The queue's timer may miss a step
	// made while it was being set (see controllertest.StepUntilQueued), which defers the TApp by that step
	// at most; past twice the batch, the clock stays and the TApp must come.
	limit := start.Add(2 * podEventBatch)
	for h.ctrl.queue.Len() == 0 && h.clock.Now().Before(limit) {
		h.clock.Step(podEventBatch / 10)
		for wait := time.Now().Add(5 * time.Millisecond); h.ctrl.queue.Len() == 0 && time.Now().Before(wait); {
			time.Sleep(time.Millisecond)
		}
	}
	if elapsed := h.clock.Since(start); h.ctrl.queue.Len() > 0 && elapsed < podEventBatch {
		t.Errorf("queued once the clock moved %v, before the batch of %v passed", elapsed, podEventBatch)
	}
	for deadline := time.Now().Add(10 * time.Second); h.ctrl.queue.Len() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if got := queued(h.ctrl); fmt.Sprint(got) != "[ns/web]" {
		t.Fatalf("queued %v once the clock moved %v, want [ns/web] once", got, h.clock.Since(start))
	}
	h.ctrl.podDeleted(pod("2", "1"))
	if got := queued(h.ctrl); fmt.Sprint(got) != "[ns/web]" {
		t.Errorf("queued %v right after a deletion, want [ns/web]", got)
	}
}
