package podtemplate

import (
	"context"
	"errors"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// newYAS returns a valid YurtAppSet with a deploymentTemplate (or statefulSetTemplate) and three tweaks:
// replicas only, an image, and a patch adding a toleration list.
func newYAS(statefulSet bool) *openyurt.YurtAppSet {
	labels := map[string]string{"app": "edge"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}}},
	}
	yas := &openyurt.YurtAppSet{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: namespace, UID: "uid-yas"},
		Spec: openyurt.YurtAppSetSpec{
			Pools: []string{"a", "b", "c"},
			Workload: openyurt.Workload{WorkloadTweaks: []openyurt.WorkloadTweak{
				{Pools: []string{"a"}, Tweaks: openyurt.Tweaks{Replicas: ptr.To[int32](3)}},
				{Pools: []string{"b"}, Tweaks: openyurt.Tweaks{ContainerImages: []openyurt.ContainerImage{{Name: "app", TargetImage: "nginx:1.26"}}}},
				{Pools: []string{"c"}, Tweaks: openyurt.Tweaks{Patches: []openyurt.Patch{{Path: "/spec/template/spec/tolerations",
					Operation: openyurt.PatchOperationAdd, Value: &apiextensionsv1.JSON{Raw: []byte(`[{"key":"edge","operator":"Exists"}]`)}}}}},
			}},
		},
	}
	meta := metav1.ObjectMeta{Labels: map[string]string{"tier": "edge"}}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	if statefulSet {
		yas.Spec.Workload.WorkloadTemplate.StatefulSetTemplate = &openyurt.StatefulSetTemplateSpec{ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template, ServiceName: "edge"}}
	} else {
		yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate = &openyurt.DeploymentTemplateSpec{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Selector: selector, Template: template}}
	}
	return yas
}

func validateYAS(p *Plugin, op admission.Operation, obj, old *openyurt.YurtAppSet, subresource string) (error, []string) {
	w := &warnings{}
	ctx := warning.WithWarningRecorder(context.Background(), w)
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	attrs := admission.NewAttributesRecord(obj, oldObj, openyurt.Kind("YurtAppSet").WithVersion("v1beta1"), namespace, obj.Name,
		openyurt.Resource("yurtappsets").WithVersion("v1beta1"), subresource, op, nil, false, nil)
	return p.Validate(ctx, attrs, nil), w.list
}

// podTemplateOf returns the metadata and pod template of a dry-run Deployment or StatefulSet.
func podTemplateOf(t *testing.T, obj runtime.Object) (metav1.ObjectMeta, corev1.PodTemplateSpec) {
	t.Helper()
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.ObjectMeta, o.Spec.Template
	case *appsv1.StatefulSet:
		return o.ObjectMeta, o.Spec.Template
	}
	t.Fatalf("dry-run create of %T", obj)
	return metav1.ObjectMeta{}, corev1.PodTemplateSpec{}
}

