package podtemplate

import (
	"context"
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// rememberingPlugin is a plugin whose verdict cache watches a fake cluster (watched), with a fake clock.
type rememberingPlugin struct {
	*Plugin
	rec     *dryRunRecorder
	watched *fake.Clientset
	clock   *clocktesting.FakeClock
	stop    chan struct{}
}

func newRememberingPlugin(t testing.TB, start bool, respond func(pod *corev1.Pod) error, objects ...runtime.Object) *rememberingPlugin {
	t.Helper()
	p, rec := newPlugin(t, respond)
	watched := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(watched, 0)
	clock := clocktesting.NewFakeClock(time.Now())
	p.verdicts = newVerdictCache(DefaultVerdictTTL, 16, clock)
	if err := p.verdicts.watch(factory); err != nil {
		t.Fatal(err)
	}
	rp := &rememberingPlugin{Plugin: p, rec: rec, watched: watched, clock: clock, stop: make(chan struct{})}
	t.Cleanup(func() { close(rp.stop) })
	if start {
		factory.Start(rp.stop)
		factory.WaitForCacheSync(rp.stop)
		// The handlers see the initial lists a moment after the informers have them.
		for i := 0; i < 500 && !p.verdicts.synced(); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if !p.verdicts.synced() {
			t.Fatal("informers not synced")
		}
		clock.Step(settleTime) // the initial lists were changes too
	}
	return rp
}

// create admits a create of a TApp like newTApp's named name and returns how many dry runs it sent.
func (rp *rememberingPlugin) create(t *testing.T, name string) (int, error) {
	t.Helper()
	tapp := newTApp()
	tapp.Name, tapp.UID = name, types.UID("uid-"+name)
	before := len(rp.rec.created())
	err, _ := validate(rp.Plugin, admission.Create, tapp, nil, "")
	return len(rp.rec.created()) - before, err
}

// change runs fn against the watched cluster and waits until the verdict cache has seen it.
func (rp *rememberingPlugin) change(t *testing.T, fn func(ctx context.Context, c kubernetes.Interface) error) {
	t.Helper()
	rp.verdicts.mu.Lock()
	before := rp.verdicts.generation
	rp.verdicts.mu.Unlock()
	if err := fn(context.Background(), rp.watched); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		rp.verdicts.mu.Lock()
		now := rp.verdicts.generation
		rp.verdicts.mu.Unlock()
		if now != before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the verdict cache did not see the change")
}

func mustSend(t *testing.T, rp *rememberingPlugin, name string, want int) {
	t.Helper()
	n, err := rp.create(t, name)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if n != want {
		t.Fatalf("create %s sent %d dry runs, want %d", name, n, want)
	}
}

func TestCleanVerdictsAreRememberedForObjectsAlikeButForTheirNames(t *testing.T) {
	rp := newRememberingPlugin(t, true, nil)
	mustSend(t, rp, "web", 2)
	// Another TApp of the same templates whose name has the same shape: nothing is sent.
	mustSend(t, rp, "abc", 0)
	// A name of another shape (length, digits) may be judged otherwise (hostname length, for instance).
	mustSend(t, rp, "web1", 2)
	mustSend(t, rp, "xyz9", 0)
}

func TestNothingIsRememberedBeforeTheInformersSynced(t *testing.T) {
	rp := newRememberingPlugin(t, false, nil)
	mustSend(t, rp, "web", 2)
	mustSend(t, rp, "web", 2)
	if n := rp.verdicts.len(); n != 0 {
		t.Errorf("%d verdicts remembered before sync, want 0", n)
	}
}

func TestRefusalsAreNotRemembered(t *testing.T) {
	refuse := true
	rp := newRememberingPlugin(t, true, func(pod *corev1.Pod) error {
		if refuse {
			return invalidPod(field.Invalid(field.NewPath("spec", "containers").Index(0).Child("image"), "x", "bad"))
		}
		return nil
	})
	for i := 0; i < 2; i++ {
		n, err := rp.create(t, "web")
		if err == nil || n != 2 {
			t.Fatalf("create %d: %d dry runs, err %v; want 2 and a refusal", i, n, err)
		}
	}
	refuse = false
	mustSend(t, rp, "web", 2)
	mustSend(t, rp, "web", 0)
}

func TestVerdictsExpire(t *testing.T) {
	rp := newRememberingPlugin(t, true, nil)
	mustSend(t, rp, "web", 2)
	rp.clock.Step(DefaultVerdictTTL - time.Second)
	mustSend(t, rp, "web", 0)
	rp.clock.Step(time.Second)
	mustSend(t, rp, "web", 2)
}

func TestRememberedVerdictsAreBounded(t *testing.T) {
	v := newVerdictCache(time.Minute, 3, clocktesting.NewFakeClock(time.Now()))
	for _, key := range []string{"a", "b", "c"} {
		v.remember(key, 0)
	}
	if !v.allowed("a", 0) { // a is now the most recently used
		t.Fatal("a not remembered")
	}
	v.remember("d", 0)
	if n := v.len(); n != 3 {
		t.Errorf("%d verdicts remembered, want 3", n)
	}
	if v.allowed("b", 0) {
		t.Error("b, the least recently used, is still remembered")
	}
	for _, key := range []string{"a", "c", "d"} {
		if !v.allowed(key, 0) {
			t.Errorf("%s forgotten", key)
		}
	}
	// A verdict found before a bump is not remembered.
	v.bump()
	v.remember("e", 0)
	if v.allowed("e", 0) || v.allowed("e", 1) {
		t.Error("a verdict of an older generation is remembered")
	}
}

func TestEveryChangeToWhatAdmissionReadsForgetsVerdicts(t *testing.T) {
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: namespace},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	configMapRules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	none := admissionregistrationv1.SideEffectClassNone
	cases := []struct {
		name   string
		change func(ctx context.Context, c kubernetes.Interface) error
	}{
		{"LimitRange", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().LimitRanges(namespace).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{})
			return err
		}},
		{"ResourceQuota spec", func(ctx context.Context, c kubernetes.Interface) error {
			q := quota.DeepCopy()
			q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("1")
			_, err := c.CoreV1().ResourceQuotas(namespace).Update(ctx, q, metav1.UpdateOptions{})
			return err
		}},
		{"ResourceQuota added", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().ResourceQuotas(namespace).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q2"}}, metav1.CreateOptions{})
			return err
		}},
		{"Namespace labels", func(ctx context.Context, c kubernetes.Interface) error {
			n := ns.DeepCopy()
			n.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
			_, err := c.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{})
			return err
		}},
		{"ServiceAccount", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{})
			return err
		}},
		{"PriorityClass", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
			return err
		}},
		{"RuntimeClass", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Handler: "h"}, metav1.CreateOptions{})
			return err
		}},
		{"ValidatingWebhookConfiguration", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "v"},
				Webhooks:   []admissionregistrationv1.ValidatingWebhook{{Name: "v.example.com", Rules: configMapRules, SideEffects: &none}},
			}, metav1.CreateOptions{})
			return err
		}},
		{"MutatingWebhookConfiguration", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "m"},
				Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "m.example.com", Rules: configMapRules, SideEffects: &none}},
			}, metav1.CreateOptions{})
			return err
		}},
		{"ValidatingAdmissionPolicy", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
			return err
		}},
		{"ValidatingAdmissionPolicyBinding", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
			return err
		}},
		{"MutatingAdmissionPolicy", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
			return err
		}},
		{"MutatingAdmissionPolicyBinding", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
			return err
		}},
		{"LimitRange deleted", func(ctx context.Context, c kubernetes.Interface) error {
			return c.CoreV1().LimitRanges(namespace).Delete(ctx, "existing", metav1.DeleteOptions{})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			existing := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "existing", Namespace: namespace}}
			rp := newRememberingPlugin(t, true, nil, quota.DeepCopy(), ns.DeepCopy(), existing)
			mustSend(t, rp, "web", 2)
			mustSend(t, rp, "web", 0)
			rp.change(t, tc.change)
			mustSend(t, rp, "web", 2)
			rp.clock.Step(settleTime)
			mustSend(t, rp, "web", 2)
			mustSend(t, rp, "web", 0)
		})
	}
}

