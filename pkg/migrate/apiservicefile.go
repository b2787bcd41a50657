package migrate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// serverSetMetadata are the metadata fields the API server sets on an object. A file made with
// `kubectl get apiservice ... -o yaml` carries them; a create with resourceVersion set is refused, and by
// the time the APIServices are registered the CRDs are gone, so they are dropped when the file is read,
// before anything is changed.
var serverSetMetadata = []string{
	"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink",
	"deletionTimestamp", "deletionGracePeriodSeconds",
}

// readAPIServices reads the APIService manifests (separate documents, or a List such as `kubectl get
// apiservice a b -o yaml` prints) and returns them, without the fields the server sets (metadata above and
// status), with the versions they register by group and a note naming what was dropped ("" when nothing).
// Everything that would make the registration fail later is refused here, before migrate changes anything.
func readAPIServices(path string) ([]*unstructured.Unstructured, map[string][]string, string, error) {
	if path == "" {
		return nil, nil, "", errors.New("--apiservice-file is required: it holds the APIServices (with their caBundle) that register tapp-apiserver")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var docs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, nil, "", fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "List" || u.GetKind() == "APIServiceList" {
			items, found, err := unstructured.NestedSlice(u.Object, "items")
			if err != nil {
				return nil, nil, "", fmt.Errorf("%s: %s: items: %w", path, u.GetKind(), err)
			}
			if !found {
				continue
			}
			for i, item := range items {
				obj, ok := item.(map[string]interface{})
				if !ok {
					return nil, nil, "", fmt.Errorf("%s: %s items[%d] is not an object", path, u.GetKind(), i)
				}
				docs = append(docs, &unstructured.Unstructured{Object: obj})
			}
			continue
		}
		docs = append(docs, u)
	}

	var out []*unstructured.Unstructured
	registered := map[string][]string{}
	names := map[string]bool{}
	dropped := map[string]bool{}
	for _, u := range docs {
		if u.GroupVersionKind().Group != apiServiceGVR.Group || u.GetKind() != "APIService" {
			return nil, nil, "", fmt.Errorf("%s: %s %s is not an APIService", path, u.GetAPIVersion(), u.GetKind())
		}
		if u.GetName() == "" {
			return nil, nil, "", fmt.Errorf("%s: an APIService has no metadata.name", path)
		}
		if names[u.GetName()] {
			return nil, nil, "", fmt.Errorf("%s: APIService %s appears twice", path, u.GetName())
		}
		names[u.GetName()] = true
		if v := u.GetLabels()[automanagedLabel]; v != "" {
			return nil, nil, "", fmt.Errorf("%s: APIService %s is labelled %s=%s: it is one kube-apiserver keeps for a CRD or a built-in "+
				"group, not tapp-apiserver's; copy the APIServices from artifacts/deploy or from a cluster that runs tapp-apiserver",
				path, u.GetName(), automanagedLabel, v)
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		version, _, _ := unstructured.NestedString(u.Object, "spec", "version")
		if group != tkestackGroup && group != openyurtGroup {
			return nil, nil, "", fmt.Errorf("%s: APIService %s registers %s, which tapp-apiserver does not serve", path, u.GetName(), group)
		}
		if version == "" {
			return nil, nil, "", fmt.Errorf("%s: APIService %s has no spec.version", path, u.GetName())
		}
		if want := version + "." + group; u.GetName() != want {
			return nil, nil, "", fmt.Errorf("%s: APIService %s registers %s/%s, so its name must be %s", path, u.GetName(), group, version, want)
		}
		if service, _, _ := unstructured.NestedMap(u.Object, "spec", "service"); service == nil {
			return nil, nil, "", fmt.Errorf("%s: APIService %s has no spec.service", path, u.GetName())
		}
		for _, f := range dropServerSetFields(u) {
			dropped[f] = true
		}
		registered[group] = append(registered[group], version)
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, nil, "", fmt.Errorf("%s holds no APIService", path)
	}
	note := ""
	if len(dropped) > 0 {
		var fields []string
		for f := range dropped {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		note = fmt.Sprintf("%s: ignoring the fields the API server sets (%s), as copied from a cluster", path, strings.Join(fields, ", "))
	}
	return out, registered, note, nil
}

// dropServerSetFields removes status and the metadata in serverSetMetadata from u and returns the paths it
// removed.
func dropServerSetFields(u *unstructured.Unstructured) []string {
	var dropped []string
	if _, ok := u.Object["status"]; ok {
		delete(u.Object, "status")
		dropped = append(dropped, "status")
	}
	meta, _ := u.Object["metadata"].(map[string]interface{})
	for _, f := range serverSetMetadata {
		if _, ok := meta[f]; ok {
			delete(meta, f)
			dropped = append(dropped, "metadata."+f)
		}
	}
	return dropped
}
