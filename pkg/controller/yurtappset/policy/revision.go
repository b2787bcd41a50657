package policy

import (
	"fmt"
	"strings"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// WorkloadJSON returns the canonical JSON of spec.workload (the template and the tweaks, as yurt-manager's
// revisions cover), the data of the YurtAppSet's ControllerRevision and what its hash is taken of.
func WorkloadJSON(yas *v1beta1.YurtAppSet) ([]byte, error) {
	return stablehash.CanonicalJSON(yas.Spec.Workload)
}

// RevisionHash returns the hash of spec.workload (history.Hash), moved on by status.collisionCount.
func RevisionHash(yas *v1beta1.YurtAppSet) string {
	data, err := WorkloadJSON(yas)
	if err != nil {
		data = []byte(fmt.Sprintf("%#v", yas.Spec.Workload))
	}
	return history.Hash(data, yas.Status.CollisionCount)
}

// RevisionName returns the name of the ControllerRevision of the current spec.workload,
// "<yas>-<hash>" (history.Name: a valid label value, it is written as RevisionHashLabel), moved on by
// status.collisionCount.
func RevisionName(yas *v1beta1.YurtAppSet) string {
	return history.Name(yas.Name, RevisionHash(yas), truncate)
}

// truncate cuts s to at most n characters without a trailing '-' or '.'.
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-.")
}
