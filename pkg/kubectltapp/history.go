package kubectltapp

import (
	"encoding/json"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// ChangeCauseAnnotation on a ControllerRevision says why it was made, as kubectl rollout history shows.
const ChangeCauseAnnotation = "kubernetes.io/change-cause"

// DecodeRevision returns the templates stored in a TApp's ControllerRevision (policy.DecodeRevision).
func DecodeRevision(rev *appsv1.ControllerRevision) (*policy.RevisionTemplates, error) {
	templates, err := policy.DecodeRevision(rev.Data.Raw)
	if err != nil {
		return nil, fmt.Errorf("ControllerRevision %s: %w", rev.Name, err)
	}
	return templates, nil
}

// OwnedRevisions returns the ControllerRevisions that tapp controls, oldest (lowest revision) first.
func OwnedRevisions(tapp *tkestackv1.TApp, revisions []appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var owned []*appsv1.ControllerRevision
	for i := range revisions {
		if ref := metav1.GetControllerOf(&revisions[i]); ref != nil && ref.UID == tapp.UID {
			owned = append(owned, &revisions[i])
		}
	}
	sort.SliceStable(owned, func(i, j int) bool {
		if owned[i].Revision != owned[j].Revision {
			return owned[i].Revision < owned[j].Revision
		}
		return owned[i].Name < owned[j].Name
	})
	return owned
}

// HistoryRow is one line of `rollout history`.
type HistoryRow struct {
	Revision    int64
	Name        string
	ChangeCause string
	// Role is "current" for status.currentRevision, "update" for status.updateRevision, "current,update"
	// for both, or empty.
	Role string
}

// HistoryRows returns the rows of `rollout history` for the TApp's revisions (OwnedRevisions order).
func HistoryRows(tapp *tkestackv1.TApp, owned []*appsv1.ControllerRevision) []HistoryRow {
	rows := make([]HistoryRow, 0, len(owned))
	for _, rev := range owned {
		row := HistoryRow{Revision: rev.Revision, Name: rev.Name, ChangeCause: rev.Annotations[ChangeCauseAnnotation]}
		if row.ChangeCause == "" {
			row.ChangeCause = none
		}
		switch {
		case rev.Name == tapp.Status.CurrentRevision && rev.Name == tapp.Status.UpdateRevision:
			row.Role = "current,update"
		case rev.Name == tapp.Status.CurrentRevision:
			row.Role = "current"
		case rev.Name == tapp.Status.UpdateRevision:
			row.Role = "update"
		}
		rows = append(rows, row)
	}
	return rows
}

// RollbackTarget returns the revision `rollout undo` restores: revision toRevision, or with 0 the newest
// revision before the one the spec has now (status.updateRevision, else the newest revision).
func RollbackTarget(tapp *tkestackv1.TApp, owned []*appsv1.ControllerRevision, toRevision int64) (*appsv1.ControllerRevision, error) {
	if toRevision < 0 {
		return nil, fmt.Errorf("--to-revision must be >= 0, got %d", toRevision)
	}
	if toRevision > 0 {
		for _, rev := range owned {
			if rev.Revision == toRevision {
				return rev, nil
			}
		}
		return nil, fmt.Errorf("unable to find revision %d in the history of TApp %s/%s", toRevision, tapp.Namespace, tapp.Name)
	}
	if len(owned) == 0 {
		return nil, fmt.Errorf("no rollout history found for TApp %s/%s", tapp.Namespace, tapp.Name)
	}
	latest := owned[len(owned)-1]
	for _, rev := range owned {
		if rev.Name == tapp.Status.UpdateRevision {
			latest = rev
		}
	}
	var previous *appsv1.ControllerRevision
	for _, rev := range owned {
		if rev.Revision < latest.Revision && rev != latest {
			previous = rev
		}
	}
	if previous == nil {
		return nil, fmt.Errorf("no revision of TApp %s/%s before revision %d to roll back to", tapp.Namespace, tapp.Name, latest.Revision)
	}
	return previous, nil
}

// SameTemplates reports whether tapp's spec already has the templates of a revision.
func SameTemplates(tapp *tkestackv1.TApp, templates *policy.RevisionTemplates) bool {
	current := policy.RevisionTemplates{Template: tapp.Spec.Template, TemplatePool: tapp.Spec.TemplatePool}
	return stablehash.Object(current) == stablehash.Object(*templates)
}

// UndoPatch returns the JSON patch (RFC 6902) that gives tapp the templates of a revision: spec.template
// replaced, spec.templatePool replaced by the revision's pool, or removed when the revision has none. A
// replacement rather than a merge, so that labels, annotations and fields added since the revision go too.
func UndoPatch(tapp *tkestackv1.TApp, templates *policy.RevisionTemplates) ([]byte, error) {
	type op struct {
		Op    string      `json:"op"`
		Path  string      `json:"path"`
		Value interface{} `json:"value,omitempty"`
	}
	ops := []op{{Op: "replace", Path: "/spec/template", Value: templates.Template}}
	switch {
	case len(templates.TemplatePool) > 0:
		ops = append(ops, op{Op: "add", Path: "/spec/templatePool", Value: templates.TemplatePool})
	case len(tapp.Spec.TemplatePool) > 0:
		ops = append(ops, op{Op: "remove", Path: "/spec/templatePool"})
	}
	return json.Marshal(ops)
}
