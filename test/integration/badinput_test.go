package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// badRow is one hostile or careless request and what the server must answer.
type badRow struct {
	class  string
	name   string
	method string
	// path is relative to the object named by target ("" the object itself, "/status", "/scale"), or,
	// when it starts with "/apis/", absolute (creates).
	path   string
	ctype  string
	body   string
	params map[string]string
	// mutate, when set, builds the body from the current object (read in the version of target) instead of body.
	mutate func(obj map[string]any)
	code   int
	// field is a substring of a cause's field (or, when no cause carries it, of the message).
	field string
	// target names the object that must not change: "tapp", "yad", "poolA" (v1alpha1), "poolB" (v1beta1).
	target string
	// specOnly compares only the spec (for status writes the server accepts and whose spec part it ignores).
	specOnly bool
	// created, for creates, is the object path that must still answer 404 afterwards.
	created string
	// absolute makes path absolute even though target is set (lists and watches of target's collection).
	absolute bool
	// maxBody, when set, bounds the size of the answer (bounded validation).
	maxBody int
}

// goroutineSlack is how many goroutines above the baseline the bad-input suite tolerates afterwards: the
// server's own background work (cache, bookmarks, lease-less timers) moves by a few, spread over different
// stacks. A goroutine left behind by refused requests would repeat one stack once per request of its kind
// (the suite sends hundreds), so no single stack may grow by more than stackSlack.
const (
	goroutineSlack = 20
	stackSlack     = 5
)

const (
	ctJSON  = "application/json"
	ctJP    = "application/json-patch+json"
	ctMP    = "application/merge-patch+json"
	ctSMP   = "application/strategic-merge-patch+json"
	ctApply = "application/apply-patch+yaml"
	ctYAML  = "application/yaml"
)

