package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// yasRow is one bad YurtAppSet request and the field path its 422 must name.
type yasRow struct {
	name string
	// mutate changes a valid YurtAppSet (as JSON maps) into the bad one; for creates it is the body, for
	// updates (update set) the fixture read back.
	mutate func(obj map[string]any)
	// method and ctype of an update; "" for a create.
	method, ctype, body string
	// status sends the update to the status subresource.
	status bool
	// statefulSet starts from the StatefulSet YurtAppSet instead of the Deployment one.
	statefulSet bool
	field       string
}

const yasWorkload = "spec.workload"

func yasPath(ns string) string {
	return "/apis/apps.openyurt.io/v1beta1/namespaces/" + ns + "/yurtappsets"
}

// yasManifest is a valid YurtAppSet, as OpenYurt's samples write one: a Deployment (or StatefulSet)
// template, pools by name and selector, and a tweak with replicas, an image and two patches.
func yasManifest(name string, statefulSet bool) map[string]any {
	template := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{
					"initContainers": []any{map[string]any{"name": "init", "image": "busybox:1.36"}},
					"containers":     []any{map[string]any{"name": "nginx", "image": "nginx:1.19"}},
				},
			},
		},
	}
	kind := "deploymentTemplate"
	if statefulSet {
		kind = "statefulSetTemplate"
		template["spec"].(map[string]any)["serviceName"] = "web"
	}
	return map[string]any{
		"apiVersion": "apps.openyurt.io/v1beta1",
		"kind":       "YurtAppSet",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"pools":            []any{"hangzhou"},
			"nodepoolSelector": map[string]any{"matchLabels": map[string]any{"zone": "east"}},
			"workload": map[string]any{
				"workloadTemplate": map[string]any{kind: template},
				"workloadTweaks": []any{map[string]any{
					"pools": []any{"hangzhou"},
					"tweaks": map[string]any{
						"replicas":        3,
						"containerImages": []any{map[string]any{"name": "nginx", "targetImage": "nginx:1.20"}},
						"patches": []any{
							map[string]any{"path": "/metadata/labels/tier", "operation": "add", "value": "edge"},
							map[string]any{"path": "/spec/template/spec/nodeSelector/region", "operation": "add", "value": "{{nodepool-name}}"},
						},
					},
				}},
			},
		},
	}
}

// at walks obj along keys (map keys, or list indexes as ints) and returns what is there.
func at(obj any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			obj = obj.(map[string]any)[k]
		case int:
			obj = obj.([]any)[k]
		}
	}
	return obj
}

// setAt sets the value at keys (the last one a map key or list index) in obj.
func setAt(obj any, value any, keys ...any) {
	parent := at(obj, keys[:len(keys)-1]...)
	switch k := keys[len(keys)-1].(type) {
	case string:
		if value == nil {
			delete(parent.(map[string]any), k)
			return
		}
		parent.(map[string]any)[k] = value
	case int:
		parent.([]any)[k] = value
	}
}

var (
	yasDeployment  = []any{"spec", "workload", "workloadTemplate", "deploymentTemplate"}
	yasStatefulSet = []any{"spec", "workload", "workloadTemplate", "statefulSetTemplate"}
	yasTweak0      = []any{"spec", "workload", "workloadTweaks", 0}
)

func keysOf(base []any, more ...any) []any { return append(append([]any{}, base...), more...) }

func setTweakPatch(obj map[string]any, patch map[string]any) {
	setAt(obj, []any{patch}, keysOf(yasTweak0, "tweaks", "patches")...)
}

