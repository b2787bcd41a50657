package tapp

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/expectations"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// withClaims returns a harness whose TApp of 3 has claim template data (2Gi in class, which allows
// expansion when expandable) under spec.volumeClaimUpdateStrategy OnPodRollingUpdate; its pods run and its
// claims are bound.
func withClaims(t *testing.T, class string, expandable bool) *harness {
	tapp := testTApp(3)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
		},
	}}
	tapp.Spec.VolumeClaimUpdateStrategy = &tkestackv1.TAppVolumeClaimUpdateStrategy{Type: tkestackv1.OnPodRollingUpdateVolumeClaimUpdateStrategyType}
	h := newHarness(t, tapp)
	if _, err := h.tapps.TKEStackAppsV1().TApps("ns").Update(context.Background(), tapp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "example.com/disk", AllowVolumeExpansion: ptr.To(expandable)}
	if err := h.kubeInf.Storage().V1().StorageClasses().Informer().GetIndexer().Add(sc); err != nil {
		t.Fatal(err)
	}
	h.settle()
	h.bindClaims()
	h.showClaimsWithUIDs()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	h.setTApp(h.storedTApp())
	h.kube.ClearActions()
	drainEvents(h.recorder)
	return h
}

// bindClaims makes the API's claims bound with a capacity equal to their request, as a provisioner would.
func (h *harness) bindClaims() {
	list, err := h.kube.CoreV1().PersistentVolumeClaims("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	for i := range list.Items {
		c := &list.Items[i]
		c.Status.Phase = corev1.ClaimBound
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage]}
		if _, err := h.kube.CoreV1().PersistentVolumeClaims("ns").UpdateStatus(context.Background(), c, metav1.UpdateOptions{}); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) growClaimTemplate(size string) {
	h.setSpec(func(tapp *tkestackv1.TApp) {
		tapp.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(size)
	})
}

func TestClaimExpansionPatchesOneClaimWithinTheBudget(t *testing.T) {
	h := withClaims(t, "standard", true)
	h.growClaimTemplate("4Gi")
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	patches := h.claimPatches()
	if len(patches) != 1 || patches[0].GetName() != "data-web-0" {
		t.Fatalf("claim patches %v, want one of data-web-0 (maxUnavailable 1)", patches)
	}
	if p := string(patches[0].GetPatch()); !strings.Contains(p, `"storage":"4Gi"`) || !strings.Contains(p, `"uid":"uid-data-web-0"`) {
		t.Errorf("patch %s, want storage 4Gi bound to the claim's UID", p)
	}
	if n := len(h.actions("delete", "pods")) + len(h.actions("delete", "persistentvolumeclaims")); n != 0 {
		t.Errorf("%d deletions, want none", n)
	}
	if !hasEvent(h.recorder, ReasonClaimExpanding) {
		t.Error("no ClaimExpanding event")
	}
	claim, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "data-web-0", metav1.GetOptions{})
	if q := claim.Spec.Resources.Requests[corev1.ResourceStorage]; err != nil || q.String() != "4Gi" {
		t.Errorf("data-web-0 requests %s (%v), want 4Gi", q.String(), err)
	}
	// The cache shows the claim resizing: it holds the budget, nothing else is patched.
	h.showClaimsWithUIDs()
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if patches := h.claimPatches(); len(patches) != 0 {
		t.Errorf("claim patches %v while data-web-0 resizes, want none", patches)
	}
	status := h.storedTApp().Status
	if len(status.VolumeClaims) != 1 || status.VolumeClaims[0].CompatibleReplicas != 1 || status.VolumeClaims[0].CompatibleReadyReplicas != 0 {
		t.Errorf("status.volumeClaims = %+v, want data 1 compatible, 0 ready", status.VolumeClaims)
	}
	if c := meta.FindStatusCondition(status.Conditions, tkestackv1.TAppVolumeClaimsUpdated); c == nil || c.Reason != policy.ReasonClaimsUpdating {
		t.Errorf("condition %+v, want Updating", c)
	}
	// The resize completes: the next claim.
	h.bindClaims()
	h.showClaimsWithUIDs()
	h.setTApp(h.storedTApp())
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if patches := h.claimPatches(); len(patches) != 1 || patches[0].GetName() != "data-web-1" {
		t.Errorf("claim patches %v, want data-web-1", patches)
	}
}

