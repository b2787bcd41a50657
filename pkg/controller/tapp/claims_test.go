package tapp

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// showClaimsWithUIDs gives the claims the fake API holds a UID (the fake does not) and puts them into the cache.
func (h *harness) showClaimsWithUIDs() {
	list, err := h.kube.CoreV1().PersistentVolumeClaims("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	indexer := h.kubeInf.Core().V1().PersistentVolumeClaims().Informer().GetIndexer()
	for i := range list.Items {
		c := &list.Items[i]
		if c.UID == "" {
			c.UID = types.UID("uid-" + c.Name)
			if _, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Update(context.Background(), c, metav1.UpdateOptions{}); err != nil {
				h.t.Fatal(err)
			}
		}
		if err := indexer.Update(c); err != nil {
			h.t.Fatal(err)
		}
	}
}

// scaledDownWithClaims returns a harness whose TApp ran 2 instances with claims and is now scaled to 1,
// with whenScaled Delete.
func scaledDownWithClaims(t *testing.T) *harness {
	tapp := testTApp(2)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	tapp.Spec.PersistentVolumeClaimRetentionPolicy = &tkestackv1.TAppPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Retain", WhenScaled: "Delete"}
	h := newHarness(t, tapp)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	h.markRunning()
	h.showPods()
	h.showClaimsWithUIDs()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if got := len(h.actions("patch", "persistentvolumeclaims")); got != 0 {
		t.Fatalf("%d claim patches with every instance wanted, want 0", got)
	}
	scaled := tapp.DeepCopy()
	scaled.Spec.Replicas, scaled.Generation = 1, 2
	h.setTApp(scaled)
	return h
}

func TestScaleDownOwnsTheClaimByThePodBeforeDeletingIt(t *testing.T) {
	h := scaledDownWithClaims(t)
	pod, err := h.kube.CoreV1().Pods("ns").Get(context.Background(), "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	patchAt, deleteAt := -1, -1
	for i, a := range h.kube.Actions() {
		switch {
		case a.GetVerb() == "patch" && a.GetResource().Resource == "persistentvolumeclaims":
			p := a.(clienttesting.PatchAction)
			if p.GetName() != "data-web-1" || !strings.Contains(string(p.GetPatch()), `"uid":"`+string(pod.UID)+`"`) ||
				!strings.Contains(string(p.GetPatch()), `"kind":"Pod"`) {
				t.Errorf("claim patch %s %s, want data-web-1 owned by pod web-1 (%s)", p.GetName(), p.GetPatch(), pod.UID)
			}
			patchAt = i
		case a.GetVerb() == "delete" && a.GetResource().Resource == "pods":
			deleteAt = i
		}
	}
	if patchAt < 0 || deleteAt < 0 || patchAt > deleteAt {
		t.Fatalf("claim patch at %d, pod delete at %d: want the claim owned by the pod before the pod is deleted", patchAt, deleteAt)
	}
	claim, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "data-web-1", metav1.GetOptions{})
	if err != nil || len(claim.OwnerReferences) != 1 || claim.OwnerReferences[0].UID != pod.UID {
		t.Errorf("claim data-web-1 owners %v (%v), want pod web-1", claim.OwnerReferences, err)
	}
	kept, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "data-web-0", metav1.GetOptions{})
	if err != nil || len(kept.OwnerReferences) != 0 {
		t.Errorf("claim data-web-0 owners %v (%v), want none", kept.OwnerReferences, err)
	}
}

func TestScaleDownKeepsThePodWhoseClaimCannotBeOwned(t *testing.T) {
	h := scaledDownWithClaims(t)
	h.kube.PrependReactor("patch", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcdserver: request timed out")
	})
	if err := h.sync(); err == nil {
		t.Error("sync succeeded although a claim could not be patched")
	}
	if got := len(h.actions("delete", "pods")); got != 0 {
		t.Errorf("%d pod deletes, want the pod of the instance kept while its claim is not owned by it", got)
	}
	if !hasEvent(h.recorder, "FailedClaimOwner") {
		t.Error("no FailedClaimOwner event")
	}
}
