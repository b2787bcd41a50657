package validation

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// Details of the NodePool key errors, shared with tests.
const (
	reservedLabelMsg      = "reserved: the NodePool controller owns this node label (pool membership); a pool cannot set it"
	reservedAnnotationMsg = "reserved: the NodePool controller records on each node what it applied from the pool under this annotation; a pool cannot set it"
)

// validateNodePoolReservedKeys refuses spec.labels and spec.annotations keys the controller owns on nodes
// (openyurt.ReservedNodePoolLabels, openyurt.ReservedNodePoolAnnotations): they would never reach a node,
// so accepting them would accept a request that is then silently ignored.
func validateNodePoolReservedKeys(spec *openyurt.NodePoolSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(spec.Labels)) {
		if openyurt.IsReservedNodePoolLabel(k) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("labels").Key(k), reservedLabelMsg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Annotations)) {
		if openyurt.IsReservedNodePoolAnnotation(k) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("annotations").Key(k), reservedAnnotationMsg))
		}
	}
	return allErrs
}

// validateNodePoolHostNetworkAnnotation checks the nodepool.openyurt.io/hostnetwork annotation against
// spec.hostNetwork (openyurt/hostnetwork.go has the rules): an unknown value, a contradiction or the exact
// "true" beside the v1beta1 field is refused on the annotation, so that nothing is silently rewritten.
func validateNodePoolHostNetworkAnnotation(pool *openyurt.NodePool) field.ErrorList {
	problem, badValue := openyurt.HostNetworkAnnotationProblem(pool.Annotations, pool.Spec.HostNetwork)
	if problem == "" {
		return nil
	}
	p := field.NewPath("metadata", "annotations").Key(openyurt.NodePoolHostNetworkAnnotation)
	value := pool.Annotations[openyurt.NodePoolHostNetworkAnnotation]
	if badValue {
		return field.ErrorList{field.NotSupported(p, value, []string{"true", "false"})}
	}
	return field.ErrorList{field.Invalid(p, value, problem)}
}
