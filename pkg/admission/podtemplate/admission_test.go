package podtemplate

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

const namespace = "ns1"

var podsResource = schema.GroupResource{Resource: "pods"}

// newTApp returns a valid, defaulted-looking TApp with a pool entry "big".
func newTApp() *tkestack.TApp {
	labels := map[string]string{"app": "web"}
	return &tkestack.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace, UID: "uid-1"},
		Spec: tkestack.TAppSpec{
			Replicas: 3,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"note": "x"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}}},
			},
			TemplatePool: map[string]corev1.PodTemplateSpec{
				"big": {
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.26"}}},
				},
			},
			Templates:           map[string]string{"2": "big", "1": "big"},
			DefaultTemplateName: tkestack.DefaultTemplateName,
		},
	}
}

// dryRunRecorder is a fake clientset whose pod creates answer with respond and are recorded.
type dryRunRecorder struct {
	mu   sync.Mutex
	pods []*corev1.Pod
	opts []metav1.CreateOptions
}

// created returns the dry-run pods in the order of their first container's image: the plugin sends them
// concurrently, so the order they arrived in means nothing.
func (r *dryRunRecorder) created() []*corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	pods := append([]*corev1.Pod(nil), r.pods...)
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].Spec.Containers[0].Image < pods[j].Spec.Containers[0].Image })
	return pods
}

func newPlugin(t testing.TB, respond func(pod *corev1.Pod) error) (*Plugin, *dryRunRecorder) {
	t.Helper()
	rec := &dryRunRecorder{}
	client := fake.NewClientset()
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		create := action.(clienttesting.CreateActionImpl)
		pod := create.GetObject().(*corev1.Pod)
		rec.mu.Lock()
		rec.pods = append(rec.pods, pod.DeepCopy())
		rec.opts = append(rec.opts, create.GetCreateOptions())
		rec.mu.Unlock()
		if respond != nil {
			if err := respond(pod); err != nil {
				return true, nil, err
			}
		}
		return true, pod, nil
	})
	p := New()
	p.SetExternalKubeClientSet(client)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return p, rec
}

type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func validate(p *Plugin, op admission.Operation, obj, old *tkestack.TApp, subresource string) (error, []string) {
	w := &warnings{}
	ctx := warning.WithWarningRecorder(context.Background(), w)
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	attrs := admission.NewAttributesRecord(obj, oldObj, tkestack.Kind("TApp").WithVersion("v1"), namespace, obj.Name,
		tkestack.Resource("tapps").WithVersion("v1"), subresource, op, nil, false, nil)
	err := p.Validate(ctx, attrs, nil)
	return err, w.list
}

// invalidPod is the 422 the core API answers for a pod with errs.
func invalidPod(errs ...*field.Error) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web-x7k2p", field.ErrorList(errs))
}

// causes returns "field: message" of every cause of a 422.
func causes(t *testing.T, err error) []string {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want 422 Invalid", err)
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err is %T, want a status error", err)
	}
	if se.ErrStatus.Details == nil || se.ErrStatus.Details.Kind != "TApp" || se.ErrStatus.Details.Group != tkestack.GroupName ||
		se.ErrStatus.Details.Name != "web" {
		t.Errorf("details = %+v, want the TApp web", se.ErrStatus.Details)
	}
	var out []string
	for _, c := range se.ErrStatus.Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

