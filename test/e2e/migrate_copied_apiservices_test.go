//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// apiServicesAsCopied turns APIService manifests into what `kubectl get apiservice ... -o yaml` prints for
// them on a cluster that serves them: one List whose items carry the fields the server sets
// (resourceVersion, uid, creationTimestamp, managedFields, status), as users copy them into a file.
func apiServicesAsCopied(manifest []byte) ([]byte, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var items []interface{}
	for i := 0; ; i++ {
		obj := map[string]interface{}{}
		if err := decoder.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		meta, _ := obj["metadata"].(map[string]interface{})
		if meta == nil {
			meta = map[string]interface{}{}
			obj["metadata"] = meta
		}
		meta["resourceVersion"] = "18431" + string(rune('0'+i))
		meta["uid"] = "6f1c7c0e-52a4-4c1e-9d0f-0b8f3f7e2a1" + string(rune('0'+i))
		meta["creationTimestamp"] = "2026-11-20T08:15:02Z"
		meta["managedFields"] = []interface{}{map[string]interface{}{
			"apiVersion": "apiregistration.k8s.io/v1", "fieldsType": "FieldsV1", "manager": "kubectl", "operation": "Apply",
			"time": "2026-11-20T08:15:02Z", "fieldsV1": map[string]interface{}{"f:spec": map[string]interface{}{"f:group": map[string]interface{}{}}},
		}}
		obj["status"] = map[string]interface{}{"conditions": []interface{}{map[string]interface{}{
			"lastTransitionTime": "2026-11-20T08:15:44Z", "message": "all checks passed", "reason": "Passed", "status": "True", "type": "Available",
		}}}
		items = append(items, obj)
	}
	return yaml.Marshal(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]interface{}{"resourceVersion": ""}})
}
