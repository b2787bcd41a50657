package inplace

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// CanUpdateInPlace reports whether a pod created from the template previous can be moved to the template
// desired without being recreated. That is the case only when the two specs differ at most in the image of
// regular containers, the containers being matched by name (same names in the same order). Metadata (labels,
// annotations) may differ freely. Any other difference, including a change of an init container's image (init
// containers only run when the pod starts, so patching their image would leave the update half-applied),
// returns false and a reason suitable for an event or log line.
//
// The comparison is made between templates, never against a live pod, so defaults and fields that the API
// server, admission plugins or the scheduler add to pods do not count as changes. Both templates should have
// gone through the same defaulting (for instance both read back from the API). Semantic equality is used, so
// an empty list equals a missing one and quantities compare by value.
func CanUpdateInPlace(previous, desired *corev1.PodTemplateSpec) (bool, string) {
	if previous == nil {
		return false, "the template the pod was created from is unknown"
	}
	if desired == nil {
		return false, "the desired template is unknown"
	}
	if reason := compareContainers("container", previous.Spec.Containers, desired.Spec.Containers, true); reason != "" {
		return false, reason
	}
	if reason := compareContainers("init container", previous.Spec.InitContainers, desired.Spec.InitContainers, false); reason != "" {
		return false, reason
	}
	prev, des := previous.Spec.DeepCopy(), desired.Spec.DeepCopy()
	prev.Containers, des.Containers = nil, nil
	prev.InitContainers, des.InitContainers = nil, nil
	if field := firstDifferentField(*prev, *des); field != "" {
		return false, fmt.Sprintf("spec.%s changed", field)
	}
	return true, ""
}

// ChangedImages returns, by container name, the new image of every regular container whose image differs
// between previous and desired. Containers present in only one template are ignored; call CanUpdateInPlace
// first.
func ChangedImages(previous, desired *corev1.PodTemplateSpec) map[string]string {
	changed := map[string]string{}
	if previous == nil || desired == nil {
		return changed
	}
	old := make(map[string]string, len(previous.Spec.Containers))
	for _, c := range previous.Spec.Containers {
		old[c.Name] = c.Image
	}
	for _, c := range desired.Spec.Containers {
		if img, ok := old[c.Name]; ok && img != c.Image {
			changed[c.Name] = c.Image
		}
	}
	return changed
}

// compareContainers returns why two container lists cannot be updated in place, or "".
func compareContainers(kind string, prev, des []corev1.Container, imageMayChange bool) string {
	if len(prev) != len(des) {
		return fmt.Sprintf("%ss were added or removed (%d -> %d)", kind, len(prev), len(des))
	}
	for i := range prev {
		if prev[i].Name != des[i].Name {
			return fmt.Sprintf("%ss were renamed or reordered (%q -> %q at index %d)", kind, prev[i].Name, des[i].Name, i)
		}
	}
	for i := range prev {
		p, d := prev[i].DeepCopy(), des[i].DeepCopy()
		if p.Image != d.Image && !imageMayChange {
			return fmt.Sprintf("%s %q: image changed; init containers only run at pod start, so the pod must be recreated", kind, p.Name)
		}
		p.Image, d.Image = "", ""
		if field := firstDifferentField(*p, *d); field != "" {
			return fmt.Sprintf("%s %q: %s changed", kind, p.Name, field)
		}
	}
	return ""
}

// firstDifferentField returns the JSON name of the first top-level field of two structs of the same type
// that are not semantically equal, or "" if they are equal.
func firstDifferentField(a, b any) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if !equality.Semantic.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			return name
		}
	}
	// Belt and braces: the struct may gain unexported state that the loop above skipped.
	if !equality.Semantic.DeepEqual(a, b) {
		return t.Name()
	}
	return ""
}
