package v1_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/install"
	v1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// defaulted applies the defaulters registered in a scheme built like the server's.
func defaulted(t *testing.T, tapp *v1.TApp) *v1.TApp {
	t.Helper()
	scheme := runtime.NewScheme()
	install.Install(scheme)
	scheme.Default(tapp)
	return tapp
}

func template(labels map[string]string, ports ...corev1.ContainerPort) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Ports: ports}},
			Containers:     []corev1.Container{{Name: "nginx", Image: "nginx", Ports: ports}},
		},
	}
}

func minimalTApp() *v1.TApp {
	return &v1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.TAppSpec{
			Replicas: 3,
			Template: template(map[string]string{"app": "web", "tier": "front"}, corev1.ContainerPort{ContainerPort: 80}),
		},
	}
}

func TestDefaultsFillEmptySpec(t *testing.T) {
	tapp := defaulted(t, minimalTApp())
	spec := tapp.Spec

	wantSelector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}}
	if !reflect.DeepEqual(spec.Selector, wantSelector) {
		t.Errorf("selector = %v, want %v", spec.Selector, wantSelector)
	}
	if spec.DefaultTemplateName != "default" {
		t.Errorf("defaultTemplateName = %q, want default", spec.DefaultTemplateName)
	}
	if spec.UpdateStrategy.Template != "default" {
		t.Errorf("updateStrategy.template = %q, want default", spec.UpdateStrategy.Template)
	}
	if spec.PodManagementPolicy != v1.ParallelPodManagement {
		t.Errorf("podManagementPolicy = %q, want Parallel", spec.PodManagementPolicy)
	}
	wantRetention := &v1.TAppPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Retain", WhenScaled: "Retain"}
	if !reflect.DeepEqual(spec.PersistentVolumeClaimRetentionPolicy, wantRetention) {
		t.Errorf("persistentVolumeClaimRetentionPolicy = %v, want %v", spec.PersistentVolumeClaimRetentionPolicy, wantRetention)
	}
	if got := spec.RevisionHistoryLimit; got == nil || *got != 10 {
		t.Errorf("revisionHistoryLimit = %v, want 10", got)
	}
	if spec.UpdateStrategy.Paused || spec.UpdateStrategy.Partition != 0 {
		t.Errorf("updateStrategy paused/partition = %v/%d, want false/0", spec.UpdateStrategy.Paused, spec.UpdateStrategy.Partition)
	}
	if got := spec.UpdateStrategy.MaxUnavailable; got == nil || *got != intstr.FromInt32(1) {
		t.Errorf("updateStrategy.maxUnavailable = %v, want 1", got)
	}
	if got := spec.UpdateStrategy.ForceUpdate.MaxUnavailable; got == nil || *got != intstr.FromString("100%") {
		t.Errorf("updateStrategy.forceUpdate.maxUnavailable = %v, want 100%%", got)
	}
	for _, containers := range [][]corev1.Container{spec.Template.Spec.InitContainers, spec.Template.Spec.Containers} {
		if got := containers[0].Ports[0].Protocol; got != corev1.ProtocolTCP {
			t.Errorf("template port protocol of %s = %q, want TCP", containers[0].Name, got)
		}
	}
}

func TestDefaultSelectorIsACopy(t *testing.T) {
	tapp := defaulted(t, minimalTApp())
	tapp.Spec.Selector.MatchLabels["extra"] = "x"
	if _, ok := tapp.Spec.Template.Labels["extra"]; ok {
		t.Errorf("the defaulted selector shares its map with the template labels")
	}
}

func TestDefaultSelectorLeavesOutTheLabelsTheControllerWrites(t *testing.T) {
	// A TApp of the original controller: its template labels carry its decimal hashes.
	tapp := minimalTApp()
	tapp.Spec.Template.Labels = map[string]string{"app": "web", "tapp_template_hash_key": "8571628173525391740", "tapp_uniq_hash_key": "1740216837251739174", "tapp_instance_key": "0"}
	want := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	if got := defaulted(t, tapp).Spec.Selector; !reflect.DeepEqual(got, want) {
		t.Errorf("selector = %v, want %v", got, want)
	}
	tapp = minimalTApp()
	tapp.Spec.Template.Labels = map[string]string{"tapp_template_hash_key": "1"}
	if got := defaulted(t, tapp).Spec.Selector; got != nil {
		t.Errorf("selector = %v, want nil when the template has only labels the controller writes", got)
	}
}

