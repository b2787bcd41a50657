package inplace

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrNotInPlace is returned (wrapped, with the reason) when a change cannot be applied in place.
var ErrNotInPlace = errors.New("change cannot be applied in place")

// Target describes the template a pod is moved to.
type Target struct {
	// Previous is the template the pod was created from or last updated to (the one whose hash it carries).
	Previous *corev1.PodTemplateSpec
	// Desired is the template to move the pod to.
	Desired *corev1.PodTemplateSpec
	// Revision identifies Desired (for instance its hash); it is recorded in the state annotation.
	Revision string
	// Labels are set on the pod after the template's labels and win over them, for instance the instance
	// id and hash labels. They are never removed.
	Labels map[string]string
}

// protectedAnnotations are never set or removed from a template during an in-place update.
var protectedAnnotations = map[string]bool{
	StateAnnotation:       true,
	PortMappingAnnotation: true,
}

// UpdatedPod returns a deep copy of pod moved to t in place; pod is not modified. It sets the image of every
// container whose image differs between t.Previous and t.Desired (matching containers by name, so containers
// injected into the pod by admission are left alone), applies t.Desired's labels and annotations, removes the
// labels and annotations that t.Previous had and t.Desired no longer has (other keys on the pod are kept), sets
// t.Labels, and records a State for the changed containers in StateAnnotation.
//
// If an in-place update is already in progress, the entries recorded for containers not changed again are
// kept. If no image changes, the state annotation is left as it is (and none is added).
//
// It returns an error wrapping ErrNotInPlace if CanUpdateInPlace(t.Previous, t.Desired) is false, and an error if
// the pod has no container of a name whose image changes.
func UpdatedPod(pod *corev1.Pod, t Target, now time.Time) (*corev1.Pod, error) {
	if ok, reason := CanUpdateInPlace(t.Previous, t.Desired); !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotInPlace, reason)
	}
	out := pod.DeepCopy()

	// Images, by container name.
	var newState *State
	for _, prev := range t.Previous.Spec.Containers {
		var image string
		for _, d := range t.Desired.Spec.Containers {
			if d.Name == prev.Name {
				image = d.Image
			}
		}
		if image == prev.Image {
			continue
		}
		c := findContainer(out.Spec.Containers, prev.Name)
		if c == nil {
			return nil, fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, prev.Name)
		}
		if c.Image == image {
			continue // already there: nothing to wait for
		}
		if newState == nil {
			newState = &State{Containers: map[string]ContainerState{}}
			if old, ok := ParseState(pod); ok {
				for name, cs := range old.Containers {
					newState.Containers[name] = cs
				}
			}
		}
		newState.Containers[prev.Name] = recordContainer(pod, prev.Name, c.Image, image)
		c.Image = image
	}

	// Labels.
	for k := range t.Previous.Labels {
		if _, keep := t.Desired.Labels[k]; keep {
			continue
		}
		delete(out.Labels, k)
	}
	for k, v := range t.Desired.Labels {
		setKey(&out.Labels, k, v)
	}
	for k, v := range t.Labels {
		setKey(&out.Labels, k, v)
	}

	// Annotations.
	for k := range t.Previous.Annotations {
		if _, keep := t.Desired.Annotations[k]; keep || protectedAnnotations[k] {
			continue
		}
		delete(out.Annotations, k)
	}
	for k, v := range t.Desired.Annotations {
		if !protectedAnnotations[k] {
			setKey(&out.Annotations, k, v)
		}
	}

	if newState != nil {
		newState.Revision = t.Revision
		newState.StartTime = metav1.NewTime(now)
		newState.Generation = pod.Generation
		raw, err := newState.encode()
		if err != nil {
			return nil, err
		}
		setKey(&out.Annotations, StateAnnotation, raw)
	}
	return out, nil
}

// SpecPatch returns a strategic merge patch that turns old into updated, where updated differs from old only
// in labels, annotations and regular container images (as UpdatedPod produces). Containers are addressed by
// name and removed keys are sent as null. The patch carries old's UID, so it cannot land on another pod of the
// same name (the API server refuses a change of metadata.uid with 422 Invalid). It does not carry the
// resourceVersion: the kubelet rewrites the status of a pod as soon as its readiness gate goes False, so a
// resourceVersion precondition would fail on nearly every update for a change the patch does not touch. The
// keys it sets are written by the in-place updater only, whose caller serializes the updates of a pod (see
// Updater). It returns an error if old has no UID or updated differs from old in anything else.
func SpecPatch(old, updated *corev1.Pod) ([]byte, error) {
	if old.UID == "" {
		return nil, fmt.Errorf("pod %s/%s has no UID to use as a precondition", old.Namespace, old.Name)
	}
	// Reject anything this patch would not carry.
	check := updated.DeepCopy()
	check.Labels, check.Annotations = old.Labels, old.Annotations
	if len(check.Spec.Containers) == len(old.Spec.Containers) {
		for i := range check.Spec.Containers {
			if check.Spec.Containers[i].Name == old.Spec.Containers[i].Name {
				check.Spec.Containers[i].Image = old.Spec.Containers[i].Image
			}
		}
	}
	if !equality.Semantic.DeepEqual(check, old) {
		return nil, fmt.Errorf("pod %s/%s: only labels, annotations and container images can be patched in place", old.Namespace, old.Name)
	}

	metadata := map[string]any{"uid": old.UID}
	if m := mapDiff(old.Labels, updated.Labels); len(m) > 0 {
		metadata["labels"] = m
	}
	if m := mapDiff(old.Annotations, updated.Annotations); len(m) > 0 {
		metadata["annotations"] = m
	}
	patch := map[string]any{"metadata": metadata}
	var containers []map[string]string
	for i, c := range updated.Spec.Containers {
		if c.Image != old.Spec.Containers[i].Image {
			containers = append(containers, map[string]string{"name": c.Name, "image": c.Image})
		}
	}
	if len(containers) > 0 {
		patch["spec"] = map[string]any{"containers": containers}
	}
	return json.Marshal(patch)
}

// mapDiff returns the merge-patch entries turning a into b: changed or new keys with their value, removed keys
// with nil.
func mapDiff(a, b map[string]string) map[string]any {
	d := map[string]any{}
	for k, v := range b {
		if old, ok := a[k]; !ok || old != v {
			d[k] = v
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			d[k] = nil
		}
	}
	return d
}

func setKey(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}

func findContainer(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}
