package policy

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// RevisionTemplates is the content of a TApp's ControllerRevision: the set of templates it ran.
type RevisionTemplates struct {
	Template     corev1.PodTemplateSpec            `json:"template"`
	TemplatePool map[string]corev1.PodTemplateSpec `json:"templatePool,omitempty"`
}

// revisionData is the JSON stored in ControllerRevision.data: {"spec": {"template": ..., "templatePool":
// ...}}, the part of a TApp a rollback writes back.
type revisionData struct {
	Spec RevisionTemplates `json:"spec"`
}

// RevisionData returns the ControllerRevision data of tapp's templates, as canonical JSON
// (stablehash.CanonicalJSON): equal template sets give equal bytes.
func RevisionData(tapp *tkestackv1.TApp) ([]byte, error) {
	return stablehash.CanonicalJSON(revisionData{Spec: RevisionTemplates{Template: tapp.Spec.Template, TemplatePool: tapp.Spec.TemplatePool}})
}

// DecodeRevision returns the templates stored in a ControllerRevision's data.
func DecodeRevision(data []byte) (*RevisionTemplates, error) {
	var d revisionData
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("decoding revision data: %w", err)
	}
	return &d.Spec, nil
}

// RevisionHash is the hash of tapp's templates (RevisionData), with status.collisionCount appended when it
// is > 0, so that the controller moves to another name after a hash collision.
func RevisionHash(tapp *tkestackv1.TApp) string {
	data, err := RevisionData(tapp)
	if err != nil {
		// Templates always encode; keep the function total anyway.
		data = []byte(fmt.Sprintf("%#v", tapp.Spec.Template))
	}
	return history.Hash(data, tapp.Status.CollisionCount)
}

// RevisionName is the name of the ControllerRevision of tapp's templates, <tapp>-<RevisionHash>, which is
// also the pods' tkestack.ControllerRevisionHashLabel value and status.updateRevision. It is a valid label value:
// a TApp name too long for that is cut and the suffix becomes a hash of the full name and the revision.
func RevisionName(tapp *tkestackv1.TApp) string {
	return history.Name(tapp.Name, RevisionHash(tapp), func(name string, n int) string { return name[:n] })
}

// Revisions is what a TApp's ControllerRevisions add to its plan (ComputePlanWithRevisions).
type Revisions struct {
	// Update is status.updateRevision: the revision of the spec's templates.
	Update string
	// Current is status.currentRevision, and CurrentTemplates its templates; nil when the revision is
	// unknown (its instances then use the spec's templates).
	Current          string
	CurrentTemplates *RevisionTemplates
}

// currentTApp returns tapp with the templates of the current revision, or nil when there are none.
func (r Revisions) currentTApp(tapp *tkestackv1.TApp) *tkestackv1.TApp {
	if r.CurrentTemplates == nil || r.Current == "" {
		return nil
	}
	cur := *tapp
	cur.Spec.Template = r.CurrentTemplates.Template
	cur.Spec.TemplatePool = r.CurrentTemplates.TemplatePool
	return &cur
}

// HoldsInstance reports whether instance ordinal n keeps its current revision: while
// spec.updateStrategy.paused every instance does, otherwise those with n < spec.updateStrategy.partition.
// A held instance is never updated (in place or by recreation); its pod, when it is (re)created, is built
// from the current revision's templates.
func HoldsInstance(tapp *tkestackv1.TApp, n int) bool {
	return tapp.Spec.UpdateStrategy.Paused || n < int(tapp.Spec.UpdateStrategy.Partition)
}

// RevisionsInUse returns the values of tkestack.ControllerRevisionHashLabel on pods: the revisions that
// history pruning keeps.
func RevisionsInUse(pods []*corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, pod := range pods {
		if v := pod.Labels[tkestack.ControllerRevisionHashLabel]; v != "" {
			out[v] = true
		}
	}
	return out
}

// RolloutComplete reports whether every wanted instance (0..replicas-1, not Killed) runs the spec's
// templates: the update revision then becomes the current one.
func RolloutComplete(tapp *tkestackv1.TApp, s Status) bool {
	return s.UpdatedReplicas >= WantedInstances(tapp)
}

// WantedInstances is the number of instances that should run: ids 0..replicas-1 that spec.statuses does not
// mark Killed.
func WantedInstances(tapp *tkestackv1.TApp) int32 {
	wanted := int32(0)
	for n := 0; n < desiredReplicas(tapp); n++ {
		if !IsKilled(tapp, idString(n)) {
			wanted++
		}
	}
	return wanted
}
