package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappdaemon"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/tkestack/tapp"
)

// FuzzDecodeDefaultValidateEncode feeds arbitrary JSON, YAML or protobuf bodies through what the server does
// with a request body of every served kind: decode, default, convert to the internal version, validate,
// convert back and encode. It must never panic, and a body that decodes and validates must encode to a body
// that decodes to the same object again (encode(decode(encode(x))) == encode(x)), in JSON and through
// protobuf: nothing is lost or changed by a round through the server or its store. `go test` runs the seeds
// (every shipped example, in YAML and in protobuf, plus hostile bodies); `make fuzz` explores further.
func FuzzDecodeDefaultValidateEncode(f *testing.F) {
	for _, pattern := range []string{"../../artifacts/examples/*.yaml", "../../artifacts/examples/tutorial/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, doc := range bytes.Split(raw, []byte("\n---")) {
				f.Add(doc)
				if pb, err := inProtobuf(doc); err == nil {
					f.Add(pb)
				}
			}
		}
	}
	for _, seed := range hostileBodies {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := throughTheServer(body); err != nil {
			t.Fatal(err)
		}
	})
}

// TestExamplesGoThroughTheServer keeps the fuzz target honest: every shipped example goes all the way through
// it (decoded, valid, encoded twice the same, and through protobuf), in YAML and in protobuf.
func TestExamplesGoThroughTheServer(t *testing.T) {
	files, err := filepath.Glob("../../artifacts/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		served := 0
		for i, doc := range yamlDocuments(t, raw) {
			what := fmt.Sprintf("%s, object %d", file, i)
			var typeMeta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &typeMeta); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if gvk := typeMeta.GroupVersionKind(); !isServed(&gvk) {
				continue // a built-in object beside ours (a Service)
			}
			served++
			stage, err := throughTheServer(doc)
			if err != nil || stage != "encoded" {
				t.Errorf("%s: stopped at %q: %v", what, stage, err)
			}
			pb, err := inProtobuf(doc)
			if err != nil {
				t.Fatalf("%s in protobuf: %v", what, err)
			}
			if stage, err := throughTheServer(pb); err != nil || stage != "encoded" {
				t.Errorf("%s in protobuf: stopped at %q: %v", what, stage, err)
			}
		}
		if served == 0 {
			t.Errorf("%s holds no object this server serves", file)
		}
	}
}

// isServed reports whether the server serves gvk.
func isServed(gvk *schema.GroupVersionKind) bool {
	_, ok := servedKind(gvk)
	return ok
}

// yamlDocuments splits a YAML stream into its documents.
func yamlDocuments(t *testing.T, raw []byte) [][]byte {
	t.Helper()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

// throughTheServer decodes, defaults, converts, validates and encodes body twice, and returns the stage it
// got to ("not decoded", "not served", "not converted", "invalid" or "encoded"). An error is a bug.
func throughTheServer(body []byte) (string, error) {
	obj, gvk, err := Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return "not decoded", nil // refused as a 400, which is what a bad body gets
	}
	external, ok := servedKind(gvk)
	if !ok {
		return "not served", nil
	}
	if accessor, err := meta.Accessor(obj); err == nil && gvk.Kind != "NodePool" && accessor.GetNamespace() == "" {
		accessor.SetNamespace("default") // the request's namespace, as the server sets it
	}
	Scheme.Default(obj)
	internal, err := Scheme.ConvertToVersion(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return "not converted", nil
	}
	if errs := validate(internal); len(errs) > 0 {
		for _, e := range errs {
			if e.Field == "" {
				return "invalid", fmt.Errorf("validation error without a field path: %v", e)
			}
		}
		return "invalid", nil
	}
	codec := Codecs.LegacyCodec(external)
	first, err := runtime.Encode(codec, internal)
	if err != nil {
		return "invalid", fmt.Errorf("encoding a valid %s: %v", gvk.Kind, err)
	}
	again, err := runtime.Decode(Codecs.UniversalDecoder(external), first)
	if err != nil {
		return "invalid", fmt.Errorf("decoding what the server encoded for %s: %v\n%s", gvk.Kind, err, first)
	}
	second, err := runtime.Encode(codec, again)
	if err != nil {
		return "invalid", fmt.Errorf("encoding a decoded %s: %v", gvk.Kind, err)
	}
	if !bytes.Equal(first, second) {
		return "invalid", fmt.Errorf("a %s changes on a second round through the server:\nfirst:  %s\nsecond: %s", gvk.Kind, first, second)
	}
	pb, err := runtime.Encode(Codecs.EncoderForVersion(protobufSerializer(), external), internal)
	if err != nil {
		return "invalid", fmt.Errorf("encoding a valid %s in protobuf: %v", gvk.Kind, err)
	}
	fromProtobuf, err := runtime.Decode(Codecs.UniversalDecoder(external), pb)
	if err != nil {
		return "invalid", fmt.Errorf("decoding the protobuf the server encoded for %s: %v", gvk.Kind, err)
	}
	third, err := runtime.Encode(codec, fromProtobuf)
	if err != nil {
		return "invalid", fmt.Errorf("encoding a %s decoded from protobuf: %v", gvk.Kind, err)
	}
	if !bytes.Equal(first, third) {
		return "invalid", fmt.Errorf("a %s changes through protobuf:\nbefore: %s\nafter:  %s", gvk.Kind, first, third)
	}
	return "encoded", nil
}

