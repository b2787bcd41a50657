package install

import (
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apitestingfuzzer "k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/fuzzer"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta2"
)

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	Install(scheme)
	return scheme
}

// convert converts in to out through the internal type, as the server does between a request's version
// and the stored one.
func convert(t *testing.T, scheme *runtime.Scheme, in, out runtime.Object) {
	t.Helper()
	internal := &openyurt.NodePool{}
	if err := scheme.Convert(in, internal, nil); err != nil {
		t.Fatalf("to internal: %v", err)
	}
	if err := scheme.Convert(internal, out, nil); err != nil {
		t.Fatalf("from internal: %v", err)
	}
}

func betaPool(mutate func(*v1beta1.NodePool)) *v1beta1.NodePool {
	pool := &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "hangzhou", Labels: map[string]string{"region": "east"}},
		Spec: v1beta1.NodePoolSpec{
			Type:        v1beta1.Edge,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"apps.openyurt.io/nodepool": "hangzhou"}},
			Labels:      map[string]string{"zone": "hz"},
			Annotations: map[string]string{"owner": "ops"},
			Taints:      []corev1.Taint{{Key: "edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: v1beta1.NodePoolStatus{ReadyNodeNum: 1, UnreadyNodeNum: 1, Nodes: []string{"n1", "n2"}},
	}
	if mutate != nil {
		mutate(pool)
	}
	return pool
}

func alphaPool(mutate func(*v1alpha1.NodePool)) *v1alpha1.NodePool {
	pool := &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "hangzhou", Labels: map[string]string{"region": "east"}},
		Spec: v1alpha1.NodePoolSpec{
			Type:        "Edge",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"apps.openyurt.io/nodepool": "hangzhou"}},
			Labels:      map[string]string{"zone": "hz"},
			Annotations: map[string]string{"owner": "ops"},
			Taints:      []corev1.Taint{{Key: "edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: v1alpha1.NodePoolStatus{ReadyNodeNum: 1, UnreadyNodeNum: 1, Nodes: []string{"n1", "n2"}},
	}
	if mutate != nil {
		mutate(pool)
	}
	return pool
}

// TestNodePoolBetaToAlpha converts v1beta1 NodePools to v1alpha1 and back: every field has a place in
// v1alpha1 (spec.hostNetwork the annotation nodepool.openyurt.io/hostnetwork), and the way back gives the
// original object.
func TestNodePoolBetaToAlpha(t *testing.T) {
	cases := []struct {
		name  string
		beta  *v1beta1.NodePool
		alpha *v1alpha1.NodePool
	}{
		{"every field carries over, spec.labels included", betaPool(nil), alphaPool(nil)},
		{"hostNetwork becomes the annotation",
			betaPool(func(p *v1beta1.NodePool) { p.Spec.HostNetwork = true }),
			alphaPool(func(p *v1alpha1.NodePool) {
				p.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: "true"}
			})},
		{"hostNetwork beside other annotations",
			betaPool(func(p *v1beta1.NodePool) {
				p.Spec.HostNetwork = true
				p.Annotations = map[string]string{"note": "x"}
			}),
			alphaPool(func(p *v1alpha1.NodePool) {
				p.Annotations = map[string]string{"note": "x", openyurt.NodePoolHostNetworkAnnotation: "true"}
			})},
		{"no selector, labels, annotations or taints",
			betaPool(func(p *v1beta1.NodePool) { p.Spec = v1beta1.NodePoolSpec{Type: v1beta1.Cloud} }),
			alphaPool(func(p *v1alpha1.NodePool) { p.Spec = v1alpha1.NodePoolSpec{Type: "Cloud"} })},
		{"match expressions in the selector",
			betaPool(func(p *v1beta1.NodePool) {
				p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
			}),
			alphaPool(func(p *v1alpha1.NodePool) {
				p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
			})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scheme := newScheme(t)
			in := tc.beta.DeepCopy()
			alpha := &v1alpha1.NodePool{}
			convert(t, scheme, in, alpha)
			if !apiequality.Semantic.DeepEqual(alpha, tc.alpha) {
				t.Errorf("v1beta1 -> v1alpha1 (-want +got):\n%s", diff.Diff(tc.alpha, alpha))
			}
			if !apiequality.Semantic.DeepEqual(in, tc.beta) {
				t.Errorf("conversion modified its input (-want +got):\n%s", diff.Diff(tc.beta, in))
			}
			back := &v1beta1.NodePool{}
			convert(t, scheme, alpha, back)
			if !apiequality.Semantic.DeepEqual(back, tc.beta) {
				t.Errorf("v1beta1 -> v1alpha1 -> v1beta1 (-want +got):\n%s", diff.Diff(tc.beta, back))
			}
		})
	}
}