func TestClaimExpansionNotAllowedIsReportedOnce(t *testing.T) {
	h := withClaims(t, "fixed", false)
	h.growClaimTemplate("4Gi")
	for i := 0; i < 2; i++ {
		if err := h.sync(); err != nil {
			t.Fatal(err)
		}
		h.setTApp(h.storedTApp())
	}
	if patches := h.claimPatches(); len(patches) != 0 {
		t.Errorf("claim patches %v in a class without expansion, want none", patches)
	}
	if n := len(h.actions("delete", "pods")) + len(h.actions("delete", "persistentvolumeclaims")); n != 0 {
		t.Errorf("%d deletions, want none", n)
	}
	c := meta.FindStatusCondition(h.storedTApp().Status.Conditions, tkestackv1.TAppVolumeClaimsUpdated)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != policy.ReasonExpansionNotAllowed || !strings.Contains(c.Message, `"fixed"`) {
		t.Fatalf("condition %+v, want ExpansionNotAllowed naming the class", c)
	}
	events := 0
	for _, e := range drainEvents(h.recorder) {
		if strings.Contains(e, " "+ReasonExpansionNotAllowed+" ") {
			events++
		}
	}
	if events != 1 {
		t.Errorf("%d ExpansionNotAllowed events over two syncs, want 1", events)
	}
}