// setPath sets a value at a dotted path of a decoded JSON object, creating maps on the way.
func setPath(obj map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	m := obj
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func set(path string, v any) func(map[string]any) {
	return func(obj map[string]any) { setPath(obj, path, v) }
}

// TestBadInput sends malformed, hostile and careless requests to every resource and subresource and checks each
// is refused with the right 4xx (and field path), that nothing is stored, and that none answers 5xx.
func TestBadInput(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)

	baseline, baselineStacks := runtime.NumGoroutine(), goroutineStacks()
	fixture := newTApp(ns, "bad", 2)
	fixture.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{"test": *fixture.Spec.Template.DeepCopy()}
	tapp, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, fixture, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create TApp: %v", err)
	}
	longName := strings.Repeat("l", 248)
	long := newTApp(ns, longName, 1)
	long.Spec.Template.Labels = map[string]string{"app": "long"}
	if _, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, long, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create TApp with a 248-character name: %v", err)
	}
	yad, err := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(ctx, newYurtAppDaemon(ns, "bad"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create YurtAppDaemon: %v", err)
	}
	poolName := uniqueName(t, "pool")
	pool, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, newNodePool(poolName), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create NodePool: %v", err)
	}
	t.Cleanup(func() { _ = cs.OpenYurtAppsV1alpha1().NodePools().Delete(ctx, poolName, metav1.DeleteOptions{}) })
	staleTApp, staleYAD, stalePool := tapp.ResourceVersion, yad.ResourceVersion, pool.ResourceVersion
	// Make every resourceVersion seen above stale.
	for _, f := range []func() error{
		func() error {
			_, err := cs.TKEStackAppsV1().TApps(ns).Patch(ctx, "bad", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"touched":"1"}}}`), metav1.PatchOptions{})
			return err
		},
		func() error {
			_, err := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Patch(ctx, "bad", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"touched":"1"}}}`), metav1.PatchOptions{})
			return err
		},
		func() error {
			_, err := cs.OpenYurtAppsV1alpha1().NodePools().Patch(ctx, poolName, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"touched":"1"}}}`), metav1.PatchOptions{})
			return err
		},
	} {
		if err := f(); err != nil {
			t.Fatalf("touching a fixture: %v", err)
		}
	}

	targets := map[string]string{
		"tapp":  fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps/bad", ns),
		"yad":   fmt.Sprintf("/apis/apps.openyurt.io/v1alpha1/namespaces/%s/yurtappdaemons/bad", ns),
		"poolA": "/apis/apps.openyurt.io/v1alpha1/nodepools/" + poolName,
		"poolB": "/apis/apps.openyurt.io/v1beta1/nodepools/" + poolName,
		"long":  fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps/%s", ns, longName),
	}
	tappsPath := fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)
	yadsPath := fmt.Sprintf("/apis/apps.openyurt.io/v1alpha1/namespaces/%s/yurtappdaemons", ns)
	poolsA := "/apis/apps.openyurt.io/v1alpha1/nodepools"
	poolsB := "/apis/apps.openyurt.io/v1beta1/nodepools"

	tappBody := func(name, spec string) string {
		return fmt.Sprintf(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":%q},"spec":%s}`, name, spec)
	}
	validTAppSpec := func(extra string) string {
		return `{"replicas":1,` + extra + `"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`
	}
	yadBody := func(name, spec string) string {
		return fmt.Sprintf(`{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"YurtAppDaemon","metadata":{"name":%q},"spec":%s}`, name, spec)
	}
	validYADSpec := func(extra string) string {
		return `{` + extra + `"selector":{"matchLabels":{"app":"y"}},"nodepoolSelector":{"matchLabels":{"pool":"edge"}},` +
			`"workloadTemplate":{"deploymentTemplate":{"metadata":{"labels":{"app":"y"}},"spec":{"template":{"metadata":{"labels":{"app":"y"}},` +
			`"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}}}`
	}
	poolBody := func(version, name, spec string) string {
		return fmt.Sprintf(`{"apiVersion":"apps.openyurt.io/%s","kind":"NodePool","metadata":{"name":%q},"spec":%s}`, version, name, spec)
	}
	big := `{"metadata":{"annotations":{"big":"` + strings.Repeat("x", 3*1024*1024+1024) + `"}}}`

	var rows []badRow
	add := func(r badRow) { rows = append(rows, r) }
	addCreate := func(r badRow, coll, name string) {
		r.method, r.path, r.created = http.MethodPost, coll, coll+"/"+name
		add(r)
	}

	// JSON patch.
	for _, tgt := range []string{"tapp", "yad", "poolA", "poolB"} {
		add(badRow{class: "json patch", name: "not a list", method: "PATCH", ctype: ctJP, body: `{"op":"add"}`, code: 400, target: tgt})
		add(badRow{class: "json patch", name: "unknown op", method: "PATCH", ctype: ctJP, body: `[{"op":"frobnicate","path":"/metadata/labels/a","value":"b"}]`, code: 422, target: tgt})
		add(badRow{class: "json patch", name: "failed test", method: "PATCH", ctype: ctJP, body: `[{"op":"test","path":"/metadata/name","value":"other"},{"op":"add","path":"/metadata/labels/a","value":"b"}]`, code: 422, target: tgt})
		add(badRow{class: "json patch", name: "remove missing", method: "PATCH", ctype: ctJP, body: `[{"op":"remove","path":"/spec/nothere"}]`, code: 422, target: tgt})
	}
	add(badRow{class: "json patch", name: "replicas string", method: "PATCH", ctype: ctJP, body: `[{"op":"replace","path":"/spec/replicas","value":"three"}]`, code: 422, target: "tapp"})
	add(badRow{class: "json patch", name: "replicas negative", method: "PATCH", ctype: ctJP, body: `[{"op":"replace","path":"/spec/replicas","value":-3}]`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "json patch", name: "status nodes invalid", method: "PATCH", path: "/status", ctype: ctJP, body: `[{"op":"add","path":"/status/readyNodeNum","value":-1}]`, code: 422, field: "status.readyNodeNum", target: "poolB"})

	// Merge patch.
	add(badRow{class: "merge patch", name: "not an object", method: "PATCH", ctype: ctMP, body: `[1,2]`, code: 400, target: "tapp"})
	add(badRow{class: "merge patch", name: "truncated", method: "PATCH", ctype: ctMP, body: `{"spec":{"replicas":`, code: 400, target: "tapp"})
	add(badRow{class: "merge patch", name: "replicas negative", method: "PATCH", ctype: ctMP, body: `{"spec":{"replicas":-1}}`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "merge patch", name: "missing template", method: "PATCH", ctype: ctMP, body: `{"spec":{"templates":{"0":"missing"}}}`, code: 422, field: "spec.templates[0]", target: "tapp"})
	add(badRow{class: "merge patch", name: "yad no template", method: "PATCH", ctype: ctMP, body: `{"spec":{"workloadTemplate":null}}`, code: 422, field: "spec.workloadTemplate", target: "yad"})
	add(badRow{class: "merge patch", name: "pool type", method: "PATCH", ctype: ctMP, body: `{"spec":{"type":"Foo"}}`, code: 422, field: "spec.type", target: "poolB"})
	add(badRow{class: "merge patch", name: "pool taint effect", method: "PATCH", ctype: ctMP, body: `{"spec":{"taints":[{"key":"k","effect":"Bogus"}]}}`, code: 422, field: "spec.taints[0].effect", target: "poolB"})
	add(badRow{class: "merge patch", name: "pool label key", method: "PATCH", ctype: ctMP, body: `{"spec":{"labels":{"bad key!":"v"}}}`, code: 422, field: "spec.labels", target: "poolB"})

	// Strategic merge patch.
	add(badRow{class: "strategic merge patch", name: "truncated", method: "PATCH", ctype: ctSMP, body: `{"spec":`, code: 400, target: "tapp"})
	add(badRow{class: "strategic merge patch", name: "replicas negative", method: "PATCH", ctype: ctSMP, body: `{"spec":{"replicas":-2}}`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "strategic merge patch", name: "container without image", method: "PATCH", ctype: ctSMP, body: `{"spec":{"template":{"spec":{"containers":[{"name":"c2"}]}}}}`, code: 422, field: "spec.template.spec.containers[0].image", target: "tapp"})
	add(badRow{class: "strategic merge patch", name: "delete the only container", method: "PATCH", ctype: ctSMP, body: `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","$patch":"delete"}]}}}}`, code: 422, field: "spec.template.spec.containers", target: "tapp"})
	add(badRow{class: "strategic merge patch", name: "replicas wrong type", method: "PATCH", ctype: ctSMP, body: `{"spec":{"replicas":"two"}}`, code: 422, target: "tapp"})
	add(badRow{class: "strategic merge patch", name: "yad label mismatch", method: "PATCH", ctype: ctSMP, body: `{"spec":{"workloadTemplate":{"deploymentTemplate":{"spec":{"template":{"metadata":{"labels":{"app":"other"}}}}}}}}`, code: 422, field: "spec.workloadTemplate.deploymentTemplate.spec.template.metadata.labels", target: "yad"})
	add(badRow{class: "strategic merge patch", name: "pool type", method: "PATCH", ctype: ctSMP, body: `{"spec":{"type":"Foo"}}`, code: 422, field: "spec.type", target: "poolB"})
	add(badRow{class: "strategic merge patch", name: "pool taint", method: "PATCH", ctype: ctSMP, body: `{"spec":{"taints":[{"key":"bad key!","effect":"NoSchedule"}]}}`, code: 422, field: "spec.taints[0].key", target: "poolB"})

	// Server-side apply.
	fm := map[string]string{"fieldManager": "bad-input", "force": "true"}
	add(badRow{class: "apply", name: "no field manager", method: "PATCH", ctype: ctApply, body: tappBody("bad", `{"replicas":3}`), code: 422, field: "fieldManager", target: "tapp"})
	add(badRow{class: "apply", name: "malformed yaml", method: "PATCH", ctype: ctApply, body: "apiVersion: apps.tkestack.io/v1\nkind: TApp\nmetadata: {name: bad\n", params: fm, code: 400, target: "tapp"})
	add(badRow{class: "apply", name: "replicas negative", method: "PATCH", ctype: ctApply, body: tappBody("bad", `{"replicas":-4}`), params: fm, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "apply", name: "name mismatch", method: "PATCH", ctype: ctApply, body: tappBody("other", `{"replicas":3}`), params: fm, code: 400, target: "tapp"})
	add(badRow{class: "apply", name: "yad selector change", method: "PATCH", ctype: ctApply, body: yadBody("bad", `{"selector":{"matchLabels":{"app":"zzz"}}}`), params: map[string]string{"fieldManager": "bad-input", "force": "true"}, code: 422, field: "spec.selector", target: "yad"})
	add(badRow{class: "apply", name: "pool type", method: "PATCH", ctype: ctApply, body: poolBody("v1beta1", poolName, `{"type":"Foo"}`), params: map[string]string{"fieldManager": "bad-input", "force": "true"}, code: 422, field: "spec.type", target: "poolB"})
	add(badRow{class: "apply", name: "pool hostNetwork", method: "PATCH", ctype: ctApply, body: poolBody("v1beta1", poolName, `{"hostNetwork":true}`), params: map[string]string{"fieldManager": "bad-input", "force": "true"}, code: 422, field: "spec.hostNetwork", target: "poolB"})

	// Status writes that try to change spec: accepted, the spec part ignored.
	add(badRow{class: "status ignores spec", name: "tapp merge", method: "PATCH", path: "/status", ctype: ctMP, body: `{"spec":{"replicas":9}}`, code: 200, target: "tapp", specOnly: true})
	add(badRow{class: "status ignores spec", name: "tapp json patch", method: "PATCH", path: "/status", ctype: ctJP, body: `[{"op":"replace","path":"/spec/replicas","value":7}]`, code: 200, target: "tapp", specOnly: true})
	add(badRow{class: "status ignores spec", name: "tapp put", method: "PUT", path: "/status", ctype: ctJSON, mutate: set("spec.replicas", 5), code: 200, target: "tapp", specOnly: true})
	add(badRow{class: "status ignores spec", name: "yad merge", method: "PATCH", path: "/status", ctype: ctMP, body: `{"spec":{"revisionHistoryLimit":3}}`, code: 200, target: "yad", specOnly: true})
	add(badRow{class: "status ignores spec", name: "yad put", method: "PUT", path: "/status", ctype: ctJSON, mutate: set("spec.selector", map[string]any{"matchLabels": map[string]any{"app": "q"}}), code: 200, target: "yad", specOnly: true})
	add(badRow{class: "status ignores spec", name: "poolA merge", method: "PATCH", path: "/status", ctype: ctMP, body: `{"spec":{"type":"Cloud"}}`, code: 200, target: "poolA", specOnly: true})
	add(badRow{class: "status ignores spec", name: "poolB strategic", method: "PATCH", path: "/status", ctype: ctSMP, body: `{"spec":{"labels":{"a":"b"}}}`, code: 200, target: "poolB", specOnly: true})
	add(badRow{class: "status ignores spec", name: "poolB put", method: "PUT", path: "/status", ctype: ctJSON, mutate: set("spec.hostNetwork", true), code: 200, target: "poolB", specOnly: true})

	// Oversized bodies.
	for _, tgt := range []string{"tapp", "yad", "poolA", "poolB"} {
		add(badRow{class: "oversized", name: "merge patch", method: "PATCH", ctype: ctMP, body: big, code: 413, target: tgt})
	}
	add(badRow{class: "oversized", name: "tapp status", method: "PATCH", path: "/status", ctype: ctMP, body: big, code: 413, target: "tapp"})
	add(badRow{class: "oversized", name: "tapp scale", method: "PATCH", path: "/scale", ctype: ctMP, body: big, code: 413, target: "tapp"})
	addCreate(badRow{class: "oversized", name: "create tapp", ctype: ctJSON, body: big, code: 413}, tappsPath, "big")

	// Wrong content types.
	for _, tgt := range []string{"tapp", "yad", "poolA", "poolB"} {
		add(badRow{class: "content type", name: "patch text/plain", method: "PATCH", ctype: "text/plain", body: `{"metadata":{"labels":{"a":"b"}}}`, code: 415, target: tgt})
	}
	add(badRow{class: "content type", name: "patch as json", method: "PATCH", ctype: ctJSON, body: `{"metadata":{"labels":{"a":"b"}}}`, code: 415, target: "tapp"})
	add(badRow{class: "content type", name: "status patch xml", method: "PATCH", path: "/status", ctype: "application/xml", body: `<a/>`, code: 415, target: "tapp"})
	add(badRow{class: "content type", name: "scale patch text", method: "PATCH", path: "/scale", ctype: "text/plain", body: `{"spec":{"replicas":1}}`, code: 415, target: "tapp"})
	addCreate(badRow{class: "content type", name: "create text/plain", ctype: "text/plain", body: tappBody("ct", validTAppSpec("")), code: 415}, tappsPath, "ct")
	addCreate(badRow{class: "content type", name: "create yad xml", ctype: "application/xml", body: yadBody("ct", validYADSpec("")), code: 415}, yadsPath, "ct")

	// Unknown fields with fieldValidation=Strict.
	strict := map[string]string{"fieldValidation": "Strict"}
	addCreate(badRow{class: "strict", name: "tapp spec field", ctype: ctJSON, body: tappBody("u1", validTAppSpec(`"bogus":1,`)), params: strict, code: 400, field: "spec.bogus"}, tappsPath, "u1")
	addCreate(badRow{class: "strict", name: "tapp metadata field", ctype: ctJSON, body: `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"u2","nope":1},"spec":` + validTAppSpec("") + `}`, params: strict, code: 400, field: "metadata.nope"}, tappsPath, "u2")
	addCreate(badRow{class: "strict", name: "yad spec field", ctype: ctJSON, body: yadBody("u3", validYADSpec(`"bogus":1,`)), params: strict, code: 400, field: "spec.bogus"}, yadsPath, "u3")
	addCreate(badRow{class: "strict", name: "poolA spec field", ctype: ctJSON, body: poolBody("v1alpha1", "u4", `{"bogus":1}`), params: strict, code: 400, field: "spec.bogus"}, poolsA, "u4")
	addCreate(badRow{class: "strict", name: "poolB spec field", ctype: ctJSON, body: poolBody("v1beta1", "u5", `{"bogus":1}`), params: strict, code: 400, field: "spec.bogus"}, poolsB, "u5")
	addCreate(badRow{class: "strict", name: "poolB duplicate field", ctype: ctJSON, body: poolBody("v1beta1", "u6", `{"type":"Edge","type":"Cloud"}`), params: strict, code: 400, field: "spec.type"}, poolsB, "u6")
	add(badRow{class: "strict", name: "tapp merge patch", method: "PATCH", ctype: ctMP, body: `{"spec":{"bogus":1}}`, params: strict, code: 422, field: "spec.bogus", target: "tapp"})
	add(badRow{class: "strict", name: "tapp strategic patch", method: "PATCH", ctype: ctSMP, body: `{"spec":{"template":{"spec":{"bogus":1}}}}`, params: strict, code: 422, field: "spec.template.spec.bogus", target: "tapp"})
	add(badRow{class: "strict", name: "yad put", method: "PUT", ctype: ctJSON, mutate: set("spec.bogus", 1), params: strict, code: 400, field: "spec.bogus", target: "yad"})
	add(badRow{class: "strict", name: "poolB put", method: "PUT", ctype: ctJSON, mutate: set("spec.bogus", 1), params: strict, code: 400, field: "spec.bogus", target: "poolB"})
	add(badRow{class: "strict", name: "tapp status patch", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"bogus":1}}`, params: strict, code: 422, field: "status.bogus", target: "tapp"})
	add(badRow{class: "strict", name: "tapp scale patch", method: "PATCH", path: "/scale", ctype: ctMP, body: `{"spec":{"bogus":1}}`, params: strict, code: 422, field: "spec.bogus", target: "tapp"})

	// Malformed JSON and YAML.
	for _, c := range []struct{ coll, name, ct, body string }{
		{tappsPath, "m1", ctJSON, `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"m1"`},
		{tappsPath, "m2", ctJSON, `not json at all`},
		{tappsPath, "m3", ctYAML, "apiVersion: apps.tkestack.io/v1\nkind: TApp\nmetadata:\n  name: m3\n spec: [\n"},
		{yadsPath, "m4", ctJSON, `{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"YurtAppDaemon","metadata":{"name":"m4"}}}`},
		{yadsPath, "m5", ctYAML, "apiVersion: apps.openyurt.io/v1alpha1\nkind: YurtAppDaemon\nmetadata: {name: m5\n"},
		{poolsA, "m6", ctJSON, `{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"NodePool","metadata":{"name":"m6"},}`},
		{poolsB, "m7", ctYAML, "apiVersion: apps.openyurt.io/v1beta1\nkind: NodePool\nmetadata:\n  name: m7\nspec:\n\ttype: Edge\n"},
		{poolsB, "m8", ctJSON, ``},
	} {
		addCreate(badRow{class: "malformed", name: "create " + c.name, ctype: c.ct, body: c.body, code: 400}, c.coll, c.name)
	}
	add(badRow{class: "malformed", name: "put truncated", method: "PUT", ctype: ctJSON, body: `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"bad"`, code: 400, target: "tapp"})
	add(badRow{class: "malformed", name: "status put truncated", method: "PUT", path: "/status", ctype: ctJSON, body: `{"apiVersion":`, code: 400, target: "poolB"})
	add(badRow{class: "malformed", name: "scale put truncated", method: "PUT", path: "/scale", ctype: ctJSON, body: `{"spec":{"replicas":1}`, code: 400, target: "tapp"})

	// Wrong types.
	addCreate(badRow{class: "wrong type", name: "tapp replicas string", ctype: ctJSON, body: tappBody("w1", `{"replicas":"one","template":{}}`), code: 400, field: "spec.replicas"}, tappsPath, "w1")
	addCreate(badRow{class: "wrong type", name: "tapp templates list", ctype: ctJSON, body: tappBody("w2", validTAppSpec(`"templates":["a"],`)), code: 400, field: "spec.templates"}, tappsPath, "w2")
	addCreate(badRow{class: "wrong type", name: "yad selector string", ctype: ctJSON, body: yadBody("w3", `{"selector":"app=y"}`), code: 400, field: "spec.selector"}, yadsPath, "w3")
	addCreate(badRow{class: "wrong type", name: "poolB hostNetwork string", ctype: ctJSON, body: poolBody("v1beta1", "w4", `{"hostNetwork":"yes"}`), code: 400, field: "spec.hostNetwork"}, poolsB, "w4")
	addCreate(badRow{class: "wrong type", name: "poolA labels list", ctype: ctJSON, body: poolBody("v1alpha1", "w5", `{"labels":["a"]}`), code: 400, field: "spec.labels"}, poolsA, "w5")
	add(badRow{class: "wrong type", name: "tapp merge replicas bool", method: "PATCH", ctype: ctMP, body: `{"spec":{"replicas":true}}`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "wrong type", name: "poolB merge taints object", method: "PATCH", ctype: ctMP, body: `{"spec":{"taints":{"key":"k"}}}`, code: 422, field: "spec.taints", target: "poolB"})
	add(badRow{class: "wrong type", name: "scale replicas string", method: "PATCH", path: "/scale", ctype: ctMP, body: `{"spec":{"replicas":"3"}}`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "wrong type", name: "status replicas string", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"replicas":"3"}}`, code: 422, field: "status.replicas", target: "tapp"})

	// Invalid values.
	addCreate(badRow{class: "invalid", name: "tapp negative replicas", ctype: ctJSON, body: tappBody("i1", `{"replicas":-1,"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`), code: 422, field: "spec.replicas"}, tappsPath, "i1")
	addCreate(badRow{class: "invalid", name: "tapp no containers", ctype: ctJSON, body: tappBody("i2", `{"replicas":1,"template":{"metadata":{"labels":{"app":"x"}},"spec":{}}}`), code: 422, field: "spec.template.spec.containers"}, tappsPath, "i2")
	addCreate(badRow{class: "invalid", name: "tapp missing template", ctype: ctJSON, body: tappBody("i3", validTAppSpec(`"templates":{"0":"nope"},`)), code: 422, field: "spec.templates[0]"}, tappsPath, "i3")
	addCreate(badRow{class: "invalid", name: "tapp bad name", ctype: ctJSON, body: tappBody("Bad_Name", validTAppSpec("")), code: 422, field: "metadata.name"}, tappsPath, "Bad_Name")
	addCreate(badRow{class: "invalid", name: "yad no workload", ctype: ctJSON, body: yadBody("i5", `{"selector":{"matchLabels":{"app":"y"}}}`), code: 422, field: "spec.workloadTemplate"}, yadsPath, "i5")
	addCreate(badRow{class: "invalid", name: "poolA type", ctype: ctJSON, body: poolBody("v1alpha1", "i6", `{"type":"Foo"}`), code: 422, field: "spec.type"}, poolsA, "i6")
	addCreate(badRow{class: "invalid", name: "poolB bad name", ctype: ctJSON, body: poolBody("v1beta1", "Not.A.Label", `{}`), code: 422, field: "metadata.name"}, poolsB, "Not.A.Label")
	addCreate(badRow{class: "invalid", name: "poolB taint effect", ctype: ctJSON, body: poolBody("v1beta1", "i8", `{"taints":[{"key":"k","effect":"Sometimes"}]}`), code: 422, field: "spec.taints[0].effect"}, poolsB, "i8")
	add(badRow{class: "invalid", name: "tapp put negative replicas", method: "PUT", ctype: ctJSON, mutate: set("spec.replicas", -1), code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "invalid", name: "poolB status negative", method: "PATCH", path: "/status", ctype: ctMP, body: `{"status":{"unreadyNodeNum":-2}}`, code: 422, field: "status.unreadyNodeNum", target: "poolB"})

	// Immutable fields.
	add(badRow{class: "immutable", name: "tapp selector merge", method: "PATCH", ctype: ctMP, body: `{"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}}`, code: 422, field: "spec.selector", target: "tapp"})
	add(badRow{class: "immutable", name: "tapp selector put", method: "PUT", ctype: ctJSON, mutate: func(o map[string]any) {
		setPath(o, "spec.selector", map[string]any{"matchLabels": map[string]any{"app": "z"}})
		setPath(o, "spec.template.metadata.labels", map[string]any{"app": "z"})
	}, code: 422, field: "spec.selector", target: "tapp"})
	add(badRow{class: "immutable", name: "yad workload kind", method: "PATCH", ctype: ctMP, body: `{"spec":{"workloadTemplate":{"deploymentTemplate":null,"statefulSetTemplate":{"metadata":{"labels":{"app":"bad"}},"spec":{"serviceName":"s","template":{"metadata":{"labels":{"app":"bad"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}}}}`, code: 422, field: "spec.workloadTemplate", target: "yad"})
	add(badRow{class: "immutable", name: "yad selector json patch", method: "PATCH", ctype: ctJP, body: `[{"op":"replace","path":"/spec/selector/matchLabels/app","value":"zz"}]`, code: 422, field: "spec.selector", target: "yad"})
	add(badRow{class: "immutable", name: "poolB hostNetwork", method: "PATCH", ctype: ctMP, body: `{"spec":{"hostNetwork":true}}`, code: 422, field: "spec.hostNetwork", target: "poolB"})
	add(badRow{class: "immutable", name: "poolA hostNetwork annotation", method: "PATCH", ctype: ctMP, body: `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}}}`, code: 422, field: "metadata.annotations", target: "poolA"})
	add(badRow{class: "immutable", name: "poolB type", method: "PUT", ctype: ctJSON, mutate: set("spec.type", "Cloud"), code: 422, field: "spec.type", target: "poolB"})

	// Stale resourceVersion.
	add(badRow{class: "stale", name: "tapp put", method: "PUT", ctype: ctJSON, mutate: func(o map[string]any) {
		setPath(o, "metadata.resourceVersion", staleTApp)
		setPath(o, "spec.replicas", 4)
	}, code: 409, target: "tapp"})
	add(badRow{class: "stale", name: "tapp status put", method: "PUT", path: "/status", ctype: ctJSON, mutate: set("metadata.resourceVersion", staleTApp), code: 409, target: "tapp"})
	add(badRow{class: "stale", name: "tapp merge with rv", method: "PATCH", ctype: ctMP, body: fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"replicas":4}}`, staleTApp), code: 409, target: "tapp"})
	add(badRow{class: "stale", name: "tapp scale put", method: "PUT", path: "/scale", ctype: ctJSON, body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"bad","namespace":%q,"resourceVersion":%q},"spec":{"replicas":4}}`, ns, staleTApp), code: 409, target: "tapp"})
	add(badRow{class: "stale", name: "yad put", method: "PUT", ctype: ctJSON, mutate: func(o map[string]any) {
		setPath(o, "metadata.resourceVersion", staleYAD)
		setPath(o, "metadata.labels.x", "y")
	}, code: 409, target: "yad"})
	add(badRow{class: "stale", name: "poolA put", method: "PUT", ctype: ctJSON, mutate: func(o map[string]any) {
		setPath(o, "metadata.resourceVersion", stalePool)
		setPath(o, "metadata.labels.x", "y")
	}, code: 409, target: "poolA"})
	add(badRow{class: "stale", name: "poolB status json patch", method: "PATCH", path: "/status", ctype: ctJP, body: fmt.Sprintf(`[{"op":"replace","path":"/metadata/resourceVersion","value":%q},{"op":"add","path":"/status/readyNodeNum","value":1}]`, stalePool), code: 409, target: "poolB"})

	// Bad scale.
	add(badRow{class: "scale", name: "merge negative", method: "PATCH", path: "/scale", ctype: ctMP, body: `{"spec":{"replicas":-1}}`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "scale", name: "json patch negative", method: "PATCH", path: "/scale", ctype: ctJP, body: `[{"op":"replace","path":"/spec/replicas","value":-5}]`, code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "scale", name: "put negative", method: "PUT", path: "/scale", ctype: ctJSON, body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"bad","namespace":%q},"spec":{"replicas":-1}}`, ns), code: 422, field: "spec.replicas", target: "tapp"})
	add(badRow{class: "scale", name: "put wrong name", method: "PUT", path: "/scale", ctype: ctJSON, body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"other","namespace":%q},"spec":{"replicas":1}}`, ns), code: 400, target: "tapp"})
	add(badRow{class: "scale", name: "yad has no scale", method: "PATCH", path: "/scale", ctype: ctMP, body: `{"spec":{"replicas":1}}`, code: 404, target: "yad"})
	add(badRow{class: "scale", name: "pool has no scale", method: "PATCH", path: "/scale", ctype: ctMP, body: `{"spec":{"replicas":1}}`, code: 404, target: "poolB"})

	rows = append(rows, hostileRows(badEnv{
		ns: ns, poolName: poolName, tappsPath: tappsPath, yadsPath: yadsPath, poolsA: poolsA, poolsB: poolsB,
		tappBody: tappBody, validTAppSpec: validTAppSpec, yadBody: yadBody, validYADSpec: validYADSpec, poolBody: poolBody,
	})...)

	client := insecureHTTPClient()
	do := func(t *testing.T, method, url, ctype string, body []byte, params map[string]string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(testContext(t), method, s.URL+url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		q := req.URL.Query()
		for k, v := range params {
			q.Set(k, v)
		}
		req.URL.RawQuery = q.Encode()
		req.Header.Set("Authorization", "Bearer "+s.Config.BearerToken)
		req.Header.Set("Accept", "application/json")
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	get := func(t *testing.T, url string) map[string]any {
		t.Helper()
		code, out := do(t, http.MethodGet, url, "", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d: %s", url, code, out)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("decoding %s: %v", url, err)
		}
		return m
	}

	counts := map[string]int{}
	for _, r := range rows {
		counts[r.class]++
		t.Run(r.class+"/"+r.name+"/"+r.target, func(t *testing.T) {
			url, body := r.path, []byte(r.body)
			var before map[string]any
			if r.target != "" {
				if !r.absolute {
					url = targets[r.target] + r.path
				}
				before = get(t, targets[r.target])
				if r.mutate != nil {
					obj := get(t, targets[r.target])
					r.mutate(obj)
					body, _ = json.Marshal(obj)
				}
			}
			code, out := do(t, r.method, url, r.ctype, body, r.params)
			if code >= 500 {
				t.Fatalf("%s %s (%s) answered %d: %s", r.method, url, r.ctype, code, out)
			}
			if code != r.code {
				t.Errorf("%s %s (%s) = %d, want %d: %.400s", r.method, url, r.ctype, code, r.code, out)
			}
			var status metav1.Status
			if err := json.Unmarshal(out, &status); err != nil || status.Kind != "Status" || int(status.Code) != code {
				if code >= 400 {
					t.Errorf("the %d answer is not a Status with that code: %.300s", code, out)
				}
			}
			if r.maxBody > 0 && len(out) > r.maxBody {
				t.Errorf("the answer is %d bytes, want at most %d", len(out), r.maxBody)
			}
			if r.field != "" {
				var st metav1.Status
				_ = json.Unmarshal(out, &st)
				found := strings.Contains(st.Message, r.field)
				if st.Details != nil {
					for _, c := range st.Details.Causes {
						if strings.Contains(c.Field, r.field) || strings.Contains(c.Message, r.field) {
							found = true
						}
					}
				}
				if !found {
					t.Errorf("answer does not name %q: %.600s", r.field, out)
				}
			}
			if r.created != "" {
				if c, out := do(t, http.MethodGet, r.created, "", nil, nil); c != http.StatusNotFound {
					t.Errorf("a refused create stored something: GET %s = %d: %.200s", r.created, c, out)
				}
				return
			}
			after := get(t, targets[r.target])
			if r.specOnly {
				b, _ := json.Marshal(before["spec"])
				a, _ := json.Marshal(after["spec"])
				if !bytes.Equal(a, b) {
					t.Errorf("a status write changed spec:\nbefore %s\nafter  %s", b, a)
				}
				return
			}
			rvB := before["metadata"].(map[string]any)["resourceVersion"]
			rvA := after["metadata"].(map[string]any)["resourceVersion"]
			if rvA != rvB {
				b, _ := json.Marshal(before)
				a, _ := json.Marshal(after)
				t.Errorf("a refused request changed the object (resourceVersion %v -> %v):\nbefore %s\nafter  %s", rvB, rvA, b, a)
			}
		})
	}
	distinct := map[string]bool{}
	for _, r := range rows {
		distinct[r.class+"/"+r.name+"/"+r.target+"/"+r.path] = true
	}
	if len(rows) < 300 || len(distinct) != len(rows) {
		t.Errorf("%d requests (%d distinct), want at least 300, all distinct", len(rows), len(distinct))
	}
	t.Logf("%d requests: %v", len(rows), counts)
	if c, out := do(t, http.MethodGet, "/readyz", "", nil, nil); c != http.StatusOK {
		t.Errorf("/readyz after the bad input = %d: %s", c, out)
	}
	// Every refused request has left nothing running: goroutines come back to what they were before the
	// fixtures (idle HTTP connections of the test client closed first).
	client.CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var grown []string
		worst := 0
		for stack, n := range goroutineStacks() {
			if more := n - baselineStacks[stack]; more > 0 {
				grown = append(grown, fmt.Sprintf("%d more:\n%s", more, stack))
				worst = max(worst, more)
			}
		}
		if runtime.NumGoroutine() <= baseline+goroutineSlack && worst <= stackSlack {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines %d after the bad input, %d before (a stack grew by %d); the stacks that grew:\n%s",
				runtime.NumGoroutine(), baseline, worst, strings.Join(grown, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// goroutineStacks counts the goroutines of this process by stack (pprof's aggregated form).
func goroutineStacks() map[string]int {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	out := map[string]int{}
	for _, block := range strings.Split(buf.String(), "\n\n") {
		head, stack, ok := strings.Cut(block, "\n")
		if !ok {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(head, "%d @", &n); err == nil {
			out[stack] += n
		}
	}
	return out
}
