package inplace

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ReadinessGate is the pod condition type of the readiness gate the engine drives. Pods created by the
	// controller list it in spec.readinessGates (see AddReadinessGate); the kubelet keeps the pod's Ready
	// condition False while this condition is not True.
	ReadinessGate corev1.PodConditionType = "tkestack.io/InPlaceUpdate"

	// StateAnnotation holds the JSON State of an in-place update in progress. The original controller wrote
	// the string "true" there and never removed it; any value that is not a JSON State is read as "no state".
	StateAnnotation = "tkestack.io/inplace-update-state"

	// ReasonUpdating is the reason of the gate condition while an in-place update is in progress.
	ReasonUpdating = "InPlaceUpdating"
	// ReasonUpdated is the reason of the gate condition once an in-place update has finished.
	ReasonUpdated = "InPlaceUpdated"
	// ReasonNotUpdating is the reason of the gate condition set by EnsureReadinessGateTrue on a pod that has
	// no in-place update in progress (typically a freshly created pod).
	ReasonNotUpdating = "NotUpdating"
)

// State is the JSON content of StateAnnotation while an in-place update is in progress.
type State struct {
	// Revision identifies the target template (for instance its hash); informational.
	Revision string `json:"revision,omitempty"`
	// StartTime is when the spec was patched.
	StartTime metav1.Time `json:"startTime"`
	// Generation is the pod's metadata.generation before the spec patch. When the kubelet reports
	// status.observedGeneration, a status that has not observed a later generation is ignored as stale.
	Generation int64 `json:"generation,omitempty"`
	// Containers holds, per name of a container whose image is being changed, what the kubelet reported
	// for it before the patch.
	Containers map[string]ContainerState `json:"containers"`
	// Resize holds, per name of a container being resized, the resources asked for through pods/resize.
	Resize map[string]ResizeState `json:"resize,omitempty"`
}

// ResizeState is what the engine recorded about one container it resizes.
type ResizeState struct {
	// Resources are the container's new requests and limits.
	Resources corev1.ResourceRequirements `json:"resources"`
	// OldRestartCount is the container's restartCount before the resize.
	OldRestartCount int32 `json:"oldRestartCount"`
}

func setResize(s *State, name string, r ResizeState) {
	if s.Resize == nil {
		s.Resize = map[string]ResizeState{}
	}
	s.Resize[name] = r
}

// ContainerState is what the engine recorded about one container before patching its image.
type ContainerState struct {
	OldImage         string `json:"oldImage,omitempty"`
	NewImage         string `json:"newImage"`
	OldImageID       string `json:"oldImageID,omitempty"`
	OldContainerID   string `json:"oldContainerID,omitempty"`
	OldRestartCount  int32  `json:"oldRestartCount"`
	OldWaitingReason string `json:"oldWaitingReason,omitempty"`
}

// ParseState returns the in-place update state recorded on the pod. ok is false when there is none: no
// annotation, the legacy value "true", a value that is not a JSON object, or a state naming no container
// (neither an image change nor a resize).
func ParseState(pod *corev1.Pod) (state *State, ok bool) {
	if pod == nil {
		return nil, false
	}
	raw, found := pod.Annotations[StateAnnotation]
	if !found || raw == "" {
		return nil, false
	}
	s := &State{}
	if err := json.Unmarshal([]byte(raw), s); err != nil {
		return nil, false
	}
	if len(s.Containers) == 0 && len(s.Resize) == 0 {
		return nil, false
	}
	return s, true
}

// InProgress reports whether the pod carries the state of an in-place update that has not been completed.
func InProgress(pod *corev1.Pod) bool {
	_, ok := ParseState(pod)
	return ok
}

func (s *State) encode() (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encoding in-place update state: %w", err)
	}
	return string(b), nil
}

// recordContainer captures what the kubelet reports for the named container.
func recordContainer(pod *corev1.Pod, name, oldImage, newImage string) ContainerState {
	cs := ContainerState{OldImage: oldImage, NewImage: newImage}
	if st := containerStatus(pod, name); st != nil {
		cs.OldImageID = st.ImageID
		cs.OldContainerID = st.ContainerID
		cs.OldRestartCount = st.RestartCount
		if st.State.Waiting != nil {
			cs.OldWaitingReason = st.State.Waiting.Reason
		}
	}
	return cs
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}
