package tapp

import (
	"context"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// showRevisions puts the ControllerRevisions the fake API holds into the informer cache.
func (h *harness) showRevisions() []appsv1.ControllerRevision {
	list, err := h.kube.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	indexer := h.kubeInf.Apps().V1().ControllerRevisions().Informer().GetIndexer()
	for _, obj := range indexer.List() {
		_ = indexer.Delete(obj)
	}
	for i := range list.Items {
		if err := indexer.Add(&list.Items[i]); err != nil {
			h.t.Fatal(err)
		}
	}
	return list.Items
}

// setSpec stores a new spec (generation+1) in the fake API and the cache.
func (h *harness) setSpec(mutate func(*tkestackv1.TApp)) {
	tapp := h.storedTApp()
	mutate(tapp)
	tapp.Generation++
	tapp, err := h.tapps.TKEStackAppsV1().TApps("ns").Update(context.Background(), tapp, metav1.UpdateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	h.setTApp(tapp)
}

func (h *harness) settle() {
	h.t.Helper()
	for i := 0; i < 2; i++ {
		if err := h.sync(); err != nil {
			h.t.Fatal(err)
		}
		h.markRunning()
		h.showPods()
		h.showRevisions()
		h.setTApp(h.storedTApp())
	}
}

func (h *harness) podImageAndRevision(name string) (string, string) {
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return pod.Spec.Containers[0].Image, pod.Labels[tkestack.ControllerRevisionHashLabel]
}

// TestSyncRecordsRevisionsAndHoldsThePartition: the first sync records the templates as a ControllerRevision
// owned by the TApp and labels the pods with it; a template change with partition 2 gets a second revision,
// updates only ids ≥ 2, keeps status.currentRevision, and a deleted low id comes back on the current
// revision.
func TestSyncRecordsRevisionsAndHoldsThePartition(t *testing.T) {
	h := newHarness(t, testTApp(3))
	h.settle()
	revs := h.showRevisions()
	if len(revs) != 1 {
		t.Fatalf("%d revisions, want 1", len(revs))
	}
	first := revs[0]
	if ref := metav1.GetControllerOf(&first); ref == nil || ref.UID != "tapp-uid" || ref.Kind != "TApp" {
		t.Fatalf("revision %s controller %v", first.Name, ref)
	}
	st := h.storedTApp().Status
	if st.CurrentRevision != first.Name || st.UpdateRevision != first.Name {
		t.Fatalf("status revisions %q/%q, want %q", st.CurrentRevision, st.UpdateRevision, first.Name)
	}
	for _, name := range []string{"web-0", "web-1", "web-2"} {
		if _, rev := h.podImageAndRevision(name); rev != first.Name {
			t.Errorf("pod %s revision label %q, want %q", name, rev, first.Name)
		}
	}

	h.setSpec(func(a *tkestackv1.TApp) {
		a.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		a.Spec.UpdateStrategy.Partition = 2
	})
	h.settle()
	st = h.storedTApp().Status
	if st.CurrentRevision != first.Name || st.UpdateRevision == first.Name || st.UpdateRevision == "" {
		t.Fatalf("status revisions %q/%q, want current %q and a new update revision", st.CurrentRevision, st.UpdateRevision, first.Name)
	}
	if n := len(h.showRevisions()); n != 2 {
		t.Fatalf("%d revisions, want 2", n)
	}
	want := map[string][2]string{
		"web-0": {"nginx:1", first.Name}, "web-1": {"nginx:1", first.Name}, "web-2": {"nginx:2", st.UpdateRevision},
	}
	for name, w := range want {
		if image, rev := h.podImageAndRevision(name); image != w[0] || rev != w[1] {
			t.Errorf("pod %s: %s %s, want %s %s", name, image, rev, w[0], w[1])
		}
	}

	// A deleted low id is recreated from the current revision.
	if err := h.kube.CoreV1().Pods("ns").Delete(context.Background(), "web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.showPods()
	h.settle()
	if image, rev := h.podImageAndRevision("web-0"); image != "nginx:1" || rev != first.Name {
		t.Errorf("recreated web-0: %s %s, want nginx:1 %s", image, rev, first.Name)
	}

	// Partition 0 finishes the roll; the update revision becomes current.
	h.setSpec(func(a *tkestackv1.TApp) { a.Spec.UpdateStrategy.Partition = 0 })
	for i := 0; i < 4; i++ {
		h.settle()
		completeInPlaceUpdates(h)
	}
	st = h.storedTApp().Status
	if st.CurrentRevision != st.UpdateRevision {
		t.Errorf("after the roll: current %q, update %q", st.CurrentRevision, st.UpdateRevision)
	}
}

// completeInPlaceUpdates plays the kubelet: every container runs the image of its spec.
func completeInPlaceUpdates(h *harness) {
	list, _ := h.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	for i := range list.Items {
		pod := list.Items[i].DeepCopy()
		for j := range pod.Status.ContainerStatuses {
			if img := pod.Spec.Containers[j].Image; pod.Status.ContainerStatuses[j].Image != img {
				pod.Status.ContainerStatuses[j].Image, pod.Status.ContainerStatuses[j].ImageID = img, img+"@sha256:2"
				pod.Status.ContainerStatuses[j].RestartCount++
			}
		}
		if _, err := h.kube.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			h.t.Fatal(err)
		}
	}
	h.showPods()
}

// TestSyncPausedReportsAndHolds: a paused TApp reports the Paused condition and Progressing RolloutPaused,
// and does not touch its pods on a template change.
func TestSyncPausedReportsAndHolds(t *testing.T) {
	h := newHarness(t, testTApp(2))
	h.settle()
	h.setSpec(func(a *tkestackv1.TApp) {
		a.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		a.Spec.UpdateStrategy.Paused = true
	})
	h.settle()
	for _, name := range []string{"web-0", "web-1"} {
		if image, _ := h.podImageAndRevision(name); image != "nginx:1" {
			t.Errorf("paused TApp updated %s to %s", name, image)
		}
	}
	st := h.storedTApp().Status
	var paused, progressing *metav1.Condition
	for i := range st.Conditions {
		switch st.Conditions[i].Type {
		case tkestackv1.TAppPaused:
			paused = &st.Conditions[i]
		case tkestackv1.TAppProgressing:
			progressing = &st.Conditions[i]
		}
	}
	if paused == nil || paused.Status != metav1.ConditionTrue || progressing == nil || progressing.Reason != "RolloutPaused" {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	h.setSpec(func(a *tkestackv1.TApp) { a.Spec.UpdateStrategy.Paused = false })
	h.settle()
	if image, _ := h.podImageAndRevision("web-0"); image != "nginx:2" {
		t.Errorf("resumed TApp did not update web-0 (%s)", image)
	}
	for _, c := range h.storedTApp().Status.Conditions {
		if c.Type == tkestackv1.TAppPaused {
			t.Errorf("Paused condition left after resume")
		}
	}
}

// TestTruncateHistory keeps revisionHistoryLimit unused revisions besides those kept, deleting the oldest.
func TestTruncateHistory(t *testing.T) {
	tapp := testTApp(0)
	limit := int32(1)
	tapp.Spec.RevisionHistoryLimit = &limit
	h := newHarness(t, tapp)
	for i, name := range []string{"web-a", "web-b", "web-c", "web-d"} {
		rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tapp, tkestackv1.SchemeGroupVersion.WithKind("TApp"))}},
			Revision: int64(i + 1)}
		if _, err := h.kube.AppsV1().ControllerRevisions("ns").Create(context.Background(), rev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.showRevisions()
	if err := h.ctrl.truncateHistory(context.Background(), tapp, map[string]bool{"web-a": true, "web-d": true}); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range h.showRevisions() {
		left = append(left, r.Name)
	}
	if len(left) != 3 || left[0] != "web-a" || left[1] != "web-c" || left[2] != "web-d" {
		t.Errorf("revisions left %v, want [web-a web-c web-d]", left)
	}
}