func TestDefaultSelectorNeedsTemplateLabels(t *testing.T) {
	tapp := minimalTApp()
	tapp.Spec.Template.Labels = nil
	if got := defaulted(t, tapp).Spec.Selector; got != nil {
		t.Errorf("selector = %v, want nil when the template has no labels", got)
	}
}

func TestDefaultPortProtocolInPool(t *testing.T) {
	tapp := minimalTApp()
	tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{
		"canary": template(map[string]string{"app": "web"},
			corev1.ContainerPort{ContainerPort: 80}, corev1.ContainerPort{ContainerPort: 53, Protocol: corev1.ProtocolUDP}),
	}
	pool := defaulted(t, tapp).Spec.TemplatePool["canary"]
	for _, containers := range [][]corev1.Container{pool.Spec.InitContainers, pool.Spec.Containers} {
		if got := containers[0].Ports[0].Protocol; got != corev1.ProtocolTCP {
			t.Errorf("pool port protocol of %s = %q, want TCP", containers[0].Name, got)
		}
		if got := containers[0].Ports[1].Protocol; got != corev1.ProtocolUDP {
			t.Errorf("pool port protocol of %s = %q, want the explicit UDP", containers[0].Name, got)
		}
	}
}

func TestDefaultLegacyDefaultTemplateName(t *testing.T) {
	tapp := minimalTApp()
	tapp.Spec.LegacyDefaultTemplateName = "test4"
	spec := defaulted(t, tapp).Spec
	if spec.DefaultTemplateName != "test4" {
		t.Errorf("defaultTemplateName = %q, want the legacy value test4", spec.DefaultTemplateName)
	}
	if spec.UpdateStrategy.Template != "test4" {
		t.Errorf("updateStrategy.template = %q, want test4 (follows defaultTemplateName)", spec.UpdateStrategy.Template)
	}
}

func TestDefaultLegacyDoesNotOverrideExplicitName(t *testing.T) {
	tapp := minimalTApp()
	tapp.Spec.DefaultTemplateName = "test1"
	tapp.Spec.LegacyDefaultTemplateName = "test4"
	if got := defaulted(t, tapp).Spec.DefaultTemplateName; got != "test1" {
		t.Errorf("defaultTemplateName = %q, want the explicit test1", got)
	}
}

func TestDefaultsKeepExplicitValues(t *testing.T) {
	maxUnavailable := intstr.FromString("50%")
	forceMaxUnavailable := intstr.FromInt32(2)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	tapp := minimalTApp()
	tapp.Spec.Selector = selector.DeepCopy()
	tapp.Spec.DefaultTemplateName = "stable"
	tapp.Spec.UpdateStrategy = v1.TAppUpdateStrategy{
		Template:       "canary",
		MaxUnavailable: &maxUnavailable,
		ForceUpdate:    v1.ForceUpdateStrategy{MaxUnavailable: &forceMaxUnavailable},
	}
	tapp.Spec.Template.Spec.Containers[0].Ports[0].Protocol = corev1.ProtocolSCTP

	spec := defaulted(t, tapp).Spec
	if !reflect.DeepEqual(spec.Selector, selector) {
		t.Errorf("selector = %v, want the explicit %v", spec.Selector, selector)
	}
	if spec.DefaultTemplateName != "stable" {
		t.Errorf("defaultTemplateName = %q, want stable", spec.DefaultTemplateName)
	}
	if spec.UpdateStrategy.Template != "canary" {
		t.Errorf("updateStrategy.template = %q, want canary", spec.UpdateStrategy.Template)
	}
	if *spec.UpdateStrategy.MaxUnavailable != intstr.FromString("50%") {
		t.Errorf("updateStrategy.maxUnavailable = %v, want 50%%", spec.UpdateStrategy.MaxUnavailable)
	}
	if *spec.UpdateStrategy.ForceUpdate.MaxUnavailable != intstr.FromInt32(2) {
		t.Errorf("updateStrategy.forceUpdate.maxUnavailable = %v, want 2", spec.UpdateStrategy.ForceUpdate.MaxUnavailable)
	}
	if got := spec.Template.Spec.Containers[0].Ports[0].Protocol; got != corev1.ProtocolSCTP {
		t.Errorf("port protocol = %q, want the explicit SCTP", got)
	}
}