func TestCreateDryRunsEveryTemplateAsTheControllerWould(t *testing.T) {
	p, rec := newPlugin(t, nil)
	tapp := newTApp()
	tapp.Spec.ServiceName = "web-svc"
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	before := tapp.DeepCopy()
	if err, warns := validate(p, admission.Create, tapp, nil, ""); err != nil || len(warns) > 0 {
		t.Fatalf("Validate = %v, warnings %q; want nil", err, warns)
	}
	if !equalTApps(before, tapp) {
		t.Errorf("the admitted TApp was modified")
	}
	pods := rec.created()
	if len(pods) != 2 {
		t.Fatalf("%d dry-run creates, want 2 (spec.template and templatePool[big])", len(pods))
	}
	for i, o := range rec.opts {
		if len(o.DryRun) != 1 || o.DryRun[0] != metav1.DryRunAll {
			t.Errorf("create %d: dryRun = %v, want [All]", i, o.DryRun)
		}
	}
	def, big := pods[0], pods[1]
	for _, pod := range pods {
		if pod.Namespace != namespace || pod.GenerateName != "web-" || pod.Name != "" {
			t.Errorf("pod namespace/name/generateName = %q/%q/%q, want %s/\"\"/web-", pod.Namespace, pod.Name, pod.GenerateName, namespace)
		}
		if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != "uid-1" || pod.OwnerReferences[0].Kind != "TApp" {
			t.Errorf("ownerReferences = %+v, want the TApp", pod.OwnerReferences)
		}
		if pod.Spec.Subdomain != "web-svc" {
			t.Errorf("subdomain = %q, want the service name", pod.Spec.Subdomain)
		}
		if len(pod.Spec.ReadinessGates) != 1 || pod.Spec.ReadinessGates[0].ConditionType != tkestack.InPlaceUpdateReadinessGate {
			t.Errorf("readinessGates = %+v, want the in-place update gate", pod.Spec.ReadinessGates)
		}
		if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].PersistentVolumeClaim == nil {
			t.Errorf("volumes = %+v, want the claim volume", pod.Spec.Volumes)
		}
		if pod.Labels["app"] != "web" || pod.Labels[tkestack.TemplateHashLabel] == "" {
			t.Errorf("labels = %v, want the template labels and the hash labels", pod.Labels)
		}
	}
	if def.Spec.Containers[0].Image != "nginx:1.25" || def.Labels[tkestack.InstanceIDLabel] != "0" || def.Spec.Hostname != "web-0" {
		t.Errorf("default template pod: image %q, instance %q, hostname %q; want nginx:1.25, 0, web-0",
			def.Spec.Containers[0].Image, def.Labels[tkestack.InstanceIDLabel], def.Spec.Hostname)
	}
	if def.Annotations["note"] != "x" {
		t.Errorf("default template pod annotations = %v, want the template's", def.Annotations)
	}
	// The pool entry is run by instances 1 and 2: the lowest stands for it.
	if big.Spec.Containers[0].Image != "nginx:1.26" || big.Labels[tkestack.InstanceIDLabel] != "1" || big.Spec.Hostname != "web-1" {
		t.Errorf("pool pod: image %q, instance %q, hostname %q; want nginx:1.26, 1, web-1",
			big.Spec.Containers[0].Image, big.Labels[tkestack.InstanceIDLabel], big.Spec.Hostname)
	}
}

func TestPoolTemplateNotRunByAnyInstanceIsChecked(t *testing.T) {
	p, rec := newPlugin(t, nil)
	tapp := newTApp()
	tapp.Spec.Templates = nil
	tapp.Spec.DefaultTemplateName = "big" // instances without an entry run "big"; spec.template runs nowhere
	if err, _ := validate(p, admission.Create, tapp, nil, ""); err != nil {
		t.Fatal(err)
	}
	pods := rec.created()
	if len(pods) != 2 || pods[0].Spec.Containers[0].Image != "nginx:1.25" || pods[1].Spec.Containers[0].Image != "nginx:1.26" {
		t.Fatalf("dry-run pods = %v, want spec.template then templatePool[big]", images(pods))
	}
}

func images(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Spec.Containers[0].Image)
	}
	return out
}

