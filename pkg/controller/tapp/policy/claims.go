package policy

import (
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
		_, ours := obj.GetLabels()[InstanceIDLabel]
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