func TestClaimExpansionRefusedByAdmissionIsAnEvent(t *testing.T) {
	h := withClaims(t, "standard", true)
	h.kube.PrependReactor("patch", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "data-web-0",
			errorString("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))
	})
	h.growClaimTemplate("4Gi")
	if err := h.sync(); err != nil {
		t.Errorf("sync: %v, want no retry for a refused expansion", err)
	}
	if !hasEvent(h.recorder, ReasonExpansionNotAllowed) {
		t.Error("no ExpansionNotAllowed event")
	}
	if n := len(h.actions("delete", "pods")) + len(h.actions("delete", "persistentvolumeclaims")); n != 0 {
		t.Errorf("%d deletions, want none", n)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestIncompatibleClaimIsRecreatedWithItsPodOnlyWithRecreate(t *testing.T) {
	h := withClaims(t, "standard", true)
	h.setSpec(func(tapp *tkestackv1.TApp) { tapp.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("fast") })
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(h.actions("delete", "pods")) + len(h.actions("delete", "persistentvolumeclaims")); n != 0 {
		t.Fatalf("%d deletions with onIncompatibleChange unset, want none", n)
	}
	if !hasEvent(h.recorder, ReasonClaimsIncompatible) {
		t.Error("no ClaimsIncompatible event")
	}
	h.setSpec(func(tapp *tkestackv1.TApp) {
		tapp.Spec.VolumeClaimUpdateStrategy.OnIncompatibleChange = tkestackv1.RecreateVolumeClaimIncompatibleChange
	})
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	podAt, claimAt := -1, -1
	for i, a := range h.kube.Actions() {
		if a.GetVerb() != "delete" {
			continue
		}
		d := a.(clienttesting.DeleteAction)
		switch a.GetResource().Resource {
		case "pods":
			if d.GetName() != "web-0" || podAt >= 0 {
				t.Errorf("pod delete of %s, want only web-0", d.GetName())
			}
			podAt = i
		case "persistentvolumeclaims":
			if d.GetName() != "data-web-0" || d.GetDeleteOptions().Preconditions == nil || *d.GetDeleteOptions().Preconditions.UID != "uid-data-web-0" {
				t.Errorf("claim delete of %s %+v, want data-web-0 bound to its UID", d.GetName(), d.GetDeleteOptions().Preconditions)
			}
			claimAt = i
		}
	}
	if podAt < 0 || claimAt < podAt {
		t.Fatalf("pod delete at %d, claim delete at %d: want the pod, then its claim", podAt, claimAt)
	}
	if !hasEvent(h.recorder, ReasonClaimRecreating) {
		t.Error("no ClaimRecreating event")
	}
}

func TestNewClaimTemplateRecreatesOnePodWithItsClaim(t *testing.T) {
	h := withClaims(t, "standard", true)
	h.setSpec(func(tapp *tkestackv1.TApp) {
		logs := tapp.Spec.VolumeClaimTemplates[0].DeepCopy()
		logs.Name = "logs"
		tapp.Spec.VolumeClaimTemplates = append(tapp.Spec.VolumeClaimTemplates, *logs)
	})
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	deletes := h.actions("delete", "pods")
	if len(deletes) != 1 || deletes[0].(clienttesting.DeleteAction).GetName() != "web-0" {
		t.Fatalf("pod deletes %v, want web-0 only", deletes)
	}
	if !hasEvent(h.recorder, ReasonRecreatingForClaims) {
		t.Error("no RecreatingForClaims event")
	}
	h.showPods()
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "logs-web-0", metav1.GetOptions{}); err != nil {
		t.Errorf("claim logs-web-0: %v", err)
	}
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mounted := false
	for _, v := range pod.Spec.Volumes {
		mounted = mounted || (v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "logs-web-0")
	}
	if !mounted {
		t.Errorf("web-0 volumes %v, want logs-web-0 mounted", pod.Spec.Volumes)
	}
}

// TestClaimEventsEnqueueTheTAppWhoseClaimsFollow: a change or the deletion of an instance claim enqueues a
// TApp whose claims follow their templates, even when its selector's labels are not on the claim (a
// matchExpressions selector); a TApp without the strategy is not woken by a claim it does not control or
// select, and an unrelated claim wakes nobody.
func TestClaimEventsEnqueueTheTAppWhoseClaimsFollow(t *testing.T) {
	h := withClaims(t, "standard", true)
	queued(h.ctrl)
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-1", Labels: map[string]string{"other": "x"}}}
	h.ctrl.claimChanged(claim)
	if got := queued(h.ctrl); len(got) != 1 || got[0] != "ns/web" {
		t.Errorf("queued %v after a claim change, want ns/web", got)
	}
	h.ctrl.claimDeleted(cache.DeletedFinalStateUnknown{Key: "ns/data-web-1", Obj: claim})
	if got := queued(h.ctrl); len(got) != 1 || got[0] != "ns/web" {
		t.Errorf("queued %v after a claim deletion, want ns/web", got)
	}
	unrelated := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-other-1"}}
	h.ctrl.claimDeleted(unrelated)
	if got := queued(h.ctrl); len(got) != 0 {
		t.Errorf("queued %v after an unrelated claim's deletion, want nothing", got)
	}
	h.setSpec(func(tapp *tkestackv1.TApp) { tapp.Spec.VolumeClaimUpdateStrategy = nil })
	queued(h.ctrl)
	h.ctrl.claimDeleted(claim)
	if got := queued(h.ctrl); len(got) != 0 {
		t.Errorf("queued %v without a strategy, want nothing", got)
	}
}

// TestOnDeleteRecreatesTheClaimBeforeThePod: under OnDelete with onIncompatibleChange Recreate, a class
// change touches no running instance; once a pod is deleted, its claim is deleted first (bound to its UID)
// and the pod is not created while the claim exists; once the claim is gone, the claim is created from the
// new template and then the pod.
func TestOnDeleteRecreatesTheClaimBeforeThePod(t *testing.T) {
	h := withClaims(t, "standard", true)
	h.setSpec(func(tapp *tkestackv1.TApp) {
		tapp.Spec.VolumeClaimUpdateStrategy = &tkestackv1.TAppVolumeClaimUpdateStrategy{Type: tkestackv1.OnDeleteVolumeClaimUpdateStrategyType,
			OnIncompatibleChange: tkestackv1.RecreateVolumeClaimIncompatibleChange}
		tapp.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("fast")
	})
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(h.actions("delete", "pods")) + len(h.actions("delete", "persistentvolumeclaims")); n != 0 {
		t.Fatalf("%d deletions under OnDelete with every pod running, want none", n)
	}
	// A user deletes pod web-1.
	if err := h.kube.CoreV1().Pods("ns").Delete(context.Background(), "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.showPods()
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	deletes := h.actions("delete", "persistentvolumeclaims")
	if len(deletes) != 1 || deletes[0].(clienttesting.DeleteAction).GetName() != "data-web-1" ||
		*deletes[0].(clienttesting.DeleteAction).GetDeleteOptions().Preconditions.UID != "uid-data-web-1" {
		t.Fatalf("claim deletes %v, want data-web-1 bound to its UID", deletes)
	}
	if creates := h.actions("create", "pods"); len(creates) != 0 {
		t.Fatalf("pod created while its claim is being recreated: %v", creates)
	}
	// The claim is gone: the claim is created from the new template, then the pod.
	h.showClaims()
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	claim, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "data-web-1", metav1.GetOptions{})
	if err != nil || claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != "fast" {
		t.Fatalf("claim data-web-1 %+v (%v), want it created in class fast", claim, err)
	}
	if creates := h.actions("create", "pods"); len(creates) != 1 {
		t.Errorf("pod creates %v, want web-1", creates)
	}
}

// patchesByClaim counts the claim patches sent so far, by claim name.
func (h *harness) patchesByClaim() map[string]int {
	out := map[string]int{}
	for _, p := range h.claimPatches() {
		out[p.GetName()]++
	}
	return out
}

// expandingAll is a harness with claims whose template grew to 4Gi under maxUnavailable 100%, so that one
// sync expands the claims of every instance.
func expandingAll(t *testing.T) *harness {
	h := withClaims(t, "standard", true)
	h.setSpec(func(tapp *tkestackv1.TApp) {
		all := intstr.FromString("100%")
		tapp.Spec.UpdateStrategy.MaxUnavailable = &all
		tapp.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("4Gi")
	})
	return h
}

// TestClaimExpansionIsSentOncePerClaim: syncs that run before the claim informer shows the raised requests
// (the status write and the claims' own events wake the TApp again at once) do not patch the claims again;
// once the cache shows them, the sync goes on and patches nothing more.
func TestClaimExpansionIsSentOncePerClaim(t *testing.T) {
	h := expandingAll(t)
	for i := 0; i < 2; i++ {
		if err := h.sync(); err != nil {
			t.Fatal(err)
		}
		h.setTApp(h.storedTApp())
	}
	want := map[string]int{"data-web-0": 1, "data-web-1": 1, "data-web-2": 1}
	if got := h.patchesByClaim(); !apiequality.Semantic.DeepEqual(got, want) {
		t.Fatalf("claim patches by claim after two syncs before the cache shows them: %v, want %v", got, want)
	}
	// The informer shows the raised requests: the claims resize, nothing is patched again.
	h.showClaimsWithUIDs()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := h.patchesByClaim(); !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("claim patches by claim once the cache shows them: %v, want %v", got, want)
	}
	if c := meta.FindStatusCondition(h.storedTApp().Status.Conditions, tkestackv1.TAppVolumeClaimsUpdated); c == nil || c.Reason != policy.ReasonClaimsUpdating {
		t.Errorf("condition %+v, want Updating", c)
	}
}