func TestInvalidTemplateIsRefusedOnTheTAppFieldPath(t *testing.T) {
	p, _ := newPlugin(t, func(pod *corev1.Pod) error {
		if pod.Spec.Containers[0].Image == "nginx:1.26" {
			return invalidPod(
				field.Invalid(field.NewPath("spec", "activeDeadlineSeconds"), int64(0), "must be between 1 and 2147483647, inclusive"),
				field.Forbidden(field.NewPath("spec", "containers").Index(0).Child("resources", "requests"), "HugePages require cpu or memory"),
			)
		}
		return invalidPod(
			field.Required(field.NewPath("spec", "containers").Index(0).Child("image"), ""),
			field.NotSupported(field.NewPath("spec", "dnsPolicy"), corev1.DNSPolicy("Bogus"), []string{"ClusterFirst", "Default"}),
			field.Invalid(field.NewPath("metadata", "labels"), "a b", "name part must consist of alphanumeric characters"),
		)
	})
	err, _ := validate(p, admission.Create, newTApp(), nil, "")
	got := causes(t, err)
	want := []string{
		`spec.template.spec.containers[0].image: Required value`,
		`spec.template.spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirst", "Default"`,
		`spec.template.metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters`,
		`spec.templatePool[big].spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive`,
		`spec.templatePool[big].spec.containers[0].resources.requests: Forbidden: HugePages require cpu or memory`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("causes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if msg := err.Error(); !strings.HasPrefix(msg, `TApp.apps.tkestack.io "web" is invalid: [spec.template.spec.containers[0].image: Required value, `) {
		t.Errorf("message = %q", msg)
	}
	var se *apierrors.StatusError
	errors.As(err, &se)
	if c := se.ErrStatus.Details.Causes[0]; c.Type != metav1.CauseTypeFieldValueRequired {
		t.Errorf("cause type = %q, want the core API's FieldValueRequired", c.Type)
	}
}

func TestPodFieldsDerivedFromOtherTAppFieldsMapThere(t *testing.T) {
	tapp := newTApp()
	tapp.Spec.ServiceName = "svc"
	tapp.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "cache"}}
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, {ObjectMeta: metav1.ObjectMeta{Name: "logs"}},
	}
	_, paths, err := buildPod(tapp, namespace, tkestack.DefaultTemplateName)
	if err != nil {
		t.Fatal(err)
	}
	_, poolPaths, err := buildPod(tapp, namespace, "big")
	if err != nil {
		t.Fatal(err)
	}
	for podField, want := range map[string]string{
		"":                                      "spec.template",
		"<nil>":                                 "spec.template",
		"metadata.name":                         "metadata.name",
		"metadata.generateName":                 "metadata.name",
		"metadata.namespace":                    "metadata.namespace",
		"spec.hostname":                         "metadata.name",
		"spec.subdomain":                        "spec.serviceName",
		"metadata.labels":                       "spec.template.metadata.labels",
		"spec":                                  "spec.template.spec",
		"spec.volumes[0].name":                  "spec.template.spec.volumes[0].name",
		"spec.volumes[1]":                       "spec.volumeClaimTemplates[0]",
		"spec.volumes[2].persistentVolumeClaim": "spec.volumeClaimTemplates[1]",
		"spec.volumes[3]":                       "spec.template.spec.volumes[3]",
	} {
		if got := paths.tappField(podField); got != want {
			t.Errorf("tappField(%q) = %q, want %q", podField, got, want)
		}
	}
	if got := poolPaths.tappField("spec.containers[0].image"); got != "spec.templatePool[big].spec.containers[0].image" {
		t.Errorf("pool tappField = %q", got)
	}
}

func TestCauseMessagesSurviveTheMapping(t *testing.T) {
	p := field.NewPath("spec", "x")
	for _, e := range []*field.Error{
		field.Required(p, ""),
		field.Required(p, "must be set"),
		field.Invalid(p, "v", "bad"),
		field.Invalid(p, map[string]int{"a": 1}, "bad"),
		field.NotSupported(p, "v", []string{"a", "b"}),
		field.Forbidden(p, "nope"),
		field.Duplicate(p, "v"),
		field.NotFound(p, "v"),
		field.TooLong(p, "vvvv", 3),
		field.TooMany(p, 5, 4),
		field.InternalError(p, errors.New("boom")),
		{Type: "SomethingNew", Field: "spec.x", Detail: "strange"},
	} {
		cause := metav1.StatusCause{Type: metav1.CauseType(e.Type), Field: e.Field, Message: e.ErrorBody()}
		want := cause.Message
		if e.Type == "SomethingNew" {
			// A cause type we do not know keeps its message as the detail of an Invalid error.
			cause.Message = "strange"
			want = "Invalid value: strange"
		}
		got := causeError(cause, "spec.template.spec.x")
		if got.ErrorBody() != want {
			t.Errorf("%s: body %q, want %q", e.Type, got.ErrorBody(), want)
		}
		if got.Field != "spec.template.spec.x" {
			t.Errorf("%s: field %q", e.Type, got.Field)
		}
	}
}

