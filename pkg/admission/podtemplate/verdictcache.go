package podtemplate

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	admissionregistrationlisters "k8s.io/client-go/listers/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Defaults of the verdict cache.
const (
	// DefaultVerdictTTL is how long an allowed verdict is remembered at most.
	DefaultVerdictTTL = 30 * time.Second
	// DefaultVerdictCacheSize bounds the remembered verdicts.
	DefaultVerdictCacheSize = 4096
	// settleTime is how long after a change nothing is remembered: kube-apiserver's admission reads the same
	// objects from informers of its own, which may see a change after this server's informers do, and a dry
	// run answered in between must not be remembered as the verdict of the new state.
	settleTime = 3 * time.Second
)

// verdictCache remembers, for a short time, that the core API created a dry-run object without any refusal
// or warning, so that the same object in the same namespace is not sent again. Only such clean verdicts are
// remembered: a refusal is answered again (its message may depend on more than the object), and so are
// answers that stopped the core API early (a usage quota or a missing reference) or that came from no check
// at all.
//
// A verdict cannot change while nothing admission reads changes; informers watch what the core API's
// admission reads: LimitRanges, ResourceQuotas (their spec), Namespaces (Pod Security labels, node selector
// annotations), ServiceAccounts, PriorityClasses, RuntimeClasses, webhook configurations and admission
// policies with their bindings. Any add, update or delete of one of them bumps a generation, and verdicts of
// an older generation are forgotten. Until every informer has synced nothing is remembered. Webhooks decide
// outside what can be watched (a webhook's own policy objects, its code), so while any webhook configuration
// may match the dry-run creates, or any admission policy takes parameters (an object not watched here),
// nothing is remembered either.
type verdictCache struct {
	ttl   time.Duration
	size  int
	clock clock.PassiveClock

	mu         sync.Mutex
	generation uint64
	lastChange time.Time
	entries    map[string]*list.Element
	order      *list.List // front: most recently used
	// inFlight are the dry runs of keys being sent, which concurrent writes of the same key wait for.
	inFlight map[string]*flight

	// synced reports whether every watched informer has synced; nil until informers are set.
	synced func() bool
	// webhooks and policies list what decides whether verdicts may be remembered at all.
	validatingWebhooks admissionregistrationlisters.ValidatingWebhookConfigurationLister
	mutatingWebhooks   admissionregistrationlisters.MutatingWebhookConfigurationLister
	validatingPolicies admissionregistrationlisters.ValidatingAdmissionPolicyLister
	mutatingPolicies   admissionregistrationlisters.MutatingAdmissionPolicyLister
}

type verdictEntry struct {
	key        string
	generation uint64
	expires    time.Time
}

func newVerdictCache(ttl time.Duration, size int, c clock.PassiveClock) *verdictCache {
	return &verdictCache{ttl: ttl, size: size, clock: c, entries: map[string]*list.Element{}, order: list.New(),
		inFlight: map[string]*flight{}}
}

// flight is a dry run of a key being sent; done is closed when its answer is known.
type flight struct {
	done  chan struct{}
	clean bool
	// waiters counts the callers waiting for it.
	waiters int
}

// lookup says whether key has a clean verdict of generation. If not, and a dry run of key is in flight, it
// waits for its answer: clean, it is the answer for the caller too. Else the caller sends its own dry run
// and must call finish with whether the answer was clean (finish remembers it); nil finish means another
// caller's dry run was unclean or the caller gave up waiting, and the caller's answer is not remembered.
func (v *verdictCache) lookup(ctx context.Context, key string, generation uint64) (allowed bool, finish func(clean bool)) {
	if v.allowed(key, generation) {
		return true, nil
	}
	v.mu.Lock()
	if f, ok := v.inFlight[key]; ok {
		f.waiters++
		v.mu.Unlock()
		select {
		case <-f.done:
			if f.clean && v.allowed(key, generation) {
				return true, nil
			}
		case <-ctx.Done():
		}
		return false, nil
	}
	f := &flight{done: make(chan struct{})}
	v.inFlight[key] = f
	v.mu.Unlock()
	return false, func(clean bool) {
		if clean {
			v.remember(key, generation)
		}
		v.mu.Lock()
		f.clean = clean
		delete(v.inFlight, key)
		v.mu.Unlock()
		close(f.done)
	}
}

