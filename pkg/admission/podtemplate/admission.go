// Package podtemplate is the TAppPodTemplateDryRun admission plugin. It checks every pod template of a TApp
// against the real core API before the TApp is stored, so a template whose pods the core API would refuse is
// refused at `kubectl apply` instead of surfacing later as pod-creation failures of the controller.
//
// On create, and on update when a template changed, the plugin builds the pod the TApp controller would
// create from each template concerned (spec.template and every spec.templatePool entry; the same labels,
// annotations, readiness gate, hostname and claim volumes, with generateName "<tapp>-" so no existing pod
// collides) and creates it with dryRun=All in the TApp's namespace. The core API then runs its defaulting,
// validation and admission (PodSecurity, LimitRanger, webhooks, admission policies) without storing anything.
// On update only new or changed templates are checked, or all of them when serviceName or
// volumeClaimTemplates changed (they shape every pod): an unchanged template is never re-judged, so a policy
// tightened later does not block unrelated edits. The status and scale subresources are not checked.
//
// What the dry run answers decides the TApp write:
//
//   - 422 Invalid: refused with 422 Invalid. Each cause keeps the core API's message and type, and its field
//     is moved onto the TApp: spec.containers[0].image of spec.template becomes
//     spec.template.spec.containers[0].image, of pool entry "big" spec.templatePool[big].spec.containers[0].image;
//     the pod's name and hostname map to metadata.name, its subdomain to spec.serviceName and a claim volume to
//     its spec.volumeClaimTemplates entry.
//   - 403 Forbidden from admission (PodSecurity, LimitRange, a webhook or policy denial) and 400 Bad Request
//     (a webhook denial): these are real, lasting reasons why no pod of the template would be created, so the
//     TApp is refused too, with a 422 whose Forbidden (or Invalid) cause on the template path carries the core
//     API's message. A 422 keeps every template's problem in one answer with a field path, like the TApp's own
//     validation.
//   - ResourceQuota refusals that depend on the namespace's current usage ("exceeded quota", "status unknown
//     for quota", "insufficient quota") are ignored: quota limits running pods, not templates, and the
//     controller creates the pods once there is room. "failed quota: ... must specify ..." is a template
//     defect (it lacks requests or limits a quota demands) and refuses the TApp.
//   - A refusal because an object the pod refers to does not exist yet (its ServiceAccount, PriorityClass or
//     RuntimeClass) admits the TApp with a warning: `kubectl apply -f dir/` must not depend on file order, and
//     the pods are created once the object exists. The default ServiceAccount, which every new namespace lacks
//     for a moment, does not even warn. (The core API stops at such a refusal, so that template's other checks
//     are skipped.)
//   - A missing or terminating namespace is ignored: the namespace lifecycle plugin of this server owns that.
//   - Anything else (the core API unreachable, timeouts, 429, 5xx, a failing webhook, and a 403 refusing this
//     server's own identity the pods create verb) fails open: the TApp is admitted, the server logs an error
//     and the response carries a warning that the templates were not checked. Failing closed would make every
//     TApp create and template edit depend on the core API and on every pod webhook being up, although the
//     TApp controller reports a template problem anyway (events and status) when it creates the pods; this
//     check is an early answer for the user, not a safety guarantee.
//
// The plugin needs the core API, so it only runs in cluster mode; in standalone mode there is no admission
// chain at all. It sends the dry runs through a client of its own (NewInitializer), or else through the
// server's shared external clientset.
package podtemplate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/admission/podtemplate/refusal"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
)

// PluginName is the name of the admission plugin.
const PluginName = "TAppPodTemplateDryRun"

// DefaultTimeout bounds one dry-run pod create.
const DefaultTimeout = 10 * time.Second

// maxConcurrentChecks bounds the dry-run pod creates of one TApp write in flight at once.
const maxConcurrentChecks = 8

var tappsResource = tkestack.Resource("tapps")

// Register adds the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}

// Plugin checks the pod templates of TApps with dry-run pod creates.
type Plugin struct {
	*admission.Handler
	client    kubernetes.Interface
	ownClient bool
	// Timeout bounds one dry-run pod create.
	Timeout time.Duration
}

var (
	_ admission.ValidationInterface                          = &Plugin{}
	_ admission.InitializationValidator                      = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeClientSet = &Plugin{}
	_ WantsDryRunClient                                      = &Plugin{}
)

