package interning

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apitestingfuzzer "k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	openyurtfuzzer "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/fuzzer"
	openyurtinstall "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/install"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackfuzzer "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/fuzzer"
	tkestackinstall "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/install"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func newCodecs() (*runtime.Scheme, serializer.CodecFactory) {
	scheme := runtime.NewScheme()
	tkestackinstall.Install(scheme)
	openyurtinstall.Install(scheme)
	return scheme, serializer.NewCodecFactory(scheme)
}

// storedTApp is a TApp as the server stores it: a template, a pool entry, a managedFields entry.
func storedTApp(name string) *tkestackv1.TApp {
	labels := map[string]string{"app": "example-tapp"}
	half := intstr.FromString("50%")
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers:    []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9", ImagePullPolicy: corev1.PullIfNotPresent}},
			RestartPolicy: corev1.RestartPolicyAlways,
			SchedulerName: "default-scheduler",
		},
	}
	return &tkestackv1.TApp{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps.tkestack.io/v1", Kind: "TApp"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-of-" + name), ResourceVersion: "987654",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner-of-" + name, UID: types.UID("owner-uid-of-" + name)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps.tkestack.io/v1",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)},
			}},
		},
		Spec: tkestackv1.TAppSpec{
			Replicas:       3,
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			Template:       template,
			TemplatePool:   map[string]corev1.PodTemplateSpec{"test": template},
			Templates:      map[string]string{"1": "test"},
			UpdateStrategy: tkestackv1.TAppUpdateStrategy{MaxUnavailable: &half},
		},
	}
}

// decode decodes obj's protobuf into the internal version, as the storage's codec does, through table.
func decode(t testing.TB, codecs serializer.CodecFactory, table *Table, obj runtime.Object) *tkestack.TApp {
	t.Helper()
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, tkestackv1.SchemeGroupVersion), obj)
	if err != nil {
		t.Fatal(err)
	}
	codec := codecs.CodecForVersions(nil, info.Serializer, nil, tkestack.SchemeGroupVersion)
	if table != nil {
		codec = table.Decoding(codec)
	}
	out, err := runtime.Decode(codec, data)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*tkestack.TApp)
}

func same(a, b string) bool { return len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b) }

func sameKey(m1, m2 map[string]string, key string) bool {
	var k1, k2 string
	for k := range m1 {
		if k == key {
			k1 = k
		}
	}
	for k := range m2 {
		if k == key {
			k2 = k
		}
	}
	return same(k1, k2)
}

func sameContainers(a, b []corev1.Container) bool { return len(a) > 0 && &a[0] == &b[0] }

// TestPartsSharedOnlyWhenEveryFieldIsEqual interns objects that differ only in a nil against an empty list
// or map, or in one field deep inside a template: each keeps its own.
func TestPartsSharedOnlyWhenEveryFieldIsEqual(t *testing.T) {
	table := NewTable()
	base := func() *tkestack.TApp {
		return &tkestack.TApp{Spec: tkestack.TAppSpec{Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		}}}
	}
	plain := base()
	emptyCommand := base()
	emptyCommand.Spec.Template.Spec.Containers[0].Command = []string{}
	emptyLabels := base()
	emptyLabels.Spec.Template.Labels = map[string]string{}
	otherImage := base()
	otherImage.Spec.Template.Spec.Containers[0].Image = "j"
	for _, obj := range []*tkestack.TApp{plain, emptyCommand, emptyLabels, otherImage} {
		table.Object(obj)
	}
	again := base()
	table.Object(again)
	if !sameContainers(plain.Spec.Template.Spec.Containers, again.Spec.Template.Spec.Containers) {
		t.Fatal("equal templates were not shared")
	}
	if cmd := emptyCommand.Spec.Template.Spec.Containers[0].Command; cmd == nil {
		t.Error("an empty command became nil")
	}
	if plain.Spec.Template.Spec.Containers[0].Command != nil {
		t.Error("a nil command became empty")
	}
	if l := emptyLabels.Spec.Template.Labels; l == nil || len(l) != 0 {
		t.Errorf("empty labels became %v", l)
	}
	if img := otherImage.Spec.Template.Spec.Containers[0].Image; img != "j" {
		t.Errorf("the other image became %q", img)
	}
}

