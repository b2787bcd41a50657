package tapp

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// Strategic merge patches of a TApp (main resource and status) pass through requestpath.StrategicMergePatch
// with mergePoolPatch before k8s.io/apiserver's PATCH handler (requestpath.go declares it). The upstream handler
// cannot merge an existing spec.templatePool entry (it cannot walk a map of structs) and answers 500. Here the
// TApp is merged with StrategicMerge (each pool entry as spec.template is merged), and the patch is forwarded
// with spec.templatePool replaced by the merged pool ("$patch": "replace"), so everything else (admission,
// managedFields, dry-run, field validation) is the upstream path unchanged. The shared step makes the
// rewritten patch require the resourceVersion it was computed from (unless the client set one) and recomputes
// it when that write loses a race. A patch StrategicMerge refuses is answered 400 (or 422) by the step.

// mergePoolPatch is the requestpath.MergeFunc of TApps: it refuses what StrategicMerge refuses and rewrites a
// patch that merges into pool entries (see rewritePoolPatch).
func mergePoolPatch(current, patch map[string]any, _ runtime.Object) (map[string]any, error) {
	merged, err := StrategicMerge(current, patch)
	if err != nil {
		return nil, err
	}
	if rewritten, changed := rewritePoolPatch(patch, current, merged); changed {
		return rewritten, nil
	}
	return nil, nil
}

// rewritePoolPatch returns patch with spec.templatePool replaced by the merged object's whole pool
// ("$patch": "replace", or null when the pool is empty) when the patch merges into pool entries, and whether
// it did so. Patches that leave the pool alone, or only set it to null, are forwarded as sent. When the
// stored object has no pool, the merged pool is sent without the directive: the upstream merge copies a
// field the original lacks as sent, so a directive there would be stored as a pool entry named "$patch".
func rewritePoolPatch(patch, current, merged map[string]any) (map[string]any, bool) {
	spec, ok := patch["spec"].(map[string]any)
	if !ok {
		return patch, false
	}
	if _, ok := spec["templatePool"].(map[string]any); !ok {
		return patch, false
	}
	rewritten := runtime.DeepCopyJSON(patch)
	rewrittenSpec := rewritten["spec"].(map[string]any)
	var pool map[string]any
	if mergedSpec, ok := merged["spec"].(map[string]any); ok {
		pool, _ = mergedSpec["templatePool"].(map[string]any)
	}
	if len(pool) == 0 {
		rewrittenSpec["templatePool"] = nil
		return rewritten, true
	}
	replacement := runtime.DeepCopyJSON(pool)
	if hasTemplatePool(current) {
		replacement["$patch"] = "replace"
	}
	rewrittenSpec["templatePool"] = replacement
	return rewritten, true
}

// hasTemplatePool reports whether a TApp in its JSON form has a spec.templatePool object.
func hasTemplatePool(tappJSON map[string]any) bool {
	spec, ok := tappJSON["spec"].(map[string]any)
	if !ok {
		return false
	}
	_, ok = spec["templatePool"].(map[string]any)
	return ok
}