func TestAdmissionRefusalsOfTheCoreAPI(t *testing.T) {
	forbidden := func(msg string) *apierrors.StatusError {
		return apierrors.NewForbidden(podsResource, "web-x7k2p", errors.New(msg))
	}
	tests := []struct {
		name string
		err  error
		// serviceAccount is the service account of the templates.
		serviceAccount string
		// want is the single cause of the refusal, or "" when the TApp is admitted.
		want string
		// warn is a substring of the warning of an admitted TApp whose templates could not be checked.
		warn string
		// missing is the warning of an admitted TApp whose pods refer to an object that does not exist.
		missing string
	}{
		{
			name: "PodSecurity",
			err:  forbidden(`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`),
			want: `spec.template: Forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`,
		},
		{
			name: "LimitRange",
			err:  forbidden("maximum cpu usage per Container is 1, but limit is 2"),
			want: "spec.template: Forbidden: maximum cpu usage per Container is 1, but limit is 2",
		},
		{
			name: "webhook denial 403",
			err:  forbidden(`admission webhook "deny.example.com" denied the request: images must come from registry.example.com`),
			want: `spec.template: Forbidden: admission webhook "deny.example.com" denied the request: images must come from registry.example.com`,
		},
		{
			name: "webhook denial 400",
			err:  apierrors.NewBadRequest(`admission webhook "deny.example.com" denied the request: no latest tags`),
			want: `spec.template: Invalid value: admission webhook "deny.example.com" denied the request: no latest tags`,
		},
		{
			name: "admission policy 422 without causes",
			err: &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
				Reason: metav1.StatusReasonInvalid, Message: `pods "web-x7k2p" is invalid: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no`}},
			want: `spec.template: Invalid value: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no`,
		},
		{
			name: "quota requires limits",
			err:  forbidden("failed quota: compute: must specify limits.cpu for: app"),
			want: "spec.template: Forbidden: failed quota: compute: must specify limits.cpu for: app",
		},
		{
			name: "quota exceeded is for runtime",
			err:  forbidden("exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0"),
		},
		{
			name: "quota not yet computed",
			err:  forbidden("status unknown for quota: pods, resources: pods"),
		},
		{
			name: "terminating namespace",
			err: func() error {
				err := forbidden("unable to create new content in namespace ns1 because it is being terminated")
				err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause,
					Message: "namespace ns1 is being terminated", Field: "metadata.namespace"}}
				return err
			}(),
		},
		{
			name: "default service account not there yet",
			err:  forbidden(`error looking up service account ns1/default: serviceaccount "default" not found`),
		},
		{
			name:           "named service account not there yet",
			serviceAccount: "runner",
			err:            forbidden(`error looking up service account ns1/runner: serviceaccount "runner" not found`),
			missing:        `spec.template: error looking up service account ns1/runner: serviceaccount "runner" not found; its pods will be refused until that exists`,
		},
		{
			name:    "priority class not there yet",
			err:     forbidden("no PriorityClass with name high was found"),
			missing: "spec.template: no PriorityClass with name high was found; its pods will be refused until that exists",
		},
		{
			name:    "runtime class not there yet",
			err:     forbidden(`pod rejected: RuntimeClass "gvisor" not found`),
			missing: `spec.template: pod rejected: RuntimeClass "gvisor" not found; its pods will be refused until that exists`,
		},
		{
			name: "missing namespace",
			err:  apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, namespace),
		},
		{
			name: "this server may not create pods",
			err: apierrors.NewForbidden(podsResource, "", errors.New(
				`User "system:serviceaccount:tapp-system:tapp-apiserver" cannot create resource "pods" in API group "" in the namespace "ns1"`)),
			warn: "403 Forbidden",
		},
		{
			name: "core API unreachable",
			err:  errors.New(`Post "https://10.0.0.1/api/v1/namespaces/ns1/pods?dryRun=All": dial tcp 10.0.0.1:443: connect: connection refused`),
			warn: "core API unreachable",
		},
		{
			name: "timeout",
			err:  apierrors.NewTimeoutError("request did not complete within requested timeout", 0),
			warn: "504 Timeout",
		},
		{
			name: "failing webhook",
			err:  apierrors.NewInternalError(errors.New(`failed calling webhook "x": connection refused`)),
			warn: "500 InternalError",
		},
		{
			name: "throttled",
			err:  apierrors.NewTooManyRequests("slow down", 1),
			warn: "429 TooManyRequests",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, rec := newPlugin(t, func(pod *corev1.Pod) error {
				if pod.Spec.Containers[0].Image == "nginx:1.25" {
					return tt.err
				}
				return nil
			})
			tapp := newTApp()
			tapp.Spec.Template.Spec.ServiceAccountName = tt.serviceAccount
			err, warns := validate(p, admission.Create, tapp, nil, "")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate = %v, want the TApp admitted", err)
			case tt.want != "":
				if got := causes(t, err); len(got) != 1 || got[0] != tt.want {
					t.Fatalf("causes = %q, want [%q]", got, tt.want)
				}
			}
			switch {
			case tt.missing != "":
				if len(warns) != 1 || warns[0] != tt.missing {
					t.Errorf("warnings = %q, want [%q]", warns, tt.missing)
				}
				// The other templates are still checked.
				if n := len(rec.created()); n != 2 {
					t.Errorf("%d dry-run creates, want 2", n)
				}
			case tt.warn == "" && len(warns) > 0:
				t.Errorf("warnings = %q, want none", warns)
			case tt.warn != "":
				if len(warns) != 1 || !strings.Contains(warns[0], tt.warn) || !strings.Contains(warns[0], "not checked against the core API") {
					t.Errorf("warnings = %q, want one mentioning %q", warns, tt.warn)
				}
				// Both templates were tried (concurrently), and one warning says the check was skipped.
				if n := len(rec.created()); n != 2 {
					t.Errorf("%d dry-run creates, want 2", n)
				}
			}
		})
	}
}

