package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// npRow is one NodePool request of the "hostile clients, second round" issue and what must come of it.
type npRow struct {
	class, name string
	method      string
	// version is the NodePool version the request is sent to: "v1alpha1" or "v1beta1".
	version string
	// target is the fixture the request is about ("" for creates, which name created instead).
	target  string
	ctype   string
	body    string
	params  map[string]string
	mutate  func(obj map[string]any)
	created string
	code    int
	// fields: each is a substring of a cause's field (or the message); also: substrings of the answer.
	fields []string
	also   []string
	// check, for accepted requests, looks at the stored object afterwards (read through both versions).
	check func(t *testing.T, alpha, beta map[string]any)
}

const (
	npHostNetworkPath = "metadata.annotations[nodepool.openyurt.io/hostnetwork]"
	npMembership      = "spec.labels[apps.openyurt.io/nodepool]"
	npDesired         = "spec.labels[apps.openyurt.io/desired-nodepool]"
	npApplied         = "spec.annotations[nodepool.openyurt.io/previous-attributes]"
)

// npClient sends raw requests to the shared server.
type npClient struct {
	s      *testServer
	client *http.Client
}

func (c npClient) do(t *testing.T, method, path, ctype string, body []byte, params map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), method, c.s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	q := req.URL.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	req.URL.RawQuery = q.Encode()
	req.Header.Set("Authorization", "Bearer "+c.s.Config.BearerToken)
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (c npClient) get(t *testing.T, path string) map[string]any {
	t.Helper()
	code, out := c.do(t, http.MethodGet, path, "", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, code, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return m
}

func npPools(version string) string { return "/apis/apps.openyurt.io/" + version + "/nodepools" }

// npBody is a NodePool manifest: metadata and spec are JSON object bodies without braces ("" for none).
func npBody(version, name, meta, spec string) string {
	if meta != "" {
		meta = "," + meta
	}
	return fmt.Sprintf(`{"apiVersion":"apps.openyurt.io/%s","kind":"NodePool","metadata":{"name":%q%s},"spec":{%s}}`, version, name, meta, spec)
}

func npAnnotations(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
	return m
}

func npSpec(obj map[string]any) map[string]any {
	m, _ := obj["spec"].(map[string]any)
	return m
}

// npExpectHostNetwork checks what the two versions show: the v1alpha1 annotation (absent when want is "")
// and the v1beta1 field and annotation.
func npExpectHostNetwork(alphaAnnotation string, betaField bool, betaAnnotation string) func(t *testing.T, alpha, beta map[string]any) {
	return func(t *testing.T, alpha, beta map[string]any) {
		t.Helper()
		const key = "nodepool.openyurt.io/hostnetwork"
		got, ok := npAnnotations(alpha)[key]
		if alphaAnnotation == "" && ok || alphaAnnotation != "" && got != alphaAnnotation {
			t.Errorf("v1alpha1 annotation = %v (present %v), want %q", got, ok, alphaAnnotation)
		}
		if _, ok := npSpec(alpha)["hostNetwork"]; ok {
			t.Errorf("v1alpha1 spec has hostNetwork: %v", npSpec(alpha))
		}
		field, _ := npSpec(beta)["hostNetwork"].(bool)
		if field != betaField {
			t.Errorf("v1beta1 spec.hostNetwork = %v, want %v", field, betaField)
		}
		got, ok = npAnnotations(beta)[key]
		if betaAnnotation == "" && ok || betaAnnotation != "" && got != betaAnnotation {
			t.Errorf("v1beta1 annotation = %v (present %v), want %q", got, ok, betaAnnotation)
		}
		if npAnnotations(alpha)["note"] != "kept" || npAnnotations(beta)["note"] != "kept" {
			t.Errorf("other annotations lost: %v / %v", npAnnotations(alpha), npAnnotations(beta))
		}
	}
}

// npExpectSelector checks that both versions show the selector matchLabels want.
func npExpectSelector(want map[string]any) func(t *testing.T, alpha, beta map[string]any) {
	return func(t *testing.T, alpha, beta map[string]any) {
		t.Helper()
		for v, obj := range map[string]map[string]any{"v1alpha1": alpha, "v1beta1": beta} {
			sel, _ := npSpec(obj)["selector"].(map[string]any)
			if !reflect.DeepEqual(sel, map[string]any{"matchLabels": want}) {
				t.Errorf("%s spec.selector = %v, want matchLabels %v", v, sel, want)
			}
		}
	}
}

// TestBadInputNodePool: NodePool keys the controller owns are refused in spec.labels and spec.annotations
// (both versions, create, update and every patch type, the key named), and no write is silently rewritten:
// the hostnetwork annotation round-trips as written or is refused naming it (and spec.hostNetwork when they
// disagree), and a null selector means the default selector, never the old one kept.
func TestBadInputNodePool(t *testing.T) {
	s := sharedServer(t)
	c := npClient{s: s, client: insecureHTTPClient()}
	t.Cleanup(c.client.CloseIdleConnections)

	// Fixtures: a plain pool, a pool on the host network (created through v1beta1), a pool whose annotation
	// says "false" (through v1alpha1) and a pool with a selector of its own; one per row that changes them.
	fixtures := map[string]string{}
	create := func(t *testing.T, key, version, meta, spec string) string {
		t.Helper()
		name := uniqueName(t, key)
		code, out := c.do(t, http.MethodPost, npPools(version), ctJSON, []byte(npBody(version, name, meta, spec)), nil)
		if code != http.StatusCreated {
			t.Fatalf("creating fixture %s: %d %s", name, code, out)
		}
		t.Cleanup(func() { c.do(t, http.MethodDelete, npPools("v1beta1")+"/"+name, "", nil, nil) })
		return name
	}
	fixtures["plain"] = create(t, "plain", "v1alpha1", `"annotations":{"note":"kept"}`, `"labels":{"zone":"hz"}`)
	fixtures["host"] = create(t, "host", "v1beta1", `"annotations":{"note":"kept"}`, `"hostNetwork":true`)
	fixtures["false"] = create(t, "false", "v1alpha1", `"annotations":{"note":"kept","nodepool.openyurt.io/hostnetwork":"false"}`, ``)

	fm := map[string]string{"fieldManager": "np-bad-input", "force": "true"}
	var rows []npRow
	add := func(r npRow) { rows = append(rows, r) }
	n := 0
	newName := func() string {
		n++
		return fmt.Sprintf("np-bad-%d-%s", n, strings.TrimPrefix(fixtures["plain"], "plain-"))
	}
	addCreate := func(r npRow, meta, spec string) {
		name := newName()
		r.method, r.created, r.ctype = http.MethodPost, name, ctJSON
		r.body = npBody(r.version, name, meta, spec)
		add(r)
	}

	// 5. Reserved keys in spec.labels and spec.annotations.
	reserved := []struct {
		name, spec, jsonPointer, mapKey, key, value, field string
	}{
		{"membership label", `"labels":{"apps.openyurt.io/nodepool":"x"}`, "/spec/labels/apps.openyurt.io~1nodepool", "labels", "apps.openyurt.io/nodepool", "x", npMembership},
		{"membership label naming the pool itself", `"labels":{"apps.openyurt.io/nodepool":"plain"}`, "/spec/labels/apps.openyurt.io~1nodepool", "labels", "apps.openyurt.io/nodepool", "plain", npMembership},
		{"empty membership label", `"labels":{"apps.openyurt.io/nodepool":""}`, "/spec/labels/apps.openyurt.io~1nodepool", "labels", "apps.openyurt.io/nodepool", "", npMembership},
		{"desired membership label", `"labels":{"apps.openyurt.io/desired-nodepool":"other"}`, "/spec/labels/apps.openyurt.io~1desired-nodepool", "labels", "apps.openyurt.io/desired-nodepool", "other", npDesired},
		{"applied record annotation", `"annotations":{"nodepool.openyurt.io/previous-attributes":"{}"}`, "/spec/annotations/nodepool.openyurt.io~1previous-attributes", "annotations", "nodepool.openyurt.io/previous-attributes", "{}", npApplied},
		{"forged applied record", `"annotations":{"nodepool.openyurt.io/previous-attributes":"{\"pool\":\"x\",\"poolLabel\":true}"}`, "/spec/annotations/nodepool.openyurt.io~1previous-attributes", "annotations", "nodepool.openyurt.io/previous-attributes", `{"pool":"x","poolLabel":true}`, npApplied},
	}
	for _, v := range []string{"v1alpha1", "v1beta1"} {
		for _, r := range reserved {
			addCreate(npRow{class: "reserved keys", name: "create " + r.name, version: v, code: 422, fields: []string{r.field}, also: []string{"reserved"}}, "", r.spec)
			key, value, mapKey := r.key, r.value, r.mapKey
			add(npRow{class: "reserved keys", name: "put " + r.name, method: http.MethodPut, version: v, target: "plain", ctype: ctJSON, code: 422, fields: []string{r.field},
				mutate: func(obj map[string]any) {
					m, _ := npSpec(obj)[mapKey].(map[string]any)
					if m == nil {
						m = map[string]any{}
					}
					m[key] = value
					npSpec(obj)[mapKey] = m
				}})
			jp, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/" + mapKey, "value": map[string]any{key: value, "zone": "hz"}}})
			add(npRow{class: "reserved keys", name: "json patch " + r.name, method: http.MethodPatch, version: v, target: "plain", ctype: ctJP, body: string(jp), code: 422, fields: []string{r.field}})
			add(npRow{class: "reserved keys", name: "merge patch " + r.name, method: http.MethodPatch, version: v, target: "plain", ctype: ctMP, body: `{"spec":{` + r.spec + `}}`, code: 422, fields: []string{r.field}})
			add(npRow{class: "reserved keys", name: "strategic merge patch " + r.name, method: http.MethodPatch, version: v, target: "plain", ctype: ctSMP, body: `{"spec":{` + r.spec + `}}`, code: 422, fields: []string{r.field}})
			add(npRow{class: "reserved keys", name: "apply " + r.name, method: http.MethodPatch, version: v, target: "plain", ctype: ctApply, params: fm,
				body: npBody(v, "", "", r.spec), code: 422, fields: []string{r.field}})
		}
		// One json patch op per key, to a map that exists.
		add(npRow{class: "reserved keys", name: "json patch op on an existing map", method: http.MethodPatch, version: v, target: "plain", ctype: ctJP,
			body: `[{"op":"add","path":"/spec/labels/apps.openyurt.io~1desired-nodepool","value":"a"}]`, code: 422, fields: []string{npDesired}})
		// Every reserved key at once: each is named.
		addCreate(npRow{class: "reserved keys", name: "all at once", version: v, code: 422, fields: []string{npMembership, npDesired, npApplied}}, "",
			`"labels":{"apps.openyurt.io/nodepool":"a","apps.openyurt.io/desired-nodepool":"a","zone":"z"},"annotations":{"nodepool.openyurt.io/previous-attributes":"{}"}`)
		// Look-alikes are ordinary keys, and the pool's own metadata may carry the reserved keys.
		addCreate(npRow{class: "reserved keys", name: "look-alike keys accepted", version: v, code: 201, check: func(t *testing.T, alpha, beta map[string]any) {
			labels, _ := npSpec(beta)["labels"].(map[string]any)
			if labels["apps.openyurt.io/nodepool-zone"] != "a" || labels["example.com/nodepool"] != "b" {
				t.Errorf("spec.labels = %v", labels)
			}
		}}, `"labels":{"apps.openyurt.io/nodepool":"own"}`,
			`"labels":{"apps.openyurt.io/nodepool-zone":"a","example.com/nodepool":"b"},"annotations":{"nodepool.openyurt.io/previous":"c","apps.openyurt.io/nodepool":"d"}`)
	}

	// 6a. The v1alpha1 hostnetwork annotation: true or false (any case), kept as written; anything else refused.
	for _, bad := range []string{"1", "0", " true", "true ", "", "yes", "on", "tru", "\"true\"", "ｔｒｕｅ"} {
		body, _ := json.Marshal(bad)
		addCreate(npRow{class: "hostnetwork value", name: fmt.Sprintf("create %q", bad), version: "v1alpha1", code: 422,
			fields: []string{npHostNetworkPath}, also: []string{`supported values: \"true\", \"false\"`}},
			`"annotations":{"nodepool.openyurt.io/hostnetwork":`+string(body)+`}`, "")
		add(npRow{class: "hostnetwork value", name: fmt.Sprintf("merge patch %q", bad), method: http.MethodPatch, version: "v1alpha1", target: "false", ctype: ctMP,
			body: `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":` + string(body) + `}}}`, code: 422, fields: []string{npHostNetworkPath}})
	}
	add(npRow{class: "hostnetwork value", name: "json patch 1", method: http.MethodPatch, version: "v1alpha1", target: "plain", ctype: ctJP,
		body: `[{"op":"add","path":"/metadata/annotations/nodepool.openyurt.io~1hostnetwork","value":"1"}]`, code: 422, fields: []string{npHostNetworkPath}})
	add(npRow{class: "hostnetwork value", name: "strategic merge patch yes", method: http.MethodPatch, version: "v1alpha1", target: "plain", ctype: ctSMP,
		body: `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":"yes"}}}`, code: 422, fields: []string{npHostNetworkPath}})
	add(npRow{class: "hostnetwork value", name: "apply empty", method: http.MethodPatch, version: "v1alpha1", target: "false", ctype: ctApply, params: fm,
		body: npBody("v1alpha1", "", `"annotations":{"nodepool.openyurt.io/hostnetwork":""}`, ""), code: 422, fields: []string{npHostNetworkPath}})
	add(npRow{class: "hostnetwork value", name: "put 1 on a host network pool", method: http.MethodPut, version: "v1alpha1", target: "host", ctype: ctJSON,
		mutate: func(obj map[string]any) { npAnnotations(obj)["nodepool.openyurt.io/hostnetwork"] = "1" }, code: 422, fields: []string{npHostNetworkPath}})
	// The same value through v1beta1.
	addCreate(npRow{class: "hostnetwork value", name: "create 1", version: "v1beta1", code: 422, fields: []string{npHostNetworkPath}},
		`"annotations":{"nodepool.openyurt.io/hostnetwork":"1"}`, "")

	// Accepted v1alpha1 values round-trip exactly, in both versions.
	for _, ok := range []struct {
		value, betaAnnotation string
		hostNetwork           bool
	}{{"false", "false", false}, {"False", "False", false}, {"FALSE", "FALSE", false}, {"TRUE", "TRUE", true}, {"True", "True", true}, {"true", "", true}} {
		addCreate(npRow{class: "hostnetwork round trip", name: "create " + ok.value, version: "v1alpha1", code: 201,
			check: npExpectHostNetwork(ok.value, ok.hostNetwork, ok.betaAnnotation)},
			`"annotations":{"note":"kept","nodepool.openyurt.io/hostnetwork":"`+ok.value+`"}`, "")
	}
	addCreate(npRow{class: "hostnetwork round trip", name: "create false", version: "v1beta1", code: 201, check: npExpectHostNetwork("false", false, "false")},
		`"annotations":{"note":"kept","nodepool.openyurt.io/hostnetwork":"false"}`, "")
	addCreate(npRow{class: "hostnetwork round trip", name: "create TRUE beside the field", version: "v1beta1", code: 201, check: npExpectHostNetwork("TRUE", true, "TRUE")},
		`"annotations":{"note":"kept","nodepool.openyurt.io/hostnetwork":"TRUE"}`, `"hostNetwork":true`)
	addCreate(npRow{class: "hostnetwork round trip", name: "create the field alone", version: "v1beta1", code: 201, check: npExpectHostNetwork("true", true, "")},
		`"annotations":{"note":"kept"}`, `"hostNetwork":true`)
	// Labels and other annotations of the "false" fixture change; the annotation stays as written.
	add(npRow{class: "hostnetwork round trip", name: "merge patch beside false", method: http.MethodPatch, version: "v1alpha1", target: "false", ctype: ctMP,
		body: `{"metadata":{"labels":{"touched":"1"}}}`, code: 200, check: npExpectHostNetwork("false", false, "false")})
	add(npRow{class: "hostnetwork round trip", name: "v1beta1 put of what it read", method: http.MethodPut, version: "v1beta1", target: "false", ctype: ctJSON,
		mutate: func(obj map[string]any) { npSpec(obj)["labels"] = map[string]any{"zone": "b"} }, code: 200, check: npExpectHostNetwork("false", false, "false")})
	add(npRow{class: "hostnetwork round trip", name: "apply false again", method: http.MethodPatch, version: "v1alpha1", target: "false", ctype: ctApply, params: fm,
		body: npBody("v1alpha1", "", `"annotations":{"note":"kept","nodepool.openyurt.io/hostnetwork":"false"}`, ""), code: 200, check: npExpectHostNetwork("false", false, "false")})

	// 6b. v1beta1: the annotation never overrides the field; a contradiction names both.
	for _, c := range []struct {
		name, meta, spec, detail string
	}{
		{"true without the field", `"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}`, ``, "contradicts spec.hostNetwork (false)"},
		{"true beside hostNetwork false", `"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}`, `"hostNetwork":false`, "contradicts spec.hostNetwork (false)"},
		{"True beside hostNetwork false", `"annotations":{"nodepool.openyurt.io/hostnetwork":"True"}`, `"hostNetwork":false`, "contradicts spec.hostNetwork (false)"},
		{"false beside hostNetwork true", `"annotations":{"nodepool.openyurt.io/hostnetwork":"false"}`, `"hostNetwork":true`, "contradicts spec.hostNetwork (true)"},
		{"true beside hostNetwork true", `"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}`, `"hostNetwork":true`, "repeats spec.hostNetwork"},
	} {
		addCreate(npRow{class: "hostnetwork contradiction", name: "create " + c.name, version: "v1beta1", code: 422,
			fields: []string{npHostNetworkPath}, also: []string{c.detail}}, c.meta, c.spec)
	}
	for _, c := range []struct {
		name, target, ctype, body, detail string
	}{
		{"merge patch true on a pool without", "plain", ctMP, `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}}}`, "spec.hostNetwork (false)"},
		{"strategic merge patch true on a pool without", "plain", ctSMP, `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}}}`, "spec.hostNetwork (false)"},
		{"json patch true on a pool without", "plain", ctJP, `[{"op":"add","path":"/metadata/annotations/nodepool.openyurt.io~1hostnetwork","value":"true"}]`, "spec.hostNetwork (false)"},
		{"merge patch false on a host network pool", "host", ctMP, `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":"false"}}}`, "spec.hostNetwork (true)"},
		{"merge patch true on a host network pool", "host", ctMP, `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}}}`, "repeats spec.hostNetwork"},
		{"merge patch hostNetwork false beside the fixture's false", "false", ctMP, `{"metadata":{"annotations":{"nodepool.openyurt.io/hostnetwork":"TRUE"}},"spec":{"hostNetwork":false}}`, "spec.hostNetwork (false)"},
	} {
		add(npRow{class: "hostnetwork contradiction", name: c.name, method: http.MethodPatch, version: "v1beta1", target: c.target, ctype: c.ctype, body: c.body,
			code: 422, fields: []string{npHostNetworkPath}, also: []string{c.detail}})
	}
	add(npRow{class: "hostnetwork contradiction", name: "apply true without the field", method: http.MethodPatch, version: "v1beta1", target: "plain", ctype: ctApply, params: fm,
		body: npBody("v1beta1", "", `"annotations":{"nodepool.openyurt.io/hostnetwork":"true"}`, `"hostNetwork":false`), code: 422, fields: []string{npHostNetworkPath}, also: []string{"spec.hostNetwork"}})
	add(npRow{class: "hostnetwork contradiction", name: "put true without the field", method: http.MethodPut, version: "v1beta1", target: "plain", ctype: ctJSON,
		mutate: func(obj map[string]any) { npAnnotations(obj)["nodepool.openyurt.io/hostnetwork"] = "true" }, code: 422, fields: []string{npHostNetworkPath}, also: []string{"spec.hostNetwork"}})

	// 6c. spec.selector: null (or left out) means the default selector, as on create; never the old one.
	defaultSel := func(name string) map[string]any { return map[string]any{"apps.openyurt.io/nodepool": name} }
	for _, v := range []string{"v1alpha1", "v1beta1"} {
		for _, c := range []struct {
			name, ctype, body string
			mutate            func(map[string]any)
		}{
			{"merge patch null", ctMP, `{"spec":{"selector":null}}`, nil},
			{"strategic merge patch null", ctSMP, `{"spec":{"selector":null}}`, nil},
			{"json patch remove", ctJP, `[{"op":"remove","path":"/spec/selector"}]`, nil},
			{"json patch null", ctJP, `[{"op":"replace","path":"/spec/selector","value":null}]`, nil},
			{"put without", ctJSON, "", func(obj map[string]any) { delete(npSpec(obj), "selector") }},
		} {
			key := "sel-" + v + "-" + strings.ReplaceAll(c.name, " ", "-")
			fixtures[key] = create(t, "sel", v, "", `"selector":{"matchLabels":{"zone":"own"}}`)
			name := fixtures[key]
			method := http.MethodPatch
			if c.mutate != nil {
				method = http.MethodPut
			}
			add(npRow{class: "selector null", name: c.name, method: method, version: v, target: key, ctype: c.ctype, body: c.body, mutate: c.mutate,
				code: 200, check: npExpectSelector(defaultSel(name))})
		}
	}
	// Null on a pool that has the default already changes nothing.
	add(npRow{class: "selector null", name: "merge patch null on the default", method: http.MethodPatch, version: "v1beta1", target: "plain", ctype: ctMP,
		body: `{"spec":{"selector":null}}`, code: 200, check: npExpectSelector(defaultSel(fixtures["plain"]))})
	// An invalid selector is still refused with its field.
	add(npRow{class: "selector null", name: "merge patch invalid selector", method: http.MethodPatch, version: "v1beta1", target: "plain", ctype: ctMP,
		body: `{"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Like"}]}}}`, code: 422, fields: []string{"spec.selector.matchExpressions[0].operator"}})

	counts := map[string]int{}
	seen := map[string]bool{}
	for _, r := range rows {
		counts[r.class]++
		id := r.class + "/" + r.version + "/" + r.name + "/" + r.target
		if seen[id] {
			t.Fatalf("row %s twice", id)
		}
		seen[id] = true
		t.Run(id, func(t *testing.T) {
			path, body := npPools(r.version), []byte(r.body)
			var before map[string]any
			name := r.created
			if r.target != "" {
				name = fixtures[r.target]
				path += "/" + name
				before = c.get(t, npPools("v1alpha1")+"/"+name)
				if r.mutate != nil {
					obj := c.get(t, path)
					r.mutate(obj)
					body, _ = json.Marshal(obj)
				}
				if r.ctype == ctApply {
					body = []byte(strings.Replace(string(body), `"name":""`, fmt.Sprintf(`"name":%q`, name), 1))
				}
			}
			code, out := c.do(t, r.method, path, r.ctype, body, r.params)
			if code >= 500 {
				t.Fatalf("%s %s (%s) answered %d: %s", r.method, path, r.ctype, code, out)
			}
			if code != r.code {
				t.Fatalf("%s %s (%s) %s = %d, want %d: %.600s", r.method, path, r.ctype, body, code, r.code, out)
			}
			if code >= 400 {
				var st metav1.Status
				if err := json.Unmarshal(out, &st); err != nil || st.Kind != "Status" || int(st.Code) != code {
					t.Errorf("the %d answer is not a Status with that code: %.300s", code, out)
				}
				for _, f := range r.fields {
					found := strings.Contains(st.Message, f)
					if st.Details != nil {
						for _, cause := range st.Details.Causes {
							found = found || strings.Contains(cause.Field, f)
						}
					}
					if !found {
						t.Errorf("answer does not name %q: %.600s", f, out)
					}
				}
			}
			for _, a := range r.also {
				if !strings.Contains(string(out), a) {
					t.Errorf("answer does not say %q: %.600s", a, out)
				}
			}
			if r.created != "" {
				if code >= 400 {
					if got, out := c.do(t, http.MethodGet, npPools("v1alpha1")+"/"+r.created, "", nil, nil); got != http.StatusNotFound {
						t.Errorf("a refused create stored something: %d %.200s", got, out)
					}
					return
				}
				t.Cleanup(func() { c.do(t, http.MethodDelete, npPools("v1alpha1")+"/"+r.created, "", nil, nil) })
			}
			if code >= 400 {
				after := c.get(t, npPools("v1alpha1")+"/"+name)
				rvB := before["metadata"].(map[string]any)["resourceVersion"]
				rvA := after["metadata"].(map[string]any)["resourceVersion"]
				if rvA != rvB {
					t.Errorf("a refused request changed the object (resourceVersion %v -> %v)", rvB, rvA)
				}
				return
			}
			if r.check != nil {
				r.check(t, c.get(t, npPools("v1alpha1")+"/"+name), c.get(t, npPools("v1beta1")+"/"+name))
			}
		})
	}
	t.Logf("%d requests: %v", len(rows), counts)
	if len(rows) < 130 {
		t.Errorf("%d requests, want at least 130", len(rows))
	}
}

// TestNodePoolHostNetworkAnnotationApplyNoDrift: a GitOps tool applying the same v1alpha1 manifest with
// the annotation "false" again and again finds nothing to change: the second apply is a no-op and the
// object reads back as the manifest wrote it.
func TestNodePoolHostNetworkAnnotationApplyNoDrift(t *testing.T) {
	s := sharedServer(t)
	c := npClient{s: s, client: insecureHTTPClient()}
	t.Cleanup(c.client.CloseIdleConnections)
	name := uniqueName(t, "pool")
	path := npPools("v1alpha1") + "/" + name
	t.Cleanup(func() { c.do(t, http.MethodDelete, path, "", nil, nil) })
	manifest := npBody("v1alpha1", name, `"annotations":{"nodepool.openyurt.io/hostnetwork":"false"}`, `"labels":{"zone":"hz"}`)
	params := map[string]string{"fieldManager": "gitops"}
	var rv any
	for i := 0; i < 3; i++ {
		code, out := c.do(t, http.MethodPatch, path, ctApply, []byte(manifest), params)
		if code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("apply %d = %d: %s", i, code, out)
		}
		obj := map[string]any{}
		_ = json.Unmarshal(out, &obj)
		if got := npAnnotations(obj)["nodepool.openyurt.io/hostnetwork"]; got != "false" {
			t.Errorf("apply %d: annotation = %v, want false", i, got)
		}
		cur := obj["metadata"].(map[string]any)["resourceVersion"]
		if i > 0 && cur != rv {
			t.Errorf("apply %d of the same manifest changed the object (resourceVersion %v -> %v)", i, rv, cur)
		}
		rv = cur
	}
}
