package policy

import (
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

// ClaimAction is a claim to adopt or release.
type ClaimAction struct {
	// ID is the instance whose claim it is (empty for a release).
	ID   string
	Name string
	UID  types.UID
}

// ClaimPlan is what one sync does with the claims of a TApp (besides creating missing ones with NewPVCs).
type ClaimPlan struct {
	// Adoptions are orphan claims to adopt, by name.
	Adoptions []ClaimAction
	// Releases are claims the TApp controls that spec.selector no longer matches, by name.
	Releases []ClaimAction
	// OwnerChanges are the owner references spec.persistentVolumeClaimRetentionPolicy asks for
	// (PlanClaimRetention), by claim name. The executor applies them before it deletes the pods of
	// instances scaled away, and keeps the pod of an instance whose claim it could not change.
	OwnerChanges []ClaimOwnerChange
}

// ClaimOwner is the TApp as pkg/ownership sees claims: the claims that belong to it are those
// named <claim>-<tapp>-<id> for one of its volumeClaimTemplates and a wanted id that this controller did not
// create. Claims this controller creates (NewPVCs) carry tapp_instance_key and are deliberately never
// owned, so that they outlive the TApp; a claim without that label, for instance one the original
// tkestack/tapp controller created (and owned) and a migration orphaned, is adopted back.
func ClaimOwner(tapp *tkestackv1.TApp) ownership.Owner {
	owner := Owner(tapp)
	names := map[string]string{}
	for n := 0; n < desiredReplicas(tapp); n++ {
		id := idString(n)
		if IsKilled(tapp, id) {
			continue
		}
		for _, t := range tapp.Spec.VolumeClaimTemplates {
			names[PVCName(t.Name, tapp, id)] = id
		}
	}
	owner.Belongs = func(obj metav1.Object) bool {
		_, wanted := names[obj.GetName()]
		_, ours := obj.GetLabels()[tkestack.InstanceIDLabel]
		return wanted && !ours
	}
	return owner
}

// PlanClaims decides which of claims (the claims of the TApp's namespace it may own: those it controls
// and those its selector matches) the TApp adopts and releases, with the rules of the built-in
// controllers (pkg/ownership) and ClaimOwner. Nothing is adopted or released while the TApp is
// being deleted. Claims controlled by another object are never touched: an instance whose claim is one is
// reported when its pod is to be created.
func PlanClaims(tapp *tkestackv1.TApp, claims []*corev1.PersistentVolumeClaim) ClaimPlan {
	var plan ClaimPlan
	if tapp.DeletionTimestamp != nil {
		return plan
	}
	owner := ClaimOwner(tapp)
	for _, c := range claims {
		if c == nil {
			continue
		}
		switch ownership.Decide(owner, c) {
		case ownership.Adopt:
			plan.Adoptions = append(plan.Adoptions, ClaimAction{ID: claimID(tapp, c.Name), Name: c.Name, UID: c.UID})
		case ownership.Release:
			plan.Releases = append(plan.Releases, ClaimAction{Name: c.Name, UID: c.UID})
		}
	}
	sort.Slice(plan.Adoptions, func(i, j int) bool { return plan.Adoptions[i].Name < plan.Adoptions[j].Name })
	sort.Slice(plan.Releases, func(i, j int) bool { return plan.Releases[i].Name < plan.Releases[j].Name })
	return plan
}

// claimID returns the instance id of an instance claim name.
func claimID(tapp *tkestackv1.TApp, name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || !strings.HasSuffix(name[:i], "-"+tapp.Name) {
		return ""
	}
	return name[i+1:]
}

// ClaimOwnerChange adds or removes one owner reference of a claim, for
// spec.persistentVolumeClaimRetentionPolicy: the garbage collector deletes a claim once one of its owners is
// gone, so a reference to the TApp ties the claim to the TApp (whenDeleted: Delete) and a reference to the
// instance's pod ties it to that pod (whenScaled: Delete, for an instance scaled away).
type ClaimOwnerChange struct {
	// ID is the instance whose claim it is.
	ID string
	// Name and UID are the claim's.
	Name string
	UID  types.UID
	// Add is the reference to add; when nil, the reference whose UID is Remove is removed.
	Add    *metav1.OwnerReference
	Remove types.UID
}

// ClaimRetention returns spec.persistentVolumeClaimRetentionPolicy's whenDeleted and whenScaled (defaulted
// to Retain by the API).
func ClaimRetention(tapp *tkestackv1.TApp) (whenDeleted, whenScaled tkestackv1.PersistentVolumeClaimRetentionPolicyType) {
	p := tapp.Spec.PersistentVolumeClaimRetentionPolicy
	return p.WhenDeleted, p.WhenScaled
}

// RetentionOwnerReference is the owner reference to the TApp that whenDeleted: Delete puts on its claims:
// not a controller reference (the claims stay the instances' own, see ClaimOwner), and without
// blockOwnerDeletion, so that deleting the TApp does not wait for its claims.
func RetentionOwnerReference(tapp *tkestackv1.TApp) metav1.OwnerReference {
	ref := OwnerReference(tapp)
	ref.Controller, ref.BlockOwnerDeletion = nil, nil
	return ref
}

// podOwnerReference is the owner reference to an instance's pod that whenScaled: Delete puts on its claims.
func podOwnerReference(pod *corev1.Pod) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
}

