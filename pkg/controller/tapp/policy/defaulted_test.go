package policy

import (
	"reflect"
	"testing"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestUndefaulted(t *testing.T) {
	if missing := Undefaulted(newTApp(3)); len(missing) != 0 {
		t.Fatalf("a defaulted TApp lacks %v", missing)
	}
	for _, c := range []struct {
		name  string
		unset func(*tkestackv1.TApp)
		want  []string
	}{
		{"defaultTemplateName", func(a *tkestackv1.TApp) { a.Spec.DefaultTemplateName = "" }, []string{"spec.defaultTemplateName"}},
		{"updateStrategy.template", func(a *tkestackv1.TApp) { a.Spec.UpdateStrategy.Template = "" }, []string{"spec.updateStrategy.template"}},
		{"maxUnavailable", func(a *tkestackv1.TApp) { a.Spec.UpdateStrategy.MaxUnavailable = nil }, []string{"spec.updateStrategy.maxUnavailable"}},
		{"forceUpdate.maxUnavailable", func(a *tkestackv1.TApp) { a.Spec.UpdateStrategy.ForceUpdate.MaxUnavailable = nil },
			[]string{"spec.updateStrategy.forceUpdate.maxUnavailable"}},
		{"claim retention", func(a *tkestackv1.TApp) { a.Spec.PersistentVolumeClaimRetentionPolicy = nil }, []string{"spec.persistentVolumeClaimRetentionPolicy"}},
		{"claim retention whenScaled", func(a *tkestackv1.TApp) { a.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = "" },
			[]string{"spec.persistentVolumeClaimRetentionPolicy"}},
		{"podManagementPolicy", func(a *tkestackv1.TApp) { a.Spec.PodManagementPolicy = "" }, []string{"spec.podManagementPolicy"}},
		{"revisionHistoryLimit", func(a *tkestackv1.TApp) { a.Spec.RevisionHistoryLimit = nil }, []string{"spec.revisionHistoryLimit"}},
		{"nothing defaulted", func(a *tkestackv1.TApp) { a.Spec = tkestackv1.TAppSpec{Replicas: 1} }, []string{
			"spec.defaultTemplateName", "spec.updateStrategy.template", "spec.updateStrategy.maxUnavailable",
			"spec.updateStrategy.forceUpdate.maxUnavailable", "spec.persistentVolumeClaimRetentionPolicy",
			"spec.podManagementPolicy", "spec.revisionHistoryLimit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tapp := newTApp(3)
			c.unset(tapp)
			if got := Undefaulted(tapp); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Undefaulted = %v, want %v", got, c.want)
			}
		})
	}
}