func TestDecodedObjectsShareTheirRepeatedValues(t *testing.T) {
	_, codecs := newCodecs()
	table := NewTable()
	a := decode(t, codecs, table, storedTApp("a"))
	b := decode(t, codecs, table, storedTApp("b"))

	shared := map[string][2]string{
		"namespace":                  {a.Namespace, b.Namespace},
		"image":                      {a.Spec.Template.Spec.Containers[0].Image, b.Spec.Template.Spec.Containers[0].Image},
		"the pool's image":           {a.Spec.TemplatePool["test"].Spec.Containers[0].Image, b.Spec.TemplatePool["test"].Spec.Containers[0].Image},
		"imagePullPolicy":            {string(a.Spec.Template.Spec.Containers[0].ImagePullPolicy), string(b.Spec.Template.Spec.Containers[0].ImagePullPolicy)},
		"a label's value":            {a.Spec.Selector.MatchLabels["app"], b.Spec.Selector.MatchLabels["app"]},
		"a managedFields manager":    {a.ManagedFields[0].Manager, b.ManagedFields[0].Manager},
		"an owner's kind":            {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"the templates' map's value": {a.Spec.Templates["1"], b.Spec.Templates["1"]},
		"maxUnavailable":             {a.Spec.UpdateStrategy.MaxUnavailable.StrVal, b.Spec.UpdateStrategy.MaxUnavailable.StrVal},
	}
	for what, pair := range shared {
		if pair[0] != pair[1] {
			t.Fatalf("%s: the objects differ, %q and %q", what, pair[0], pair[1])
		}
		if !same(pair[0], pair[1]) {
			t.Errorf("%s (%q): each object holds a copy of its own", what, pair[0])
		}
	}
	if !sameKey(a.Spec.Template.Labels, b.Spec.Template.Labels, "app") {
		t.Errorf("the template's label key: each object holds a copy of its own")
	}
	if !sameKey(a.Spec.TemplatePool["test"].Labels, b.Spec.TemplatePool["test"].Labels, "app") {
		t.Errorf("the pool template's label key: each object holds a copy of its own")
	}
	if &a.ManagedFields[0].FieldsV1.Raw[0] != &b.ManagedFields[0].FieldsV1.Raw[0] {
		t.Errorf("the managedFields set: each object holds a copy of its own")
	}

	if !sameContainers(a.Spec.Template.Spec.Containers, b.Spec.Template.Spec.Containers) {
		t.Errorf("the containers: each object holds a copy of its own")
	}
	if a.Spec.Template != b.Spec.Template {
		t.Errorf("the template: each object holds a copy of its own")
	}
	if reflect.ValueOf(a.Spec.Selector).Pointer() != reflect.ValueOf(b.Spec.Selector).Pointer() {
		t.Errorf("the selector: each object holds a copy of its own")
	}
	if reflect.ValueOf(a.Spec.Templates).Pointer() != reflect.ValueOf(b.Spec.Templates).Pointer() {
		t.Errorf("the templates map: each object holds a copy of its own")
	}
	if d := cmp.Diff(decode(t, codecs, nil, storedTApp("b")), b, sameQuantity); d != "" {
		t.Errorf("the interned object differs from the one decoded without a table (-plain +interned):\n%s", d)
	}

	// What names one object is left out of the table.
	for what, value := range map[string]string{"name": a.Name, "uid": string(a.UID), "resourceVersion": a.ResourceVersion,
		"owner's name": a.OwnerReferences[0].Name, "owner's uid": string(a.OwnerReferences[0].UID)} {
		if _, ok := table.values[value]; ok {
			t.Errorf("the %s %q is in the table", what, value)
		}
	}
}

// sameQuantity compares quantities as they serialize: the same canonical form may be held in more than one
// way.
var sameQuantity = cmp.Comparer(func(a, b resource.Quantity) bool { return a.String() == b.String() && a.Format == b.Format })

// TestInterningChangesNoValue interns fuzzed objects of every kind the server stores and compares each with
// the copy taken before: every field, nil and empty told apart.
func TestInterningChangesNoValue(t *testing.T) {
	scheme, codecs := newCodecs()
	f := apitestingfuzzer.FuzzerFor(apitestingfuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, tkestackfuzzer.Funcs, openyurtfuzzer.Funcs),
		rand.NewSource(rand.Int63()), codecs)
	table := NewTable()
	kinds := []func() runtime.Object{
		func() runtime.Object { return &tkestack.TApp{} },
		func() runtime.Object { return &openyurt.YurtAppDaemon{} },
		func() runtime.Object { return &openyurt.NodePool{} },
		func() runtime.Object { return &openyurt.YurtAppSet{} },
	}
	for _, newObj := range kinds {
		for i := 0; i < 100; i++ {
			obj := newObj()
			f.Fill(obj)
			before := obj.DeepCopyObject()
			table.Object(obj)
			// Twice: the second pass finds every value in the table.
			table.Object(obj)
			if d := cmp.Diff(before, obj, sameQuantity); d != "" {
				t.Fatalf("%T changed when interned (-before +after):\n%s", obj, d)
			}
		}
	}
	if table.Len() == 0 {
		t.Fatal("nothing was interned")
	}
	_ = scheme
}

func TestTableStaysWithinItsBound(t *testing.T) {
	table := NewTable()
	obj := &tkestack.TApp{}
	for i := 0; i < 200000; i++ {
		obj.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Image: fmt.Sprintf("registry.example/never-repeated-%08d", i)}},
		}}
		table.Object(obj)
	}
	if table.bytes > maxTableBytes {
		t.Fatalf("the table holds %d bytes, more than its bound of %d", table.bytes, maxTableBytes)
	}
	if n := table.Len(); n == 0 || n*(entryBytes+len("registry.example/never-repeated-00000000")) > maxTableBytes {
		t.Fatalf("the table holds %d values", n)
	}
	// Values longer than the longest interned are left as they are.
	long := string(make([]byte, maxStringBytes+1))
	obj.Spec.Template.Spec.Containers[0].Image = long
	table.Object(obj)
	if _, ok := table.values[long]; ok {
		t.Fatal("a value longer than the bound was interned")
	}
}

// BenchmarkDecode decodes a stored TApp from protobuf into the internal version, as the watch cache does for
// each event, without and with interning.
func BenchmarkDecode(b *testing.B) {
	_, codecs := newCodecs()
	for _, c := range []struct {
		name  string
		table *Table
	}{{"plain", nil}, {"interned", NewTable()}} {
		b.Run(c.name, func(b *testing.B) {
			obj := storedTApp("a")
			b.ReportAllocs()
			for b.Loop() {
				decode(b, codecs, c.table, obj)
			}
		})
	}
}
