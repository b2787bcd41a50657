package policy

import (
	"encoding/json"
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// samePods reports whether a live pod template runs what the rendered one describes: the revision label
// is ignored on both; labels and the nodeSelector must be equal; every other field the rendering sets
// (annotations among them) must have the same value in the live template, and lists the same length:
// fields the rendering leaves unset, which the API server defaults, and annotations added by others
// (kubectl rollout restart's) are not compared.
func samePods(live, desired *corev1.PodTemplateSpec) bool {
	if !reflect.DeepEqual(withoutRevision(live.Labels), withoutRevision(desired.Labels)) ||
		!equalMaps(live.Spec.NodeSelector, desired.Spec.NodeSelector) {
		return false
	}
	l, d := live.DeepCopy(), desired.DeepCopy()
	l.Labels, d.Labels = nil, nil
	return covers(l, d)
}

// covers reports whether every field set in desired (as JSON) has the same value in live.
func covers(live, desired any) bool {
	l, err1 := toJSON(live)
	d, err2 := toJSON(desired)
	return err1 == nil && err2 == nil && jsonCovers(l, d)
}

func toJSON(obj any) (any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(data, &out)
	return out, err
}

func jsonCovers(live, desired any) bool {
	switch d := desired.(type) {
	case nil:
		return true
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return len(d) == 0 && live == nil
		}
		for k, v := range d {
			if !jsonCovers(l[k], v) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return len(d) == 0 && live == nil
		}
		if len(l) != len(d) {
			return false
		}
		for i := range d {
			if !jsonCovers(l[i], d[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(live, desired)
	}
}

func withoutRevision(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != RevisionHashLabel {
			out[k] = v
		}
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// coversMap reports whether live has every key of want with its value.
func coversMap(live, want map[string]string) bool {
	for k, v := range want {
		if lv, ok := live[k]; !ok || lv != v {
			return false
		}
	}
	return true
}
