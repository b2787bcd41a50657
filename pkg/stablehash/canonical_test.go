package stablehash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// decodedCanonicalJSON is the canonical form by way of generic values: raw decoded, nulls and empty arrays
// dropped from objects, encoded again. Every hash label written so far was computed so; canonicalize must give
// the same bytes, or an upgrade would change those labels and roll pods that did not change.
func decodedCanonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic interface{}
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return json.Marshal(dropEmpty(generic))
}

func dropEmpty(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		for k, child := range x {
			child = dropEmpty(child)
			if a, ok := child.([]interface{}); child == nil || (ok && len(a) == 0) {
				delete(x, k)
				continue
			}
			x[k] = child
		}
		return x
	case []interface{}:
		for i := range x {
			x[i] = dropEmpty(x[i])
		}
		return x
	default:
		return v
	}
}

// assertSameAsDecoded checks that CanonicalJSON(obj) gives the bytes of the generic round trip.
func assertSameAsDecoded(t testing.TB, obj interface{}) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodedCanonicalJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CanonicalJSON(obj)
	if err != nil {
		t.Fatalf("CanonicalJSON(%s): %v", raw, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("CanonicalJSON(%s)\n got %s\nwant %s", raw, got, want)
	}
}

type tricky struct {
	Text   string            `json:"text"`
	Labels map[string]string `json:"labels"`
	Items  []interface{}     `json:"items"`
	Nested *tricky           `json:"nested,omitempty"`
	Number json.Number       `json:"number,omitempty"`
	Raw    json.RawMessage   `json:"raw,omitempty"`
}

func TestCanonicalJSONIsTheDecodedRoundTrip(t *testing.T) {
	cases := map[string]interface{}{
		"null":            nil,
		"scalars":         []interface{}{1, 2.5, "x", true, false, nil},
		"empty object":    map[string]interface{}{},
		"only empties":    map[string]interface{}{"a": nil, "b": []string{}, "c": map[string]interface{}{"d": nil}},
		"empty in arrays": []interface{}{nil, []int{}, map[string]interface{}{}},
		"unsorted keys":   map[string]int{"b": 1, "a": 2, "B": 3, "é": 4, "z": 5, "": 6, "a\x00": 7},
		"escapes": tricky{Text: "<a href=\"x\">&amp;</a>\n\t\r\\ \u2028\u2029 \x01\x1f \b\f",
			Labels: map[string]string{"<": "1", "&": "2", ">": "3", "\"": "4", "\\": "5", "\u2028": "6", "a": "7"}},
		"invalid UTF-8": tricky{Text: "a\xffb\xc3(", Labels: map[string]string{"k\xfe": "v\xfd", "k": "v"}},
		"U+FFFD itself": tricky{Text: "\ufffd", Labels: map[string]string{"\ufffd": "\ufffd"}},
		"numbers":       tricky{Number: "-1.5e+10", Raw: json.RawMessage(`{"b":[],"a":0.10,"c":{"x":null}}`)},
		"deep": tricky{Nested: &tricky{Nested: &tricky{Items: []interface{}{map[string]interface{}{"z": []int{}, "y": 1}}}},
			Items: []interface{}{}},
		"zero pod template": corev1.PodTemplateSpec{},
		"tutorial template": tutorialTemplate(),
		"zero TApp":         tkestackv1.TApp{},
	}
	for name, obj := range cases {
		t.Run(name, func(t *testing.T) { assertSameAsDecoded(t, obj) })
	}
}

// TestCanonicalJSONOfRandomObjects compares the two over randomly filled API objects, the kind of input the
// controllers and the admission plugin hash.
func TestCanonicalJSONOfRandomObjects(t *testing.T) {
	filler := randfill.NewWithSeed(20261128).NilChance(0.3).NumElements(0, 3).MaxDepth(8).Funcs(
		// Types whose JSON is their own and must be valid: given valid values of their own.
		func(f *metav1.FieldsV1, c randfill.Continue) {
			key, _ := json.Marshal("f:" + c.String(4))
			f.Raw = []byte(fmt.Sprintf(`{"f:metadata":{"f:labels":{%s:{}}}}`, key))
		},
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), resource.DecimalSI)
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(8))
			}
		},
	)
	for i := 0; i < 300; i++ {
		var tapp tkestackv1.TApp
		filler.Fill(&tapp)
		assertSameAsDecoded(t, tapp)
		var template corev1.PodTemplateSpec
		filler.Fill(&template)
		assertSameAsDecoded(t, template)
	}
}

// FuzzCanonicalJSON compares the two over any JSON document and any string bytes (`go test -fuzz`).
func FuzzCanonicalJSON(f *testing.F) {
	f.Add([]byte(`{"b":[],"a":{"d":null,"c":[null,[],{}]},"\u003c":"\ufffd"}`), "x\xff<")
	f.Add([]byte(`[1,2.0,-3e4,"a\\"]`), "\u2028")
	f.Fuzz(func(t *testing.T, document []byte, text string) {
		var generic interface{}
		if err := json.Unmarshal(document, &generic); err != nil {
			return
		}
		assertSameAsDecoded(t, generic)
		assertSameAsDecoded(t, tricky{Text: text, Labels: map[string]string{text: text, "a": text}, Raw: json.RawMessage(document)})
	})
}

// tutorialTemplate is the pod template of the tutorial's TApp (artifacts/examples/tapp.yaml) as the server
// holds it, defaults included.
func tutorialTemplate() corev1.PodTemplateSpec {
	grace := int64(30)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "example-tapp"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "nginx", Image: "nginx:1.7.9",
				Ports:                    []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources:                corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
				TerminationMessagePath:   corev1.TerminationMessagePathDefault,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     corev1.DNSClusterFirst,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 corev1.DefaultSchedulerName,
		},
	}
}

func BenchmarkCanonicalJSON(b *testing.B) {
	template := tutorialTemplate()
	b.Run("one pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := CanonicalJSON(template); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoded round trip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			raw, err := json.Marshal(template)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := decodedCanonicalJSON(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