// TestBadInputYurtAppSet: every bad YurtAppSet is refused with 422 naming its field, and nothing is stored
// (a refused create leaves no object, a refused update leaves the object's resourceVersion).
func TestBadInputYurtAppSet(t *testing.T) {
	s := sharedServer(t)
	c := npClient{s: s, client: insecureHTTPClient()}
	t.Cleanup(c.client.CloseIdleConnections)
	ns := newNamespace(t)

	dt := func(keys ...any) []any { return keysOf(yasDeployment, keys...) }
	st := func(keys ...any) []any { return keysOf(yasStatefulSet, keys...) }
	tw := func(keys ...any) []any { return keysOf(yasTweak0, keys...) }
	const dtPath = yasWorkload + ".workloadTemplate.deploymentTemplate"
	const stPath = yasWorkload + ".workloadTemplate.statefulSetTemplate"
	const twPath = yasWorkload + ".workloadTweaks[0]"
	patch := func(path, op string, value any) map[string]any {
		p := map[string]any{"path": path, "operation": op}
		if value != nil {
			p["value"] = value
		}
		return p
	}

	creates := []yasRow{
		// The workload template.
		{name: "no template", field: yasWorkload + ".workloadTemplate",
			mutate: func(o map[string]any) { setAt(o, map[string]any{}, "spec", "workload", "workloadTemplate") }},
		{name: "both templates", field: yasWorkload + ".workloadTemplate", mutate: func(o map[string]any) {
			setAt(o, at(yasManifest("x", true), yasStatefulSet...), yasStatefulSet...)
		}},
		{name: "template without selector", field: dtPath + ".spec.selector", mutate: func(o map[string]any) { setAt(o, nil, dt("spec", "selector")...) }},
		{name: "template with empty selector", field: dtPath + ".spec.selector", mutate: func(o map[string]any) { setAt(o, map[string]any{}, dt("spec", "selector")...) }},
		{name: "selector not matching the pod labels", field: dtPath + ".spec.template.metadata.labels",
			mutate: func(o map[string]any) { setAt(o, "other", dt("spec", "selector", "matchLabels", "app")...) }},
		{name: "selector with a bad operator", field: dtPath + ".spec.selector.matchExpressions[0].operator", mutate: func(o map[string]any) {
			setAt(o, []any{map[string]any{"key": "app", "operator": "Like"}}, dt("spec", "selector", "matchExpressions")...)
		}},
		{name: "container without image", field: dtPath + ".spec.template.spec.containers[0].image",
			mutate: func(o map[string]any) { setAt(o, nil, dt("spec", "template", "spec", "containers", 0, "image")...) }},
		{name: "no containers", field: dtPath + ".spec.template.spec.containers",
			mutate: func(o map[string]any) { setAt(o, []any{}, dt("spec", "template", "spec", "containers")...) }},
		{name: "negative template replicas", field: dtPath + ".spec.replicas", mutate: func(o map[string]any) { setAt(o, -1, dt("spec", "replicas")...) }},
		{name: "restartPolicy Never", field: dtPath + ".spec.template.spec.restartPolicy",
			mutate: func(o map[string]any) { setAt(o, "Never", dt("spec", "template", "spec", "restartPolicy")...) }},
		{name: "activeDeadlineSeconds", field: dtPath + ".spec.template.spec.activeDeadlineSeconds",
			mutate: func(o map[string]any) { setAt(o, 10, dt("spec", "template", "spec", "activeDeadlineSeconds")...) }},
		{name: "unknown strategy", field: dtPath + ".spec.strategy.type", mutate: func(o map[string]any) { setAt(o, map[string]any{"type": "Blue"}, dt("spec", "strategy")...) }},
		{name: "maxUnavailable over 100%", field: dtPath + ".spec.strategy.rollingUpdate.maxUnavailable", mutate: func(o map[string]any) {
			setAt(o, map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": "150%"}}, dt("spec", "strategy")...)
		}},
		{name: "StatefulSet partition", statefulSet: true, field: stPath + ".spec.updateStrategy.rollingUpdate.partition", mutate: func(o map[string]any) {
			setAt(o, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 1}}, st("spec", "updateStrategy")...)
		}},
		{name: "StatefulSet selector not matching", statefulSet: true, field: stPath + ".spec.template.metadata.labels",
			mutate: func(o map[string]any) { setAt(o, "db", st("spec", "selector", "matchLabels", "app")...) }},
		{name: "StatefulSet pod management policy", statefulSet: true, field: stPath + ".spec.podManagementPolicy",
			mutate: func(o map[string]any) { setAt(o, "Random", st("spec", "podManagementPolicy")...) }},
		{name: "StatefulSet with a dotted name", statefulSet: true, field: "metadata.name",
			mutate: func(o map[string]any) { setAt(o, "web.v2-"+ns, "metadata", "name") }},

		// Pool selection and history.
		{name: "negative revisionHistoryLimit", field: "spec.revisionHistoryLimit", mutate: func(o map[string]any) { setAt(o, -1, "spec", "revisionHistoryLimit") }},
		{name: "nodepoolSelector with a bad operator", field: "spec.nodepoolSelector.matchExpressions[0].operator", mutate: func(o map[string]any) {
			setAt(o, map[string]any{"matchExpressions": []any{map[string]any{"key": "zone", "operator": "Near"}}}, "spec", "nodepoolSelector")
		}},
		{name: "nodepoolSelector with a bad key", field: "spec.nodepoolSelector.matchLabels", mutate: func(o map[string]any) {
			setAt(o, map[string]any{"matchLabels": map[string]any{"bad key!": "x"}}, "spec", "nodepoolSelector")
		}},
		{name: "pool name not a DNS label", field: "spec.pools[0]", mutate: func(o map[string]any) { setAt(o, []any{"Bad_Pool"}, "spec", "pools") }},
		{name: "empty pool name", field: "spec.pools[1]", mutate: func(o map[string]any) { setAt(o, []any{"hangzhou", ""}, "spec", "pools") }},
		{name: "pool name too long", field: "spec.pools[0]", mutate: func(o map[string]any) { setAt(o, []any{strings.Repeat("p", 64)}, "spec", "pools") }},
		{name: "name too long for the ref label", field: "metadata.name", mutate: func(o map[string]any) { setAt(o, strings.Repeat("y", 64), "metadata", "name") }},

		// Tweak selection, replicas and images.
		{name: "tweak pool name", field: twPath + ".pools[0]", mutate: func(o map[string]any) { setAt(o, []any{"UPPER"}, tw("pools")...) }},
		{name: "tweak nodepoolSelector", field: twPath + ".nodepoolSelector.matchExpressions[0].operator", mutate: func(o map[string]any) {
			setAt(o, map[string]any{"matchExpressions": []any{map[string]any{"key": "zone", "operator": "Near"}}}, tw("nodepoolSelector")...)
		}},
		{name: "tweak negative replicas", field: twPath + ".tweaks.replicas", mutate: func(o map[string]any) { setAt(o, -3, tw("tweaks", "replicas")...) }},
		{name: "image of a container the template lacks", field: twPath + ".tweaks.containerImages[0].name",
			mutate: func(o map[string]any) { setAt(o, "php", tw("tweaks", "containerImages", 0, "name")...) }},
		{name: "image without target", field: twPath + ".tweaks.containerImages[0].targetImage",
			mutate: func(o map[string]any) { setAt(o, "", tw("tweaks", "containerImages", 0, "targetImage")...) }},
		{name: "image target with spaces", field: twPath + ".tweaks.containerImages[0].targetImage",
			mutate: func(o map[string]any) { setAt(o, "nginx:1.20 ", tw("tweaks", "containerImages", 0, "targetImage")...) }},
		{name: "image without name", field: twPath + ".tweaks.containerImages[0].name",
			mutate: func(o map[string]any) { setAt(o, "", tw("tweaks", "containerImages", 0, "name")...) }},
		{name: "image of a container the StatefulSet lacks", statefulSet: true, field: twPath + ".tweaks.containerImages[0].name",
			mutate: func(o map[string]any) { setAt(o, "sidecar", tw("tweaks", "containerImages", 0, "name")...) }},

		// Patch fields.
		{name: "patch without path", field: twPath + ".tweaks.patches[0].path", mutate: func(o map[string]any) { setTweakPatch(o, patch("", "remove", nil)) }},
		{name: "patch path without slash", field: twPath + ".tweaks.patches[0].path", mutate: func(o map[string]any) { setTweakPatch(o, patch("metadata/labels/a", "remove", nil)) }},
		{name: "patch operation move", field: twPath + ".tweaks.patches[0].operation", mutate: func(o map[string]any) { setTweakPatch(o, patch("/metadata/labels/a", "move", nil)) }},
		{name: "patch without operation", field: twPath + ".tweaks.patches[0].operation", mutate: func(o map[string]any) { setTweakPatch(o, patch("/metadata/labels/a", "", "b")) }},
		{name: "add without value", field: twPath + ".tweaks.patches[0].value", mutate: func(o map[string]any) { setTweakPatch(o, patch("/metadata/labels/a", "add", nil)) }},

		// Patches applied to the rendered workload.
		{name: "add under a missing parent", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) {
				setTweakPatch(o, patch("/spec/template/spec/tolerations/-", "add", map[string]any{"operator": "Exists"}))
			}},
		{name: "remove of a missing key", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) { setTweakPatch(o, patch("/metadata/annotations/missing", "remove", nil)) }},
		{name: "replace past the end of the containers", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) {
				setTweakPatch(o, patch("/spec/template/spec/containers/3/image", "replace", "x:1"))
			}},
		{name: "patch of a field a Deployment lacks", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) { setTweakPatch(o, patch("/spec/serviceName", "add", "web")) }},
		{name: "patch of a field a StatefulSet lacks", statefulSet: true, field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) { setTweakPatch(o, patch("/spec/strategy", "add", map[string]any{})) }},
		{name: "patch value of the wrong type", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) { setTweakPatch(o, patch("/spec/replicas", "replace", "three")) }},
		{name: "patch of the pool label", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) {
				setTweakPatch(o, patch("/metadata/labels/apps.openyurt.io~1pool-name", "replace", "other"))
			}},
		{name: "patch of the kind", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) { setTweakPatch(o, patch("/kind", "replace", "StatefulSet")) }},
		{name: "patch of the selector", field: twPath + ".tweaks.patches[0]",
			mutate: func(o map[string]any) { setTweakPatch(o, patch("/spec/selector/matchLabels/app", "replace", "other")) }},
		{name: "patch making the pods invalid", field: twPath + ".tweaks.patches",
			mutate: func(o map[string]any) {
				setTweakPatch(o, patch("/spec/template/spec/containers/0/image", "replace", ""))
			}},
		{name: "second tweak's patch", field: yasWorkload + ".workloadTweaks[1].tweaks.patches[0]", mutate: func(o map[string]any) {
			tweaks := at(o, "spec", "workload", "workloadTweaks").([]any)
			setAt(o, append(tweaks, map[string]any{"nodepoolSelector": map[string]any{}, "tweaks": map[string]any{
				"patches": []any{patch("/metadata/labels/tier", "remove", nil)}}}), "spec", "workload", "workloadTweaks")
		}},
	}

	// Fixtures for updates, one per row: each row must leave its fixture as it was.
	fixture := func(t *testing.T, statefulSet bool) string {
		t.Helper()
		name := uniqueName(t, "yas")
		body, _ := json.Marshal(yasManifest(name, statefulSet))
		code, out := c.do(t, http.MethodPost, yasPath(ns), ctJSON, body, nil)
		if code != http.StatusCreated {
			t.Fatalf("creating fixture %s: %d %s", name, code, out)
		}
		return name
	}
	updates := []yasRow{
		{name: "put changing the workload kind", method: http.MethodPut, ctype: ctJSON, field: yasWorkload + ".workloadTemplate", mutate: func(o map[string]any) {
			setAt(o, map[string]any{"statefulSetTemplate": at(yasManifest("x", true), yasStatefulSet...)}, "spec", "workload", "workloadTemplate")
		}},
		{name: "put StatefulSet serviceName", statefulSet: true, method: http.MethodPut, ctype: ctJSON, field: stPath + ".spec.serviceName",
			mutate: func(o map[string]any) { setAt(o, "other", st("spec", "serviceName")...) }},
		{name: "merge patch adding a bad patch", method: http.MethodPatch, ctype: ctMP, field: yasWorkload + ".workloadTweaks[0].tweaks.patches[0]",
			body: `{"spec":{"workload":{"workloadTweaks":[{"pools":["hangzhou"],"tweaks":{"patches":[{"path":"/spec/nothing/here","operation":"add","value":1}]}}]}}}`},
		{name: "json patch negative tweak replicas", method: http.MethodPatch, ctype: ctJP, field: twPath + ".tweaks.replicas",
			body: `[{"op":"replace","path":"/spec/workload/workloadTweaks/0/tweaks/replicas","value":-1}]`},
		{name: "strategic merge patch unknown container image", method: http.MethodPatch, ctype: ctSMP, field: twPath + ".tweaks.containerImages[0].name",
			body: `{"spec":{"workload":{"workloadTweaks":[{"pools":["hangzhou"],"tweaks":{"containerImages":[{"name":"ghost","targetImage":"x:1"}]}}]}}}`},
		// spec.pools is a set: the applier's pool joins the creator's, so it is the second entry.
		{name: "apply with a bad pool", method: http.MethodPatch, ctype: ctApply, field: "spec.pools[1]"},
		{name: "status with negative counts", status: true, method: http.MethodPut, ctype: ctJSON, field: "status.totalWorkloads",
			mutate: func(o map[string]any) { setAt(o, map[string]any{"totalWorkloads": -1}, "status") }},
		{name: "status with an unknown condition", status: true, method: http.MethodPut, ctype: ctJSON, field: "status.conditions[0].type",
			mutate: func(o map[string]any) {
				setAt(o, map[string]any{"conditions": []any{map[string]any{"type": "AppGone", "status": "True"}}}, "status")
			}},
	}

	n := 0
	for _, r := range creates {
		t.Run("create/"+r.name, func(t *testing.T) {
			n++
			name := fmt.Sprintf("bad-%d", n)
			obj := yasManifest(name, r.statefulSet)
			r.mutate(obj)
			name = at(obj, "metadata", "name").(string)
			body, _ := json.Marshal(obj)
			code, out := c.do(t, http.MethodPost, yasPath(ns), ctJSON, body, nil)
			expectInvalid(t, code, out, r.field)
			if got, _ := c.do(t, http.MethodGet, yasPath(ns)+"/"+name, "", nil, nil); got != http.StatusNotFound {
				t.Errorf("a refused create stored %s: GET answered %d", name, got)
			}
		})
	}
	for _, r := range updates {
		t.Run("update/"+r.name, func(t *testing.T) {
			name := fixture(t, r.statefulSet)
			path := yasPath(ns) + "/" + name
			before := c.get(t, path)
			body := []byte(r.body)
			if r.mutate != nil {
				obj := c.get(t, path)
				r.mutate(obj)
				body, _ = json.Marshal(obj)
			}
			if r.ctype == ctApply {
				manifest := yasManifest(name, r.statefulSet)
				setAt(manifest, []any{"Bad_Pool"}, "spec", "pools")
				body, _ = json.Marshal(manifest)
			}
			target := path
			if r.status {
				target += "/status"
			}
			params := map[string]string{}
			if r.ctype == ctApply {
				params = map[string]string{"fieldManager": "yas-bad-input", "force": "true"}
			}
			code, out := c.do(t, r.method, target, r.ctype, body, params)
			expectInvalid(t, code, out, r.field)
			after := c.get(t, path)
			if rvB, rvA := at(before, "metadata", "resourceVersion"), at(after, "metadata", "resourceVersion"); rvB != rvA {
				t.Errorf("a refused update changed the object: resourceVersion %v -> %v", rvB, rvA)
			}
		})
	}
	if total := len(creates) + len(updates); total < 40 {
		t.Errorf("%d bad inputs, want at least 40", total)
	} else {
		t.Logf("%d bad inputs (%d creates, %d updates)", total, len(creates), len(updates))
	}
}

// expectInvalid fails unless the answer is a 422 Status naming field in a cause (or its message).
func expectInvalid(t *testing.T, code int, out []byte, field string) {
	t.Helper()
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("answered %d, want 422: %.800s", code, out)
	}
	var st metav1.Status
	if err := json.Unmarshal(out, &st); err != nil || st.Kind != "Status" || st.Code != http.StatusUnprocessableEntity {
		t.Fatalf("the 422 is not a Status: %.400s", out)
	}
	if st.Details != nil {
		for _, cause := range st.Details.Causes {
			if cause.Field == field {
				return
			}
		}
	}
	t.Errorf("no cause names %s: %.800s", field, out)
}
