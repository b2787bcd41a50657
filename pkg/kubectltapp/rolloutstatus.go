package kubectltapp

import (
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// RolloutState is what `rollout status` concludes from one look at a TApp and its pods.
type RolloutState struct {
	// Done: every wanted instance runs the current version of its template and is available.
	Done bool
	// Failed: the rollout cannot finish without a change (an instance finished for good, the TApp is
	// being deleted) or did not progress within spec.progressDeadlineSeconds; Message says why.
	Failed bool
	// Message is the line to print.
	Message string
	// RecheckAfter, when > 0, is when an updated pod that is ready but not yet for spec.minReadySeconds
	// becomes available: the state changes then without any event.
	RecheckAfter time.Duration
}

// EvaluateRollout judges a rollout the way kubectl rollout status judges a StatefulSet's: the controller
// must have observed the current generation, then every wanted instance (id < spec.replicas, not Killed,
// not below updateStrategy.partition) must have a pod, not terminating, that carries the template hash of
// the template the instance runs and is available at now (Running, Ready for spec.minReadySeconds, not in
// the middle of an in-place update).
// An instance whose pod finished and is not recreated (status Failed or Succ) fails the rollout: it never
// becomes ready again. So does a rollout whose controller reports, for the current generation, Progressing
// False with reason ProgressDeadlineExceeded (spec.progressDeadlineSeconds passed without progress), as
// kubectl rollout status fails a Deployment's.
func EvaluateRollout(tapp *tkestackv1.TApp, pods []*corev1.Pod, now time.Time) RolloutState {
	name := fmt.Sprintf("TApp %q", tapp.Name)
	if tapp.DeletionTimestamp != nil {
		return RolloutState{Failed: true, Message: name + " is being deleted"}
	}
	if tapp.Status.ObservedGeneration < tapp.Generation {
		return RolloutState{Message: fmt.Sprintf("Waiting for %s spec update to be observed...", name)}
	}
	owned := InstancePods(tapp, pods)
	hashes := map[string]string{}
	partition := rolloutPartition(tapp)
	var wanted, updated, available int
	var recheck time.Duration
	var finished, missingTemplate []string
	for n := partition; n < int(tapp.Spec.Replicas); n++ {
		id := strconv.Itoa(n)
		if policy.IsKilled(tapp, id) {
			continue
		}
		wanted++
		templateName := policy.TemplateNameFor(tapp, id)
		hash, ok := hashes[templateName]
		if !ok {
			if t, err := policy.TemplateFor(tapp, templateName); err == nil {
				hash = tapppod.TemplateHash(t)
			}
			hashes[templateName] = hash
		}
		if hash == "" {
			missingTemplate = append(missingTemplate, id+"→"+templateName)
			continue
		}
		pod := owned[n]
		if pod == nil || pod.DeletionTimestamp != nil || pod.Labels[tkestack.TemplateHashLabel] != hash {
			continue
		}
		updated++
		switch policy.PodStatus(tapp, pod) {
		case policy.StatusFailed, policy.StatusSucc:
			finished = append(finished, id)
			continue
		}
		ok, wait := policy.AvailableAt(pod, tapp.Spec.MinReadySeconds, now)
		if ok {
			available++
		} else if wait > 0 && (recheck == 0 || wait < recheck) {
			recheck = wait
		}
	}
	if len(missingTemplate) > 0 {
		return RolloutState{Failed: true, Message: fmt.Sprintf("%s: instances use templates that do not exist: %s",
			name, strings.Join(missingTemplate, ", "))}
	}
	if len(finished) > 0 {
		return RolloutState{Failed: true, Message: fmt.Sprintf("%s: instances %s finished and are not restarted (restartPolicy or spec.neverMigrate); they will not become ready",
			name, strings.Join(finished, ", "))}
	}
	if updated < wanted || available < wanted {
		if c := meta.FindStatusCondition(tapp.Status.Conditions, tkestackv1.TAppProgressing); c != nil && c.Status == metav1.ConditionFalse &&
			c.Reason == policy.ReasonProgressDeadlineExceeded && c.ObservedGeneration == tapp.Generation {
			return RolloutState{Failed: true, Message: fmt.Sprintf("%s exceeded its progress deadline: %s", name, c.Message)}
		}
	}
	scope := "instances"
	if partition > 0 {
		scope = fmt.Sprintf("instances with id >= %d (partition)", partition)
	}
	if updated < wanted {
		msg := fmt.Sprintf("Waiting for %s rollout to finish: %d out of %d %s have been updated...", name, updated, wanted, scope)
		return RolloutState{Message: withNotes(tapp, msg)}
	}
	if available < wanted {
		msg := fmt.Sprintf("Waiting for %s rollout to finish: %d of %d updated %s are available...", name, available, wanted, scope)
		return RolloutState{Message: withNotes(tapp, msg), RecheckAfter: recheck}
	}
	msg := fmt.Sprintf("%s successfully rolled out: %d %s updated and available", name, wanted, scope)
	if r := updateRevision(tapp); r != "" {
		msg += " at revision " + r
	}
	return RolloutState{Done: true, Message: msg}
}

// withNotes appends to a waiting message why the rollout may not progress: a paused update strategy, or
// the controller's ReplicaFailure condition.
func withNotes(tapp *tkestackv1.TApp, msg string) string {
	if rolloutPaused(tapp) {
		msg += " (the rollout is paused: run `kubectl tapp rollout resume " + tapp.Name + "`)"
	}
	if c := meta.FindStatusCondition(tapp.Status.Conditions, tkestackv1.TAppReplicaFailure); c != nil && c.Status == metav1.ConditionTrue {
		msg += " (" + c.Reason + ": " + c.Message + ")"
	}
	return msg
}
