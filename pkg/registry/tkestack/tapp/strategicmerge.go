package tapp

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// Strategic merge patches and spec.templatePool.
//
// k8s.io/apimachinery's strategicpatch finds the patch metadata of a field (merge keys, patch strategies) by
// walking the Go struct, and cannot walk into a map whose values are structs: merging a templatePool entry
// that exists fails with "merging an object in json but data type is not struct". StrategicMerge works around
// that limit the usual way: it takes spec.templatePool out of the patch, merges everything else with the
// upstream code and the v1 TApp type, then merges each pool entry on its own with the patch metadata of
// corev1.PodTemplateSpec, exactly as spec.template is merged, and puts the pool back.
//
// A pool entry in the patch that is null or {"$patch": "delete"} removes the entry; an entry that does not
// exist yet is merged into an empty template (so its directives are applied, not stored); the pool itself
// takes "$patch": "replace" (only the patch's entries remain) and "$patch": "delete" (no pool).

const (
	directiveMarker = "$patch"
	replaceDir      = "replace"
	deleteDir       = "delete"
	mergeDir        = "merge"
)

// StrategicMerge applies a strategic merge patch to a TApp in its apps.tkestack.io/v1 JSON form. Both maps
// are left untouched. The error is the patch's fault (a malformed directive, a wrong type).
func StrategicMerge(original, patch map[string]any) (merged map[string]any, err error) {
	defer requestpath.RecoverMergePanic(&err)
	return strategicMerge(runtime.DeepCopyJSON(original), runtime.DeepCopyJSON(patch))
}

func strategicMerge(original, patch map[string]any) (map[string]any, error) {
	poolPatch, poolBase, hasPool, err := takePoolPatch(original, patch)
	if err != nil {
		return nil, err
	}
	mergedJSON, err := strategicpatch.StrategicMergeMapPatch(original, patch, &tkestackv1.TApp{})
	if err != nil {
		return nil, err
	}
	merged := map[string]any(mergedJSON)
	if !hasPool {
		return merged, nil
	}
	pool, err := mergeTemplatePool(poolBase, poolPatch)
	if err != nil {
		return nil, err
	}
	spec, ok := merged["spec"].(map[string]any)
	if !ok {
		// The patch deleted or replaced spec by something that is not an object: decoding reports it.
		return merged, nil
	}
	if len(pool) == 0 {
		delete(spec, "templatePool")
	} else {
		spec["templatePool"] = pool
	}
	return merged, nil
}

// takePoolPatch removes spec.templatePool from patch when it is an object, and returns it with the pool it
// applies to: the original's, or none when the patch replaces the whole object or spec.
func takePoolPatch(original, patch map[string]any) (poolPatch, poolBase map[string]any, ok bool, err error) {
	spec, isMap := patch["spec"].(map[string]any)
	if !isMap {
		return nil, nil, false, nil
	}
	poolPatch, isMap = spec["templatePool"].(map[string]any)
	if !isMap {
		return nil, nil, false, nil // absent, null (remove the pool) or a wrong type: upstream handles those
	}
	delete(spec, "templatePool")
	if directive(patch) == replaceDir || directive(spec) == replaceDir {
		return poolPatch, nil, true, nil
	}
	if originalSpec, isMap := original["spec"].(map[string]any); isMap {
		poolBase, _ = originalSpec["templatePool"].(map[string]any)
	}
	return poolPatch, poolBase, true, nil
}

func directive(m map[string]any) any { return m[directiveMarker] }

// mergeTemplatePool applies the templatePool part of a strategic merge patch to a pool (either may be nil),
// each entry as a corev1.PodTemplateSpec. It returns the new pool, nil when it has no entries.
func mergeTemplatePool(pool, patch map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(pool)+len(patch))
	for name, entry := range pool {
		out[name] = entry
	}
	switch d := directive(patch); d {
	case nil, mergeDir:
	case replaceDir:
		out = map[string]any{}
	case deleteDir:
		return nil, nil
	default:
		return nil, fmt.Errorf("spec.templatePool: unknown patch directive %s: %v (want %q, %q or %q)", directiveMarker, d, replaceDir, deleteDir, mergeDir)
	}
	names := make([]string, 0, len(patch))
	for name := range patch {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == directiveMarker {
			continue
		}
		switch entryPatch := patch[name].(type) {
		case nil:
			delete(out, name)
		case map[string]any:
			if directive(entryPatch) == deleteDir {
				if len(entryPatch) != 1 {
					return nil, fmt.Errorf("spec.templatePool[%s]: %s: %s must be the entry's only key", name, directiveMarker, deleteDir)
				}
				delete(out, name)
				continue
			}
			base, exists := out[name].(map[string]any)
			if exists {
				base = runtime.DeepCopyJSON(base)
			} else {
				base = map[string]any{}
			}
			merged, err := strategicpatch.StrategicMergeMapPatch(base, entryPatch, &corev1.PodTemplateSpec{})
			if err != nil {
				return nil, fmt.Errorf("spec.templatePool[%s]: %w", name, err)
			}
			if !exists {
				// The upstream merge copies what the original lacks as sent, directives below the top included.
				stripDirectives(merged)
			}
			out[name] = map[string]any(merged)
		default:
			// Not an object: stored as sent, so decoding refuses it with the field's path.
			out[name] = entryPatch
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// stripDirectives removes every key starting with "$" (a patch directive such as $setElementOrder/containers
// or $retainKeys) from a merged JSON value, and list elements that are only a directive.
func stripDirectives(v any) {
	switch v := v.(type) {
	case map[string]any:
		for key, value := range v {
			if strings.HasPrefix(key, "$") {
				delete(v, key)
				continue
			}
			stripDirectivesInto(v, key, value)
		}
	case strategicpatch.JSONMap:
		stripDirectives(map[string]any(v))
	}
}

// stripDirectivesInto strips the directives of m[key], dropping directive-only list elements.
func stripDirectivesInto(m map[string]any, key string, value any) {
	switch value := value.(type) {
	case map[string]any:
		stripDirectives(value)
	case []any:
		kept := value[:0]
		for _, item := range value {
			if obj, ok := item.(map[string]any); ok {
				stripDirectives(obj)
				if len(obj) == 0 {
					continue
				}
			}
			kept = append(kept, item)
		}
		m[key] = kept
	}
}