func protobufSerializer() runtime.Serializer {
	info, _ := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	return info.Serializer
}

// inProtobuf re-encodes a YAML or JSON body of a served kind in protobuf, in its own version.
func inProtobuf(body []byte) ([]byte, error) {
	obj, gvk, err := Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return nil, err
	}
	if _, ok := servedKind(gvk); !ok {
		return nil, fmt.Errorf("%v is not served", gvk)
	}
	return runtime.Encode(protobufSerializer(), obj)
}

// servedKind reports whether gvk is a kind of this server and the version to encode it in.
func servedKind(gvk *schema.GroupVersionKind) (schema.GroupVersion, bool) {
	if gvk == nil {
		return schema.GroupVersion{}, false
	}
	switch gvk.Kind {
	case "TApp", "YurtAppDaemon", "NodePool":
		if Scheme.Recognizes(*gvk) {
			return gvk.GroupVersion(), true
		}
	}
	return schema.GroupVersion{}, false
}

// validate runs what a create runs on an internal object: its registry strategy's PrepareForCreate and
// Validate.
func validate(obj runtime.Object) field.ErrorList {
	var strategy rest.RESTCreateStrategy
	switch obj.(type) {
	case *tkestack.TApp:
		strategy = tapp.NewStrategy(Scheme)
	case *openyurt.YurtAppDaemon:
		strategy = yurtappdaemon.NewStrategy(Scheme)
	case *openyurt.NodePool:
		strategy = nodepool.NewStrategy(Scheme)
	default:
		return nil
	}
	strategy.PrepareForCreate(context.Background(), obj)
	return strategy.Validate(context.Background(), obj)
}

// hostileBodies are seeds a careless or hostile client could send: nulls where objects go, wrong types, huge
// numbers, deep nesting, duplicate and case-mismatched keys.
var hostileBodies = []string{
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":null}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"replicas":1e400}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"replicas":-1,"template":{}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"replicas":"3"}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"templatePool":{"x":null},"templates":{"0":"x"}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"templates":{"-1":"x","01":"y","99999999999":"z"}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"statuses":{"0":"Running"},"DefaultTemplateName":"q","defaultTemplateName":"r"}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"updateStrategy":{"maxUnavailable":"150%","forceUpdate":{"maxUnavailable":"x%"}}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"replicas":2,"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}},"volumeClaimTemplates":[{"metadata":{"name":""}}]}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"replicas":2,"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}},"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"2Gi"}}}}],"volumeClaimUpdateStrategy":{"type":"OnPodRollingUpdate","onIncompatibleChange":"Recreate"}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}},"volumeClaimUpdateStrategy":{"type":"Always","onIncompatibleChange":null}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}},"volumeClaimUpdateStrategy":{}},"status":{"volumeClaims":[{"volumeClaimName":"data","compatibleReplicas":-1,"compatibleReadyReplicas":9},{"volumeClaimName":"data"}]}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a","labels":{"x":{"y":{"z":[[[[[[[[[[[]]]]]]]]]]]}}}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"lifecycle":{"preDelete":null,"inPlaceUpdate":{}}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"lifecycle":{"preDelete":{"labelsHandler":{"bad key":"","tkestack.io/lifecycle-state":"x"},"finalizersHandler":["a/b/c","a/b/c",""],"markPodNotReady":"yes"}}}}`,
	`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"a"},"spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b","drain":"true"}},"spec":{"containers":[{"name":"c","image":"i"}]}},"lifecycle":{"preDelete":{"labelsHandler":{"drain":"true"},"markPodNotReady":true},"inPlaceUpdate":{"finalizersHandler":["example.com/lb"]}}}}`,
	`{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"YurtAppDaemon","metadata":{"name":"y"},"spec":{"workloadTemplate":{"deploymentTemplate":null,"statefulSetTemplate":{}}}}`,
	`{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"YurtAppDaemon","metadata":{"name":"y"},"spec":{"selector":{"matchLabels":{"a":"b"}},"nodepoolSelector":null,"revisionHistoryLimit":-5}}`,
	`{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"NodePool","metadata":{"name":"p"},"spec":{"type":"Nowhere","taints":[{"key":"","effect":"Bogus"}]}}`,
	`{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"NodePool","metadata":{"name":"p","annotations":{"nodepool.openyurt.io/hostnetwork":"maybe"}},"spec":{"selector":{"matchLabels":{"":""}}}}`,
	`{"apiVersion":"apps.openyurt.io/v1beta1","kind":"NodePool","metadata":{"name":"p"},"spec":{"type":"Cloud","hostNetwork":true,"labels":{"a":"b"}}}`,
	"apiVersion: apps.tkestack.io/v1\nkind: TApp\nmetadata:\n  name: y\nspec:\n  replicas: 0x10\n  template: ~\n",
}
