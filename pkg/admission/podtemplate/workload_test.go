package podtemplate

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

// newYAD returns a valid YurtAppDaemon with a deploymentTemplate, or a statefulSetTemplate.
func newYAD(statefulSet bool) *openyurt.YurtAppDaemon {
	labels := map[string]string{"app": "edge"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}}},
	}
	yad := &openyurt.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: namespace, UID: "uid-yad"},
		Spec: openyurt.YurtAppDaemonSpec{
			Selector:         &metav1.LabelSelector{MatchLabels: labels},
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "a"}},
		},
	}
	meta := metav1.ObjectMeta{Labels: map[string]string{"tier": "edge"}}
	if statefulSet {
		yad.Spec.WorkloadTemplate.StatefulSetTemplate = &openyurt.StatefulSetTemplateSpec{ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Selector: yad.Spec.Selector, Template: template, ServiceName: "edge"}}
	} else {
		yad.Spec.WorkloadTemplate.DeploymentTemplate = &openyurt.DeploymentTemplateSpec{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Selector: yad.Spec.Selector, Template: template}}
	}
	return yad
}

// workloadRecorder records the dry-run Deployment and StatefulSet creates and answers with respond.
type workloadRecorder struct {
	mu      sync.Mutex
	objects []runtime.Object
	opts    []metav1.CreateOptions
}

func newWorkloadPlugin(t *testing.T, respond func(runtime.Object) error) (*Plugin, *workloadRecorder) {
	t.Helper()
	rec := &workloadRecorder{}
	client := fake.NewClientset()
	for _, resource := range []string{"deployments", "statefulsets", "pods"} {
		client.PrependReactor("create", resource, func(action clienttesting.Action) (bool, runtime.Object, error) {
			create := action.(clienttesting.CreateActionImpl)
			obj := create.GetObject().DeepCopyObject()
			rec.mu.Lock()
			rec.objects = append(rec.objects, obj)
			rec.opts = append(rec.opts, create.GetCreateOptions())
			rec.mu.Unlock()
			if respond != nil {
				if err := respond(obj); err != nil {
					return true, nil, err
				}
			}
			return true, obj, nil
		})
	}
	p := New()
	p.SetExternalKubeClientSet(client)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return p, rec
}

func validateYAD(p *Plugin, op admission.Operation, obj, old *openyurt.YurtAppDaemon, subresource string) (error, []string) {
	w := &warnings{}
	ctx := warning.WithWarningRecorder(context.Background(), w)
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	attrs := admission.NewAttributesRecord(obj, oldObj, openyurt.Kind("YurtAppDaemon").WithVersion("v1alpha1"), namespace, obj.Name,
		openyurt.Resource("yurtappdaemons").WithVersion("v1alpha1"), subresource, op, nil, false, nil)
	err := p.Validate(ctx, attrs, nil)
	return err, w.list
}

// yadCauses returns "field: message" of every cause of a 422 about the YurtAppDaemon edge.
func yadCauses(t *testing.T, err error) []string {
	t.Helper()
	var se *apierrors.StatusError
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) {
		t.Fatalf("err = %v, want 422 Invalid", err)
	}
	if d := se.ErrStatus.Details; d == nil || d.Kind != "YurtAppDaemon" || d.Group != openyurt.GroupName || d.Name != "edge" {
		t.Errorf("details = %+v, want the YurtAppDaemon edge", se.ErrStatus.Details)
	}
	var out []string
	for _, c := range se.ErrStatus.Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

func TestYurtAppDaemonWorkloadIsDryRunAsTheControllerRendersIt(t *testing.T) {
	for _, statefulSet := range []bool{false, true} {
		p, rec := newWorkloadPlugin(t, nil)
		yad := newYAD(statefulSet)
		before := yad.DeepCopy()
		if err, warns := validateYAD(p, admission.Create, yad, nil, ""); err != nil || len(warns) > 0 {
			t.Fatalf("statefulSet=%v: Validate = %v, warnings %q; want nil", statefulSet, err, warns)
		}
		if !equalYADs(before, yad) {
			t.Errorf("statefulSet=%v: the admitted YurtAppDaemon was modified", statefulSet)
		}
		if len(rec.objects) != 1 {
			t.Fatalf("statefulSet=%v: %d dry-run creates, want 1", statefulSet, len(rec.objects))
		}
		if o := rec.opts[0]; len(o.DryRun) != 1 || o.DryRun[0] != metav1.DryRunAll {
			t.Errorf("dryRun = %v, want [All]", o.DryRun)
		}
		var meta metav1.ObjectMeta
		var template corev1.PodTemplateSpec
		switch obj := rec.objects[0].(type) {
		case *appsv1.Deployment:
			if statefulSet {
				t.Fatalf("a Deployment for a statefulSetTemplate")
			}
			meta, template = obj.ObjectMeta, obj.Spec.Template
		case *appsv1.StatefulSet:
			if !statefulSet {
				t.Fatalf("a StatefulSet for a deploymentTemplate")
			}
			meta, template = obj.ObjectMeta, obj.Spec.Template
			if obj.Spec.ServiceName != "edge" {
				t.Errorf("serviceName = %q, want the template's", obj.Spec.ServiceName)
			}
		default:
			t.Fatalf("dry-run create of %T", obj)
		}
		if meta.Namespace != namespace || meta.GenerateName != "edge-" || meta.Name != "" {
			t.Errorf("namespace/name/generateName = %q/%q/%q, want %s/\"\"/edge-", meta.Namespace, meta.Name, meta.GenerateName, namespace)
		}
		if len(meta.OwnerReferences) != 1 || meta.OwnerReferences[0].UID != "uid-yad" || meta.OwnerReferences[0].Kind != "YurtAppDaemon" {
			t.Errorf("ownerReferences = %+v, want the YurtAppDaemon", meta.OwnerReferences)
		}
		// What policy.PinPodTemplate adds for the pool: the controller's rendering, not a copy of the template.
		if meta.Labels["tier"] != "edge" || meta.Labels[policy.PoolNameLabel] != dryRunPool ||
			template.Spec.NodeSelector[policy.NodePoolLabel] != dryRunPool || template.Labels["app"] != "edge" {
			t.Errorf("labels %v, pod labels %v, nodeSelector %v: want the rendered workload", meta.Labels, template.Labels, template.Spec.NodeSelector)
		}
	}
}