// TestNodePoolAlphaToBeta converts v1alpha1 NodePools, as users and OpenYurt write the hostnetwork
// annotation, to v1beta1, and back to v1alpha1.
func TestNodePoolAlphaToBeta(t *testing.T) {
	withAnnotation := func(value string, others map[string]string) func(*v1alpha1.NodePool) {
		return func(p *v1alpha1.NodePool) {
			p.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: value}
			for k, v := range others {
				p.Annotations[k] = v
			}
		}
	}
	cases := []struct {
		name      string
		alpha     *v1alpha1.NodePool
		beta      *v1beta1.NodePool
		alphaBack *v1alpha1.NodePool
	}{
		{"every field carries over", alphaPool(nil), betaPool(nil), alphaPool(nil)},
		{"annotation true", alphaPool(withAnnotation("true", nil)),
			betaPool(func(p *v1beta1.NodePool) { p.Spec.HostNetwork = true }),
			alphaPool(withAnnotation("true", nil))},
		{"annotation TRUE in another case is kept as written", alphaPool(withAnnotation("TRUE", map[string]string{"note": "x"})),
			betaPool(func(p *v1beta1.NodePool) {
				p.Spec.HostNetwork = true
				p.Annotations = map[string]string{"note": "x", openyurt.NodePoolHostNetworkAnnotation: "TRUE"}
			}),
			alphaPool(withAnnotation("TRUE", map[string]string{"note": "x"}))},
		{"annotation false means no host network and is kept as written", alphaPool(withAnnotation("false", map[string]string{"note": "x"})),
			betaPool(func(p *v1beta1.NodePool) {
				p.Annotations = map[string]string{"note": "x", openyurt.NodePoolHostNetworkAnnotation: "false"}
			}),
			alphaPool(withAnnotation("false", map[string]string{"note": "x"}))},
		// Values that are neither true nor false are kept, never reinterpreted, so that validation refuses them.
		{"annotation empty is kept for validation", alphaPool(withAnnotation("", nil)),
			betaPool(func(p *v1beta1.NodePool) {
				p.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: ""}
			}),
			alphaPool(withAnnotation("", nil))},
		{"annotation 1 is kept for validation", alphaPool(withAnnotation("1", nil)),
			betaPool(func(p *v1beta1.NodePool) {
				p.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: "1"}
			}),
			alphaPool(withAnnotation("1", nil))},
		{"annotation with a space is kept for validation", alphaPool(withAnnotation(" true", nil)),
			betaPool(func(p *v1beta1.NodePool) {
				p.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: " true"}
			}),
			alphaPool(withAnnotation(" true", nil))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scheme := newScheme(t)
			in := tc.alpha.DeepCopy()
			beta := &v1beta1.NodePool{}
			convert(t, scheme, in, beta)
			if !apiequality.Semantic.DeepEqual(beta, tc.beta) {
				t.Errorf("v1alpha1 -> v1beta1 (-want +got):\n%s", diff.Diff(tc.beta, beta))
			}
			if !apiequality.Semantic.DeepEqual(in, tc.alpha) {
				t.Errorf("conversion modified its input (-want +got):\n%s", diff.Diff(tc.alpha, in))
			}
			back := &v1alpha1.NodePool{}
			convert(t, scheme, beta, back)
			if !apiequality.Semantic.DeepEqual(back, tc.alphaBack) {
				t.Errorf("v1alpha1 -> v1beta1 -> v1alpha1 (-want +got):\n%s", diff.Diff(tc.alphaBack, back))
			}
		})
	}
}

// TestNodePoolBetaHostNetworkAnnotation: on a v1beta1 object the hostnetwork annotation never sets the
// field; both are kept as written, and validation refuses an annotation that contradicts or repeats it.
func TestNodePoolBetaHostNetworkAnnotation(t *testing.T) {
	for _, tc := range []struct {
		value       string
		hostNetwork bool
	}{{"True", false}, {"true", false}, {"true", true}, {"false", true}, {"false", false}, {"1", false}} {
		scheme := newScheme(t)
		in := betaPool(func(p *v1beta1.NodePool) {
			p.Spec.HostNetwork = tc.hostNetwork
			p.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: tc.value, "note": "x"}
		})
		internal := &openyurt.NodePool{}
		if err := scheme.Convert(in, internal, nil); err != nil {
			t.Fatal(err)
		}
		if internal.Spec.HostNetwork != tc.hostNetwork {
			t.Errorf("%q beside hostNetwork %t: spec.hostNetwork = %t", tc.value, tc.hostNetwork, internal.Spec.HostNetwork)
		}
		if want := map[string]string{openyurt.NodePoolHostNetworkAnnotation: tc.value, "note": "x"}; !apiequality.Semantic.DeepEqual(internal.Annotations, want) {
			t.Errorf("%q beside hostNetwork %t: annotations = %v, want %v", tc.value, tc.hostNetwork, internal.Annotations, want)
		}
	}
}

