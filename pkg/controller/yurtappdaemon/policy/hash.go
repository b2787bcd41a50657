package policy

import (
	"fmt"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/history"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// TemplateJSON returns the canonical JSON of the workload template that Revision hashes; the controller
// stores it as the data of the ControllerRevision and compares it to detect a hash collision or a
// rollback to an existing revision.
//
// Left out: spec.replicas of the template (scaling is not a new revision), and the PoolNameLabel and
// RevisionHashLabel keys if the template carries them (rendering overwrites them). The kind of template
// is part of the JSON ({"deploymentTemplate":…} or {"statefulSetTemplate":…}).
func TemplateJSON(yad *v1alpha1.YurtAppDaemon) ([]byte, error) {
	t := yad.Spec.WorkloadTemplate.DeepCopy()
	if d := t.DeploymentTemplate; d != nil {
		d.Spec.Replicas = nil
		stripManagedLabels(d.Labels)
		stripManagedLabels(d.Spec.Template.Labels)
	}
	if s := t.StatefulSetTemplate; s != nil {
		s.Spec.Replicas = nil
		stripManagedLabels(s.Labels)
		stripManagedLabels(s.Spec.Template.Labels)
	}
	return stablehash.CanonicalJSON(t)
}

func stripManagedLabels(labels map[string]string) {
	delete(labels, openyurt.PoolNameLabel)
	delete(labels, openyurt.RevisionHashLabel)
}

// Revision returns the hash of the workload template: the first 10 hex characters of the sha256 of
// TemplateJSON, with status.collisionCount appended when it is > 0 (so that the controller can move to a
// new ControllerRevision name after a collision, as the Kubernetes history library does).
//
// The JSON is canonical (map keys sorted, nulls and empty arrays dropped, quantities in canonical form),
// so upgrading k8s.io/api, which only adds optional fields, does not change the hash.
func Revision(yad *v1alpha1.YurtAppDaemon) string {
	data, err := TemplateJSON(yad)
	if err != nil {
		// Workload templates always encode; keep the function total anyway.
		data = []byte(fmt.Sprintf("%#v", yad.Spec.WorkloadTemplate))
	}
	return history.Hash(data, yad.Status.CollisionCount)
}

// RevisionName returns the name of the ControllerRevision of the current template, "<yad>-<Revision>",
// which is also the value of the RevisionHashLabel of the children and of status.currentRevision. It is a
// valid label value: when the YurtAppDaemon name is longer than 52 characters (admission rejects that,
// but the function stays total), the name is cut to 52 characters and the suffix becomes a hash of the
// full name and the revision, so two long names with a common prefix still get different revisions.
func RevisionName(yad *v1alpha1.YurtAppDaemon) string {
	return history.Name(yad.Name, Revision(yad), truncate)
}
