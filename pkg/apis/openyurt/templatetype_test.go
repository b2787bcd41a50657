package openyurt

import "testing"

func TestWorkloadTemplateType(t *testing.T) {
	for _, tt := range []struct {
		deployment, statefulSet bool
		want                    TemplateType
	}{
		{false, false, ""},
		{true, false, DeploymentTemplateType},
		{false, true, StatefulSetTemplateType},
		{true, true, ""},
	} {
		if got := WorkloadTemplateType(tt.deployment, tt.statefulSet); got != tt.want {
			t.Errorf("WorkloadTemplateType(deployment %v, statefulSet %v) = %q, want %q", tt.deployment, tt.statefulSet, got, tt.want)
		}
	}
}
