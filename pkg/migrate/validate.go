package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappdaemon"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappset"
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

// restoreForm is restoreObject in the version migrate creates it in. A NodePool that OpenYurt v1.7 stores as
// apps.openyurt.io/v1beta2 is created as v1beta2 when this tapp-apiserver serves that version and the
// APIService file registers it; otherwise as v1beta1, which holds every field it uses when its
// v1beta2-only fields are absent or at their defaults (an error names those that are not: nothing is
// dropped silently).
func restoreForm(e *Entry, registered map[string][]string) (*unstructured.Unstructured, error) {
	obj := restoreObject(e)
	gvk := obj.GroupVersionKind()
	if gvk.Kind != "NodePool" || gvk.Version != "v1beta2" {
		return obj, nil
	}
	served := apiserver.Scheme.Recognizes(gvk)
	if served && slices.Contains(registered[gvk.Group], gvk.Version) {
		return obj, nil
	}
	why := "which this tapp-apiserver does not serve"
	if served {
		why = "which the APIService file does not register"
	}
	return nodePoolV1beta2AsV1beta1(obj, why)
}

// nodePoolV1beta1Fields are the spec fields of NodePool v1beta1 (OpenYurt v1.4+), which v1beta2 keeps.
var nodePoolV1beta1Fields = []string{"type", "hostNetwork", "labels", "annotations", "taints"}

// nodePoolV1beta2AsV1beta1 converts a v1beta2 NodePool to v1beta1, or names the v1beta2-only fields
// (interConnectivity, enableLeaderElection, leaderElectionStrategy, leaderNodeLabelSelector,
// leaderReplicas, poolScopeMetadata, enablePoolScopeMetadata) that are set to something other than their
// absence or OpenYurt's defaults, which v1beta1 cannot hold.
// why says why it is not created as v1beta2.
func nodePoolV1beta2AsV1beta1(obj *unstructured.Unstructured, why string) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	out.SetAPIVersion(openyurtGroup + "/v1beta1")
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	kept := map[string]interface{}{}
	var lost []string
	keys := make([]string, 0, len(spec))
	for k := range spec {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		value := spec[key]
		if slices.Contains(nodePoolV1beta1Fields, key) {
			kept[key] = value
			continue
		}
		if !isV1beta2Default(key, value) {
			data, _ := json.Marshal(value)
			lost = append(lost, fmt.Sprintf("spec.%s=%s", key, data))
		}
	}
	if len(lost) > 0 {
		return nil, fmt.Errorf("it is stored as apps.openyurt.io/v1beta2, %s, and %s "+
			"cannot be held by apps.openyurt.io/v1beta1", why, strings.Join(lost, ", "))
	}
	if len(spec) > 0 {
		out.Object["spec"] = kept
	}
	return out, nil
}

// isV1beta2Default reports whether a v1beta2-only NodePool spec field holds its zero value or the value
// OpenYurt's defaulting writes (leaderElectionStrategy random, leaderReplicas 1, poolScopeMetadata
// services and endpointslices).
func isV1beta2Default(key string, value interface{}) bool {
	switch v := value.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == "" || (key == "leaderElectionStrategy" && v == "random")
	case int64:
		return v == 0 || (key == "leaderReplicas" && v == 1)
	case float64:
		return v == 0 || (key == "leaderReplicas" && v == 1)
	case map[string]interface{}:
		return len(v) == 0
	case []interface{}:
		if len(v) == 0 {
			return true
		}
		if key != "poolScopeMetadata" || len(v) != 2 {
			return false
		}
		var got []string
		for _, item := range v {
			m, _ := item.(map[string]interface{})
			got = append(got, fmt.Sprintf("%v/%v/%v", m["group"], m["version"], m["resource"]))
		}
		slices.Sort(got)
		return strings.Join(got, ",") == "/v1/services,discovery.k8s.io/v1/endpointslices"
	}
	return false
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
	case *openyurt.YurtAppSet:
		strategy = yurtappset.NewStrategy(apiserver.Scheme)
	default:
		// A kind this package has no strategy for: tapp-apiserver validates it on create, and a refusal
		// stops the run there, with the object kept in the backup file.
		return nil, nil
	}
	ctx := context.Background()
	strategy.PrepareForCreate(ctx, internal)
	return strategy.Validate(ctx, internal), nil
}