func TestDefaultsAreIdempotent(t *testing.T) {
	once := defaulted(t, minimalTApp())
	twice := defaulted(t, once.DeepCopy())
	if !reflect.DeepEqual(once, twice) {
		t.Errorf("defaulting twice changed the object:\n once: %+v\ntwice: %+v", once.Spec, twice.Spec)
	}
}

func TestDefaultsKeepClaimRetentionPolicy(t *testing.T) {
	tapp := minimalTApp()
	tapp.Spec.PersistentVolumeClaimRetentionPolicy = &v1.TAppPersistentVolumeClaimRetentionPolicy{WhenScaled: v1.DeletePersistentVolumeClaimRetentionPolicyType}
	got := defaulted(t, tapp).Spec.PersistentVolumeClaimRetentionPolicy
	want := &v1.TAppPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Retain", WhenScaled: "Delete"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("persistentVolumeClaimRetentionPolicy = %v, want %v", got, want)
	}
}

func TestDefaultsKeepRevisionHistoryLimit(t *testing.T) {
	tapp := minimalTApp()
	zero := int32(0)
	tapp.Spec.RevisionHistoryLimit = &zero
	if got := defaulted(t, tapp).Spec.RevisionHistoryLimit; got == nil || *got != 0 {
		t.Errorf("revisionHistoryLimit = %v, want 0 kept", got)
	}
}

// TestDefaultsLeaveTheOptionalRolloutFieldsUnset: progressDeadlineSeconds (unset: no deadline) and
// spreadPolicy (unset: Spread) are not defaulted, so a TApp stored before them reads, defaults and stores
// exactly as before: no write, no drift a client would see.
func TestDefaultsLeaveTheOptionalRolloutFieldsUnset(t *testing.T) {
	tapp := defaulted(t, minimalTApp())
	if tapp.Spec.ProgressDeadlineSeconds != nil {
		t.Errorf("progressDeadlineSeconds defaulted to %d, want unset", *tapp.Spec.ProgressDeadlineSeconds)
	}
	if tapp.Spec.SpreadPolicy != "" {
		t.Errorf("spreadPolicy defaulted to %q, want unset", tapp.Spec.SpreadPolicy)
	}
	if tapp.Spec.VolumeClaimUpdateStrategy != nil {
		t.Errorf("volumeClaimUpdateStrategy defaulted to %+v, want unset", *tapp.Spec.VolumeClaimUpdateStrategy)
	}
}

// TestDefaultsKeepVolumeClaimUpdateStrategyAsWritten: neither the type nor onIncompatibleChange is defaulted
// (an empty onIncompatibleChange means Refuse), so what a user applies is what they read back.
func TestDefaultsKeepVolumeClaimUpdateStrategyAsWritten(t *testing.T) {
	tapp := minimalTApp()
	tapp.Spec.VolumeClaimUpdateStrategy = &v1.TAppVolumeClaimUpdateStrategy{Type: v1.OnDeleteVolumeClaimUpdateStrategyType}
	got := defaulted(t, tapp).Spec.VolumeClaimUpdateStrategy
	if got == nil || *got != (v1.TAppVolumeClaimUpdateStrategy{Type: v1.OnDeleteVolumeClaimUpdateStrategyType}) {
		t.Errorf("volumeClaimUpdateStrategy = %+v, want only type OnDelete", got)
	}
}