func TestYurtAppSetWorkloadsAreDryRunPerTweak(t *testing.T) {
	for _, statefulSet := range []bool{false, true} {
		p, rec := newWorkloadPlugin(t, nil)
		yas := newYAS(statefulSet)
		before := yas.DeepCopy()
		if err, warns := validateYAS(p, admission.Create, yas, nil, ""); err != nil || len(warns) > 0 {
			t.Fatalf("statefulSet=%v: Validate = %v, warnings %q; want nil", statefulSet, err, warns)
		}
		if !apiequality.Semantic.DeepEqual(before, yas) {
			t.Errorf("statefulSet=%v: the admitted YurtAppSet was modified", statefulSet)
		}
		// The template, the image tweak and the patch tweak; not the replicas-only tweak.
		if len(rec.objects) != 3 {
			t.Fatalf("statefulSet=%v: %d dry-run creates, want 3", statefulSet, len(rec.objects))
		}
		var images []string
		tolerated := 0
		for _, obj := range rec.objects {
			meta, template := podTemplateOf(t, obj)
			if meta.GenerateName != "edge-" || meta.Namespace != namespace || len(meta.OwnerReferences) != 1 ||
				meta.OwnerReferences[0].Kind != "YurtAppSet" || meta.OwnerReferences[0].UID != "uid-yas" {
				t.Errorf("statefulSet=%v: metadata %+v, want generateName edge-, the namespace and the YurtAppSet as owner", statefulSet, meta)
			}
			if meta.Labels["tier"] != "edge" || meta.Labels[openyurt.PoolNameLabel] != dryRunPool ||
				template.Spec.NodeSelector[openyurt.NodePoolLabel] != dryRunPool {
				t.Errorf("statefulSet=%v: labels %v nodeSelector %v, want the rendered workload", statefulSet, meta.Labels, template.Spec.NodeSelector)
			}
			images = append(images, template.Spec.Containers[0].Image)
			if len(template.Spec.Tolerations) == 1 {
				tolerated++
			}
		}
		slices.Sort(images)
		if !slices.Equal(images, []string{"nginx:1.25", "nginx:1.25", "nginx:1.26"}) || tolerated != 1 {
			t.Errorf("statefulSet=%v: images %v and %d tolerating renderings, want the image tweak's and the patch tweak's", statefulSet, images, tolerated)
		}
	}
}

func TestYurtAppSetRefusalsNameTheTemplateOrTheTweak(t *testing.T) {
	// The core API refuses every rendering's tolerations-free template for its label, and the rendering of
	// the image tweak for its image.
	p, _ := newWorkloadPlugin(t, func(obj runtime.Object) error {
		_, template := podTemplateOf(t, obj)
		errs := field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "tier", "refused by policy")}
		if template.Spec.Containers[0].Image == "nginx:1.26" {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "template", "spec", "containers").Index(0).Child("image"), "registry not allowed"))
		}
		return apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "edge-x7k2p", errs)
	})
	err, _ := validateYAS(p, admission.Create, newYAS(false), nil, "")
	var got []string
	var se *apierrors.StatusError
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) {
		t.Fatalf("err = %v, want 422", err)
	}
	if d := se.ErrStatus.Details; d == nil || d.Kind != "YurtAppSet" || d.Name != "edge" {
		t.Errorf("details = %+v, want the YurtAppSet edge", se.ErrStatus.Details)
	}
	for _, c := range se.ErrStatus.Details.Causes {
		got = append(got, c.Field+": "+c.Message)
	}
	want := []string{
		`spec.workload.workloadTemplate.deploymentTemplate.metadata.labels: Invalid value: "tier": refused by policy`,
		`spec.workload.workloadTweaks[1].tweaks.spec.template.spec.containers[0].image: Forbidden: registry not allowed`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("causes = %q, want %q (the template's refusal once, the tweak's own under the tweak)", got, want)
	}
}

func TestYurtAppSetUnchangedWorkloadIsNotDryRun(t *testing.T) {
	p, rec := newWorkloadPlugin(t, nil)
	old := newYAS(false)
	yas := old.DeepCopy()
	yas.Labels = map[string]string{"team": "a"}
	yas.Spec.Pools = []string{"d"}
	if err, _ := validateYAS(p, admission.Update, yas, old, ""); err != nil || len(rec.objects) != 0 {
		t.Errorf("update of pools and labels: err %v, %d dry runs; want none", err, len(rec.objects))
	}
	if err, _ := validateYAS(p, admission.Update, yas, old, "status"); err != nil || len(rec.objects) != 0 {
		t.Errorf("status update: err %v, %d dry runs; want none", err, len(rec.objects))
	}
	yas.Spec.Workload.WorkloadTweaks[1].Tweaks.ContainerImages[0].TargetImage = "nginx:1.27"
	if err, _ := validateYAS(p, admission.Update, yas, old, ""); err != nil || len(rec.objects) != 3 {
		t.Errorf("update of a tweak: err %v, %d dry runs; want 3", err, len(rec.objects))
	}
}
