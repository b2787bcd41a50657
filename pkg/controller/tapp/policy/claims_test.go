package policy

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// change renders a ClaimOwnerChange as "claim +Kind/uid" or "claim -uid".
func change(c ClaimOwnerChange) string {
	if c.Add != nil {
		return fmt.Sprintf("%s +%s/%s", c.Name, c.Add.Kind, c.Add.UID)
	}
	return fmt.Sprintf("%s -%s", c.Name, c.Remove)
}

func TestPlanClaimRetention(t *testing.T) {
	const (
		retain = tkestackv1.RetainPersistentVolumeClaimRetentionPolicyType
		del    = tkestackv1.DeletePersistentVolumeClaimRetentionPolicyType
	)
	base := newTApp(2)
	base.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	tappRef := RetentionOwnerReference(base)
	controllerRef := OwnerReference(base)
	podRef := func(id string, uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "app-" + id, UID: uid}
	}
	// claim is instance id's claim as this controller creates it, with refs.
	claim := func(id string, refs ...metav1.OwnerReference) *corev1.PersistentVolumeClaim {
		c := NewPVCs(base, id)[0]
		c.UID = types.UID("c" + id)
		c.OwnerReferences = refs
		return c
	}
	otherRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "sts-uid", Controller: &[]bool{true}[0]}

	tests := []struct {
		name                    string
		replicas                int32
		whenDeleted, whenScaled tkestackv1.PersistentVolumeClaimRetentionPolicyType
		unset                   bool     // no policy at all
		deleting                bool     // the TApp is being deleted
		pods                    []string // ids with a pod
		claims                  []*corev1.PersistentVolumeClaim
		want                    []string
	}{
		{
			name: "no policy: nothing, whatever the claims", unset: true, replicas: 1, pods: []string{"0", "1"},
			claims: []*corev1.PersistentVolumeClaim{claim("0"), claim("1")},
		},
		{
			name: "Retain/Retain: the claims stay ownerless", whenDeleted: retain, whenScaled: retain, replicas: 1, pods: []string{"0", "1"},
			claims: []*corev1.PersistentVolumeClaim{claim("0"), claim("1")},
		},
		{
			name: "whenDeleted Delete: every instance claim gets the TApp, scaled away or not", whenDeleted: del, whenScaled: retain, replicas: 1, pods: []string{"0"},
			claims: []*corev1.PersistentVolumeClaim{claim("0"), claim("1"), claim("2", tappRef)},
			want:   []string{"data-app-0 +TApp/tapp-uid", "data-app-1 +TApp/tapp-uid"},
		},
		{
			name: "whenDeleted back to Retain: the TApp's reference is removed, a controller reference from an adoption is not", whenDeleted: retain, whenScaled: retain, replicas: 2,
			claims: []*corev1.PersistentVolumeClaim{claim("0", tappRef), claim("1", controllerRef)},
			want:   []string{"data-app-0 -tapp-uid"},
		},
		{
			name: "whenScaled Delete: the claim of an instance scaled away gets its pod, the others nothing", whenDeleted: retain, whenScaled: del, replicas: 1, pods: []string{"0", "1", "2"},
			claims: []*corev1.PersistentVolumeClaim{claim("0"), claim("1"), claim("2", podRef("2", "uid-2"))},
			want:   []string{"data-app-1 +Pod/uid-1"},
		},
		{
			name: "whenScaled Delete: an instance scaled away whose pod is gone is left alone", whenDeleted: retain, whenScaled: del, replicas: 1, pods: []string{"0"},
			claims: []*corev1.PersistentVolumeClaim{claim("1"), claim("2", podRef("2", "old"))},
		},
		{
			name: "whenScaled Delete: scaled back up, the pod reference is removed so the claim is kept", whenDeleted: retain, whenScaled: del, replicas: 3, pods: []string{"0", "1"},
			claims: []*corev1.PersistentVolumeClaim{claim("1", podRef("1", "uid-1")), claim("2", podRef("2", "old"))},
			want:   []string{"data-app-1 -uid-1", "data-app-2 -old"},
		},
		{
			name: "whenScaled Delete: a reference to an earlier pod of the instance is replaced by the current pod", whenDeleted: retain, whenScaled: del, replicas: 0, pods: []string{"0"},
			claims: []*corev1.PersistentVolumeClaim{claim("0", podRef("0", "old"))},
			want:   []string{"data-app-0 -old", "data-app-0 +Pod/uid-0"},
		},
		{
			name: "whenScaled Delete: a killed instance keeps its claim", whenDeleted: retain, whenScaled: del, replicas: 2, pods: []string{"0", "1"},
			claims: []*corev1.PersistentVolumeClaim{claim("1", podRef("1", "uid-1"))},
			want:   []string{"data-app-1 -uid-1"},
		},
		{
			name: "whenScaled back to Retain: pod references are removed", whenDeleted: retain, whenScaled: retain, replicas: 0, pods: []string{"0"},
			claims: []*corev1.PersistentVolumeClaim{claim("0", podRef("0", "uid-0"))},
			want:   []string{"data-app-0 -uid-0"},
		},
		{
			name: "Delete/Delete: both references on a claim scaled away", whenDeleted: del, whenScaled: del, replicas: 0, pods: []string{"0"},
			claims: []*corev1.PersistentVolumeClaim{claim("0")},
			want:   []string{"data-app-0 +TApp/tapp-uid", "data-app-0 +Pod/uid-0"},
		},
		{
			name: "claims controlled by another object, other names and terminating claims are not touched", whenDeleted: del, whenScaled: del, replicas: 0, pods: []string{"0", "1"},
			claims: func() []*corev1.PersistentVolumeClaim {
				other := claim("0", otherRef)
				foreign := claim("1")
				foreign.Name = "logs-app-1"
				terminating := claim("1")
				terminating.DeletionTimestamp = &metav1.Time{Time: testNow}
				return []*corev1.PersistentVolumeClaim{other, foreign, terminating}
			}(),
		},
		{
			name: "nothing while the TApp is being deleted", whenDeleted: del, whenScaled: del, deleting: true, replicas: 0, pods: []string{"0"},
			claims: []*corev1.PersistentVolumeClaim{claim("0")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tapp := base.DeepCopy()
			tapp.Spec.Replicas = tt.replicas
			if !tt.unset {
				tapp.Spec.PersistentVolumeClaimRetentionPolicy = &tkestackv1.TAppPersistentVolumeClaimRetentionPolicy{WhenDeleted: tt.whenDeleted, WhenScaled: tt.whenScaled}
			}
			if tt.name == "whenScaled Delete: a killed instance keeps its claim" {
				tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"1": tkestackv1.InstanceStatus("Killed")}
			}
			var pods []*corev1.Pod
			for _, id := range tt.pods {
				pods = append(pods, mustPod(t, base, id))
			}
			if tt.deleting {
				tapp.DeletionTimestamp = &metav1.Time{Time: testNow}
			}
			var got []string
			for _, c := range PlanClaimRetention(tapp, pods, tt.claims) {
				got = append(got, change(c))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PlanClaimRetention = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPlanClaimRetentionIgnoresPodsOfOthers(t *testing.T) {
	tapp := newTApp(0)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	tapp.Spec.PersistentVolumeClaimRetentionPolicy = &tkestackv1.TAppPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Retain", WhenScaled: "Delete"}
	pod := mustPod(t, tapp, "0")
	pod.OwnerReferences = nil // an orphan of that name: not the instance's pod
	claim := NewPVCs(tapp, "0")[0]
	claim.UID = "c0"
	if got := PlanClaimRetention(tapp, []*corev1.Pod{pod}, []*corev1.PersistentVolumeClaim{claim}); len(got) != 0 {
		t.Errorf("PlanClaimRetention = %+v, want nothing for a pod the TApp does not control", got)
	}
}

func TestNewInstanceClaimsRetentionOwner(t *testing.T) {
	tapp := newTApp(1)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	if refs := NewInstanceClaims(tapp, "0")[0].OwnerReferences; len(refs) != 0 {
		t.Errorf("claim owners without a policy = %+v, want none", refs)
	}
	tapp.Spec.PersistentVolumeClaimRetentionPolicy = &tkestackv1.TAppPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Delete", WhenScaled: "Retain"}
	refs := NewInstanceClaims(tapp, "0")[0].OwnerReferences
	if len(refs) != 1 || refs[0].UID != tapp.UID || refs[0].Kind != "TApp" || refs[0].Controller != nil || refs[0].BlockOwnerDeletion != nil {
		t.Errorf("claim owners with whenDeleted Delete = %+v, want the TApp, not as controller", refs)
	}
}