// watch registers the cache's event handlers on the informers of factory; the factory is started by whoever
// owns it (the server starts its shared factory after the admission chain is built).
func (v *verdictCache) watch(factory informers.SharedInformerFactory) error {
	bump := anyChangeHandlers(v)
	quotaSpec := quotaHandlers(v)
	admissionregistration := factory.Admissionregistration().V1()
	vwc := admissionregistration.ValidatingWebhookConfigurations()
	mwc := admissionregistration.MutatingWebhookConfigurations()
	vap := admissionregistration.ValidatingAdmissionPolicies()
	map_ := admissionregistration.MutatingAdmissionPolicies()
	informersWatched := []cache.SharedIndexInformer{
		factory.Core().V1().LimitRanges().Informer(),
		factory.Core().V1().Namespaces().Informer(),
		factory.Core().V1().ServiceAccounts().Informer(),
		factory.Scheduling().V1().PriorityClasses().Informer(),
		factory.Node().V1().RuntimeClasses().Informer(),
		vwc.Informer(),
		mwc.Informer(),
		vap.Informer(),
		admissionregistration.ValidatingAdmissionPolicyBindings().Informer(),
		map_.Informer(),
		admissionregistration.MutatingAdmissionPolicyBindings().Informer(),
	}
	var registrations []cache.ResourceEventHandlerRegistration
	for _, informer := range informersWatched {
		r, err := informer.AddEventHandler(bump)
		if err != nil {
			return err
		}
		registrations = append(registrations, r)
	}
	r, err := factory.Core().V1().ResourceQuotas().Informer().AddEventHandler(quotaSpec)
	if err != nil {
		return err
	}
	registrations = append(registrations, r)

	v.mu.Lock()
	defer v.mu.Unlock()
	v.validatingWebhooks, v.mutatingWebhooks = vwc.Lister(), mwc.Lister()
	v.validatingPolicies, v.mutatingPolicies = vap.Lister(), map_.Lister()
	v.synced = func() bool {
		for _, r := range registrations {
			if !r.HasSynced() {
				return false
			}
		}
		return true
	}
	return nil
}

// anyChangeHandlers bump v on every add, update or delete.
func anyChangeHandlers(v *verdictCache) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { v.bump() },
		UpdateFunc: func(oldObj, newObj any) {
			if sameResourceVersion(oldObj, newObj) {
				return // a resync: nothing changed
			}
			v.bump()
		},
		DeleteFunc: func(any) { v.bump() },
	}
}

// quotaHandlers bump v on every ResourceQuota added or deleted, and on updates of its spec or labels. Its
// status changes with every pod created; a usage refusal is never remembered (see judge), so the usage
// cannot turn a remembered verdict stale.
func quotaHandlers(v *verdictCache) cache.ResourceEventHandlerFuncs {
	h := anyChangeHandlers(v)
	h.UpdateFunc = func(oldObj, newObj any) {
		o, ok1 := oldObj.(*corev1.ResourceQuota)
		n, ok2 := newObj.(*corev1.ResourceQuota)
		if ok1 && ok2 && reflect.DeepEqual(o.Spec, n.Spec) && reflect.DeepEqual(o.Labels, n.Labels) {
			return
		}
		v.bump()
	}
	return h
}

func sameResourceVersion(oldObj, newObj any) bool {
	o, err1 := meta.Accessor(oldObj)
	n, err2 := meta.Accessor(newObj)
	return err1 == nil && err2 == nil && o.GetResourceVersion() != "" && o.GetResourceVersion() == n.GetResourceVersion()
}

// bump forgets every verdict remembered so far.
func (v *verdictCache) bump() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.generation++
	v.lastChange = v.clock.Now()
	v.entries = map[string]*list.Element{}
	v.order.Init()
}

// current returns the generation a verdict found now would belong to, and whether verdicts may be remembered
// and looked up at all for objects of resource (the dry-run's group and resource).
func (v *verdictCache) current(group, resource string) (generation uint64, usable bool) {
	v.mu.Lock()
	synced, generation, settled := v.synced, v.generation, v.clock.Since(v.lastChange) >= settleTime
	v.mu.Unlock()
	if synced == nil || !synced() || !settled {
		return 0, false
	}
	return generation, !v.decidedOutsideSight(group, resource)
}

