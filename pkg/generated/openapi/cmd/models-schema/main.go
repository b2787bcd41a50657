// Command models-schema prints the OpenAPI v2 definitions of the generated OpenAPI package as JSON. The
// apply-configuration generator reads it to learn the structure of our types.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/openapi"
)

func main() {
	if err := printSchema(); err != nil {
		fmt.Fprintf(os.Stderr, "models-schema: %v\n", err)
		os.Exit(1)
	}
}

func printSchema() error {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	definitions := openapi.GetOpenAPIDefinitions(ref)
	schemas := make(map[string]spec.Schema, len(definitions))
	for name, definition := range definitions {
		// A definition may carry a separate v2 form; the generator wants v2.
		if embedded, ok := definition.Schema.Extensions[common.ExtensionV2Schema]; ok {
			if v2, ok := embedded.(spec.Schema); ok {
				schemas[name] = v2
				continue
			}
		}
		schemas[name] = definition.Schema
	}
	out, err := json.Marshal(&spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Definitions: schemas,
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "tapp-apiserver", Version: "unversioned"}},
	}})
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
