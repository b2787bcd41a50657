package apiserver

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/kube-openapi/pkg/common"

	generatedopenapi "github.com/tapp-io/tapp-apiserver/pkg/generated/openapi"
)

// defaultedWorkloadSelectors are the OpenAPI definitions, embedded in YurtAppDaemon workload templates,
// whose required selector the server defaults from the YurtAppDaemon's spec.selector: a template may leave it
// out, so the published schema must not require it (kubectl's client-side validation reads it).
var defaultedWorkloadSelectors = []string{
	appsv1.DeploymentSpec{}.OpenAPIModelName(),
	appsv1.StatefulSetSpec{}.OpenAPIModelName(),
}

// OpenAPIDefinitions are the generated OpenAPI definitions as the server publishes them: the selectors of
// workload templates that the server defaults are optional.
func OpenAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := generatedopenapi.GetOpenAPIDefinitions(ref)
	for _, name := range defaultedWorkloadSelectors {
		def, ok := defs[name]
		if !ok {
			continue
		}
		def.Schema.Required = slices.DeleteFunc(slices.Clone(def.Schema.Required), func(f string) bool { return f == "selector" })
		defs[name] = def
	}
	return defs
}