func TestUpdateChecksOnlyChangedTemplates(t *testing.T) {
	tests := []struct {
		name   string
		change func(tapp *tkestack.TApp)
		want   []string // images of the dry-run pods
	}{
		{name: "replicas only", change: func(tapp *tkestack.TApp) { tapp.Spec.Replicas = 10 }},
		{name: "instance moved to another template", change: func(tapp *tkestack.TApp) { tapp.Spec.Templates["0"] = "big" }},
		{name: "labels of the TApp", change: func(tapp *tkestack.TApp) { tapp.Labels = map[string]string{"x": "y"} }},
		{name: "pool entry removed", change: func(tapp *tkestack.TApp) { delete(tapp.Spec.TemplatePool, "big") }},
		{
			name:   "spec.template",
			change: func(tapp *tkestack.TApp) { tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2" },
			want:   []string{"nginx:2"},
		},
		{
			name: "one pool entry changed, one added",
			change: func(tapp *tkestack.TApp) {
				big := tapp.Spec.TemplatePool["big"]
				big.Spec.Containers[0].Image = "nginx:3"
				tapp.Spec.TemplatePool["big"] = big
				tapp.Spec.TemplatePool["a-new"] = *tapp.Spec.Template.DeepCopy()
			},
			want: []string{"nginx:1.25", "nginx:3"},
		},
		{
			name:   "serviceName shapes every pod",
			change: func(tapp *tkestack.TApp) { tapp.Spec.ServiceName = "svc" },
			want:   []string{"nginx:1.25", "nginx:1.26"},
		},
		{
			name: "volumeClaimTemplates shape every pod",
			change: func(tapp *tkestack.TApp) {
				tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "d"}}}
			},
			want: []string{"nginx:1.25", "nginx:1.26"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, rec := newPlugin(t, nil)
			old := newTApp()
			tapp := newTApp()
			tt.change(tapp)
			if err, _ := validate(p, admission.Update, tapp, old, ""); err != nil {
				t.Fatal(err)
			}
			if got := images(rec.created()); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("dry-run pods = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSemanticallyEqualQuantitiesAreNoChange(t *testing.T) {
	p, rec := newPlugin(t, nil)
	old := newTApp()
	old.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	tapp := newTApp()
	tapp.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}
	if err, _ := validate(p, admission.Update, tapp, old, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.created()); n != 0 {
		t.Errorf("%d dry-run creates, want none", n)
	}
}

func TestSubresourcesAndOtherResourcesAreNotChecked(t *testing.T) {
	p, rec := newPlugin(t, func(*corev1.Pod) error { return invalidPod(field.Required(field.NewPath("spec"), "")) })
	old := newTApp()
	tapp := newTApp()
	tapp.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	for _, sub := range []string{"status", "scale"} {
		if err, _ := validate(p, admission.Update, tapp, old, sub); err != nil {
			t.Errorf("%s: %v", sub, err)
		}
	}
	other := admission.NewAttributesRecord(tapp, nil, tkestack.Kind("TApp").WithVersion("v1"), namespace, "web",
		schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "yurtappdaemons"}, "",
		admission.Create, nil, false, nil)
	if err := p.Validate(context.Background(), other, nil); err != nil {
		t.Errorf("another resource: %v", err)
	}
	if n := len(rec.created()); n != 0 {
		t.Errorf("%d dry-run creates, want none", n)
	}
	if p.Handles(admission.Delete) || p.Handles(admission.Connect) || !p.Handles(admission.Create) || !p.Handles(admission.Update) {
		t.Errorf("the plugin must handle exactly create and update")
	}
}