func TestQuotaUsageChangesKeepVerdicts(t *testing.T) {
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: namespace, ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}
	v := newVerdictCache(time.Minute, 8, clocktesting.NewFakeClock(time.Now()))
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	if err := v.watch(factory); err != nil {
		t.Fatal(err)
	}
	// The handler itself, as the informer calls it: a status-only update is no change to the verdicts.
	used := quota.DeepCopy()
	used.ResourceVersion = "2"
	used.Status.Used = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}
	handlers := quotaHandlers(v)
	handlers.OnUpdate(quota, used)
	if v.generation != 0 {
		t.Errorf("a quota usage update bumped the generation")
	}
	tightened := used.DeepCopy()
	tightened.ResourceVersion = "3"
	tightened.Spec.Hard[corev1.ResourcePods] = resource.MustParse("1")
	handlers.OnUpdate(used, tightened)
	if v.generation != 1 {
		t.Errorf("a quota spec update did not bump the generation")
	}
}

func TestWebhooksAndParameterizedPoliciesStopRemembering(t *testing.T) {
	none := admissionregistrationv1.SideEffectClassNone
	podRules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
	}}
	for name, obj := range map[string]runtime.Object{
		"validating webhook on every resource": &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "v"},
			Webhooks:   []admissionregistrationv1.ValidatingWebhook{{Name: "v.example.com", Rules: podRules, SideEffects: &none}},
		},
		"mutating webhook on every resource": &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "m"},
			Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "m.example.com", Rules: podRules, SideEffects: &none}},
		},
		"validating policy with parameters": &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec:       admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}},
		},
		"mutating policy with parameters": &admissionregistrationv1.MutatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec:       admissionregistrationv1.MutatingAdmissionPolicySpec{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rp := newRememberingPlugin(t, true, nil, obj)
			mustSend(t, rp, "web", 2)
			mustSend(t, rp, "web", 2)
		})
	}
}

