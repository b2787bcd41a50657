package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	tappscheme "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/scheme"
	tappclientv1 "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/typed/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/openapi"
)

// The CRD path serves the TApp schema under another group of the same kube-apiserver.
const crdGroup = "apps.bench.tkestack.io"

var (
	crdGroupVersion = schema.GroupVersion{Group: crdGroup, Version: "v1"}
	crdResource     = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// crdSchema is the result of converting the TApp OpenAPI definition into a structural schema.
type crdSchema struct {
	// Schema is the openAPIV3Schema of the CRD version (apiextensions.k8s.io/v1 JSONSchemaProps as JSON values).
	Schema map[string]interface{}
	// Preserved lists the paths where x-kubernetes-preserve-unknown-fields stands in for a structural schema.
	Preserved []string
	// IntOrString lists the model names converted to x-kubernetes-int-or-string.
	IntOrString []string
	// AtomicLists lists the map-type lists made atomic because a key is neither required nor defaulted.
	AtomicLists []string
}

// schemaConverter resolves the $refs of the generated OpenAPI definitions into inline structural schemas.
type schemaConverter struct {
	defs        map[string]common.OpenAPIDefinition
	preserved   []string
	atomic      []string
	intOrString map[string]bool
}

const refPrefix = "#/definitions/"

// tappStructuralSchema converts the TApp definition of pkg/generated/openapi into a structural schema.
// Descriptions and object-valued defaults are left out (a CRD would only carry them as documentation, and
// "{}" defaults of objects with required fields would not validate); scalar defaults, enums, formats,
// required fields, list types and map types are kept.
func tappStructuralSchema() (*crdSchema, error) {
	defs := openapi.GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef(refPrefix + name) })
	c := &schemaConverter{defs: defs, intOrString: map[string]bool{}}
	def, ok := defs[tkestackv1.TApp{}.OpenAPIModelName()]
	if !ok {
		return nil, fmt.Errorf("no OpenAPI definition for %s", tkestackv1.TApp{}.OpenAPIModelName())
	}
	root, err := c.convert(def.Schema, "", nil)
	if err != nil {
		return nil, err
	}
	// The root metadata is the server's: a CRD may only say it is an object.
	root["properties"].(map[string]interface{})["metadata"] = map[string]interface{}{"type": "object"}
	out := &crdSchema{Schema: root}
	for _, p := range c.preserved {
		if !strings.HasPrefix(p, ".metadata.") {
			out.Preserved = append(out.Preserved, p)
		}
	}
	for _, p := range c.atomic {
		if !strings.HasPrefix(p, ".metadata.") {
			out.AtomicLists = append(out.AtomicLists, p)
		}
	}
	sort.Strings(out.AtomicLists)
	for name := range c.intOrString {
		out.IntOrString = append(out.IntOrString, name)
	}
	sort.Strings(out.IntOrString)
	sort.Strings(out.Preserved)
	return out, nil
}

var keptExtensions = []string{"x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type"}

