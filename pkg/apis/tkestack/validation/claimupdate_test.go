package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

func TestValidateVolumeClaimUpdateStrategy(t *testing.T) {
	const strategy = "spec.volumeClaimUpdateStrategy"
	cases := []struct {
		name string
		s    *tkestack.TAppVolumeClaimUpdateStrategy
		want []wantErr
	}{
		{name: "unset"},
		{name: "empty", s: &tkestack.TAppVolumeClaimUpdateStrategy{}},
		{name: "OnPodRollingUpdate", s: &tkestack.TAppVolumeClaimUpdateStrategy{Type: tkestack.OnPodRollingUpdateVolumeClaimUpdateStrategyType}},
		{name: "OnDelete Recreate", s: &tkestack.TAppVolumeClaimUpdateStrategy{Type: tkestack.OnDeleteVolumeClaimUpdateStrategyType, OnIncompatibleChange: tkestack.RecreateVolumeClaimIncompatibleChange}},
		{name: "Refuse", s: &tkestack.TAppVolumeClaimUpdateStrategy{Type: tkestack.OnDeleteVolumeClaimUpdateStrategyType, OnIncompatibleChange: tkestack.RefuseVolumeClaimIncompatibleChange}},
		{name: "bad type", s: &tkestack.TAppVolumeClaimUpdateStrategy{Type: "Always"},
			want: []wantErr{{field.ErrorTypeNotSupported, strategy + ".type", ""}}},
		{name: "bad onIncompatibleChange", s: &tkestack.TAppVolumeClaimUpdateStrategy{Type: tkestack.OnDeleteVolumeClaimUpdateStrategyType, OnIncompatibleChange: "recreate"},
			want: []wantErr{{field.ErrorTypeNotSupported, strategy + ".onIncompatibleChange", ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tapp := validTApp()
			tapp.Spec.VolumeClaimUpdateStrategy = tc.s
			assertErrors(t, ValidateTApp(tapp), tc.want)
		})
	}
}

func TestValidateClaimTemplateUpdate(t *testing.T) {
	const spec0 = "spec.volumeClaimTemplates[0].spec"
	rolling := &tkestack.TAppVolumeClaimUpdateStrategy{Type: tkestack.OnPodRollingUpdateVolumeClaimUpdateStrategyType}
	onDelete := &tkestack.TAppVolumeClaimUpdateStrategy{Type: tkestack.OnDeleteVolumeClaimUpdateStrategyType, OnIncompatibleChange: tkestack.RefuseVolumeClaimIncompatibleChange}
	recreate := &tkestack.TAppVolumeClaimUpdateStrategy{Type: tkestack.OnPodRollingUpdateVolumeClaimUpdateStrategyType, OnIncompatibleChange: tkestack.RecreateVolumeClaimIncompatibleChange}
	storage := func(q string) func(*corev1.PersistentVolumeClaimSpec) {
		return func(s *corev1.PersistentVolumeClaimSpec) {
			s.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(q)
		}
	}
	cases := []struct {
		name     string
		strategy *tkestack.TAppVolumeClaimUpdateStrategy
		change   func(*corev1.PersistentVolumeClaimSpec)
		tapp     func(*tkestack.TApp) // a change of the TApp instead of the first claim template's spec
		old      func(*tkestack.TApp) // a change of the old TApp only
		want     []wantErr
	}{
		{name: "storage increase", strategy: rolling, change: storage("4Gi")},
		{name: "same storage written differently", strategy: rolling, change: storage("1024Mi")},
		{name: "shrink", strategy: rolling, change: storage("512Mi"),
			want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".resources.requests[storage]", "must not be less than the previous request 1Gi"}}},
		{name: "shrink under OnDelete", strategy: onDelete, change: storage("512Mi"),
			want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".resources.requests[storage]", "Recreate"}}},
		{name: "storage class", strategy: rolling, change: func(s *corev1.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") },
			want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".storageClassName", "onIncompatibleChange"}}},
		{name: "access modes", strategy: rolling, change: func(s *corev1.PersistentVolumeClaimSpec) {
			s.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".accessModes", ""}}},
		{name: "volume mode", strategy: rolling, change: func(s *corev1.PersistentVolumeClaimSpec) { s.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) },
			want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".volumeMode", ""}}},
		{name: "selector", strategy: rolling, change: func(s *corev1.PersistentVolumeClaimSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd"}}
		}, want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".selector", ""}}},
		{name: "limits", strategy: rolling, change: func(s *corev1.PersistentVolumeClaimSpec) {
			s.Resources.Limits = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("8Gi")}
		}, want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".resources", ""}}},
		{name: "class and shrink at once", strategy: rolling, change: func(s *corev1.PersistentVolumeClaimSpec) {
			s.StorageClassName = ptr.To("fast")
			storage("1Mi")(s)
		}, want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".storageClassName", ""}, {field.ErrorTypeInvalid, spec0 + ".resources.requests[storage]", ""}}},
		{name: "storage class with Recreate", strategy: recreate, change: func(s *corev1.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") }},
		{name: "shrink with Recreate", strategy: recreate, change: storage("512Mi")},
		{name: "storage class without a strategy (today's behaviour)", change: func(s *corev1.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") }},
		{name: "storage class with an empty type", strategy: &tkestack.TAppVolumeClaimUpdateStrategy{}, change: func(s *corev1.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") }},
		{name: "a template removed", strategy: rolling, old: func(a *tkestack.TApp) {
			a.Spec.VolumeClaimTemplates = append(a.Spec.VolumeClaimTemplates, claim("logs"))
		}},
		{name: "a template added", strategy: rolling, tapp: func(a *tkestack.TApp) {
			logs := claim("logs")
			logs.Spec.StorageClassName = ptr.To("slow")
			a.Spec.VolumeClaimTemplates = append(a.Spec.VolumeClaimTemplates, logs)
		}},
		{name: "the field names the template's index in the new spec", strategy: rolling, tapp: func(a *tkestack.TApp) {
			a.Spec.VolumeClaimTemplates = append([]corev1.PersistentVolumeClaim{claim("logs")}, a.Spec.VolumeClaimTemplates...)
			a.Spec.VolumeClaimTemplates[1].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
		}, want: []wantErr{{field.ErrorTypeInvalid, "spec.volumeClaimTemplates[1].spec.accessModes", ""}}},
		{name: "template metadata may change", strategy: rolling, tapp: func(a *tkestack.TApp) {
			a.Spec.VolumeClaimTemplates[0].Labels = map[string]string{"tier": "db"}
		}},
		{name: "setting the strategy with a change at once is checked", strategy: rolling, change: func(s *corev1.PersistentVolumeClaimSpec) {
			s.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
		}, want: []wantErr{{field.ErrorTypeInvalid, spec0 + ".accessModes", ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldTApp := validTApp()
			oldTApp.Spec.VolumeClaimUpdateStrategy = tc.strategy
			newTApp := oldTApp.DeepCopy()
			if tc.old != nil {
				tc.old(oldTApp)
			}
			if tc.change != nil {
				tc.change(&newTApp.Spec.VolumeClaimTemplates[0].Spec)
			}
			if tc.tapp != nil {
				tc.tapp(newTApp)
			}
			assertErrors(t, ValidateTAppUpdate(newTApp, oldTApp), tc.want)
		})
	}
}

func TestValidateVolumeClaimStatuses(t *testing.T) {
	const vc = "status.volumeClaims"
	cases := []struct {
		name string
		s    []tkestack.TAppVolumeClaimStatus
		want []wantErr
	}{
		{name: "valid", s: []tkestack.TAppVolumeClaimStatus{{VolumeClaimName: "data", CompatibleReplicas: 3, CompatibleReadyReplicas: 2}, {VolumeClaimName: "logs"}}},
		{name: "no name", s: []tkestack.TAppVolumeClaimStatus{{}}, want: []wantErr{{field.ErrorTypeRequired, vc + "[0].volumeClaimName", ""}}},
		{name: "duplicate", s: []tkestack.TAppVolumeClaimStatus{{VolumeClaimName: "data"}, {VolumeClaimName: "data"}},
			want: []wantErr{{field.ErrorTypeDuplicate, vc + "[1].volumeClaimName", ""}}},
		{name: "negative", s: []tkestack.TAppVolumeClaimStatus{{VolumeClaimName: "data", CompatibleReplicas: -1, CompatibleReadyReplicas: -1}},
			want: []wantErr{{field.ErrorTypeInvalid, vc + "[0].compatibleReplicas", ""}, {field.ErrorTypeInvalid, vc + "[0].compatibleReadyReplicas", ""}}},
		{name: "more ready than compatible", s: []tkestack.TAppVolumeClaimStatus{{VolumeClaimName: "data", CompatibleReplicas: 1, CompatibleReadyReplicas: 2}},
			want: []wantErr{{field.ErrorTypeInvalid, vc + "[0].compatibleReadyReplicas", "compatibleReplicas"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			oldTApp := validTApp()
			newTApp := oldTApp.DeepCopy()
			newTApp.Status.VolumeClaims = tc.s
			assertErrors(t, ValidateTAppStatusUpdate(newTApp, oldTApp), tc.want)
		})
	}
}
