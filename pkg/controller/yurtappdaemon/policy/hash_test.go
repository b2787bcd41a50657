package policy

import (
	"strings"
	"testing"

	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
)

// goldenYAD must never change: its revisions are committed below. If a library upgrade changed them, every
// child of every YurtAppDaemon would be re-rendered (and every pod restarted) after a controller upgrade.
func goldenYAD() *v1alpha1.YurtAppDaemon {
	yad := newYAD()
	c := &yad.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	return yad
}

const (
	goldenDeploymentRevision  = "8f20d7a00c"
	goldenStatefulSetRevision = "27c2728fd1"
)

func TestRevisionGolden(t *testing.T) {
	if got := Revision(goldenYAD()); got != goldenDeploymentRevision {
		t.Errorf("Revision(deployment) = %q, want %q: the canonical encoding changed", got, goldenDeploymentRevision)
	}
	if got := Revision(toStatefulSet(goldenYAD())); got != goldenStatefulSetRevision {
		t.Errorf("Revision(statefulset) = %q, want %q: the canonical encoding changed", got, goldenStatefulSetRevision)
	}
	if got, want := RevisionName(goldenYAD()), "web-"+goldenDeploymentRevision; got != want {
		t.Errorf("RevisionName = %q, want %q", got, want)
	}
}

func TestRevisionChanges(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1alpha1.YurtAppDaemon)
		same   bool
	}{
		{"no change", func(*v1alpha1.YurtAppDaemon) {}, true},
		{"replicas only", func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = ptr.To[int32](9)
		}, true},
		{"replicas unset", func(y *v1alpha1.YurtAppDaemon) { y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Replicas = nil }, true},
		{"nodepoolSelector", func(y *v1alpha1.YurtAppDaemon) { y.Spec.NodePoolSelector = &metav1.LabelSelector{} }, true},
		{"revisionHistoryLimit", func(y *v1alpha1.YurtAppDaemon) { y.Spec.RevisionHistoryLimit = ptr.To[int32](2) }, true},
		{"status other than collisionCount", func(y *v1alpha1.YurtAppDaemon) { y.Status.CurrentRevision = "x"; y.Status.NodePools = []string{"a"} }, true},
		{"collisionCount 0", func(y *v1alpha1.YurtAppDaemon) { y.Status.CollisionCount = ptr.To[int32](0) }, true},
		{"nil and empty slices", func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Tolerations = []corev1.Toleration{}
		}, true},
		{"canonical quantity", func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("0.5")
		}, true},
		{"managed labels ignored", func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Labels[PoolNameLabel] = "x"
			y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Labels[RevisionHashLabel] = "y"
		}, true},
		{"image", func(y *v1alpha1.YurtAppDaemon) {
			y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
		}, false},
		{"workload annotation", func(y *v1alpha1.YurtAppDaemon) { y.Spec.WorkloadTemplate.DeploymentTemplate.Annotations["team"] = "b" }, false},
		{"strategy", func(y *v1alpha1.YurtAppDaemon) { y.Spec.WorkloadTemplate.DeploymentTemplate.Spec.MinReadySeconds = 5 }, false},
		{"kind", func(y *v1alpha1.YurtAppDaemon) { toStatefulSet(y) }, false},
		{"collisionCount 1", func(y *v1alpha1.YurtAppDaemon) { y.Status.CollisionCount = ptr.To[int32](1) }, false},
	}
	base := Revision(goldenYAD())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			y := goldenYAD()
			tc.mutate(y)
			mutated := y.DeepCopy()
			got := Revision(y)
			if (got == base) != tc.same {
				t.Errorf("Revision = %q, base %q, want same=%v", got, base, tc.same)
			}
			if len(got) != stablehash.Length {
				t.Errorf("Revision %q has length %d, want %d", got, len(got), stablehash.Length)
			}
			if !equalYAD(y, mutated) {
				t.Errorf("Revision mutated its argument")
			}
		})
	}
}

func equalYAD(a, b *v1alpha1.YurtAppDaemon) bool {
	ja, _ := stablehash.CanonicalJSON(a)
	jb, _ := stablehash.CanonicalJSON(b)
	return string(ja) == string(jb)
}

func TestRevisionNameLong(t *testing.T) {
	long1 := newYAD()
	long1.Name = strings.Repeat("a", 60) + "-one"
	long2 := newYAD()
	long2.Name = strings.Repeat("a", 60) + "-two"
	n1, n2 := RevisionName(long1), RevisionName(long2)
	for _, n := range []string{n1, n2} {
		if len(n) > 63 || len(validation.IsValidLabelValue(n)) > 0 {
			t.Errorf("RevisionName %q (%d) is not a valid label value", n, len(n))
		}
		if !strings.HasPrefix(n, strings.Repeat("a", 52)+"-") {
			t.Errorf("RevisionName %q does not keep the 52 first characters of the name", n)
		}
	}
	if n1 == n2 {
		t.Errorf("long names with a common prefix share revision name %q", n1)
	}
	// A name of exactly 52 characters fits as is.
	y := newYAD()
	y.Name = strings.Repeat("b", 52)
	if got, want := RevisionName(y), y.Name+"-"+Revision(y); got != want || len(got) != 63 {
		t.Errorf("RevisionName = %q, want %q (63 characters)", got, want)
	}
}