func TestPoliciesMakeTheNamePartOfTheKey(t *testing.T) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	rp := newRememberingPlugin(t, true, nil, policy)
	mustSend(t, rp, "web", 2)
	mustSend(t, rp, "web", 0)
	mustSend(t, rp, "abc", 2) // a policy may judge by name
}

func TestIdenticalTemplatesAreSentOnce(t *testing.T) {
	rp := newRememberingPlugin(t, true, nil)
	tapp := newTApp()
	tapp.Spec.Templates = nil // every template stands for instance 0
	big := tapp.Spec.TemplatePool["big"]
	tapp.Spec.TemplatePool["copy"] = *big.DeepCopy()
	err, _ := validate(rp.Plugin, admission.Create, tapp, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rp.rec.created()); n != 2 {
		t.Errorf("%d dry runs for 2 distinct templates of 3, want 2", n)
	}
}

// kube-apiserver may see a change after this server: what it answers right after one is not remembered.
func TestNothingIsRememberedRightAfterAChange(t *testing.T) {
	rp := newRememberingPlugin(t, true, nil)
	rp.change(t, func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().LimitRanges(namespace).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{})
		return err
	})
	mustSend(t, rp, "web", 2)
	rp.clock.Step(settleTime - time.Millisecond)
	mustSend(t, rp, "web", 2)
	rp.clock.Step(time.Millisecond)
	mustSend(t, rp, "web", 2)
	mustSend(t, rp, "web", 0)
}

// BenchmarkCreate is one TApp create through the plugin against a fake core API that answers at once: the
// plugin's own cost, with every template sent, and with their verdicts remembered (building the key pods
// and hashing them instead).
func BenchmarkCreate(b *testing.B) {
	for _, remembered := range []bool{false, true} {
		name := "sent"
		if remembered {
			name = "remembered"
		}
		b.Run(name, func(b *testing.B) {
			rp := newRememberingPlugin(b, true, nil)
			if !remembered {
				rp.verdicts.size = 0
			}
			tapp := newTApp()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err, _ := validate(rp.Plugin, admission.Create, tapp, nil, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Writes of the same templates at once send one dry run per template: the others wait for its answer.
func TestConcurrentWritesOfTheSameTemplatesShareOneDryRun(t *testing.T) {
	release := make(chan struct{})
	rp := newRememberingPlugin(t, true, func(*corev1.Pod) error {
		<-release
		return nil
	})
	waiting := func(want int) bool {
		rp.verdicts.mu.Lock()
		defer rp.verdicts.mu.Unlock()
		n := 0
		for _, f := range rp.verdicts.inFlight {
			n += f.waiters
		}
		return len(rp.verdicts.inFlight) == 2 && n >= want
	}
	errs := make(chan error, 3)
	for i, name := range []string{"web", "abc", "xyz"} {
		go func() {
			_, err := rp.create(t, name)
			errs <- err
		}()
		// The first write's two dry runs are in flight, then each later write waits for both.
		for j := 0; j < 500 && !waiting(2*i); j++ {
			time.Sleep(10 * time.Millisecond)
		}
		if !waiting(2 * i) {
			t.Fatalf("write %d: not waiting for the dry runs in flight", i)
		}
	}
	close(release)
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rp.rec.created()); n != 2 {
		t.Errorf("%d dry runs for three writes of the same two templates, want 2", n)
	}
}

// Templates alike but for the instance they are checked for are sent once while no admission policy exists
// (an id's digits are judged by no built-in admission), and each on its own while one does (a policy may read
// the instance's labels); ids of different lengths make pods of different shapes, sent each.
func TestTemplatesAlikeButForTheirInstanceAreSentOnce(t *testing.T) {
	alike := func(ids ...string) *tkestack.TApp {
		tapp := newTApp()
		tapp.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{}
		tapp.Spec.Templates = map[string]string{}
		for i, id := range ids {
			name := fmt.Sprintf("copy-%d", i)
			tapp.Spec.TemplatePool[name] = *tapp.Spec.Template.DeepCopy()
			tapp.Spec.Templates[id] = name
		}
		return tapp
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	for _, tc := range []struct {
		name    string
		tapp    *tkestack.TApp
		objects []runtime.Object
		want    int
	}{
		// spec.template stands for instance 0, the copies for 1 and 2.
		{name: "same length", tapp: alike("1", "2"), want: 1},
		{name: "same length, a policy exists", tapp: alike("1", "2"), objects: []runtime.Object{policy}, want: 3},
		{name: "two lengths", tapp: alike("1", "12"), want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := newRememberingPlugin(t, true, nil, tc.objects...)
			err, _ := validate(rp.Plugin, admission.Create, tc.tapp, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(rp.rec.created()); n != tc.want {
				t.Errorf("%d dry runs, want %d", n, tc.want)
			}
		})
	}
}
