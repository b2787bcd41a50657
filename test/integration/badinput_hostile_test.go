package integration

import (
	"fmt"
	"net/http"
	"strings"
)

// badEnv is what the rows of hostileRows need to know about TestBadInput's fixtures.
type badEnv struct {
	ns, poolName                        string
	tappsPath, yadsPath, poolsA, poolsB string
	tappBody                            func(name, spec string) string
	validTAppSpec                       func(extra string) string
	yadBody                             func(name, spec string) string
	validYADSpec                        func(extra string) string
	poolBody                            func(version, name, spec string) string
}

// hostileRows are the requests of the hardening issue: strategic merge patches on templatePool, client
// errors the generic store answered 500, bounded validation, status writes that would wedge an object,
// metadata and spec mistakes through every patch type, and list/watch parameters.
func hostileRows(e badEnv) []badRow {
	var rows []badRow
	add := func(r badRow) { rows = append(rows, r) }
	addCreate := func(r badRow, coll, name string) {
		r.method, r.path, r.created = http.MethodPost, coll, coll+"/"+name
		add(r)
	}
	targets := []string{"tapp", "yad", "poolA", "poolB"}
	collections := map[string]string{"tapp": e.tappsPath, "yad": e.yadsPath, "poolA": e.poolsA, "poolB": e.poolsB}
	fm := map[string]string{"fieldManager": "bad-input", "force": "true"}
	applyBody := map[string]func(spec string) string{
		"tapp":  func(spec string) string { return e.tappBody("bad", spec) },
		"yad":   func(spec string) string { return e.yadBody("bad", spec) },
		"poolA": func(spec string) string { return e.poolBody("v1alpha1", e.poolName, spec) },
		"poolB": func(spec string) string { return e.poolBody("v1beta1", e.poolName, spec) },
	}

	// Strategic merge patches on an existing templatePool entry ("test"): merged as spec.template is.
	pool := func(entry string) string { return `{"spec":{"templatePool":{"test":` + entry + `}}}` }
	for _, c := range []struct {
		name, body string
		code       int
		field      string
	}{
		{"entry container without image", pool(`{"spec":{"containers":[{"name":"c2"}]}}`), 422, "spec.templatePool[test].spec.containers[0].image"},
		{"entry delete the only container", pool(`{"spec":{"containers":[{"name":"nginx","$patch":"delete"}]}}`), 422, "spec.templatePool[test].spec.containers"},
		{"entry labels leave the selector", pool(`{"metadata":{"labels":{"app":"other"}}}`), 422, "spec.templatePool[test].metadata.labels"},
		{"entry image with spaces", pool(`{"spec":{"containers":[{"name":"nginx","image":"bad image"}]}}`), 422, "spec.templatePool[test].spec.containers[0].image"},
		{"entry unknown directive", pool(`{"$patch":"frobnicate"}`), 400, ""},
		{"entry unknown list directive", pool(`{"spec":{"containers":[{"name":"nginx","$patch":"frobnicate"}]}}`), 400, ""},
		{"entry delete with other keys", pool(`{"$patch":"delete","spec":{}}`), 400, ""},
		{"entry malformed setElementOrder", pool(`{"spec":{"$setElementOrder/containers":"nginx","containers":[{"name":"nginx","image":"x"}]}}`), 400, ""},
		{"entry merge key is an object", pool(`{"spec":{"containers":[{"name":{}}]}}`), 400, ""},
		{"entry not an object", pool(`"nginx"`), 422, ""},
		{"pool unknown directive", `{"spec":{"templatePool":{"$patch":"frobnicate"}}}`, 400, ""},
		{"pool entry named default", `{"spec":{"templatePool":{"default":{"metadata":{"labels":{"app":"bad"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}}`, 422, "spec.templatePool[default]"},
		{"pool delete a used entry", `{"spec":{"templates":{"0":"test"},"templatePool":{"test":{"$patch":"delete"}}}}`, 422, "spec.templates[0]"},
		{"pool with a stale resourceVersion", `{"metadata":{"resourceVersion":"1"},"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}}`, 409, ""},
		{"pool strict unknown field", pool(`{"spec":{"bogus":1}}`), 422, "bogus"},
	} {
		params := map[string]string(nil)
		if strings.Contains(c.name, "strict") {
			params = map[string]string{"fieldValidation": "Strict"}
		}
		add(badRow{class: "smp templatePool", name: c.name, method: "PATCH", ctype: ctSMP, body: c.body, params: params, code: c.code, field: c.field, target: "tapp"})
	}
	add(badRow{class: "smp templatePool", name: "status entry unknown directive", method: "PATCH", path: "/status", ctype: ctSMP, body: pool(`{"$patch":"frobnicate"}`), code: 400, target: "tapp"})

	// Patch documents the merge code refuses, on every resource and status.
	for _, tgt := range targets {
		for _, sub := range []string{"", "/status"} {
			add(badRow{class: "smp directives", name: "unknown map directive" + sub, method: "PATCH", path: sub, ctype: ctSMP, body: `{"metadata":{"$patch":"frobnicate"}}`, code: 400, target: tgt})
			add(badRow{class: "smp directives", name: "setElementOrder not a list" + sub, method: "PATCH", path: sub, ctype: ctSMP, body: `{"metadata":{"$setElementOrder/ownerReferences":"u","ownerReferences":[{"uid":"u","name":"n","kind":"K","apiVersion":"v1"}]}}`, code: 400, target: tgt})
			add(badRow{class: "smp directives", name: "merge key is an object" + sub, method: "PATCH", path: sub, ctype: ctSMP, body: `{"metadata":{"ownerReferences":[{"uid":{}}]}}`, code: 422, target: tgt})
			add(badRow{class: "smp directives", name: "unknown directive in labels" + sub, method: "PATCH", path: sub, ctype: ctSMP, body: `{"metadata":{"labels":{"$patch":"frobnicate"}}}`, code: 400, target: tgt})
		}
		add(badRow{class: "smp directives", name: "retainKeys not a list", method: "PATCH", ctype: ctSMP, body: `{"metadata":{"$retainKeys":"labels"}}`, code: 400, target: tgt})
		add(badRow{class: "smp directives", name: "setElementOrder of a map", method: "PATCH", ctype: ctSMP, body: `{"$setElementOrder/metadata":[{"name":"x"}]}`, code: 400, target: tgt})
	}

	// resourceVersion mistakes (the generic store answered 500).
	for _, tgt := range targets {
		for _, sub := range []string{"", "/status"} {
			add(badRow{class: "resourceVersion", name: "merge patch abc" + sub, method: "PATCH", path: sub, ctype: ctMP, body: `{"metadata":{"resourceVersion":"abc"}}`, code: 422, field: "metadata.resourceVersion", target: tgt})
			add(badRow{class: "resourceVersion", name: "json patch abc" + sub, method: "PATCH", path: sub, ctype: ctJP, body: `[{"op":"replace","path":"/metadata/resourceVersion","value":"abc"}]`, code: 422, field: "metadata.resourceVersion", target: tgt})
			add(badRow{class: "resourceVersion", name: "put abc" + sub, method: "PUT", path: sub, ctype: ctJSON, mutate: set("metadata.resourceVersion", "abc"), code: 422, field: "metadata.resourceVersion", target: tgt})
			add(badRow{class: "resourceVersion", name: "strategic -1" + sub, method: "PATCH", path: sub, ctype: ctSMP, body: `{"metadata":{"resourceVersion":"-1"}}`, code: 422, field: "metadata.resourceVersion", target: tgt})
		}
	}
	addCreate(badRow{class: "resourceVersion", name: "create tapp with one", ctype: ctJSON, body: `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"rv1","resourceVersion":"12"},"spec":` + e.validTAppSpec("") + `}`, code: 422, field: "metadata.resourceVersion"}, e.tappsPath, "rv1")
	addCreate(badRow{class: "resourceVersion", name: "create yad with one", ctype: ctJSON, body: `{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"YurtAppDaemon","metadata":{"name":"rv2","resourceVersion":"12"},"spec":` + e.validYADSpec("") + `}`, code: 422, field: "metadata.resourceVersion"}, e.yadsPath, "rv2")
	addCreate(badRow{class: "resourceVersion", name: "create poolA with one", ctype: ctJSON, body: `{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"NodePool","metadata":{"name":"rv3","resourceVersion":"12"}}`, code: 422, field: "metadata.resourceVersion"}, e.poolsA, "rv3")
	addCreate(badRow{class: "resourceVersion", name: "create poolB with abc", ctype: ctJSON, body: `{"apiVersion":"apps.openyurt.io/v1beta1","kind":"NodePool","metadata":{"name":"rv4","resourceVersion":"abc"}}`, code: 422, field: "metadata.resourceVersion"}, e.poolsB, "rv4")
	add(badRow{class: "resourceVersion", name: "scale put abc", method: "PUT", path: "/scale", ctype: ctJSON, body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"bad","namespace":%q,"resourceVersion":"abc"},"spec":{"replicas":2}}`, e.ns), code: 422, field: "metadata.resourceVersion", target: "tapp"})

	// Server-side apply bodies the schema refuses (the type converter answered 500).
	for _, tgt := range targets {
		add(badRow{class: "apply schema", name: "unknown field", method: "PATCH", ctype: ctApply, body: applyBody[tgt](`{"bogus":1}`), params: fm, code: 422, field: "spec.bogus", target: tgt})
		add(badRow{class: "apply schema", name: "unknown nested field", method: "PATCH", ctype: ctApply, body: applyBody[tgt](`{"selector":{"bogus":1}}`), params: fm, code: 422, field: "spec.selector.bogus", target: tgt})
		add(badRow{class: "apply schema", name: "labels a list", method: "PATCH", ctype: ctApply, body: strings.Replace(applyBody[tgt](`{}`), `"metadata":{`, `"metadata":{"labels":["a"],`, 1), params: fm, code: 422, field: "metadata.labels", target: tgt})
		add(badRow{class: "apply schema", name: "status unknown field", method: "PATCH", path: "/status", ctype: ctApply, body: strings.Replace(applyBody[tgt](`{}`), `"spec":{}`, `"status":{"bogus":1}`, 1), params: fm, code: 422, field: "status.bogus", target: tgt})
	}
	add(badRow{class: "apply schema", name: "replicas true", method: "PATCH", ctype: ctApply, body: e.tappBody("bad", `{"replicas":true}`), params: fm, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "apply schema", name: "replicas a string", method: "PATCH", ctype: ctApply, body: e.tappBody("bad", `{"replicas":"two"}`), params: fm, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "apply schema", name: "templates a list", method: "PATCH", ctype: ctApply, body: e.tappBody("bad", `{"templates":["a"]}`), params: fm, code: 422, field: "spec.templates", target: "tapp"})
	add(badRow{class: "apply schema", name: "pool entry a string", method: "PATCH", ctype: ctApply, body: e.tappBody("bad", `{"templatePool":{"test":"x"}}`), params: fm, code: 422, field: "spec.templatePool", target: "tapp"})
	add(badRow{class: "apply schema", name: "yad limit a string", method: "PATCH", ctype: ctApply, body: e.yadBody("bad", `{"revisionHistoryLimit":"ten"}`), params: fm, code: 422, field: "spec.revisionHistoryLimit", target: "yad"})
	add(badRow{class: "apply schema", name: "poolB hostNetwork a string", method: "PATCH", ctype: ctApply, body: e.poolBody("v1beta1", e.poolName, `{"hostNetwork":"yes"}`), params: fm, code: 422, field: "spec.hostNetwork", target: "poolB"})
	add(badRow{class: "apply schema", name: "poolA taints an object", method: "PATCH", ctype: ctApply, body: e.poolBody("v1alpha1", e.poolName, `{"taints":{"key":"k"}}`), params: fm, code: 422, field: "spec.taints", target: "poolA"})
	add(badRow{class: "apply schema", name: "scale unknown field", method: "PATCH", path: "/scale", ctype: ctApply, body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"bad","namespace":%q},"spec":{"replicas":2,"bogus":1}}`, e.ns), params: fm, code: 422, field: "spec.bogus", target: "tapp"})

	many := func(n int, key func(i int) string, value string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `%q:%s`, key(i), value)
		}
		return b.String()
	}
	// Objects larger than etcd takes (below the 3 MiB body limit): 413, not an etcd error.
	twoMiB := strings.Repeat("x", 2*1024*1024)
	addCreate(badRow{class: "too large to store", name: "create tapp 2MiB", ctype: ctJSON, body: e.tappBody("huge1", `{"replicas":1,"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx","args":["`+twoMiB+`"]}]}}}`), code: 413}, e.tappsPath, "huge1")
	addCreate(badRow{class: "too large to store", name: "create yad 2MiB", ctype: ctJSON, body: e.yadBody("huge2", strings.Replace(e.validYADSpec(""), `"image":"nginx"`, `"image":"nginx","args":["`+twoMiB+`"]`, 1)), code: 413}, e.yadsPath, "huge2")
	addCreate(badRow{class: "too large to store", name: "create poolB 2MiB", ctype: ctJSON, body: e.poolBody("v1beta1", "huge3", `{"taints":[{"key":"k","value":"v","effect":"NoSchedule"}],"selector":{"matchExpressions":[{"key":"k","operator":"In","values":["`+strings.Repeat(`a","`, 600000)+`a"]}]}}`), code: 413}, e.poolsB, "huge3")
	add(badRow{class: "too large to store", name: "tapp merge patch 2MiB", method: "PATCH", ctype: ctMP, body: `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx","args":["` + twoMiB + `"]}]}}}}`, code: 413, target: "tapp"})
	add(badRow{class: "too large to store", name: "tapp strategic pool 2MiB", method: "PATCH", ctype: ctSMP, body: pool(`{"spec":{"containers":[{"name":"nginx","args":["` + twoMiB + `"]}]}}`), code: 413, target: "tapp"})
	add(badRow{class: "too large to store", name: "tapp apply 2MiB", method: "PATCH", ctype: ctApply, body: e.tappBody("bad", `{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.7.9","args":["`+twoMiB+`"]}]}}}`), params: fm, code: 413, target: "tapp"})
	add(badRow{class: "too large to store", name: "yad put 2MiB", method: "PUT", ctype: ctJSON, mutate: set("spec.workloadTemplate.deploymentTemplate.spec.template.spec.initContainers",
		[]any{map[string]any{"name": "init", "image": "busybox", "args": []any{twoMiB}}}), code: 413, target: "yad"})
	var conditions []string
	for i := 0; i < 55; i++ {
		conditions = append(conditions, fmt.Sprintf(`{"type":"T%d","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"R","message":%q}`, i, strings.Repeat("m", 30000)))
	}
	add(badRow{class: "too large to store", name: "tapp status 1.6MB", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"conditions":[` + strings.Join(conditions, ",") + `]}}`, code: 413, target: "tapp"})

	// Bounded validation: bodies with many errors answer one bounded Status.
	addCreate(badRow{class: "bounded validation", name: "50000 templates naming a missing template", ctype: ctJSON, body: e.tappBody("many1", e.validTAppSpec(`"templates":{`+many(50000, func(i int) string { return fmt.Sprint(i) }, `"missing"`)+`},`)), code: 422, field: "and 49990 more errors", maxBody: 16 * 1024}, e.tappsPath, "many1")
	addCreate(badRow{class: "bounded validation", name: "50000 statuses keys no ids", ctype: ctJSON, body: e.tappBody("many2", e.validTAppSpec(`"statuses":{`+many(50000, func(i int) string { return fmt.Sprintf("x%d", i) }, `"Killed"`)+`},`)), code: 422, field: "spec.statuses", maxBody: 16 * 1024}, e.tappsPath, "many2")
	add(badRow{class: "bounded validation", name: "20000 status keys no ids", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"statuses":{` + many(20000, func(i int) string { return fmt.Sprintf("-%d", i) }, `"Running"`) + `}}}`, code: 422, field: "status.statuses", maxBody: 16 * 1024, target: "tapp"})
	addCreate(badRow{class: "bounded validation", name: "150000 statuses keys no ids (2 MB)", ctype: ctJSON, body: e.tappBody("many4", e.validTAppSpec(`"statuses":{`+many(150000, func(i int) string { return fmt.Sprintf("x%d", i) }, `"Killed"`)+`},`)), code: 422, field: "150000 keys are not instance ids", maxBody: 16 * 1024}, e.tappsPath, "many4")
	add(badRow{class: "bounded validation", name: "merge patch of 100000 template keys no ids", method: "PATCH", ctype: ctMP, body: `{"spec":{"templates":{` + many(100000, func(i int) string { return fmt.Sprintf("-%d", i) }, `"test"`) + `}}}`, code: 422, field: "spec.templates", maxBody: 16 * 1024, target: "tapp"})
	add(badRow{class: "bounded validation", name: "strategic patch of 100000 status keys no ids", method: "PATCH", path: "/status", ctype: ctSMP, body: `{"status":{"statuses":{` + many(100000, func(i int) string { return fmt.Sprintf("0%d", i) }, `"Running"`) + `}}}`, code: 422, field: "status.statuses", maxBody: 16 * 1024, target: "tapp"})
	add(badRow{class: "bounded validation", name: "5000 bad node names", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"nodes":["` + strings.Repeat(`BAD NAME!","`, 4999) + `BAD"]}}`, code: 422, field: "more errors", maxBody: 16 * 1024, target: "poolB"})
	addCreate(badRow{class: "bounded validation", name: "3000 bad pool entries", ctype: ctJSON, body: e.tappBody("many3", e.validTAppSpec(`"templatePool":{`+many(3000, func(i int) string { return fmt.Sprintf("p%d", i) }, `{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c"}]}}`)+`},`)), code: 422, field: "more errors", maxBody: 16 * 1024}, e.tappsPath, "many3")

	// Status writes that would wedge the object, and status values out of bounds.
	add(badRow{class: "status bounds", name: "tapp status id 100000", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"statuses":{"100000":"Running"}}}`, code: 422, field: "status.statuses[100000]", target: "tapp"})
	add(badRow{class: "status bounds", name: "tapp status id with leading zero", method: "PATCH", path: "/status", ctype: ctSMP, body: `{"status":{"statuses":{"01":"Running"}}}`, code: 422, field: "status.statuses[01]", target: "tapp"})
	add(badRow{class: "status bounds", name: "tapp status unknown instance state", method: "PATCH", path: "/status", ctype: ctJP, body: `[{"op":"add","path":"/status/statuses","value":{"0":"Sleeping"}}]`, code: 422, field: "status.statuses[0]", target: "tapp"})
	add(badRow{class: "status bounds", name: "tapp status app state", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"appStatus":"Sleeping"}}`, code: 422, field: "status.appStatus", target: "tapp"})
	add(badRow{class: "status bounds", name: "tapp status negative counters", method: "PATCH", path: "/status", ctype: ctSMP, body: `{"status":{"readyReplicas":-1,"updatedReplicas":-2}}`, code: 422, field: "status.readyReplicas", target: "tapp"})
	add(badRow{class: "status bounds", name: "tapp status bad condition", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"conditions":[{"type":"bad type!","status":"Maybe","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"r"}]}}`, code: 422, field: "status.conditions[0]", target: "tapp"})
	add(badRow{class: "status bounds", name: "long tapp name, high status id", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"statuses":{"99999":"Running"}}}`, code: 422, field: "status.statuses", target: "long"})
	add(badRow{class: "status bounds", name: "long tapp name, high status id (json patch)", method: "PATCH", path: "/status", ctype: ctJP, body: `[{"op":"add","path":"/status/statuses","value":{"99999":"Running"}}]`, code: 422, field: "status.statuses", target: "long"})
	add(badRow{class: "status bounds", name: "long tapp name, high status id (put)", method: "PUT", path: "/status", ctype: ctJSON, mutate: set("status.statuses", map[string]any{"99999": "Running"}), code: 422, field: "status.statuses", target: "long"})
	for _, tgt := range []string{"poolA", "poolB"} {
		add(badRow{class: "status bounds", name: "node name with spaces", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"nodes":["BAD NAME!"]}}`, code: 422, field: "status.nodes[0]", target: tgt})
		add(badRow{class: "status bounds", name: "node name empty", method: "PATCH", path: "/status", ctype: ctSMP, body: `{"status":{"nodes":["n1",""]}}`, code: 422, field: "status.nodes[1]", target: tgt})
		add(badRow{class: "status bounds", name: "node name too long", method: "PATCH", path: "/status", ctype: ctJP, body: `[{"op":"add","path":"/status/nodes","value":["` + strings.Repeat("n", 254) + `"]}]`, code: 422, field: "status.nodes[0]", target: tgt})
		add(badRow{class: "status bounds", name: "node name duplicate", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"nodes":["n1","n1"]}}`, code: 422, field: "status.nodes[1]", target: tgt})
	}
	add(badRow{class: "status bounds", name: "yad collisionCount negative", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"collisionCount":-1}}`, code: 422, field: "status.collisionCount", target: "yad"})
	add(badRow{class: "status bounds", name: "yad condition type", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"conditions":[{"type":"Bogus","status":"True"}]}}`, code: 422, field: "status.conditions[0].type", target: "yad"})
	add(badRow{class: "status bounds", name: "yad duplicate pools", method: "PATCH", path: "/status", ctype: ctSMP, body: `{"status":{"nodepools":["a","a"]}}`, code: 422, field: "status.nodepools[1]", target: "yad"})
	add(badRow{class: "status bounds", name: "yad template type", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"templateType":"DaemonSet"}}`, code: 422, field: "status.templateType", target: "yad"})

	// Metadata mistakes through every patch type, on every resource.
	for _, tgt := range targets {
		for _, pt := range []struct{ name, ctype string }{{"merge", ctMP}, {"strategic", ctSMP}} {
			add(badRow{class: "metadata", name: pt.name + " label key", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"labels":{"bad key!":"v"}}}`, code: 422, field: "metadata.labels", target: tgt})
			add(badRow{class: "metadata", name: pt.name + " label value", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"labels":{"k":"` + strings.Repeat("v", 64) + `"}}}`, code: 422, field: "metadata.labels", target: tgt})
			add(badRow{class: "metadata", name: pt.name + " annotation key", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"annotations":{"bad key!":"v"}}}`, code: 422, field: "metadata.annotations", target: tgt})
			add(badRow{class: "metadata", name: pt.name + " annotations too large", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"annotations":{"k":"` + strings.Repeat("v", 300*1024) + `"}}}`, code: 422, field: "metadata.annotations", target: tgt})
			add(badRow{class: "metadata", name: pt.name + " finalizer", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"finalizers":["bad finalizer!"]}}`, code: 422, field: "metadata.finalizers", target: tgt})
			add(badRow{class: "metadata", name: pt.name + " owner without uid", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":""}]}}`, code: 422, field: "metadata.ownerReferences", target: tgt})
			add(badRow{class: "metadata", name: pt.name + " uid change", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"uid":"00000000-0000-0000-0000-000000000000"}}`, code: 422, field: "metadata.uid", target: tgt})
			add(badRow{class: "metadata", name: pt.name + " name change", method: "PATCH", ctype: pt.ctype, body: `{"metadata":{"name":"other"}}`, code: 400, target: tgt})
		}
		add(badRow{class: "metadata", name: "json patch label key", method: "PATCH", ctype: ctJP, body: `[{"op":"add","path":"/metadata/labels","value":{"bad key!":"v"}}]`, code: 422, field: "metadata.labels", target: tgt})
		if !strings.HasPrefix(tgt, "pool") {
			add(badRow{class: "metadata", name: "json patch namespace change", method: "PATCH", ctype: ctJP, body: `[{"op":"add","path":"/metadata/namespace","value":"other"}]`, code: 400, target: tgt})
		} else {
			add(badRow{class: "metadata", name: "json patch name change", method: "PATCH", ctype: ctJP, body: `[{"op":"replace","path":"/metadata/name","value":"other"}]`, code: 400, target: tgt})
		}
		add(badRow{class: "metadata", name: "json patch creationTimestamp a number", method: "PATCH", ctype: ctJP, body: `[{"op":"replace","path":"/metadata/creationTimestamp","value":12}]`, code: 422, target: tgt})
		add(badRow{class: "metadata", name: "apply label key", method: "PATCH", ctype: ctApply, body: strings.Replace(applyBody[tgt](`{}`), `"metadata":{`, `"metadata":{"labels":{"bad key!":"v"},`, 1), params: fm, code: 422, field: "metadata.labels", target: tgt})
		add(badRow{class: "metadata", name: "apply kind mismatch", method: "PATCH", ctype: ctApply, body: strings.Replace(applyBody[tgt](`{}`), `"kind":"`, `"kind":"X`, 1), params: fm, code: 400, target: tgt})
	}

	// TApp spec values out of bounds, through three patch types.
	for _, c := range []struct {
		name, mp, field string
		jp              string
	}{
		{"replicas 100001", `{"spec":{"replicas":100001}}`, "spec.replicas", `[{"op":"replace","path":"/spec/replicas","value":100001}]`},
		{"template id out of range", `{"spec":{"templates":{"100000":"test"}}}`, "spec.templates[100000]", `[{"op":"add","path":"/spec/templates","value":{"100000":"test"}}]`},
		{"statuses value", `{"spec":{"statuses":{"0":"Running"}}}`, "spec.statuses[0]", `[{"op":"add","path":"/spec/statuses","value":{"0":"Running"}}]`},
		{"maxUnavailable 0", `{"spec":{"updateStrategy":{"maxUnavailable":0}}}`, "spec.updateStrategy.maxUnavailable", `[{"op":"replace","path":"/spec/updateStrategy/maxUnavailable","value":0}]`},
		{"maxUnavailable 150%", `{"spec":{"updateStrategy":{"maxUnavailable":"150%"}}}`, "spec.updateStrategy.maxUnavailable", `[{"op":"replace","path":"/spec/updateStrategy/maxUnavailable","value":"150%"}]`},
		{"force maxUnavailable", `{"spec":{"updateStrategy":{"forceUpdate":{"maxUnavailable":"x"}}}}`, "spec.updateStrategy.forceUpdate.maxUnavailable", `[{"op":"add","path":"/spec/updateStrategy/forceUpdate","value":{"maxUnavailable":"x"}}]`},
		{"serviceName", `{"spec":{"serviceName":"Bad_Svc"}}`, "spec.serviceName", `[{"op":"add","path":"/spec/serviceName","value":"Bad_Svc"}]`},
		{"update template missing", `{"spec":{"updateStrategy":{"template":"missing"}}}`, "spec.updateStrategy.template", `[{"op":"add","path":"/spec/updateStrategy/template","value":"missing"}]`},
		{"default template missing", `{"spec":{"defaultTemplateName":"missing"}}`, "spec.defaultTemplateName", `[{"op":"replace","path":"/spec/defaultTemplateName","value":"missing"}]`},
		{"legacy key conflict", `{"spec":{"defaultTemplateName":"test","DefaultTemplateName":"default"}}`, "spec.DefaultTemplateName", `[{"op":"replace","path":"/spec/defaultTemplateName","value":"test"},{"op":"add","path":"/spec/DefaultTemplateName","value":"default"}]`},
		{"container name", `{"spec":{"template":{"spec":{"containers":[{"name":"Bad_Name","image":"nginx"}]}}}}`, "spec.template.spec.containers", `[{"op":"replace","path":"/spec/template/spec/containers/0/name","value":"Bad_Name"}]`},
		{"restart policy", `{"spec":{"template":{"spec":{"restartPolicy":"Sometimes"}}}}`, "spec.template.spec.restartPolicy", `[{"op":"add","path":"/spec/template/spec/restartPolicy","value":"Sometimes"}]`},
		{"port protocol", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx","ports":[{"containerPort":80,"protocol":"HTTP"}]}]}}}}`, "spec.template.spec.containers[0].ports[0].protocol", `[{"op":"add","path":"/spec/template/spec/containers/0/ports","value":[{"containerPort":80,"protocol":"HTTP"}]}]`},
		{"claim without storage", `{"spec":{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"]}}]}}`, "spec.volumeClaimTemplates[0].spec.resources.requests[storage]", `[{"op":"add","path":"/spec/volumeClaimTemplates","value":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"]}}]}]`},
	} {
		add(badRow{class: "tapp spec", name: c.name + " (merge)", method: "PATCH", ctype: ctMP, body: c.mp, code: 422, field: c.field, target: "tapp"})
		add(badRow{class: "tapp spec", name: c.name + " (json)", method: "PATCH", ctype: ctJP, body: c.jp, code: 422, field: c.field, target: "tapp"})
		if !strings.Contains(c.name, "container name") {
			add(badRow{class: "tapp spec", name: c.name + " (strategic)", method: "PATCH", ctype: ctSMP, body: c.mp, code: 422, field: c.field, target: "tapp"})
		}
	}

	// YurtAppDaemon and NodePool spec values out of bounds.
	for _, c := range []struct{ name, body, field string }{
		{"nodepool selector operator", `{"spec":{"nodepoolSelector":{"matchExpressions":[{"key":"k","operator":"Near"}]}}}`, "spec.nodepoolSelector"},
		{"revisionHistoryLimit negative", `{"spec":{"revisionHistoryLimit":-1}}`, "spec.revisionHistoryLimit"},
		{"deployment replicas negative", `{"spec":{"workloadTemplate":{"deploymentTemplate":{"spec":{"replicas":-1}}}}}`, "spec.workloadTemplate.deploymentTemplate.spec.replicas"},
		{"container image empty", `{"spec":{"workloadTemplate":{"deploymentTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":""}]}}}}}}}`, "spec.workloadTemplate.deploymentTemplate.spec.template.spec.containers[0].image"},
		{"strategy type", `{"spec":{"workloadTemplate":{"deploymentTemplate":{"spec":{"strategy":{"type":"Sideways"}}}}}}`, "spec.workloadTemplate.deploymentTemplate.spec.strategy"},
	} {
		add(badRow{class: "yad spec", name: c.name + " (merge)", method: "PATCH", ctype: ctMP, body: c.body, code: 422, field: c.field, target: "yad"})
		add(badRow{class: "yad spec", name: c.name + " (strategic)", method: "PATCH", ctype: ctSMP, body: c.body, code: 422, field: c.field, target: "yad"})
	}
	for _, tgt := range []string{"poolA", "poolB"} {
		for _, c := range []struct{ name, body, field string }{
			{"taint without key", `{"spec":{"taints":[{"effect":"NoSchedule"}]}}`, "spec.taints[0].key"},
			{"taint value", `{"spec":{"taints":[{"key":"k","value":"bad value!","effect":"NoSchedule"}]}}`, "spec.taints[0].value"},
			{"duplicate taints", `{"spec":{"taints":[{"key":"k","effect":"NoSchedule"},{"key":"k","effect":"NoSchedule"}]}}`, "spec.taints[1]"},
			{"selector operator", `{"spec":{"selector":{"matchExpressions":[{"key":"k","operator":"Near"}]}}}`, "spec.selector"},
			{"annotation key", `{"spec":{"annotations":{"bad key!":"v"}}}`, "spec.annotations"},
		} {
			add(badRow{class: "nodepool spec", name: c.name + " (merge)", method: "PATCH", ctype: ctMP, body: c.body, code: 422, field: c.field, target: tgt})
			add(badRow{class: "nodepool spec", name: c.name + " (strategic)", method: "PATCH", ctype: ctSMP, body: c.body, code: 422, field: c.field, target: tgt})
		}
	}

	// Scale subresource.
	add(badRow{class: "scale", name: "merge 100001", method: "PATCH", path: "/scale", ctype: ctMP, body: `{"spec":{"replicas":100001}}`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "scale", name: "strategic negative", method: "PATCH", path: "/scale", ctype: ctSMP, body: `{"spec":{"replicas":-1}}`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "scale", name: "strategic unknown directive", method: "PATCH", path: "/scale", ctype: ctSMP, body: `{"spec":{"$patch":"frobnicate"}}`, code: 400, target: "tapp"})
	add(badRow{class: "scale", name: "apply negative", method: "PATCH", path: "/scale", ctype: ctApply, body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"bad","namespace":%q},"spec":{"replicas":-3}}`, e.ns), params: fm, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "scale", name: "json patch remove spec", method: "PATCH", path: "/scale", ctype: ctJP, body: `[{"op":"remove","path":"/spec/nothere"}]`, code: 422, target: "tapp"})

	// List and watch parameters, on every collection.
	for _, tgt := range targets {
		coll := collections[tgt]
		for _, c := range []struct {
			name   string
			params map[string]string
			code   int
		}{
			{"list resourceVersion abc", map[string]string{"resourceVersion": "abc"}, 400},
			{"watch resourceVersion abc", map[string]string{"watch": "true", "resourceVersion": "abc"}, 400},
			{"watch resourceVersion -1", map[string]string{"watch": "true", "resourceVersion": "-1"}, 400},
			{"label selector", map[string]string{"labelSelector": "a in ("}, 400},
			{"field selector unknown field", map[string]string{"fieldSelector": "spec.bogus=1"}, 400},
			{"field selector syntax", map[string]string{"fieldSelector": "a==b==c"}, 400},
			{"timeoutSeconds", map[string]string{"timeoutSeconds": "abc"}, 400},
			{"limit", map[string]string{"limit": "abc"}, 400},
			{"continue token", map[string]string{"limit": "1", "continue": "garbage"}, 400},
			{"resourceVersionMatch without resourceVersion", map[string]string{"resourceVersionMatch": "Exact"}, 422},
			{"resourceVersionMatch unknown", map[string]string{"resourceVersionMatch": "Bogus", "resourceVersion": "1"}, 422},
		} {
			if strings.HasPrefix(tgt, "pool") && c.name == "field selector unknown field" {
				c.params = map[string]string{"fieldSelector": "metadata.namespace=x,spec.bogus=1"}
			}
			add(badRow{class: "list and watch", name: c.name, method: http.MethodGet, path: coll, params: c.params, code: c.code, target: tgt, absolute: true})
		}
	}
	return rows
}