func TestInitializedByTheStandardInitializer(t *testing.T) {
	plugins := admission.NewPlugins()
	Register(plugins)
	if got := plugins.Registered(); len(got) != 1 || got[0] != PluginName {
		t.Fatalf("registered plugins = %q, want [%s]", got, PluginName)
	}
	// InitPlugin runs the initializer and then ValidateInitialization, as the server does.
	plugin, err := plugins.InitPlugin(PluginName, nil,
		genericadmissioninitializer.New(fake.NewClientset(), nil, nil, nil, nil, nil, nil, nil))
	if err != nil {
		t.Fatalf("initializing the plugin with the standard initializer: %v", err)
	}
	if _, ok := plugin.(admission.ValidationInterface); !ok {
		t.Fatalf("%T is not a validating admission plugin", plugin)
	}

	if err := New().ValidateInitialization(); err == nil {
		t.Errorf("ValidateInitialization without a client must fail")
	}
}

func equalTApps(a, b *tkestack.TApp) bool {
	return reflect.DeepEqual(a, b)
}

func TestDryRunClientTakesPrecedence(t *testing.T) {
	own, rec := newPlugin(t, nil)
	ownClient := own.client
	shared := fake.NewClientset()
	p := New()
	NewInitializer(ownClient).Initialize(p)
	p.SetExternalKubeClientSet(shared) // the generic initializer runs first in the server; order must not matter
	if err, _ := validate(p, admission.Create, newTApp(), nil, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.created()); n != 2 {
		t.Errorf("%d dry-run creates through the plugin's own client, want 2", n)
	}
	if n := len(shared.Actions()); n != 0 {
		t.Errorf("%d requests through the shared clientset, want 0", n)
	}
}