// TestNodePoolListConversion: lists convert item by item with the same rules.
func TestNodePoolListConversion(t *testing.T) {
	scheme := newScheme(t)
	in := &v1beta1.NodePoolList{Items: []v1beta1.NodePool{
		*betaPool(func(p *v1beta1.NodePool) { p.Spec.HostNetwork = true }),
		*betaPool(func(p *v1beta1.NodePool) { p.Name = "beijing" }),
	}}
	internal := &openyurt.NodePoolList{}
	if err := scheme.Convert(in, internal, nil); err != nil {
		t.Fatal(err)
	}
	out := &v1alpha1.NodePoolList{}
	if err := scheme.Convert(internal, out, nil); err != nil {
		t.Fatal(err)
	}
	if got := out.Items[0].Annotations[openyurt.NodePoolHostNetworkAnnotation]; got != "true" {
		t.Errorf("items[0] annotation = %q, want true", got)
	}
	if _, ok := out.Items[1].Annotations[openyurt.NodePoolHostNetworkAnnotation]; ok {
		t.Errorf("items[1] has the hostnetwork annotation: %v", out.Items[1].Annotations)
	}
	if got := out.Items[1].Spec.Labels; !apiequality.Semantic.DeepEqual(got, map[string]string{"zone": "hz"}) {
		t.Errorf("items[1] spec.labels = %v", got)
	}
}

// TestPreferredVersion: v1beta2 comes first for the group, then v1beta1; v1alpha1 stays served.
func TestPreferredVersion(t *testing.T) {
	scheme := newScheme(t)
	got := scheme.PrioritizedVersionsForGroup(openyurt.GroupName)
	if len(got) != 3 || got[0] != v1beta2.SchemeGroupVersion || got[1] != v1beta1.SchemeGroupVersion || got[2] != v1alpha1.SchemeGroupVersion {
		t.Errorf("versions = %v, want [v1beta2 v1beta1 v1alpha1]", got)
	}
	for _, gv := range []schema.GroupVersion{v1beta1.SchemeGroupVersion, v1beta2.SchemeGroupVersion} {
		if scheme.Recognizes(gv.WithKind("YurtAppDaemon")) {
			t.Errorf("YurtAppDaemon is known in %s; it has v1alpha1 only", gv)
		}
	}
}

// TestNodePoolAcrossVersionsFuzz fuzzes internal NodePools and passes each through every ordered pair of
// v1alpha1, v1beta1 and v1beta2, as a pool written in one version and read in another: nothing may change
// on the way. Then, starting from the older versions' form of each pool (the v1beta2 fields in leader
// annotations), the pool goes through v1beta2 and back to that version unchanged.
func TestNodePoolAcrossVersionsFuzz(t *testing.T) {
	scheme := newScheme(t)
	codecs := serializer.NewCodecFactory(scheme)
	f := apitestingfuzzer.FuzzerFor(apitestingfuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, fuzzer.Funcs), rand.NewSource(rand.Int63()), codecs)
	through := func(t *testing.T, in *openyurt.NodePool, versions ...runtime.Object) *openyurt.NodePool {
		t.Helper()
		current := runtime.Object(in.DeepCopy())
		for _, versioned := range versions {
			if err := scheme.Convert(current, versioned, nil); err != nil {
				t.Fatalf("to %T: %v", versioned, err)
			}
			internal := &openyurt.NodePool{}
			if err := scheme.Convert(versioned, internal, nil); err != nil {
				t.Fatalf("from %T: %v", versioned, err)
			}
			current = internal
		}
		return current.(*openyurt.NodePool)
	}
	for i := 0; i < 200; i++ {
		pool := &openyurt.NodePool{}
		f.Fill(pool)
		pool.TypeMeta = metav1.TypeMeta{}
		versions := []func() runtime.Object{
			func() runtime.Object { return &v1alpha1.NodePool{} },
			func() runtime.Object { return &v1beta1.NodePool{} },
			func() runtime.Object { return &v1beta2.NodePool{} },
		}
		for _, first := range versions {
			for _, second := range versions {
				order := []runtime.Object{first(), second(), first()}
				if got := through(t, pool, order...); !apiequality.Semantic.DeepEqual(got, pool) {
					t.Fatalf("through %T, %T, %T (-want +got):\n%s", order[0], order[1], order[2], diff.Diff(pool, got))
				}
			}
		}
		for _, old := range []func() runtime.Object{versions[0], versions[1]} {
			written := old()
			var current runtime.Object
			if err := scheme.Convert(pool.DeepCopy(), written, nil); err != nil {
				t.Fatal(err)
			}
			back := old()
			for _, step := range [][2]runtime.Object{
				{written, &openyurt.NodePool{}}, {nil, &v1beta2.NodePool{}}, {nil, &openyurt.NodePool{}}, {nil, back},
			} {
				if step[0] == nil {
					step[0] = current
				}
				if err := scheme.Convert(step[0], step[1], nil); err != nil {
					t.Fatal(err)
				}
				current = step[1]
			}
			if !apiequality.Semantic.DeepEqual(back, written) {
				t.Fatalf("%T through v1beta2 and back (-want +got):\n%s", written, diff.Diff(written, back))
			}
		}
	}
}
