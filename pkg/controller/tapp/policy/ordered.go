package policy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// OrderPlan applies spec.podManagementPolicy OrderedReady to a plan computed for pods (the TApp's pods),
// as the PetSet design and StatefulSet's OrderedReady give it; with Parallel (or unset) the plan is
// returned as it is. With OrderedReady:
//   - creation: only the lowest id to create, and only once every wanted instance below it (killed ones
//     do not count) has a pod that is Running and Ready (IsAvailable);
//   - removal (scale-down and kills): one pod at a time, the highest id first, and none while a pod of the
//     TApp is terminating;
//   - updates (in-place updates and recreations): one at a time, the plan's first (the first whose pod a
//     lifecycle hook prepares, PreparingUpdate or PreparingDelete, if any), only while every other wanted
//     instance is Running and Ready and no pod is terminating.
//
// Force deletions of pods whose node is lost, deletions of finished pods that migrate and of stray pods,
// relabels, revision labels, gates, adoptions and releases are not held. plan is changed in place and
// returned.
func OrderPlan(tapp *tkestackv1.TApp, pods []*corev1.Pod, plan *Plan) *Plan {
	if plan == nil || tapp.Spec.PodManagementPolicy != tkestackv1.OrderedReadyPodManagement {
		return plan
	}
	healthy := map[int]bool{}
	terminating := false
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(pod); ref == nil || ref.UID != tapp.UID {
			continue
		}
		if isTerminating(pod) {
			terminating = true
			continue
		}
		if id, ok := InstanceID(pod); ok && pod.Name == PodName(tapp, id) && IsAvailable(pod) {
			healthy[ordinal(id)] = true
		}
	}
	replicas := desiredReplicas(tapp)
	// wantedBelowHealthy reports whether every wanted instance below n, other than skip, is healthy.
	wantedBelowHealthy := func(n, skip int) bool {
		for i := 0; i < n && i < replicas; i++ {
			if i != skip && !IsKilled(tapp, idString(i)) && !healthy[i] {
				return false
			}
		}
		return true
	}

	// Creation: the lowest id, once the wanted ones below are healthy.
	lowest := -1
	for _, id := range plan.Creates {
		if n := ordinal(id); n >= 0 && (lowest < 0 || n < lowest) {
			lowest = n
		}
	}
	plan.Creates = nil
	if lowest >= 0 && wantedBelowHealthy(lowest, -1) {
		plan.Creates = []string{idString(lowest)}
	}

	// Removal: the highest id, one at a time.
	var kept []Delete
	highest := -1
	for i, d := range plan.Deletes {
		if d.Reason != ReasonScaleDown && d.Reason != ReasonKilled {
			kept = append(kept, d)
			continue
		}
		if !terminating && (highest < 0 || ordinal(d.ID) > ordinal(plan.Deletes[highest].ID)) {
			highest = i
		}
	}
	if highest >= 0 {
		kept = append(kept, plan.Deletes[highest])
	}
	plan.Deletes = kept

	// Updates: one at a time, while the others are healthy. An instance a lifecycle hook prepares for its
	// update goes first: it is the one already under way (its gate may be False, so it is not healthy).
	preparing := map[string]bool{}
	for _, pod := range pods {
		if pod != nil && isPreparing(pod) {
			preparing[pod.Name] = true
		}
	}
	var inPlace []InPlaceUpdate
	var recreates []Recreate
	switch {
	case len(plan.InPlaceUpdates) > 0:
		inPlace = plan.InPlaceUpdates[:1]
	case len(plan.Recreates) > 0:
		recreates = plan.Recreates[:1]
	}
	for i, u := range plan.InPlaceUpdates {
		if preparing[u.PodName] {
			inPlace, recreates = plan.InPlaceUpdates[i:i+1], nil
			break
		}
	}
	if len(inPlace) == 0 || !preparing[inPlace[0].PodName] {
		for i, r := range plan.Recreates {
			if preparing[r.PodName] {
				inPlace, recreates = nil, plan.Recreates[i:i+1]
				break
			}
		}
	}
	updating := ""
	switch {
	case len(inPlace) > 0:
		updating = inPlace[0].ID
	case len(recreates) > 0:
		updating = recreates[0].ID
	}
	plan.InPlaceUpdates, plan.Recreates = nil, nil
	if updating != "" && !terminating && wantedBelowHealthy(replicas, ordinal(updating)) {
		plan.InPlaceUpdates, plan.Recreates = inPlace, recreates
	}
	return plan
}
