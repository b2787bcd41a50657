package migrate

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A YurtAppSet is validated before anything is deleted, as the other kinds are: a valid one passes, each
// invalid one is refused with its field path.
func TestValidateForCreateYurtAppSet(t *testing.T) {
	const valid = `
apiVersion: apps.openyurt.io/v1beta1
kind: YurtAppSet
metadata: {name: web, namespace: default}
spec:
  nodepoolSelector: {matchLabels: {zone: east}}
  workload:
    workloadTemplate:
      deploymentTemplate:
        metadata: {labels: {app: web}}
        spec:
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: main, image: "nginx:1"}]}
    workloadTweaks:
    - pools: [hangzhou]
      tweaks: {containerImages: [{name: main, targetImage: "nginx:2"}]}
`
	for _, tc := range []struct {
		name   string
		mutate func(obj map[string]interface{})
		want   string // a field path of the refusal, "" for valid
	}{
		{"valid", func(map[string]interface{}) {}, ""},
		{"selector does not match the pod labels", func(obj map[string]interface{}) {
			_ = unstructured.SetNestedField(obj, "api", "spec", "workload", "workloadTemplate", "deploymentTemplate",
				"spec", "selector", "matchLabels", "app")
		}, "spec.workload.workloadTemplate.deploymentTemplate"},
		{"no template", func(obj map[string]interface{}) {
			unstructured.RemoveNestedField(obj, "spec", "workload", "workloadTemplate", "deploymentTemplate")
		}, "spec.workload.workloadTemplate"},
		{"image tweak names a container the template lacks", func(obj map[string]interface{}) {
			tweaks, _, _ := unstructured.NestedSlice(obj, "spec", "workload", "workloadTweaks")
			tweak := tweaks[0].(map[string]interface{})
			_ = unstructured.SetNestedSlice(tweak, []interface{}{map[string]interface{}{"name": "sidecar", "targetImage": "x:1"}},
				"tweaks", "containerImages")
			_ = unstructured.SetNestedSlice(obj, tweaks, "spec", "workload", "workloadTweaks")
		}, "spec.workload.workloadTweaks[0].tweaks.containerImages[0].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(valid), &obj.Object); err != nil {
				t.Fatal(err)
			}
			tc.mutate(obj.Object)
			errs, err := validateForCreate(obj)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("valid YurtAppSet refused: %v", errs)
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("invalid YurtAppSet accepted")
			}
			if !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Errorf("errors %v do not name %s", errs, tc.want)
			}
		})
	}
}
