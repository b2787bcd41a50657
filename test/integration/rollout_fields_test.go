package integration

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestRolloutFieldsThroughTheAPI: spec.progressDeadlineSeconds and spec.spreadPolicy are stored as written
// and not defaulted (unset stays unset); a negative deadline, one not above minReadySeconds and an unknown
// spread policy are 422s naming the field; status.lastProgressTime is written through the status
// subresource.
func TestRolloutFieldsThroughTheAPI(t *testing.T) {
	s := sharedServer(t)
	ctx := testContext(t)
	ns := newNamespace(t)
	tapps := clientset(t, s).TKEStackAppsV1().TApps(ns)

	plain, err := tapps.Create(ctx, newTApp(ns, "plain", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Spec.ProgressDeadlineSeconds != nil || plain.Spec.SpreadPolicy != "" {
		t.Errorf("unset fields came back as %v, %q; want them unset", plain.Spec.ProgressDeadlineSeconds, plain.Spec.SpreadPolicy)
	}
	set := newTApp(ns, "set", 1)
	set.Spec.MinReadySeconds, set.Spec.ProgressDeadlineSeconds, set.Spec.SpreadPolicy = 10, ptr.To[int32](600), tkestackv1.SpreadPolicyNone
	got, err := tapps.Create(ctx, set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ProgressDeadlineSeconds == nil || *got.Spec.ProgressDeadlineSeconds != 600 || got.Spec.SpreadPolicy != tkestackv1.SpreadPolicyNone {
		t.Errorf("stored %v, %q; want 600, None", got.Spec.ProgressDeadlineSeconds, got.Spec.SpreadPolicy)
	}
	now := metav1.Now().Rfc3339Copy()
	got.Status.LastProgressTime = &now
	got.Status.Replicas = 0
	if got, err = tapps.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil || got.Status.LastProgressTime == nil || !got.Status.LastProgressTime.Equal(&now) {
		t.Errorf("status.lastProgressTime after a status update: %v, %v; want %v", got.Status.LastProgressTime, err, now)
	}

	for _, c := range []struct {
		name, field string
		mutate      func(*tkestackv1.TApp)
	}{
		{"negative deadline", "spec.progressDeadlineSeconds", func(a *tkestackv1.TApp) { a.Spec.ProgressDeadlineSeconds = ptr.To[int32](-1) }},
		{"deadline not above minReadySeconds", "spec.progressDeadlineSeconds", func(a *tkestackv1.TApp) {
			a.Spec.MinReadySeconds, a.Spec.ProgressDeadlineSeconds = 30, ptr.To[int32](30)
		}},
		{"unknown spread policy", "spec.spreadPolicy", func(a *tkestackv1.TApp) { a.Spec.SpreadPolicy = "Pack" }},
	} {
		bad := newTApp(ns, "bad", 1)
		c.mutate(bad)
		_, err := tapps.Create(ctx, bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), c.field, "") {
			t.Errorf("%s: %v, want a 422 on %s", c.name, err, c.field)
		}
	}
}
