package podtemplate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	restclient "k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/admission/podtemplate/refusal"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// PluginName is the name of the admission plugin.
const PluginName = "TAppPodTemplateDryRun"

// DefaultTimeout bounds one dry-run pod create.
const DefaultTimeout = 10 * time.Second

// maxConcurrentChecks bounds the dry-run pod creates of one TApp write in flight at once.
const maxConcurrentChecks = 8

var (
	tappsResource          = tkestack.Resource("tapps")
	yurtAppDaemonsResource = openyurt.Resource("yurtappdaemons")
)

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
	// verdicts remembers clean verdicts while nothing admission reads changes; nil (nothing remembered)
	// until SetExternalKubeInformerFactory.
	verdicts *verdictCache
	// Timeout bounds one dry-run pod create.
	Timeout time.Duration
}

var (
	_ admission.ValidationInterface                                = &Plugin{}
	_ admission.InitializationValidator                            = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeClientSet       = &Plugin{}
	_ WantsDryRunClient                                            = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeInformerFactory = &Plugin{}
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

// SetExternalKubeInformerFactory implements genericadmissioninitializer.WantsExternalKubeInformerFactory:
// the informers of what the core API's admission reads tell when a remembered verdict may have changed.
func (p *Plugin) SetExternalKubeInformerFactory(factory informers.SharedInformerFactory) {
	if factory == nil {
		return
	}
	verdicts := newVerdictCache(DefaultVerdictTTL, DefaultVerdictCacheSize, clock.RealClock{})
	if err := verdicts.watch(factory); err != nil {
		klog.ErrorS(err, "Cannot watch what admission reads; verdicts of dry runs are not remembered")
		return
	}
	p.verdicts = verdicts
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
	if a.GetSubresource() != "" {
		return nil
	}
	switch a.GetResource().GroupResource() {
	case tappsResource:
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
		namespace := namespaceOf(a, tapp.Namespace)
		generation, remember := p.remembering("", "pods")
		var keyTApp tkestack.TApp
		if remember {
			// A shallow copy: pods are built from a TApp without changing it.
			keyTApp = *tapp
			keyTApp.Name, keyTApp.UID = p.verdicts.keyName(tapp.Name), keyUID(tapp.UID)
		}
		var checks []*templateCheck
		for _, name := range templatesToCheck(old, tapp) {
			// Each template is hashed once, for its pod and for the pod its cache key is made of.
			prepared, template, err := prepareTemplate(tapp, name)
			if err != nil {
				// Our own validation ran before admission; a template that cannot be built is not ours to judge.
				klog.ErrorS(err, "Cannot build the dry-run pod of a TApp template", "tapp", klog.KRef(namespace, tapp.Name), "template", name)
				continue
			}
			id := instanceFor(tapp, name)
			c := &templateCheck{template: template, build: func() (runtime.Object, func(string) string) {
				pod, paths := buildPodFrom(tapp, namespace, prepared, template, id)
				return pod, paths.tappField
			}}
			if remember {
				// The instance's id stands in the key as the TApp's name does: while no admission policy
				// exists, by its placeholder, so that templates alike but for the instance they stand
				// for (the tutorial's spec.template and its templatePool entry) are sent once.
				keyPod, _ := buildPodFrom(&keyTApp, namespace, prepared, template, p.verdicts.keyName(id))
				c.key, c.generation = verdictKeyOrEmpty(namespace, keyPod), generation
			}
			checks = append(checks, c)
		}
		return p.check(ctx, tappSubject, tapp.Name, namespace, checks)
	case yurtAppDaemonsResource:
		yad, ok := a.GetObject().(*openyurt.YurtAppDaemon)
		if !ok {
			return nil
		}
		var old *openyurt.YurtAppDaemon
		if a.GetOperation() == admission.Update {
			if old, ok = a.GetOldObject().(*openyurt.YurtAppDaemon); !ok {
				return nil
			}
		}
		if !workloadTemplateChanged(old, yad) {
			return nil
		}
		namespace := namespaceOf(a, yad.Namespace)
		c, err := buildWorkload(yad, namespace)
		if err != nil {
			klog.ErrorS(err, "Cannot build the dry-run workload of a YurtAppDaemon", "yurtAppDaemon", klog.KRef(namespace, yad.Name))
			return nil
		}
		group, resource, _, _ := dryRunTarget(c.object)
		if generation, remember := p.remembering(group, resource); remember {
			keyYAD := yad.DeepCopy()
			keyYAD.Name, keyYAD.UID = p.verdicts.keyName(yad.Name), keyUID(yad.UID)
			if keyCheck, err := buildWorkload(keyYAD, namespace); err == nil {
				c.key, c.generation = verdictKeyOrEmpty(namespace, keyCheck.object), generation
			}
		}
		return p.check(ctx, yadSubject, yad.Name, namespace, []*templateCheck{c})
	case yurtAppSetsResource:
		return p.validateYurtAppSet(ctx, a)
	}
	return nil
}

// namespaceOf is the namespace of the request, else the object's.
func namespaceOf(a admission.Attributes, objectNamespace string) string {
	if ns := a.GetNamespace(); ns != "" {
		return ns
	}
	return objectNamespace
}

// templateCheck is one template of a checked object: what its controller would create from it, and where
// that object's fields come from.
type templateCheck struct {
	// template is the field path of the template in the checked object.
	template *field.Path
	// object is what the controller would create from the template (a pod, a Deployment or a StatefulSet),
	// named with generateName so that no existing object collides.
	object runtime.Object
	// fieldPath maps a field path of object onto the checked object.
	fieldPath func(string) string
	// build, when set, makes object and fieldPath the first time they are needed (built): a template whose
	// verdict is remembered, or answered by the dry run of a template alike, is then never built.
	build func() (runtime.Object, func(string) string)
	// key is the verdict cache key of object ("": not remembered), found at generation of the cache.
	key        string
	generation uint64
	// baseline, when set, is a check of the same template without this check's changes (a YurtAppSet's
	// template without the tweak): refusals the baseline got too are reported once, by the baseline.
	baseline *templateCheck
}

// built returns c with object and fieldPath made.
func (c *templateCheck) built() *templateCheck {
	if c.object == nil && c.build != nil {
		c.object, c.fieldPath = c.build()
	}
	return c
}

// remembering returns the verdict cache's generation, and whether verdicts of dry-run creates of
// group/resource may be remembered now.
func (p *Plugin) remembering(group, resource string) (uint64, bool) {
	if p.verdicts == nil {
		return 0, false
	}
	return p.verdicts.current(group, resource)
}

// keyUID stands for an object's uid in a cache key: it is new for every object and judged by no admission.
func keyUID(uid types.UID) types.UID {
	if uid == "" {
		return ""
	}
	return "00000000-0000-0000-0000-000000000000"
}

// verdictKeyOrEmpty is the cache key of a dry-run object, "" (not remembered) if it cannot be made.
func verdictKeyOrEmpty(namespace string, object runtime.Object) string {
	key, err := verdictKey(namespace, object)
	if err != nil {
		return ""
	}
	return key
}

// subject says what is checked, in errors, logs and warnings.
type subject struct {
	kind schema.GroupKind
	// template and templates name one template and several in warnings ("pod template", "pod templates").
	template, templates string
}

var (
	tappSubject = subject{kind: tkestack.Kind("TApp"), template: "pod template", templates: "pod templates"}
	yadSubject  = subject{kind: openyurt.Kind("YurtAppDaemon"), template: "workload template", templates: "workload templates"}
)

// check creates the object of every check with dryRun=All, concurrently, and turns the core API's answers
// into the answer for the object name of kind s.kind: a 422 with every template's refusals, or nil.
func (p *Plugin) check(ctx context.Context, s subject, name, namespace string, checks []*templateCheck) error {
	if len(checks) == 0 {
		return nil
	}
	// The templates are checked concurrently: a create then waits for its slowest template only. Templates
	// whose dry-run objects are alike (the same cache key) are sent once; one whose clean verdict is
	// remembered, or is being found by another write's dry run of the same key, is not sent at all.
	type verdict struct {
		errs        field.ErrorList
		missing     string
		unavailable error
	}
	verdicts := make([]verdict, len(checks))
	answers := make([]error, len(checks))
	remembered := make([]bool, len(checks))
	answeredBy := make([]int, len(checks)) // the check whose dry run (or remembered verdict) answers for this one
	firstOfKey := map[string]int{}
	var toSend []int
	for i, c := range checks {
		answeredBy[i] = i
		if c.key != "" {
			if j, ok := firstOfKey[c.key]; ok {
				answeredBy[i] = j
				continue
			}
			firstOfKey[c.key] = i
		}
		toSend = append(toSend, i)
	}
	var wg sync.WaitGroup
	limit := make(chan struct{}, maxConcurrentChecks)
	for _, i := range toSend {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := checks[i]
			var finish func(clean bool)
			if c.key != "" {
				var allowed bool
				if allowed, finish = p.verdicts.lookup(ctx, c.key, c.generation); allowed {
					remembered[i] = true
					return
				}
			}
			limit <- struct{}{}
			defer func() { <-limit }()
			answers[i] = p.send(ctx, c.built().object)
			if finish != nil {
				finish(refusal.Classify(answers[i]).Class == refusal.Created)
			}
		}()
	}
	wg.Wait()
	index := map[*templateCheck]int{}
	for i, c := range checks {
		index[c] = i
		if remembered[answeredBy[i]] {
			continue // allowed a moment ago, and nothing admission reads has changed since
		}
		v := &verdicts[i]
		v.errs, v.missing, v.unavailable = judge(c, answers[answeredBy[i]])
	}
	for i, c := range checks {
		if c.baseline == nil {
			continue
		}
		b, ok := index[c.baseline]
		if !ok {
			continue
		}
		v := &verdicts[i]
		v.errs = slices.DeleteFunc(v.errs, func(e *field.Error) bool { return sameAsBaseline(c, e, verdicts[b].errs) })
		if v.missing == verdicts[b].missing {
			v.missing = "" // the template refers to something that does not exist yet: warned once
		}
	}

	// Every template's verdict counts: one that could not be checked does not hide the refusal of another.
	var allErrs field.ErrorList
	var unchecked []string
	var unavailable error
	for i, v := range verdicts {
		template := checks[i].template
		if v.missing != "" {
			warning.AddWarning(ctx, "", fmt.Sprintf("%s: %s; its pods will be refused until that exists", template, v.missing))
		}
		if v.unavailable != nil {
			unchecked = append(unchecked, template.String())
			if unavailable == nil {
				unavailable = v.unavailable
			}
		}
		allErrs = append(allErrs, v.errs...)
	}
	if unavailable != nil {
		klog.ErrorS(unavailable, "Templates could not be checked against the core API; not refusing the object for them",
			"kind", s.kind.Kind, "object", klog.KRef(namespace, name), "templates", unchecked)
		// One warning says it; the templates most likely met the same problem.
		warning.AddWarning(ctx, "", fmt.Sprintf("%s not checked against the core API (%s); "+
			"creation problems will show in the %s's events", uncheckedSubject(s, unchecked, len(checks)), shortReason(unavailable), s.kind.Kind))
	}
	if len(allErrs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(s.kind, name, allErrs)
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

// send creates object with dryRun=All and returns the core API's answer.
func (p *Plugin) send(ctx context.Context, object runtime.Object) error {
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	group, resource, namespace, _ := dryRunTarget(object)
	var typed interface{ RESTClient() restclient.Interface } = p.client.CoreV1()
	if group == "apps" {
		typed = p.client.AppsV1()
	}
	if rest, ok := restClientOf(typed); ok && resource != "" {
		return sendOnly(ctx, rest, resource, namespace, object, &dryRun)
	}
	// A fake clientset (unit tests) has no REST client: its typed client answers.
	var err error
	switch obj := object.(type) {
	case *corev1.Pod:
		_, err = p.client.CoreV1().Pods(obj.Namespace).Create(ctx, obj, dryRun)
	case *appsv1.Deployment:
		_, err = p.client.AppsV1().Deployments(obj.Namespace).Create(ctx, obj, dryRun)
	case *appsv1.StatefulSet:
		_, err = p.client.AppsV1().StatefulSets(obj.Namespace).Create(ctx, obj, dryRun)
	default:
		return fmt.Errorf("no dry run for %T", object)
	}
	return err
}

// metadataOnlyAccept asks the core API to answer a create with the created object's metadata alone
// (PartialObjectMetadata, as the metadata client does), which the plugin does not read either; an error
// answer, a Status, negotiates to the plain protobuf or JSON clauses.
const metadataOnlyAccept = runtime.ContentTypeProtobuf + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON

// restClientOf returns the REST client of a group's typed client, if it has a real one (a fake clientset's
// has none).
func restClientOf(group interface{ RESTClient() restclient.Interface }) (*restclient.RESTClient, bool) {
	c, ok := group.RESTClient().(*restclient.RESTClient)
	return c, ok && c != nil
}

// sendOnly creates object with options through c, as the typed client would, and returns the answer without
// decoding an object from it: only whether the core API would create the object counts.
func sendOnly(ctx context.Context, c *restclient.RESTClient, resource, namespace string, object runtime.Object, options *metav1.CreateOptions) error {
	return c.Post().Namespace(namespace).Resource(resource).
		VersionedParams(options, kubescheme.ParameterCodec).
		SetHeader("Accept", metadataOnlyAccept).
		Body(object).Do(ctx).Error()
}

// dryRunTarget returns the group, resource, namespace and service account of a dry-run object.
func dryRunTarget(object runtime.Object) (group, resource, namespace, serviceAccount string) {
	switch obj := object.(type) {
	case *corev1.Pod:
		return "", "pods", obj.Namespace, obj.Spec.ServiceAccountName
	case *appsv1.Deployment:
		return "apps", "deployments", obj.Namespace, obj.Spec.Template.Spec.ServiceAccountName
	case *appsv1.StatefulSet:
		return "apps", "statefulsets", obj.Namespace, obj.Spec.Template.Spec.ServiceAccountName
	}
	return "", "", "", ""
}

// judge turns the core API's answer to the dry run of c into field errors of a refusal; or the core API's
// message when the object refers to another that does not exist yet (missing); or the error that kept the
// core API from answering (unavailable). All are empty when the object would be created.
func judge(c *templateCheck, err error) (errs field.ErrorList, missing string, unavailable error) {
	r := refusal.Classify(err)
	switch r.Class {
	case refusal.Created:
		return nil, "", nil
	case refusal.NamespaceTerminating, refusal.NamespaceNotFound, refusal.NameTaken:
		// The namespace lifecycle plugin of this server owns a missing or terminating namespace.
		return nil, "", nil
	}
	_, _, namespace, serviceAccount := dryRunTarget(c.built().object)
	switch r.Class {
	case refusal.Invalid:
		return causeErrors(*r.Status, r.Message, c), "", nil
	case refusal.Refused:
		if apierrors.IsBadRequest(err) {
			return field.ErrorList{field.Invalid(c.template, field.OmitValueType{}, r.Message)}, "", nil
		}
		return field.ErrorList{field.Forbidden(c.template, r.Message)}, "", nil
	case refusal.UsageQuota:
		klog.V(2).InfoS("Ignoring a ResourceQuota refusal of a dry-run create", "namespace", namespace, "message", r.Message)
		return nil, "", nil
	case refusal.MissingServiceAccount:
		if serviceAccount == "" || serviceAccount == "default" {
			// Every new namespace is without it for a moment; not worth a warning.
			klog.V(2).InfoS("The default service account is missing; template not checked", "namespace", namespace)
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
func uncheckedSubject(s subject, unchecked []string, all int) string {
	switch {
	case len(unchecked) == all && all > 1:
		return "the " + s.templates + " of this " + s.kind.Kind + " were"
	case len(unchecked) == all:
		return "the " + s.template + " of this " + s.kind.Kind + " was"
	case len(unchecked) == 1:
		return s.template + " " + unchecked[0] + " was"
	}
	return s.templates + " " + strings.Join(unchecked, ", ") + " were"
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