// PlanClaimRetention decides the owner references of the TApp's instance claims (claims named
// <claim>-<tapp>-<id> for one of its volumeClaimTemplates) that spec.persistentVolumeClaimRetentionPolicy
// asks for, with the semantics of StatefulSet's:
//   - whenDeleted: Delete: every instance claim has a (non-controller) reference to the TApp; Retain: that
//     reference is removed (a controller reference from an adoption is left alone);
//   - whenScaled: Delete: the claims of an instance scaled away (id >= spec.replicas) whose pod exists get
//     a reference to that pod, so they are deleted once it is gone, never while it runs; an instance
//     scaled away whose pod is gone is left as it is. Claims of wanted instances (killed ones included)
//     and, with Retain, all claims lose their references to pods of the instance's name, so a scale-up
//     before the garbage collector acted keeps the claim.
//
// Claims controlled by another object are not touched, nor anything while the TApp is being deleted (the
// garbage collector then follows the references in place). pods are the TApp's pods.
func PlanClaimRetention(tapp *tkestackv1.TApp, pods []*corev1.Pod, claims []*corev1.PersistentVolumeClaim) []ClaimOwnerChange {
	if tapp.DeletionTimestamp != nil || len(tapp.Spec.VolumeClaimTemplates) == 0 {
		return nil
	}
	whenDeleted, whenScaled := ClaimRetention(tapp)
	podOf := make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(pod); ref == nil || ref.UID != tapp.UID {
			continue
		}
		if id := pod.Labels[tkestack.InstanceIDLabel]; pod.Name == PodName(tapp, id) {
			podOf[id] = pod
		}
	}
	replicas := desiredReplicas(tapp)
	tappRef := RetentionOwnerReference(tapp)
	var changes []ClaimOwnerChange
	for _, c := range claims {
		if c == nil || c.DeletionTimestamp != nil {
			continue
		}
		id := instanceOfClaim(tapp, c.Name)
		if id == "" {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(c); ref != nil && ref.UID != tapp.UID {
			continue
		}
		change := func(add *metav1.OwnerReference, remove types.UID) {
			changes = append(changes, ClaimOwnerChange{ID: id, Name: c.Name, UID: c.UID, Add: add, Remove: remove})
		}
		// The TApp's reference.
		var toTApp *metav1.OwnerReference
		for i := range c.OwnerReferences {
			if c.OwnerReferences[i].UID == tapp.UID {
				toTApp = &c.OwnerReferences[i]
			}
		}
		switch {
		case whenDeleted == tkestackv1.DeletePersistentVolumeClaimRetentionPolicyType && toTApp == nil:
			ref := tappRef
			change(&ref, "")
		case whenDeleted == tkestackv1.RetainPersistentVolumeClaimRetentionPolicyType && toTApp != nil &&
			(toTApp.Controller == nil || !*toTApp.Controller):
			change(nil, tapp.UID)
		}
		// References to the instance's pods.
		pod := podOf[id]
		scaledAway := ordinal(id) >= replicas
		if scaledAway && whenScaled == tkestackv1.DeletePersistentVolumeClaimRetentionPolicyType && pod == nil {
			continue
		}
		var want types.UID
		if scaledAway && whenScaled == tkestackv1.DeletePersistentVolumeClaimRetentionPolicyType {
			want = pod.UID
		}
		has := false
		for _, ref := range c.OwnerReferences {
			if ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != PodName(tapp, id) {
				continue
			}
			if ref.UID == want {
				has = true
			} else {
				change(nil, ref.UID)
			}
		}
		if want != "" && !has {
			ref := podOwnerReference(pod)
			change(&ref, "")
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Name < changes[j].Name })
	return changes
}

// IsInstanceClaim reports whether name is the name of a claim of one of the TApp's instances
// (<claim>-<tapp>-<id> for one of its volumeClaimTemplates).
func IsInstanceClaim(tapp *tkestackv1.TApp, name string) bool {
	return instanceOfClaim(tapp, name) != ""
}

// instanceOfClaim returns the instance id of an instance claim of the TApp, or "" for another claim.
func instanceOfClaim(tapp *tkestackv1.TApp, name string) string {
	id := claimID(tapp, name)
	if _, ok := ParseID(id); !ok {
		return ""
	}
	for _, t := range tapp.Spec.VolumeClaimTemplates {
		if PVCName(t.Name, tapp, id) == name {
			return id
		}
	}
	return ""
}

// NewInstanceClaims returns the claims of instance id as NewPVCs builds them, with the owner reference
// spec.persistentVolumeClaimRetentionPolicy asks for at creation: the TApp's (RetentionOwnerReference) with
// whenDeleted: Delete, none with Retain (the claims then outlive the TApp). PlanClaimRetention keeps the
// references of existing claims in line with the policy.
func NewInstanceClaims(tapp *tkestackv1.TApp, id string) []*corev1.PersistentVolumeClaim {
	claims := NewPVCs(tapp, id)
	if whenDeleted, _ := ClaimRetention(tapp); whenDeleted == tkestackv1.DeletePersistentVolumeClaimRetentionPolicyType {
		for _, c := range claims {
			c.OwnerReferences = []metav1.OwnerReference{RetentionOwnerReference(tapp)}
		}
	}
	return claims
}
