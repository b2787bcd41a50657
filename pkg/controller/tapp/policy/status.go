package policy

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// Instance and app states, typed for the versioned API.
const (
	StatusNotCreated = tkestackv1.InstanceStatus(tkestack.InstanceNotCreated)
	StatusPending    = tkestackv1.InstanceStatus(tkestack.InstancePending)
	StatusRunning    = tkestackv1.InstanceStatus(tkestack.InstanceRunning)
	StatusUpdating   = tkestackv1.InstanceStatus(tkestack.InstanceUpdating)
	StatusPodFailed  = tkestackv1.InstanceStatus(tkestack.InstancePodFailed)
	StatusPodSucc    = tkestackv1.InstanceStatus(tkestack.InstancePodSucc)
	StatusKilling    = tkestackv1.InstanceStatus(tkestack.InstanceKilling)
	StatusKilled     = tkestackv1.InstanceStatus(tkestack.InstanceKilled)
	StatusFailed     = tkestackv1.InstanceStatus(tkestack.InstanceFailed)
	StatusSucc       = tkestackv1.InstanceStatus(tkestack.InstanceSucc)
	StatusUnknown    = tkestackv1.InstanceStatus(tkestack.InstanceUnknown)

	AppPending = tkestackv1.AppStatus(tkestack.AppPending)
	AppRunning = tkestackv1.AppStatus(tkestack.AppRunning)
	AppFailed  = tkestackv1.AppStatus(tkestack.AppFailed)
	AppSucc    = tkestackv1.AppStatus(tkestack.AppSucc)
	AppKilled  = tkestackv1.AppStatus(tkestack.AppKilled)
)

// Status is the status a TApp reports for a set of pods.
type Status struct {
	// Instances is the state of every instance id 0..replicas-1 plus every id ≥ replicas whose pod still
	// exists (it is being deleted).
	Instances map[string]tkestackv1.InstanceStatus
	// App summarises Instances (see AppStatus).
	App tkestackv1.AppStatus
	// Replicas counts the entries of Instances that are not NotCreated: it includes Killed holes, finished
	// instances and excess pods still terminating (the meaning of the original's status.replicas).
	Replicas int32
	// ReadyReplicas counts instances whose pod is Running, not terminating and has Ready=True.
	ReadyReplicas int32
	// UpdatedReplicas counts desired instances (id < replicas, not Killed) whose live pod carries the
	// template hash of the instance's current template.
	UpdatedReplicas int32
	// UpdatedReadyReplicas counts updated instances that are also ready.
	UpdatedReadyReplicas int32
	// AvailableReplicas counts desired instances whose pod is available (AvailableAt, spec.minReadySeconds).
	AvailableReplicas int32
	// VolumeClaims is status.volumeClaims and VolumeClaimsCondition the VolumeClaimsUpdated condition
	// (without times), while spec.volumeClaimUpdateStrategy.type is set (nil otherwise).
	VolumeClaims          []tkestackv1.TAppVolumeClaimStatus
	VolumeClaimsCondition *metav1.Condition
}

// IsKilled reports whether spec.statuses asks instance id to be killed.
func IsKilled(tapp *tkestackv1.TApp, id string) bool {
	return tapp.Spec.Statuses[id] == StatusKilled
}

func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

func isFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(pod *corev1.Pod) bool {
	c := podCondition(pod, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsInPlaceUpdating reports whether the in-place update engine holds the pod's readiness gate False.
func IsInPlaceUpdating(pod *corev1.Pod) bool {
	c := podCondition(pod, InPlaceUpdateGate)
	return c != nil && c.Status == corev1.ConditionFalse
}

// IsAvailable reports whether a pod counts as available for update budgets: not terminating, phase
// Running, Ready=True and not in the middle of an in-place update.
func IsAvailable(pod *corev1.Pod) bool {
	return !isTerminating(pod) && pod.Status.Phase == corev1.PodRunning && IsPodReady(pod) && !IsInPlaceUpdating(pod)
}

// AvailableAt reports whether pod counts as available at now when pods must have been ready for
// minReadySeconds: IsAvailable, and its Ready condition turned True at least minReadySeconds before now (a
// condition without a transition time counts as ready long enough). When the pod is available except for
// the time, wait is how long remains.
func AvailableAt(pod *corev1.Pod, minReadySeconds int32, now time.Time) (available bool, wait time.Duration) {
	if !IsAvailable(pod) {
		return false, 0
	}
	if minReadySeconds <= 0 {
		return true, 0
	}
	since := podCondition(pod, corev1.PodReady).LastTransitionTime
	if since.IsZero() {
		return true, 0
	}
	due := since.Add(time.Duration(minReadySeconds) * time.Second)
	if !now.Before(due) {
		return true, 0
	}
	return false, due.Sub(now)
}

// ShouldMigrate reports whether a finished pod is deleted and recreated (status PodFailed/PodSucc) rather
// than kept (status Failed/Succ):
//   - never with spec.neverMigrate;
//   - always if the pod was bound to a node but has no init or container statuses (the kubelet rejected it);
//   - otherwise by the pod's restartPolicy: Always → yes, OnFailure → only when Failed, Never → no. An
//     empty policy is the API default Always.
func ShouldMigrate(tapp *tkestackv1.TApp, pod *corev1.Pod) bool {
	if tapp.Spec.NeverMigrate {
		return false
	}
	if pod.Spec.NodeName != "" && len(pod.Status.ContainerStatuses) == 0 && len(pod.Status.InitContainerStatuses) == 0 {
		return true
	}
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return pod.Status.Phase == corev1.PodFailed
	default:
		return true
	}
}

// PodStatus returns the state of the instance that pod belongs to:
//   - terminating and not finished → Killing;
//   - Pending → Pending;
//   - Running → Updating while the in-place readiness gate is False, Running if Ready is True or absent,
//     else Pending;
//   - Succeeded/Failed → PodSucc/PodFailed if it migrates, else Succ/Failed (also while terminating);
//   - anything else → Unknown.
func PodStatus(tapp *tkestackv1.TApp, pod *corev1.Pod) tkestackv1.InstanceStatus {
	if isFinished(pod) {
		migrate := ShouldMigrate(tapp, pod)
		switch {
		case pod.Status.Phase == corev1.PodSucceeded && migrate:
			return StatusPodSucc
		case pod.Status.Phase == corev1.PodSucceeded:
			return StatusSucc
		case migrate:
			return StatusPodFailed
		default:
			return StatusFailed
		}
	}
	if isTerminating(pod) {
		return StatusKilling
	}
	switch pod.Status.Phase {
	case corev1.PodPending:
		return StatusPending
	case corev1.PodRunning:
		if IsInPlaceUpdating(pod) {
			return StatusUpdating
		}
		if c := podCondition(pod, corev1.PodReady); c == nil || c.Status == corev1.ConditionTrue {
			return StatusRunning
		}
		return StatusPending
	default:
		return StatusUnknown
	}
}

// InstanceStatuses returns the state of every instance. Only pods controlled by the TApp whose instance
// label is a canonical id and whose name is <tapp>-<id> count. Ids 0..replicas-1 without such a pod are
// Killed when spec.statuses says so, else NotCreated (they are about to be created). Ids ≥ replicas appear
// only while their pod exists.
//
// Unlike the original, the previous status.statuses is not consulted: Failed/Succ are not sticky once
// the pod is gone, because a missing pod of a wanted instance is always recreated (that is how a finished
// instance is restarted).
func InstanceStatuses(tapp *tkestackv1.TApp, pods []*corev1.Pod) map[string]tkestackv1.InstanceStatus {
	return ComputeStatus(tapp, pods).Instances
}

// AppStatus summarises instance states, in this order: no instance → Pending; any instance still alive
// (NotCreated, Pending, Running, Updating, Killing, Unknown, PodFailed, PodSucc) → Running; any Failed →
// Failed; any Succ → Succ; otherwise (all Killed) → Killed.
func AppStatus(statuses map[string]tkestackv1.InstanceStatus) tkestackv1.AppStatus {
	if len(statuses) == 0 {
		return AppPending
	}
	failed, succ := false, false
	for _, s := range statuses {
		switch s {
		case StatusFailed:
			failed = true
		case StatusSucc:
			succ = true
		case StatusKilled:
		default:
			return AppRunning
		}
	}
	switch {
	case failed:
		return AppFailed
	case succ:
		return AppSucc
	default:
		return AppKilled
	}
}

// ComputeStatus returns the per-instance states, the app state and the replica counts. Without a clock it
// does not apply spec.minReadySeconds: AvailableReplicas counts every available pod (ComputePlan applies it).
func ComputeStatus(tapp *tkestackv1.TApp, pods []*corev1.Pod) Status {
	owned, _, _, _, _ := classify(tapp, pods)
	return computeStatus(tapp, owned, newTemplateCache(tapp), time.Unix(1<<62, 0))
}

func computeStatus(tapp *tkestackv1.TApp, owned map[int]*corev1.Pod, templates *templateCache, now time.Time) Status {
	st := Status{Instances: make(map[string]tkestackv1.InstanceStatus, len(owned))}
	replicas := desiredReplicas(tapp)
	for n, pod := range owned {
		id := idString(n)
		s := PodStatus(tapp, pod)
		st.Instances[id] = s
		ready := s == StatusRunning && IsPodReady(pod)
		if ready {
			st.ReadyReplicas++
		}
		if n < replicas && !IsKilled(tapp, id) && !isTerminating(pod) {
			if ok, _ := AvailableAt(pod, tapp.Spec.MinReadySeconds, now); ok {
				st.AvailableReplicas++
			}
			if t := templates.forID(id); t.err == nil && pod.Labels[tkestack.TemplateHashLabel] == t.hash {
				st.UpdatedReplicas++
				if ready {
					st.UpdatedReadyReplicas++
				}
			}
		}
	}
	for n := 0; n < replicas; n++ {
		id := idString(n)
		if _, ok := owned[n]; ok {
			continue
		}
		if IsKilled(tapp, id) {
			st.Instances[id] = StatusKilled
		} else {
			st.Instances[id] = StatusNotCreated
		}
	}
	for _, s := range st.Instances {
		if s != StatusNotCreated {
			st.Replicas++
		}
	}
	st.App = AppStatus(st.Instances)
	return st
}
