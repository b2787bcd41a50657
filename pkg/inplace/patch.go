package inplace

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Update is what an in-place update writes on one pod. The caller computes it, once, from the pod and the
// template the pod moves to (for the TApp controller, its policy package does); the engine applies it as it
// is and decides nothing.
type Update struct {
	// Revision identifies the template the pod moves to (for instance its hash); it is recorded in the state
	// annotation.
	Revision string
	// Images maps a container name to its new image. Containers are matched by name, so containers that
	// admission injected into the pod are left alone.
	Images map[string]string
	// Resources maps a container name to its new resources (requests and limits, replaced as a whole). They
	// are applied through the pods/resize subresource, which the kubelet carries out honouring each
	// container's resizePolicy; the change must keep the pod's QoS class (the API server refuses it
	// otherwise), which is the caller's decision to check.
	Resources map[string]corev1.ResourceRequirements
	// Labels are set on the pod; RemoveLabels are removed from it. Other labels on the pod are kept.
	Labels       map[string]string
	RemoveLabels []string
	// Annotations are set on the pod; RemoveAnnotations are removed from it. Other annotations on the pod
	// are kept. Neither may name StateAnnotation, which the engine alone writes.
	Annotations       map[string]string
	RemoveAnnotations []string
}

// UpdatedPod returns a deep copy of pod with u applied; pod is not modified. It sets the image of every
// container named in u.Images, removes u.RemoveLabels and u.RemoveAnnotations, sets u.Labels and
// u.Annotations, and records in StateAnnotation a State for the containers whose image it changed.
//
// If an in-place update is already in progress, the entries recorded for containers not changed again are
// kept. If no image changes, the state annotation is left as it is (and none is added).
//
// It returns an error if the pod has no container of a name in u.Images, or if u sets or removes
// StateAnnotation.
func UpdatedPod(pod *corev1.Pod, u Update, now time.Time) (*corev1.Pod, error) {
	if _, ok := u.Annotations[StateAnnotation]; ok || slices.Contains(u.RemoveAnnotations, StateAnnotation) {
		return nil, fmt.Errorf("pod %s/%s: an in-place update cannot write %s", pod.Namespace, pod.Name, StateAnnotation)
	}
	out := pod.DeepCopy()

	// Images, by container name, in a stable order.
	names := make([]string, 0, len(u.Images))
	for name := range u.Images {
		names = append(names, name)
	}
	sort.Strings(names)
	var newState *State
	ensureState := func() {
		if newState != nil {
			return
		}
		newState = &State{Containers: map[string]ContainerState{}}
		if old, ok := ParseState(pod); ok {
			for name, cs := range old.Containers {
				newState.Containers[name] = cs
			}
			for name, r := range old.Resize {
				setResize(newState, name, r)
			}
		}
	}
	for _, name := range names {
		image := u.Images[name]
		c := findContainer(out.Spec.Containers, name)
		if c == nil {
			return nil, fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, name)
		}
		if c.Image == image {
			continue // already there: nothing to wait for
		}
		ensureState()
		newState.Containers[name] = recordContainer(pod, name, c.Image, image)
		c.Image = image
	}

	// Resources, by container name, in a stable order.
	names = names[:0]
	for name := range u.Resources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := u.Resources[name]
		c := findContainer(out.Spec.Containers, name)
		if c == nil {
			return nil, fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, name)
		}
		if equality.Semantic.DeepEqual(c.Resources, want) {
			continue
		}
		ensureState()
		rec := ResizeState{Resources: *want.DeepCopy()}
		if st := containerStatus(pod, name); st != nil {
			rec.OldRestartCount = st.RestartCount
		}
		setResize(newState, name, rec)
		c.Resources = *want.DeepCopy()
	}

	for _, k := range u.RemoveLabels {
		delete(out.Labels, k)
	}
	for k, v := range u.Labels {
		setKey(&out.Labels, k, v)
	}
	for _, k := range u.RemoveAnnotations {
		delete(out.Annotations, k)
	}
	for k, v := range u.Annotations {
		setKey(&out.Annotations, k, v)
	}

	if newState != nil {
		newState.Revision = u.Revision
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
// in labels, annotations, regular container images and resources (as UpdatedPod produces); resources are
// not part of it (ResizePatch carries them). Containers are addressed by
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
				check.Spec.Containers[i].Resources = old.Spec.Containers[i].Resources
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

// ResizePatch returns the JSON patch of the pods/resize subresource that gives the regular containers of old
// the resources they have in updated (as UpdatedPod produces), or nil when no resources change. Each changed
// container's resources are replaced as a whole, at its index, after a test of its name there; a test of
// old's UID binds the patch to that pod (the resize subresource keeps only resource changes, so the UID
// cannot be sent as a field to keep).
func ResizePatch(old, updated *corev1.Pod) ([]byte, error) {
	if len(old.Spec.Containers) != len(updated.Spec.Containers) {
		return nil, fmt.Errorf("pod %s/%s: containers differ", old.Namespace, old.Name)
	}
	var ops []map[string]any
	for i, c := range updated.Spec.Containers {
		if c.Name != old.Spec.Containers[i].Name {
			return nil, fmt.Errorf("pod %s/%s: containers differ", old.Namespace, old.Name)
		}
		if equality.Semantic.DeepEqual(c.Resources, old.Spec.Containers[i].Resources) {
			continue
		}
		path := "/spec/containers/" + strconv.Itoa(i)
		ops = append(ops,
			map[string]any{"op": "test", "path": path + "/name", "value": c.Name},
			map[string]any{"op": "replace", "path": path + "/resources", "value": c.Resources})
	}
	if len(ops) == 0 {
		return nil, nil
	}
	if old.UID == "" {
		return nil, fmt.Errorf("pod %s/%s has no UID to use as a precondition", old.Namespace, old.Name)
	}
	ops = append([]map[string]any{{"op": "test", "path": "/metadata/uid", "value": old.UID}}, ops...)
	return json.Marshal(ops)
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
