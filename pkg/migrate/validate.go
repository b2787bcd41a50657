package migrate

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappdaemon"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/tkestack/tapp"
)

// restoreObject is what migrate creates on tapp-apiserver for a backed-up object: apiVersion, kind, name,
// namespace, labels, annotations (without kubectl's last-applied-configuration, which describes the CRD's
// object), ownerReferences and the whole spec. Status is left to the controllers; finalizers belonged to
// the original controllers.
func restoreObject(e *Entry) *unstructured.Unstructured {
	src := e.Object
	out := &unstructured.Unstructured{Object: map[string]interface{}{}}
	out.SetAPIVersion(src.GetAPIVersion())
	out.SetKind(src.GetKind())
	out.SetName(src.GetName())
	out.SetNamespace(src.GetNamespace())
	out.SetLabels(src.GetLabels())
	annotations := src.GetAnnotations()
	delete(annotations, lastApplied)
	delete(annotations, dependentsAnnotation)
	// OpenYurt's conversions leave the hostnetwork annotation "true" on a v1beta1 NodePool beside
	// spec.hostNetwork: true. tapp-apiserver refuses the pair (its v1alpha1 storage could not return the
	// annotation beside the field), and the field says all of it: the annotation is left out, and reads
	// through v1alpha1 still show it.
	if src.GetKind() == "NodePool" && src.GroupVersionKind().Version != "v1alpha1" {
		if hostNetwork, _, _ := unstructured.NestedBool(src.Object, "spec", "hostNetwork"); hostNetwork &&
			annotations[openyurt.NodePoolHostNetworkAnnotation] == openyurt.HostNetworkAnnotationTrue {
			delete(annotations, openyurt.NodePoolHostNetworkAnnotation)
		}
	}
	if len(annotations) > 0 {
		out.SetAnnotations(annotations)
	}
	if refs := src.GetOwnerReferences(); len(refs) > 0 {
		out.SetOwnerReferences(refs)
	}
	if spec, ok := src.Object["spec"]; ok {
		out.Object["spec"] = runtime.DeepCopyJSONValue(spec)
	}
	return out
}

// validateForCreate runs what tapp-apiserver runs on a create of obj (decoding with defaults, the
// strategy's preparation and validation) in this process, so that an object the server would refuse is
// found before anything is deleted.
func validateForCreate(obj *unstructured.Unstructured) (field.ErrorList, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	internal, _, err := apiserver.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("tapp-apiserver cannot read it as %s: %w", obj.GetAPIVersion(), err)
	}
	var strategy rest.RESTCreateStrategy
	switch internal.(type) {
	case *tkestack.TApp:
		strategy = tapp.NewStrategy(apiserver.Scheme)
	case *openyurt.NodePool:
		strategy = nodepool.NewStrategy(apiserver.Scheme)
	case *openyurt.YurtAppDaemon:
		strategy = yurtappdaemon.NewStrategy(apiserver.Scheme)
	default:
		return nil, fmt.Errorf("%T is not a kind migrate moves", internal)
	}
	ctx := context.Background()
	strategy.PrepareForCreate(ctx, internal)
	return strategy.Validate(ctx, internal), nil
}