func (c *schemaConverter) convert(s spec.Schema, path string, stack []string) (map[string]interface{}, error) {
	if ref := s.Ref.String(); ref != "" {
		name := strings.TrimPrefix(ref, refPrefix)
		for _, seen := range stack {
			if seen == name {
				c.preserved = append(c.preserved, path+" (recursive "+name+")")
				return map[string]interface{}{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, nil
			}
		}
		def, ok := c.defs[name]
		if !ok {
			return nil, fmt.Errorf("%s: unresolved reference %s", path, ref)
		}
		return c.convert(def.Schema, path, append(stack, name))
	}
	if len(s.AllOf) == 1 && len(s.Type) == 0 && len(s.Properties) == 0 {
		return c.convert(s.AllOf[0], path, stack)
	}
	// intstr.IntOrString and resource.Quantity: an integer or a string.
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 || s.Format == "int-or-string" {
		if len(stack) > 0 {
			c.intOrString[stack[len(stack)-1]] = true
		}
		return map[string]interface{}{
			"x-kubernetes-int-or-string": true,
			"anyOf":                      []interface{}{map[string]interface{}{"type": "integer"}, map[string]interface{}{"type": "string"}},
		}, nil
	}
	out := map[string]interface{}{}
	if len(s.Type) == 1 {
		out["type"] = s.Type[0]
	} else if len(s.Type) > 1 {
		return nil, fmt.Errorf("%s: several types %v", path, s.Type)
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		out["enum"] = s.Enum
	}
	for _, key := range keptExtensions {
		if v, ok := s.Extensions[key]; ok {
			out[key] = v
		}
	}
	if s.Default != nil {
		switch d := s.Default.(type) {
		case string, bool, int, int32, int64, float64:
			if len(s.Enum) == 0 || enumHas(s.Enum, d) {
				out["default"] = d
			}
		}
	}
	if len(s.Properties) > 0 {
		props := map[string]interface{}{}
		for name, prop := range s.Properties {
			p, err := c.convert(prop, path+"."+name, stack)
			if err != nil {
				return nil, err
			}
			props[name] = p
		}
		out["properties"] = props
		var required []interface{}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; ok {
				required = append(required, r)
			}
		}
		if len(required) > 0 {
			out["required"] = required
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		p, err := c.convert(*s.AdditionalProperties.Schema, path+"[*]", stack)
		if err != nil {
			return nil, err
		}
		out["additionalProperties"] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		p, err := c.convert(*s.Items.Schema, path+"[]", stack)
		if err != nil {
			return nil, err
		}
		out["items"] = p
		if t, _ := s.Extensions["x-kubernetes-list-type"].(string); t == "map" && !fixListMapKeys(out, p) {
			c.atomic = append(c.atomic, path)
		}
	}
	switch {
	case out["type"] == nil:
		// Any JSON value (runtime.RawExtension-like): no structural schema exists.
		c.preserved = append(c.preserved, path)
		out["x-kubernetes-preserve-unknown-fields"] = true
	case out["type"] == "object" && out["properties"] == nil && out["additionalProperties"] == nil:
		// An object whose fields are not described (metav1.FieldsV1, runtime.RawExtension): keep it whole.
		c.preserved = append(c.preserved, path)
		out["x-kubernetes-preserve-unknown-fields"] = true
	}
	return out, nil
}

// fixListMapKeys keeps x-kubernetes-list-type=map only when every key is required or defaulted, as
// CRD validation demands; otherwise the list becomes atomic and it returns false.
func fixListMapKeys(list, item map[string]interface{}) bool {
	props, _ := item["properties"].(map[string]interface{})
	required := map[string]bool{}
	if r, ok := item["required"].([]interface{}); ok {
		for _, k := range r {
			required[k.(string)] = true
		}
	}
	keys, _ := list["x-kubernetes-list-map-keys"].([]interface{})
	for _, k := range keys {
		name, _ := k.(string)
		p, _ := props[name].(map[string]interface{})
		if p == nil || (!required[name] && p["default"] == nil) {
			list["x-kubernetes-list-type"] = "atomic"
			delete(list, "x-kubernetes-list-map-keys")
			return false
		}
	}
	return true
}

func enumHas(enum []interface{}, v interface{}) bool {
	for _, e := range enum {
		if e == v {
			return true
		}
	}
	return false
}

// tappCRD is the CustomResourceDefinition of the TApp schema in crdGroup, with status and scale
// subresources as served by tapp-apiserver.
func tappCRD(s *crdSchema) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]interface{}{"name": "tapps." + crdGroup},
		"spec": map[string]interface{}{
			"group": crdGroup,
			"scope": "Namespaced",
			"names": map[string]interface{}{
				"plural": "tapps", "singular": "tapp", "kind": "TApp", "listKind": "TAppList",
			},
			"versions": []interface{}{map[string]interface{}{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]interface{}{"openAPIV3Schema": s.Schema},
				"subresources": map[string]interface{}{
					"status": map[string]interface{}{},
					"scale": map[string]interface{}{
						"specReplicasPath":   ".spec.replicas",
						"statusReplicasPath": ".status.replicas",
						"labelSelectorPath":  ".status.scaleLabelSelector",
					},
				},
			}},
		},
	}}
}

// installCRD creates the CRD and waits until it is Established and its endpoint answers.
func installCRD(ctx context.Context, dyn dynamic.Interface, crd *unstructured.Unstructured, client tappclientv1.TAppInterface) error {
	_, err := dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the CRD: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err == nil && crdEstablished(got) {
			if _, err = client.List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			var conditions interface{}
			if got != nil {
				conditions, _, _ = unstructured.NestedFieldNoCopy(got.Object, "status", "conditions")
			}
			return fmt.Errorf("the CRD %s is not usable after a minute (conditions %v, last error: %v)", crd.GetName(), conditions, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]interface{})
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// crdTAppClient is the generated typed TApp client pointed at the CRD group: the three paths share one
// client implementation, so the client's own encoding and decoding costs are identical.
func crdTAppClient(cfg *rest.Config) (*tappclientv1.TKEStackAppsV1Client, error) {
	// The generated client encodes list, get and delete options with the clientset's parameter codec,
	// which must know the options in the CRD's group version.
	metav1.AddToGroupVersion(tappscheme.Scheme, crdGroupVersion)
	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(crdGroupVersion, &tkestackv1.TApp{}, &tkestackv1.TAppList{})
	metav1.AddToGroupVersion(scheme, crdGroupVersion)
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &crdGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	restClient, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return tappclientv1.New(restClient), nil
}
