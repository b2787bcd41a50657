package apiserver

import (
	"slices"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	generatedopenapi "github.com/tapp-io/tapp-apiserver/pkg/generated/openapi"
)

func TestOpenAPIDefinitionsMakeDefaultedSelectorsOptional(t *testing.T) {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	generated := generatedopenapi.GetOpenAPIDefinitions(ref)
	published := OpenAPIDefinitions(ref)
	for _, name := range defaultedWorkloadSelectors {
		if !slices.Contains(generated[name].Schema.Required, "selector") {
			t.Fatalf("the generated %s does not require selector: nothing to relax", name)
		}
		if slices.Contains(published[name].Schema.Required, "selector") {
			t.Errorf("published %s still requires selector: %v", name, published[name].Schema.Required)
		}
		if !slices.Contains(published[name].Schema.Required, "template") {
			t.Errorf("published %s lost its other required fields: %v", name, published[name].Schema.Required)
		}
		if !slices.Contains(generated[name].Schema.Required, "selector") {
			t.Errorf("the generated definition of %s was changed in place", name)
		}
	}
}
