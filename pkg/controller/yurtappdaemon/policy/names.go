package policy

import (
	"fmt"
	"strings"

	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// Keys written on the children, shared with the original OpenYurt controller where it had one.
const (
	// NodePoolLabel pins the pods of a child to the nodes of its pool (pod nodeSelector).
	NodePoolLabel = openyurt.NodePoolLabel
	// PoolNameLabel on a child, in its selector and on its pods names the pool the child serves. It is how
	// a child is mapped to its pool.
	PoolNameLabel = openyurt.PoolNameLabel
	// RevisionHashLabel on a child and its pods is the RevisionName the child was rendered from.
	RevisionHashLabel = openyurt.RevisionHashLabel
	// RefNodePoolAnnotation on a child names its pool (written for compatibility with the original, which
	// mapped children by it; read only when PoolNameLabel is absent).
	RefNodePoolAnnotation = "apps.openyurt.io/ref-nodepool"
	// PlacementHashAnnotation on a child is PlacementHash of its pool when the child was rendered; a child
	// whose value differs (a pool taint was added or removed) is re-rendered.
	PlacementHashAnnotation = "apps.openyurt.io/placement-hash"
)

// MaxChildNameLength is the longest child name: a StatefulSet named N labels its pods
// controller-revision-hash=N-<hash of up to 10 characters> and statefulset.kubernetes.io/pod-name=N-<ordinal>,
// label values that must fit in 63 characters. Deployments use the same rule so that a child keeps its
// name when the template kind changes.
const MaxChildNameLength = labelValueMaxLength - 1 - stablehash.Length

const labelValueMaxLength = validation.LabelValueMaxLength

// ChildName returns the name of the child workload of pool in the YurtAppDaemon named yadName:
// "<yad>-<pool>" when that is a DNS-1123 label of at most MaxChildNameLength characters; otherwise the
// pair with dots replaced by dashes, cut to leave room for "-<hash>", where hash is a hash of the exact
// (yad, pool) pair, so that distinct pairs get distinct names. The result is always a DNS-1123 label.
func ChildName(yadName, pool string) string {
	base := yadName + "-" + pool
	if len(base) <= MaxChildNameLength && len(validation.IsDNS1123Label(base)) == 0 {
		return base
	}
	prefix := truncate(strings.ReplaceAll(base, ".", "-"), MaxChildNameLength-1-stablehash.Length)
	return prefix + "-" + stablehash.String(yadName+"/"+pool)
}

// truncate cuts s to at most n characters and removes trailing '-' and '.' so that the result ends
// with an alphanumeric character (s starts with one: it is an object name).
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-.")
}

// validatePoolName reports why a NodePool cannot get a child: its name is written as a label value
// (PoolNameLabel, NodePoolLabel), so it must be one. NodePool names may be up to 253 characters long.
func validatePoolName(pool string) error {
	if errs := validation.IsValidLabelValue(pool); len(errs) > 0 {
		return fmt.Errorf("NodePool name %q cannot be used as a label value: %s", pool, strings.Join(errs, "; "))
	}
	return nil
}
