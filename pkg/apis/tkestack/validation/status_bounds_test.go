package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// TestValidateTAppStatusCounterBounds: every counter is at most status.replicas and availableReplicas is at
// most readyReplicas, as the core API requires of a StatefulSet's status.
func TestValidateTAppStatusCounterBounds(t *testing.T) {
	type counters struct{ replicas, ready, updated, updatedReady, available int32 }
	cases := []struct {
		name string
		c    counters
		want []wantErr
	}{
		{"all zero", counters{}, nil},
		{"all equal", counters{5, 5, 5, 5, 5}, nil},
		{"below", counters{5, 4, 3, 2, 4}, nil},
		{"available equal to ready", counters{5, 2, 0, 0, 2}, nil},
		{"ready above replicas", counters{3, 4, 0, 0, 0}, []wantErr{
			{field.ErrorTypeInvalid, "status.readyReplicas", aboveReplicasMsg}}},
		{"updated above replicas", counters{3, 3, 4, 0, 0}, []wantErr{
			{field.ErrorTypeInvalid, "status.updatedReplicas", aboveReplicasMsg}}},
		{"updatedReady above replicas", counters{3, 3, 3, 9, 0}, []wantErr{
			{field.ErrorTypeInvalid, "status.updatedReadyReplicas", aboveReplicasMsg}}},
		{"available above replicas and ready", counters{3, 3, 3, 3, 4}, []wantErr{
			{field.ErrorTypeInvalid, "status.availableReplicas", aboveReplicasMsg},
			{field.ErrorTypeInvalid, "status.availableReplicas", aboveReadyMsg}}},
		{"available above ready only", counters{5, 2, 0, 0, 3}, []wantErr{
			{field.ErrorTypeInvalid, "status.availableReplicas", aboveReadyMsg}}},
		{"replicas zero, everything else one", counters{0, 1, 1, 1, 1}, []wantErr{
			{field.ErrorTypeInvalid, "status.readyReplicas", aboveReplicasMsg},
			{field.ErrorTypeInvalid, "status.updatedReplicas", aboveReplicasMsg},
			{field.ErrorTypeInvalid, "status.updatedReadyReplicas", aboveReplicasMsg},
			{field.ErrorTypeInvalid, "status.availableReplicas", aboveReplicasMsg}}},
		{"replicas negative", counters{-1, 0, 0, 0, 0}, []wantErr{
			{field.ErrorTypeInvalid, "status.replicas", "greater than or equal to 0"},
			{field.ErrorTypeInvalid, "status.readyReplicas", aboveReplicasMsg},
			{field.ErrorTypeInvalid, "status.updatedReplicas", aboveReplicasMsg},
			{field.ErrorTypeInvalid, "status.updatedReadyReplicas", aboveReplicasMsg},
			{field.ErrorTypeInvalid, "status.availableReplicas", aboveReplicasMsg}}},
		{"max int32", counters{1<<31 - 1, 1<<31 - 1, 1<<31 - 1, 1<<31 - 1, 1<<31 - 1}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldTApp := validTApp()
			newTApp := oldTApp.DeepCopy()
			s := &newTApp.Status
			s.Replicas, s.ReadyReplicas, s.UpdatedReplicas, s.UpdatedReadyReplicas, s.AvailableReplicas =
				tc.c.replicas, tc.c.ready, tc.c.updated, tc.c.updatedReady, tc.c.available
			assertErrors(t, ValidateTAppStatusUpdate(newTApp, oldTApp), tc.want)
			// Only the status subresource checks the counters: a spec write carries the stored status.
			if errs := ValidateTAppUpdate(newTApp, oldTApp); len(errs) > 0 {
				t.Errorf("a spec update was refused for its status: %v", errs)
			}
		})
	}
}

// TestValidateTAppStatusLoweringReplicas: the counters are checked against each other as written, not as they
// were before, so a status write that lowers status.replicas below a counter is refused too.
func TestValidateTAppStatusLoweringReplicas(t *testing.T) {
	oldTApp := validTApp()
	oldTApp.Status = tkestack.TAppStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}
	newTApp := oldTApp.DeepCopy()
	newTApp.Status.Replicas = 2
	assertErrors(t, ValidateTAppStatusUpdate(newTApp, oldTApp), []wantErr{
		{field.ErrorTypeInvalid, "status.readyReplicas", aboveReplicasMsg},
		{field.ErrorTypeInvalid, "status.availableReplicas", aboveReplicasMsg},
	})
}