// New returns the plugin; it needs a clientset (SetExternalKubeClientSet) before use.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), Timeout: DefaultTimeout}
}

// SetExternalKubeClientSet implements genericadmissioninitializer.WantsExternalKubeClientSet. A client given
// by SetDryRunClient takes precedence.
func (p *Plugin) SetExternalKubeClientSet(client kubernetes.Interface) {
	if !p.ownClient {
		p.client = client
	}
}

// SetDryRunClient implements WantsDryRunClient.
func (p *Plugin) SetDryRunClient(client kubernetes.Interface) {
	p.client, p.ownClient = client, true
}

// WantsDryRunClient is implemented by a plugin that sends its dry-run pod creates through a client of its own
// rather than the server's shared external clientset, whose rate limit (client-go's default, 5 requests per
// second) every other user of that clientset shares.
type WantsDryRunClient interface {
	SetDryRunClient(kubernetes.Interface)
}

// NewInitializer returns the admission initializer that hands client to the plugin. It must come after the
// generic initializer, as the extra initializers of RecommendedOptions do.
func NewInitializer(client kubernetes.Interface) admission.PluginInitializer {
	return dryRunClientInitializer{client: client}
}

type dryRunClientInitializer struct {
	client kubernetes.Interface
}

// Initialize implements admission.PluginInitializer.
func (i dryRunClientInitializer) Initialize(plugin admission.Interface) {
	if w, ok := plugin.(WantsDryRunClient); ok {
		w.SetDryRunClient(i.client)
	}
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.client == nil {
		return fmt.Errorf("%s needs a core API client", PluginName)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != tappsResource || a.GetSubresource() != "" {
		return nil
	}
	tapp, ok := a.GetObject().(*tkestack.TApp)
	if !ok {
		return nil
	}
	var old *tkestack.TApp
	if a.GetOperation() == admission.Update {
		if old, ok = a.GetOldObject().(*tkestack.TApp); !ok {
			return nil
		}
	}
	names := templatesToCheck(old, tapp)
	if len(names) == 0 {
		return nil
	}
	namespace := a.GetNamespace()
	if namespace == "" {
		namespace = tapp.Namespace
	}

	// The templates are checked concurrently: a TApp's create then waits for its slowest template only.
	type verdict struct {
		paths       *podPaths
		errs        field.ErrorList
		missing     string
		unavailable error
	}
	verdicts := make([]*verdict, len(names))
	var wg sync.WaitGroup
	limit := make(chan struct{}, maxConcurrentChecks)
	for i, name := range names {
		pod, paths, err := buildPod(tapp, namespace, name)
		if err != nil {
			// Our own validation ran before admission; a template that cannot be built is not ours to judge.
			klog.ErrorS(err, "Cannot build the dry-run pod of a TApp template", "tapp", klog.KRef(namespace, tapp.Name), "template", name)
			continue
		}
		v := &verdict{paths: paths}
		verdicts[i] = v
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			v.errs, v.missing, v.unavailable = p.dryRun(ctx, pod, paths)
		}()
	}
	wg.Wait()

	// Every template's verdict counts: one that could not be checked does not hide the refusal of another.
	var allErrs field.ErrorList
	var unchecked []string
	var unavailable error
	for _, v := range verdicts {
		if v == nil {
			continue
		}
		if v.missing != "" {
			warning.AddWarning(ctx, "", fmt.Sprintf("%s: %s; its pods will be refused until that exists", v.paths.template, v.missing))
		}
		if v.unavailable != nil {
			unchecked = append(unchecked, v.paths.template.String())
			if unavailable == nil {
				unavailable = v.unavailable
			}
		}
		allErrs = append(allErrs, v.errs...)
	}
	if unavailable != nil {
		klog.ErrorS(unavailable, "Pod templates of a TApp could not be checked against the core API; not refusing it for them",
			"tapp", klog.KRef(namespace, tapp.Name), "templates", unchecked)
		// One warning says it; the templates most likely met the same problem.
		warning.AddWarning(ctx, "", fmt.Sprintf("%s not checked against the core API (%s); "+
			"pod creation problems will show in the TApp's events", uncheckedSubject(unchecked, len(names)), shortReason(unavailable)))
	}
	if len(allErrs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(tkestack.Kind("TApp"), tapp.Name, allErrs)
}

// templatesToCheck returns the names of the templates to check, spec.template ("default") first, then the
// pool entries in name order: all of them on create, the new or changed ones on update.
func templatesToCheck(old, tapp *tkestack.TApp) []string {
	all := old == nil ||
		old.Spec.ServiceName != tapp.Spec.ServiceName ||
		!apiequality.Semantic.DeepEqual(old.Spec.VolumeClaimTemplates, tapp.Spec.VolumeClaimTemplates)
	var names []string
	if all || !apiequality.Semantic.DeepEqual(old.Spec.Template, tapp.Spec.Template) {
		names = append(names, tkestack.DefaultTemplateName)
	}
	pool := make([]string, 0, len(tapp.Spec.TemplatePool))
	for name, t := range tapp.Spec.TemplatePool {
		if name == tkestack.DefaultTemplateName {
			continue // reserved; validation refuses it
		}
		if !all {
			if before, ok := old.Spec.TemplatePool[name]; ok && apiequality.Semantic.DeepEqual(before, t) {
				continue
			}
		}
		pool = append(pool, name)
	}
	sort.Strings(pool)
	return append(names, pool...)
}

// dryRun creates pod with dryRun=All. It returns the field errors of a refusal; or the core API's message
// when the pod refers to an object that does not exist yet (missing); or the error that kept the core API
// from answering (unavailable). All are empty when the pod would be created.
func (p *Plugin) dryRun(ctx context.Context, pod *corev1.Pod, paths *podPaths) (errs field.ErrorList, missing string, unavailable error) {
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	_, err := p.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	r := refusal.Classify(err)
	switch r.Class {
	case refusal.Created, refusal.NamespaceTerminating, refusal.NamespaceNotFound, refusal.NameTaken:
		// The namespace lifecycle plugin of this server owns a missing or terminating namespace.
		return nil, "", nil
	case refusal.Invalid:
		return causeErrors(*r.Status, r.Message, paths), "", nil
	case refusal.Refused:
		if apierrors.IsBadRequest(err) {
			return field.ErrorList{field.Invalid(paths.template, field.OmitValueType{}, r.Message)}, "", nil
		}
		return field.ErrorList{field.Forbidden(paths.template, r.Message)}, "", nil
	case refusal.UsageQuota:
		klog.V(2).InfoS("Ignoring a ResourceQuota refusal of a TApp's dry-run pod", "namespace", pod.Namespace, "message", r.Message)
		return nil, "", nil
	case refusal.MissingServiceAccount:
		if name := pod.Spec.ServiceAccountName; name == "" || name == "default" {
			// Every new namespace is without it for a moment; not worth a warning.
			klog.V(2).InfoS("The default service account is missing; TApp pod template not checked", "namespace", pod.Namespace)
			return nil, "", nil
		}
		return nil, r.Message, nil
	case refusal.MissingReference:
		return nil, r.Message, nil
	}
	// AuthorizationDenied, Unavailable.
	return nil, "", err
}

// uncheckedSubject names the templates that were not checked in a warning.
func uncheckedSubject(unchecked []string, all int) string {
	switch {
	case len(unchecked) == all:
		return "the pod templates of this TApp were"
	case len(unchecked) == 1:
		return "pod template " + unchecked[0] + " was"
	}
	return "pod templates " + strings.Join(unchecked, ", ") + " were"
}

// causeErrors turns the causes of a 422 into field errors on the TApp. A 422 without causes (an admission
// policy's denial, for instance) becomes one error on the template.
func causeErrors(s metav1.Status, message string, paths *podPaths) field.ErrorList {
	var causes []metav1.StatusCause
	if s.Details != nil {
		causes = s.Details.Causes
	}
	if len(causes) == 0 {
		return field.ErrorList{field.Invalid(paths.template, field.OmitValueType{}, message)}
	}
	errs := make(field.ErrorList, 0, len(causes))
	for _, c := range causes {
		errs = append(errs, causeError(c, paths.tappField(c.Field)))
	}
	return errs
}

// causeError rebuilds the field error a cause was made from, on fieldPath: the cause's message is the error
// body "<type text>[: <detail>]", which the rebuilt error reproduces exactly.
func causeError(c metav1.StatusCause, fieldPath string) *field.Error {
	t := field.ErrorType(c.Type)
	text := t.String()
	if !strings.HasPrefix(text, "<unknown") {
		if c.Message == text {
			return &field.Error{Type: t, Field: fieldPath, BadValue: field.OmitValueType{}}
		}
		if detail, ok := strings.CutPrefix(c.Message, text+": "); ok {
			return &field.Error{Type: t, Field: fieldPath, BadValue: field.OmitValueType{}, Detail: detail}
		}
	}
	return &field.Error{Type: field.ErrorTypeInvalid, Field: fieldPath, BadValue: field.OmitValueType{}, Detail: c.Message}
}

// shortReason is what the warning says about why the check did not happen; the log has the whole error.
func shortReason(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		if s.Reason != "" {
			return fmt.Sprintf("%d %s", s.Code, s.Reason)
		}
		return strconv.Itoa(int(s.Code))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return "core API unreachable"
}

// buildPod returns the pod the TApp controller would create from template templateName (tapppod.New, as the
// controller does), named with generateName "<tapp>-", and where its fields come from.
func buildPod(tapp *tkestack.TApp, namespace, templateName string) (*corev1.Pod, *podPaths, error) {
	t := &tapp.Spec.Template
	paths := &podPaths{template: field.NewPath("spec", "template"), claimVolumes: map[int]int{}}
	if templateName != tkestack.DefaultTemplateName {
		pooled, ok := tapp.Spec.TemplatePool[templateName]
		if !ok {
			return nil, nil, fmt.Errorf("template %q not found in spec.templatePool", templateName)
		}
		t = &pooled
		paths.template = field.NewPath("spec", "templatePool").Key(templateName)
	}
	id := instanceFor(tapp, templateName)
	// Without a uid (only possible outside a real request) the pod has no owner reference, which would be
	// invalid.
	pod := tapppod.New(tapppod.Owner{
		Name:                 tapp.Name,
		Namespace:            namespace,
		UID:                  tapp.UID,
		ServiceName:          tapp.Spec.ServiceName,
		VolumeClaimTemplates: tapp.Spec.VolumeClaimTemplates,
	}, id, t)
	pod.GenerateName = tapp.Name + "-"
	pod.Name = ""

	for i, volume := range pod.Spec.Volumes {
		if volume.PersistentVolumeClaim == nil {
			continue
		}
		for j, claim := range tapp.Spec.VolumeClaimTemplates {
			if claim.Name == volume.Name && volume.PersistentVolumeClaim.ClaimName == tapppod.ClaimName(claim.Name, tapp.Name, id) {
				paths.claimVolumes[i] = j
			}
		}
	}
	return pod, paths, nil
}

// instanceFor returns the instance id whose pod stands for the template: the lowest id assigned to it in
// spec.templates, else 0.
func instanceFor(tapp *tkestack.TApp, templateName string) string {
	best := -1
	for id, name := range tapp.Spec.Templates {
		if name != templateName {
			continue
		}
		if n, ok := tapppod.ParseID(id); ok && (best < 0 || n < best) {
			best = n
		}
	}
	if best < 0 {
		best = 0
	}
	return strconv.Itoa(best)
}

// podPaths maps field paths of the dry-run pod to the TApp fields they come from.
type podPaths struct {
	// template is the path of the template: spec.template or spec.templatePool[<name>].
	template *field.Path
	// claimVolumes maps the index of a pod volume made from a volume claim template to that template's index.
	claimVolumes map[int]int
}

// tappField returns the TApp field path of a field path of the pod.
func (p *podPaths) tappField(podField string) string {
	switch {
	case podField == "" || podField == "<nil>":
		return p.template.String()
	case podField == "metadata.name" || podField == "metadata.generateName" || podField == "spec.hostname":
		return "metadata.name"
	case podField == "metadata.namespace":
		return "metadata.namespace"
	case podField == "spec.subdomain":
		return "spec.serviceName"
	}
	if rest, ok := strings.CutPrefix(podField, "spec.volumes["); ok {
		if end := strings.IndexByte(rest, ']'); end > 0 {
			if i, err := strconv.Atoi(rest[:end]); err == nil {
				if j, ok := p.claimVolumes[i]; ok {
					return field.NewPath("spec", "volumeClaimTemplates").Index(j).String()
				}
			}
		}
	}
	if strings.HasPrefix(podField, "[") {
		return p.template.String() + podField
	}
	return p.template.String() + "." + podField
}