// decidedOutsideSight says whether a webhook may judge creates of resource, or an admission policy takes
// parameters: both decide on what the informers do not see.
func (v *verdictCache) decidedOutsideSight(group, resource string) bool {
	validating, err := v.validatingWebhooks.List(labels.Everything())
	if err != nil {
		return true
	}
	for _, c := range validating {
		for _, w := range c.Webhooks {
			if rulesMayMatch(w.Rules, group, resource) {
				return true
			}
		}
	}
	mutating, err := v.mutatingWebhooks.List(labels.Everything())
	if err != nil {
		return true
	}
	for _, c := range mutating {
		for _, w := range c.Webhooks {
			if rulesMayMatch(w.Rules, group, resource) {
				return true
			}
		}
	}
	vaps, err := v.validatingPolicies.List(labels.Everything())
	if err != nil {
		return true
	}
	for _, p := range vaps {
		if p.Spec.ParamKind != nil {
			return true
		}
	}
	maps, err := v.mutatingPolicies.List(labels.Everything())
	if err != nil {
		return true
	}
	for _, p := range maps {
		if p.Spec.ParamKind != nil {
			return true
		}
	}
	return false
}

// rulesMayMatch says whether any rule may match a create of group/resource.
func rulesMayMatch(rules []admissionregistrationv1.RuleWithOperations, group, resource string) bool {
	for _, r := range rules {
		if !containsAny(operationStrings(r.Operations), "CREATE", "*") ||
			!containsAny(r.APIGroups, group, "*") ||
			!containsAny(r.Resources, resource, "*", "*/*") {
			continue
		}
		return true
	}
	return false
}

func operationStrings(ops []admissionregistrationv1.OperationType) []string {
	s := make([]string, len(ops))
	for i, op := range ops {
		s[i] = string(op)
	}
	return s
}

func containsAny(list []string, values ...string) bool {
	for _, item := range list {
		for _, v := range values {
			if item == v {
				return true
			}
		}
	}
	return false
}

// allowed says whether key has a verdict of generation that has not expired.
func (v *verdictCache) allowed(key string, generation uint64) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.entries[key]
	if !ok {
		return false
	}
	entry := e.Value.(*verdictEntry)
	if entry.generation != generation || generation != v.generation || !v.clock.Now().Before(entry.expires) {
		v.order.Remove(e)
		delete(v.entries, key)
		return false
	}
	v.order.MoveToFront(e)
	return true
}

// remember records that key was allowed, found at generation; a verdict found before the last bump is
// dropped.
func (v *verdictCache) remember(key string, generation uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if generation != v.generation || v.size <= 0 {
		return
	}
	expires := v.clock.Now().Add(v.ttl)
	if e, ok := v.entries[key]; ok {
		e.Value.(*verdictEntry).expires = expires
		v.order.MoveToFront(e)
		return
	}
	v.entries[key] = v.order.PushFront(&verdictEntry{key: key, generation: generation, expires: expires})
	for v.order.Len() > v.size {
		oldest := v.order.Back()
		v.order.Remove(oldest)
		delete(v.entries, oldest.Value.(*verdictEntry).key)
	}
}

// len is the number of remembered verdicts.
func (v *verdictCache) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.order.Len()
}

// keyName is what stands for an object's name, or the id of the TApp instance a template is checked for (it
// is in the dry-run pod's hostname, labels and claim names), in the cache keys of its templates: while no
// admission policy exists, its placeholder (built-in admission judges names by their shape only: characters
// and length); else the name itself, which a policy may read.
func (v *verdictCache) keyName(name string) string {
	vaps, err := v.validatingPolicies.List(labels.Everything())
	if err != nil || len(vaps) > 0 {
		return name
	}
	maps, err := v.mutatingPolicies.List(labels.Everything())
	if err != nil || len(maps) > 0 {
		return name
	}
	return namePlaceholder(name)
}

// verdictKey is the key of a dry-run object: its kind and namespace, and a hash of the object's protobuf
// (every object checked has one: the generated encoding writes every field and sorts map keys, so objects
// alike have the same bytes), else of its JSON.
func verdictKey(namespace string, object runtime.Object) (string, error) {
	var data []byte
	var err error
	if m, ok := object.(interface{ Marshal() ([]byte, error) }); ok {
		data, err = m.Marshal()
	} else {
		data, err = json.Marshal(object)
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return namespace + "/" + reflect.TypeOf(object).Elem().Name() + "/" + hex.EncodeToString(sum[:]), nil
}

// namePlaceholder stands for name in a cache key: every letter becomes 'a', every digit '0', the rest
// stays. Whether the core API's validation accepts a name, or a hostname, label or claim name made from
// it, depends only on its length and on where letters, digits, '-' and '.' are, so two objects alike but for
// names with the same placeholder get the same verdict from the core API's built-in admission.
func namePlaceholder(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			b[i] = 'a'
		case c >= '0' && c <= '9':
			b[i] = '0'
		}
	}
	return string(b)
}
