package tapp_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/builder3"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	generatedopenapi "github.com/tapp-io/tapp-apiserver/pkg/generated/openapi"
)

// statusFieldManager is the field manager of the TApp status subresource as tapp-apiserver builds it (from
// its OpenAPI definitions), with status.statuses atomic (as served) or, to measure the alternative, granular.
func statusFieldManager(b *testing.B, atomicStatuses bool) *managedfields.FieldManager {
	namer := openapi.NewDefinitionNamer(apiserver.Scheme)
	config := genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	statusName, _ := namer.GetDefinitionName(v1.TAppStatus{}.OpenAPIModelName())
	defs, err := builder3.BuildOpenAPIDefinitionsForResources(config, v1.TApp{}.OpenAPIModelName())
	if err != nil {
		b.Fatal(err)
	}
	status, ok := defs[statusName]
	if !ok {
		b.Fatalf("no definition %s among %d", statusName, len(defs))
	}
	mapType := "granular"
	if atomicStatuses {
		mapType = "atomic"
	}
	prop := status.Properties["statuses"]
	prop.AddExtension("x-kubernetes-map-type", mapType)
	status.Properties["statuses"] = prop
	converter, err := managedfields.NewTypeConverter(defs, false)
	if err != nil {
		b.Fatal(err)
	}
	gvk := v1.SchemeGroupVersion.WithKind("TApp")
	manager, err := managedfields.NewDefaultFieldManager(converter, apiserver.Scheme, apiserver.Scheme, apiserver.Scheme, gvk, gvk.GroupVersion(), "status", nil)
	if err != nil {
		b.Fatal(err)
	}
	return manager
}

// BenchmarkStatusWriteManagedFields measures what the managed fields cost tapp-apiserver on each status write
// of a TApp of 1000 instances that changes one instance's state (the controller's writes during a scale-up or
// a roll), with status.statuses atomic (one managed-fields entry for the map, as served) and granular (one
// per instance, as before +mapType=atomic).
func BenchmarkStatusWriteManagedFields(b *testing.B) {
	const instances = 1000
	for _, atomic := range []bool{false, true} {
		b.Run(fmt.Sprintf("atomic=%v", atomic), func(b *testing.B) {
			manager := statusFieldManager(b, atomic)
			live := &v1.TApp{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "TApp"},
				ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "default", ResourceVersion: "1"},
			}
			// The controller's first write of the instances' states gives it its managed-fields entry.
			first := live.DeepCopy()
			first.Status = v1.TAppStatus{Replicas: instances, Statuses: map[string]v1.InstanceStatus{}}
			for i := range instances {
				first.Status.Statuses[strconv.Itoa(i)] = v1.InstanceStatus("Pending")
			}
			out, err := manager.Update(live, first, "tapp-controller")
			if err != nil {
				b.Fatal(err)
			}
			live = out.(*v1.TApp)
			// The controller's entry lists every instance only while the map is granular.
			if got := perInstanceEntries(live); got != !atomic {
				b.Fatalf("managed fields list each instance: %v, want %v: %+v", got, !atomic, live.ManagedFields)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				next := live.DeepCopy()
				next.Status.Statuses[strconv.Itoa(i%instances)] = v1.InstanceStatus("Running")
				if _, err := manager.Update(live, next, "tapp-controller"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// perInstanceEntries tells whether the status manager's managed-fields entry lists status.statuses key by key.
func perInstanceEntries(tapp *v1.TApp) bool {
	for _, entry := range tapp.ManagedFields {
		if entry.Subresource == "status" && entry.FieldsV1 != nil && strings.Contains(string(entry.FieldsV1.Raw), `"f:999":{}`) {
			return true
		}
	}
	return false
}