func TestInvalidWorkloadIsRefusedOnTheYurtAppDaemonFieldPath(t *testing.T) {
	for _, tt := range []struct {
		statefulSet bool
		prefix      string
	}{
		{false, "spec.workloadTemplate.deploymentTemplate"},
		{true, "spec.workloadTemplate.statefulSetTemplate"},
	} {
		p, _ := newWorkloadPlugin(t, func(obj runtime.Object) error {
			kind := schema.GroupKind{Group: "apps", Kind: "Deployment"}
			if _, ok := obj.(*appsv1.StatefulSet); ok {
				kind.Kind = "StatefulSet"
			}
			return apierrors.NewInvalid(kind, "edge-x7k2p", field.ErrorList{
				field.NotSupported(field.NewPath("spec", "template", "spec", "tolerations").Index(0).Child("operator"), "Bogus", []string{"Equal", "Exists"}),
				field.Invalid(field.NewPath("metadata", "labels"), "bad key!", "name part must consist of ..."),
				field.Invalid(field.NewPath("spec", "selector"), "x", "empty selector is invalid"),
				field.Invalid(field.NewPath("metadata", "generateName"), "x", "bad name"),
			})
		})
		err, _ := validateYAD(p, admission.Create, newYAD(tt.statefulSet), nil, "")
		got := yadCauses(t, err)
		want := []string{
			tt.prefix + `.spec.template.spec.tolerations[0].operator: Unsupported value: "Bogus": supported values: "Equal", "Exists"`,
			tt.prefix + `.metadata.labels: Invalid value: "bad key!": name part must consist of ...`,
			`spec.selector: Invalid value: "x": empty selector is invalid`,
			`metadata.name: Invalid value: "x": bad name`,
		}
		if len(got) != len(want) {
			t.Fatalf("causes = %q, want %q", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("cause %d = %q, want %q", i, got[i], want[i])
			}
		}
	}
}

func TestYurtAppDaemonUpdateChecksOnlyAChangedWorkloadTemplate(t *testing.T) {
	p, rec := newWorkloadPlugin(t, nil)
	old := newYAD(false)

	unrelated := old.DeepCopy()
	unrelated.Labels = map[string]string{"note": "x"}
	unrelated.Spec.NodePoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "b"}}
	if err, _ := validateYAD(p, admission.Update, unrelated, old, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.objects); n != 0 {
		t.Fatalf("%d dry-run creates for a change outside the workload template, want none", n)
	}

	changed := old.DeepCopy()
	changed.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	if err, _ := validateYAD(p, admission.Update, changed, old, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.objects); n != 1 {
		t.Fatalf("%d dry-run creates for a changed template, want 1", n)
	}

	// Status writes are not checked.
	if err, _ := validateYAD(p, admission.Update, changed, old, "status"); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.objects); n != 1 {
		t.Errorf("%d dry-run creates after a status write, want still 1", n)
	}
}

func TestWorkloadUnavailableCoreAPIWarnsAndAdmits(t *testing.T) {
	p, _ := newWorkloadPlugin(t, func(runtime.Object) error {
		return apierrors.NewTooManyRequests("slow down", 1)
	})
	err, warns := validateYAD(p, admission.Create, newYAD(false), nil, "")
	if err != nil {
		t.Fatalf("Validate = %v, want the YurtAppDaemon admitted when the core API does not answer", err)
	}
	want := "the workload template of this YurtAppDaemon was not checked against the core API (429 TooManyRequests)"
	if len(warns) != 1 || len(warns[0]) < len(want) || warns[0][:len(want)] != want {
		t.Errorf("warnings = %q, want one starting %q", warns, want)
	}
}

func equalYADs(a, b *openyurt.YurtAppDaemon) bool {
	return reflect.DeepEqual(a, b)
}