func TestTemplatesAreCheckedConcurrently(t *testing.T) {
	// A core API whose pod creates each wait until both templates' dry runs have arrived: checked one after the
	// other, the first would wait in vain. (The fake clientset serializes its reactors, hence a real server.)
	var arrived sync.WaitGroup
	arrived.Add(2)
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		n := requests
		mu.Unlock()
		if n <= 2 {
			arrived.Done()
		}
		done := make(chan struct{})
		go func() { arrived.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			w.WriteHeader(http.StatusGatewayTimeout)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	p := pluginAgainst(t, srv.URL)
	err, warns := validate(p, admission.Create, newTApp(), nil, "")
	if err != nil || len(warns) != 0 {
		t.Fatalf("Validate = %v, warnings %q; want the TApp admitted without warnings", err, warns)
	}
	if requests != 2 {
		t.Errorf("%d dry-run creates, want 2", requests)
	}
}

// A template that cannot be checked must not hide the refusal of another, whichever comes first.
func TestEveryTemplatesVerdictCounts(t *testing.T) {
	unreachable := errors.New("dial tcp 10.0.0.1:443: connect: connection refused")
	invalid := invalidPod(field.Invalid(field.NewPath("spec", "containers").Index(0).Child("image"), "x", "bad image"))
	for _, tt := range []struct {
		name           string
		byImage        map[string]error
		wantCause      string
		wantWarningFor string
	}{
		{
			name:           "spec.template unchecked, pool entry invalid",
			byImage:        map[string]error{"nginx:1.25": unreachable, "nginx:1.26": invalid},
			wantCause:      `spec.templatePool[big].spec.containers[0].image: Invalid value: "x": bad image`,
			wantWarningFor: "pod template spec.template was not checked",
		},
		{
			name:           "spec.template invalid, pool entry unchecked",
			byImage:        map[string]error{"nginx:1.25": invalid, "nginx:1.26": unreachable},
			wantCause:      `spec.template.spec.containers[0].image: Invalid value: "x": bad image`,
			wantWarningFor: "pod template spec.templatePool[big] was not checked",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPlugin(t, func(pod *corev1.Pod) error { return tt.byImage[pod.Spec.Containers[0].Image] })
			err, warns := validate(p, admission.Create, newTApp(), nil, "")
			if got := causes(t, err); len(got) != 1 || got[0] != tt.wantCause {
				t.Fatalf("causes = %q, want [%q]", got, tt.wantCause)
			}
			if len(warns) != 1 || !strings.Contains(warns[0], tt.wantWarningFor) {
				t.Errorf("warnings = %q, want one saying %q", warns, tt.wantWarningFor)
			}
		})
	}
}

// Through a real client, a dry run asks for the created pod's metadata alone, and a refusal, a Status in
// whatever encoding the core API chose, still becomes the template's field errors.
func TestDryRunsAskForMetadataOnly(t *testing.T) {
	var mu sync.Mutex
	var accepts, queries, paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pod corev1.Pod
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &pod); err != nil || len(pod.Spec.Containers) == 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		accepts, queries, paths = append(accepts, r.Header.Get("Accept")), append(queries, r.URL.RawQuery), append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if pod.Spec.Containers[0].Image == "nginx:1.26" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,`+
				`"message":"Pod \"web-x\" is invalid: spec.containers[0].image: Invalid value: \"x\": bad image",`+
				`"details":{"kind":"Pod","causes":[{"reason":"FieldValueInvalid","field":"spec.containers[0].image","message":"Invalid value: \"x\": bad image"}]}}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web-x","namespace":"`+namespace+`"}}`)
	}))
	defer srv.Close()
	p := pluginAgainst(t, srv.URL)
	err, _ := validate(p, admission.Create, newTApp(), nil, "")
	if got := causes(t, err); len(got) != 1 || got[0] != `spec.templatePool[big].spec.containers[0].image: Invalid value: "x": bad image` {
		t.Errorf("causes = %q, want the pool entry's image refused", got)
	}
	if len(paths) != 2 {
		t.Fatalf("%d dry runs, want 2", len(paths))
	}
	for i := range paths {
		if paths[i] != "POST /api/v1/namespaces/"+namespace+"/pods" || queries[i] != "dryRun=All" ||
			!strings.HasPrefix(accepts[i], "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,") {
			t.Errorf("request %d: %s ?%s Accept %q; want a dry-run pod create asking for metadata only", i, paths[i], queries[i], accepts[i])
		}
	}
}

// pluginAgainst is the plugin sending its dry runs, in JSON, to the core API at host.
func pluginAgainst(t *testing.T, host string) *Plugin {
	t.Helper()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: host, QPS: -1, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	p := New()
	NewInitializer(client).Initialize(p)
	return p
}

// buildPod returns the pod the TApp controller would create from template templateName, as the plugin builds
// it, and where its fields come from.
func buildPod(tapp *tkestack.TApp, namespace, templateName string) (*corev1.Pod, *podPaths, error) {
	prepared, template, err := prepareTemplate(tapp, templateName)
	if err != nil {
		return nil, nil, err
	}
	pod, paths := buildPodFrom(tapp, namespace, prepared, template, instanceFor(tapp, templateName))
	return pod, paths, nil
}