// TestClaimExpansionExpectationExpires: an expansion the claim cache never shows (a lost watch event) holds
// the TApp back only until the expectations' TTL; the claims are then planned from the cache as it is.
func TestClaimExpansionExpectationExpires(t *testing.T) {
	h := expandingAll(t)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(expectations.TTL + time.Second)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"data-web-0": 2, "data-web-1": 2, "data-web-2": 2}
	if got := h.patchesByClaim(); !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("claim patches by claim after the TTL: %v, want %v", got, want)
	}
}

// TestFailedClaimExpansionIsNotExpected: a patch the API server fails is not expected: the next sync retries
// it at once.
func TestFailedClaimExpansionIsNotExpected(t *testing.T) {
	h := expandingAll(t)
	failing := true
	h.kube.PrependReactor("patch", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		if failing {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		}
		return false, nil, nil
	})
	if err := h.sync(); err == nil {
		t.Error("sync with failed claim patches: no error, want a retry")
	}
	failing = false
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"data-web-0": 2, "data-web-1": 2, "data-web-2": 2}
	if got := h.patchesByClaim(); !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("claim patches by claim: %v, want %v (one failed, one retried, each)", got, want)
	}
}

// TestReplacedClaimSatisfiesItsExpansion: a claim deleted and created again (another UID) before the cache
// showed its expansion does not hold the TApp back: the new claim is expanded.
func TestReplacedClaimSatisfiesItsExpansion(t *testing.T) {
	h := expandingAll(t)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	indexer := h.kubeInf.Core().V1().PersistentVolumeClaims().Informer().GetIndexer()
	for _, name := range []string{"data-web-0", "data-web-1", "data-web-2"} {
		obj, exists, err := indexer.GetByKey("ns/" + name)
		if err != nil || !exists {
			t.Fatalf("claim %s not cached: %v", name, err)
		}
		replaced := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
		replaced.UID = types.UID("new-" + name)
		if err := indexer.Update(replaced); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, p := range h.claimPatches()[3:] {
		uids = append(uids, patchMetadata(t, p)["uid"].(string))
	}
	sort.Strings(uids) // the claims are patched in parallel
	if want := []string{"new-data-web-0", "new-data-web-1", "new-data-web-2"}; !apiequality.Semantic.DeepEqual(uids, want) {
		t.Errorf("patches after the claims were replaced bound to %v, want %v", uids, want)
	}
}
