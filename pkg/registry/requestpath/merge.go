package requestpath

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// MergeWithStruct is strategicpatch.StrategicMergeMapPatch for the type of dataStruct, with a panic of the
// merge code (it panics on some malformed patches, e.g. a merge key whose value is an object) returned as
// an error. original and patch are modified.
func MergeWithStruct(original, patch map[string]any, dataStruct any) (merged map[string]any, err error) {
	defer RecoverMergePanic(&err)
	out, err := strategicpatch.StrategicMergeMapPatch(original, patch, dataStruct)
	return map[string]any(out), err
}

// RecoverMergePanic, deferred, turns a panic of the merge code into the error *err.
func RecoverMergePanic(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("the patch cannot be merged: %v", r)
	}
}
