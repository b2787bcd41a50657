package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stRow is one request of TestBadInputStatusTemplates and what the server must answer.
type stRow struct {
	class, name string
	method      string
	// target is the fixture the request goes to ("tapp", "dep", "sts"; path is then relative to it), or
	// "" for a create (path is the collection, created the object that must not exist afterwards).
	target, path string
	ctype        string
	body         string
	// mutate builds the body from the current object instead of body.
	mutate func(obj map[string]any)
	params map[string]string
	code   int
	// field must be the field of a cause (or appear in the message) of a refusal.
	field   string
	created string
}

// TestBadInputStatusTemplates is the bad-input suite of status counters and workload templates: TApp
// status counters above status.replicas (or availableReplicas above readyReplicas), YurtAppDaemon status
// names and condition texts, Deployment and StatefulSet template fields the core API checks, and container
// resizePolicy entries. The server runs in standalone mode (no dry run against a cluster): every refusal
// here is the server's own validation. Each refusal is a 422 naming the field and leaves the object as it
// was; the accepted rows are what the core API accepts (a maxSurge above 100% among them).
func TestBadInputStatusTemplates(t *testing.T) {
	s := sharedServer(t)
	ns := newNamespace(t)
	tapps := fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)
	yads := fmt.Sprintf("/apis/apps.openyurt.io/v1alpha1/namespaces/%s/yurtappdaemons", ns)
	targets := map[string]string{"tapp": tapps + "/st", "dep": yads + "/dep", "sts": yads + "/sts"}

	tappSpec := func(extra, containerExtra, podExtra string) string {
		return `{"replicas":2,` + extra + `"template":{"metadata":{"labels":{"app":"st"}},"spec":{` + podExtra +
			`"containers":[{"name":"c","image":"nginx"` + containerExtra + `}]}}}`
	}
	tappBody := func(name, spec string) string {
		return fmt.Sprintf(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":%q},"spec":%s}`, name, spec)
	}
	depSpec := func(specExtra, podExtra string) string {
		return `{"selector":{"matchLabels":{"app":"y"}},"nodepoolSelector":{"matchLabels":{"pool":"edge"}},"workloadTemplate":{"deploymentTemplate":` +
			`{"metadata":{"labels":{"app":"y"}},"spec":{` + specExtra + `"template":{"metadata":{"labels":{"app":"y"}},"spec":{` + podExtra +
			`"containers":[{"name":"c","image":"nginx"}]}}}}}}`
	}
	stsSpec := func(specExtra, podExtra string) string {
		return `{"selector":{"matchLabels":{"app":"z"}},"nodepoolSelector":{"matchLabels":{"pool":"edge"}},"workloadTemplate":{"statefulSetTemplate":` +
			`{"metadata":{"labels":{"app":"z"}},"spec":{"serviceName":"z",` + specExtra + `"template":{"metadata":{"labels":{"app":"z"}},"spec":{` + podExtra +
			`"containers":[{"name":"c","image":"nginx"}]}}}}}}`
	}
	yadBody := func(name, spec string) string {
		return fmt.Sprintf(`{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"YurtAppDaemon","metadata":{"name":%q},"spec":%s}`, name, spec)
	}

	client := insecureHTTPClient()
	t.Cleanup(client.CloseIdleConnections)
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
	mustWrite := func(t *testing.T, method, url, ctype, body string) {
		t.Helper()
		if code, out := do(t, method, url, ctype, []byte(body), nil); code >= 300 {
			t.Fatalf("%s %s = %d: %s", method, url, code, out)
		}
	}

	// Fixtures: a TApp whose status counts 2 instances, 2 of them ready and available, and two
	// YurtAppDaemons (Deployment and StatefulSet templates) with a status as the controller writes it.
	mustWrite(t, http.MethodPost, tapps, ctJSON, tappBody("st", tappSpec("", "", "")))
	mustWrite(t, http.MethodPatch, targets["tapp"]+"/status", ctMP,
		`{"status":{"replicas":2,"readyReplicas":2,"availableReplicas":2,"updatedReplicas":2,"updatedReadyReplicas":2}}`)
	mustWrite(t, http.MethodPost, yads, ctJSON, yadBody("dep", depSpec("", "")))
	mustWrite(t, http.MethodPost, yads, ctJSON, yadBody("sts", stsSpec("", "")))
	yadStatus := `{"status":{"currentRevision":"dep-5d8c7f9b6","templateType":"Deployment","nodepools":["beijing","hangzhou"],` +
		`"conditions":[{"type":"WorkLoadProvisioned","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"AllPoolsProvisioned","message":"ok"}]}}`
	mustWrite(t, http.MethodPatch, targets["dep"]+"/status", ctMP, yadStatus)

	var rows []stRow
	add := func(r stRow) { rows = append(rows, r) }
	create := func(class, name, coll, objName, body string, code int, fld string) {
		add(stRow{class: class, name: name, method: http.MethodPost, path: coll, ctype: ctJSON, body: body, code: code, field: fld, created: coll + "/" + objName})
	}

	// TApp status counters, through every way of writing the status.
	for _, c := range []struct{ name, status, field string }{
		{"readyReplicas above replicas", `{"replicas":2,"readyReplicas":3}`, "status.readyReplicas"},
		{"updatedReplicas above replicas", `{"updatedReplicas":3}`, "status.updatedReplicas"},
		{"updatedReadyReplicas above replicas", `{"updatedReadyReplicas":4}`, "status.updatedReadyReplicas"},
		{"availableReplicas above replicas", `{"replicas":3,"readyReplicas":3,"availableReplicas":4}`, "status.availableReplicas"},
		{"availableReplicas above readyReplicas", `{"readyReplicas":1,"availableReplicas":2}`, "status.availableReplicas"},
		{"replicas lowered below the counters", `{"replicas":1}`, "status.readyReplicas"},
		{"replicas zero", `{"replicas":0}`, "status.updatedReadyReplicas"},
		{"every counter above replicas", `{"replicas":1,"readyReplicas":5,"availableReplicas":5,"updatedReplicas":5,"updatedReadyReplicas":5}`, "status.availableReplicas"},
		{"counters at int32 max above replicas", `{"readyReplicas":2147483647}`, "status.readyReplicas"},
	} {
		add(stRow{class: "tapp status counters", name: c.name + " (merge)", method: http.MethodPatch, target: "tapp", path: "/status", ctype: ctMP, body: `{"status":` + c.status + `}`, code: 422, field: c.field})
		add(stRow{class: "tapp status counters", name: c.name + " (strategic)", method: http.MethodPatch, target: "tapp", path: "/status", ctype: ctSMP, body: `{"status":` + c.status + `}`, code: 422, field: c.field})
		var status map[string]any
		if err := json.Unmarshal([]byte(c.status), &status); err != nil {
			t.Fatal(err)
		}
		add(stRow{class: "tapp status counters", name: c.name + " (put)", method: http.MethodPut, target: "tapp", path: "/status", ctype: ctJSON, mutate: func(o map[string]any) {
			for k, v := range status {
				setPath(o, "status."+k, v)
			}
		}, code: 422, field: c.field})
	}
	add(stRow{class: "tapp status counters", name: "json patch readyReplicas", method: http.MethodPatch, target: "tapp", path: "/status", ctype: ctJP,
		body: `[{"op":"replace","path":"/status/readyReplicas","value":3}]`, code: 422, field: "status.readyReplicas"})
	add(stRow{class: "tapp status counters", name: "apply availableReplicas", method: http.MethodPatch, target: "tapp", path: "/status", ctype: ctApply,
		body:   `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"st"},"status":{"replicas":2,"readyReplicas":1,"availableReplicas":2}}`,
		params: map[string]string{"fieldManager": "bad-input", "force": "true"}, code: 422, field: "status.availableReplicas"})

	// YurtAppDaemon status names and condition texts.
	cond := func(reason, message string) string {
		return fmt.Sprintf(`{"status":{"conditions":[{"type":"WorkLoadProvisioned","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z","reason":%q,"message":%q}]}}`, reason, message)
	}
	for _, c := range []struct{ name, body, field string }{
		{"condition message above 32 KiB", cond("AllPoolsProvisioned", strings.Repeat("m", 32*1024+1)), "status.conditions[0].message"},
		{"condition message of 100 KiB", cond("AllPoolsProvisioned", strings.Repeat("m", 100*1024)), "status.conditions[0].message"},
		{"condition reason with spaces", cond("all pools provisioned", "ok"), "status.conditions[0].reason"},
		{"condition reason ending with a colon", cond("Provisioned:", "ok"), "status.conditions[0].reason"},
		{"condition reason above 1 KiB", cond(strings.Repeat("R", 1025), "ok"), "status.conditions[0].reason"},
		{"currentRevision not a name", `{"status":{"currentRevision":"Dep_Rev"}}`, "status.currentRevision"},
		{"currentRevision too long", `{"status":{"currentRevision":"` + strings.Repeat("r", 254) + `"}}`, "status.currentRevision"},
		{"nodepool not a label", `{"status":{"nodepools":["hangzhou","pool.a"]}}`, "status.nodepools[1]"},
		{"nodepool empty", `{"status":{"nodepools":[""]}}`, "status.nodepools[0]"},
		{"nodepool upper case", `{"status":{"nodepools":["HangZhou"]}}`, "status.nodepools[0]"},
	} {
		add(stRow{class: "yad status", name: c.name + " (merge)", method: http.MethodPatch, target: "dep", path: "/status", ctype: ctMP, body: c.body, code: 422, field: c.field})
		add(stRow{class: "yad status", name: c.name + " (strategic)", method: http.MethodPatch, target: "dep", path: "/status", ctype: ctSMP, body: c.body, code: 422, field: c.field})
	}
	add(stRow{class: "yad status", name: "json patch nodepool", method: http.MethodPatch, target: "dep", path: "/status", ctype: ctJP,
		body: `[{"op":"add","path":"/status/nodepools/-","value":"Not_A_Pool"}]`, code: 422, field: "status.nodepools[2]"})

	// Deployment template: maxUnavailable is bounded by 100%, maxSurge is not; the other fields as for a
	// Deployment.
	const dt = "spec.workloadTemplate.deploymentTemplate.spec"
	for _, c := range []struct{ name, specExtra, podExtra, field string }{
		{"maxUnavailable 150%", `"strategy":{"rollingUpdate":{"maxUnavailable":"150%"}},`, "", dt + ".strategy.rollingUpdate.maxUnavailable"},
		{"maxUnavailable 101% with maxSurge 150%", `"strategy":{"rollingUpdate":{"maxUnavailable":"101%","maxSurge":"150%"}},`, "", dt + ".strategy.rollingUpdate.maxUnavailable"},
		{"maxSurge not a percentage", `"strategy":{"rollingUpdate":{"maxSurge":"ten%"}},`, "", dt + ".strategy.rollingUpdate.maxSurge"},
		{"maxSurge negative", `"strategy":{"rollingUpdate":{"maxSurge":-1}},`, "", dt + ".strategy.rollingUpdate.maxSurge"},
		{"maxSurge and maxUnavailable 0%", `"strategy":{"rollingUpdate":{"maxSurge":"0%","maxUnavailable":0}},`, "", dt + ".strategy.rollingUpdate.maxUnavailable"},
		{"rollingUpdate with Recreate", `"strategy":{"type":"Recreate","rollingUpdate":{"maxSurge":"150%"}},`, "", dt + ".strategy.rollingUpdate"},
		{"strategy type", `"strategy":{"type":"BlueGreen"},`, "", dt + ".strategy.type"},
		{"minReadySeconds negative", `"minReadySeconds":-1,`, "", dt + ".minReadySeconds"},
		{"progressDeadlineSeconds negative", `"minReadySeconds":-5,"progressDeadlineSeconds":-2,`, "", dt + ".progressDeadlineSeconds"},
		{"progressDeadlineSeconds not above minReadySeconds", `"minReadySeconds":30,"progressDeadlineSeconds":30,`, "", dt + ".progressDeadlineSeconds"},
		{"activeDeadlineSeconds", "", `"activeDeadlineSeconds":60,`, dt + ".template.spec.activeDeadlineSeconds"},
		{"restartPolicy Never", "", `"restartPolicy":"Never",`, dt + ".template.spec.restartPolicy"},
	} {
		create("deployment template", c.name+" (create)", yads, "d-"+fmt.Sprint(len(rows)), yadBody("d-"+fmt.Sprint(len(rows)), depSpec(c.specExtra, c.podExtra)), 422, c.field)
		patch := `{"spec":{"workloadTemplate":{"deploymentTemplate":{"spec":{` + strings.TrimSuffix(c.specExtra, ",") + `}}}}}`
		if c.podExtra != "" {
			patch = `{"spec":{"workloadTemplate":{"deploymentTemplate":{"spec":{"template":{"spec":{` + strings.TrimSuffix(c.podExtra, ",") + `}}}}}}}`
		}
		add(stRow{class: "deployment template", name: c.name + " (merge)", method: http.MethodPatch, target: "dep", ctype: ctMP, body: patch, code: 422, field: c.field})
	}

	// StatefulSet template: the fields a StatefulSet checks.
	const st = "spec.workloadTemplate.statefulSetTemplate.spec"
	for _, c := range []struct{ name, specExtra, podExtra, field string }{
		{"retention whenDeleted Bogus", `"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Bogus"},`, "", st + ".persistentVolumeClaimRetentionPolicy.whenDeleted"},
		{"retention whenScaled Sometimes", `"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Sometimes"},`, "", st + ".persistentVolumeClaimRetentionPolicy.whenScaled"},
		{"retention whenScaled lower case", `"persistentVolumeClaimRetentionPolicy":{"whenScaled":"delete"},`, "", st + ".persistentVolumeClaimRetentionPolicy.whenScaled"},
		{"ordinals start -1", `"ordinals":{"start":-1},`, "", st + ".ordinals.start"},
		{"ordinals start -2147483648", `"ordinals":{"start":-2147483648},`, "", st + ".ordinals.start"},
		{"podManagementPolicy", `"podManagementPolicy":"Random",`, "", st + ".podManagementPolicy"},
		{"updateStrategy type", `"updateStrategy":{"type":"Rolling"},`, "", st + ".updateStrategy.type"},
		{"rollingUpdate with OnDelete", `"updateStrategy":{"type":"OnDelete","rollingUpdate":{"maxUnavailable":1}},`, "", st + ".updateStrategy.rollingUpdate"},
		{"maxUnavailable 0", `"updateStrategy":{"rollingUpdate":{"maxUnavailable":0}},`, "", st + ".updateStrategy.rollingUpdate.maxUnavailable"},
		{"maxUnavailable 150%", `"updateStrategy":{"rollingUpdate":{"maxUnavailable":"150%"}},`, "", st + ".updateStrategy.rollingUpdate.maxUnavailable"},
		{"minReadySeconds negative", `"minReadySeconds":-1,`, "", st + ".minReadySeconds"},
		{"replicas negative", `"replicas":-1,`, "", st + ".replicas"},
		{"activeDeadlineSeconds", "", `"activeDeadlineSeconds":1,`, st + ".template.spec.activeDeadlineSeconds"},
	} {
		create("statefulset template", c.name+" (create)", yads, "s-"+fmt.Sprint(len(rows)), yadBody("s-"+fmt.Sprint(len(rows)), stsSpec(c.specExtra, c.podExtra)), 422, c.field)
		patch := `{"spec":{"workloadTemplate":{"statefulSetTemplate":{"spec":{` + strings.TrimSuffix(c.specExtra, ",") + `}}}}}`
		if c.podExtra != "" {
			patch = `{"spec":{"workloadTemplate":{"statefulSetTemplate":{"spec":{"template":{"spec":{` + strings.TrimSuffix(c.podExtra, ",") + `}}}}}}}`
		}
		add(stRow{class: "statefulset template", name: c.name + " (merge)", method: http.MethodPatch, target: "sts", ctype: ctMP, body: patch, code: 422, field: c.field})
	}

	// TApp fields of the same families.
	for _, c := range []struct{ name, extra, field string }{
		{"retention whenDeleted Bogus", `"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Bogus","whenScaled":"Retain"},`, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted"},
		{"retention whenScaled Sometimes", `"persistentVolumeClaimRetentionPolicy":{"whenScaled":"Sometimes"},`, "spec.persistentVolumeClaimRetentionPolicy.whenScaled"},
		{"podManagementPolicy", `"podManagementPolicy":"Random",`, "spec.podManagementPolicy"},
		{"minReadySeconds negative", `"minReadySeconds":-1,`, "spec.minReadySeconds"},
	} {
		create("tapp spec", c.name+" (create)", tapps, "t-"+fmt.Sprint(len(rows)), tappBody("t-"+fmt.Sprint(len(rows)), tappSpec(c.extra, "", "")), 422, c.field)
		add(stRow{class: "tapp spec", name: c.name + " (merge)", method: http.MethodPatch, target: "tapp", ctype: ctMP, body: `{"spec":{` + strings.TrimSuffix(c.extra, ",") + `}}`, code: 422, field: c.field})
	}

	// Container resizePolicy, in TApp templates (spec.template and a templatePool entry) and in both
	// workload templates.
	const c0 = ".spec.containers[0].resizePolicy"
	for _, c := range []struct{ name, policy, podExtra, field string }{
		{"unknown resource", `[{"resourceName":"gpu","restartPolicy":"NotRequired"}]`, "", "[0].resourceName"},
		{"storage resource", `[{"resourceName":"ephemeral-storage","restartPolicy":"NotRequired"}]`, "", "[0].resourceName"},
		{"duplicate resource", `[{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"cpu","restartPolicy":"RestartContainer"}]`, "", "[1].resourceName"},
		{"empty entry", `[{}]`, "", "[0].resourceName"},
		{"no restartPolicy", `[{"resourceName":"memory"}]`, "", "[0].restartPolicy"},
		{"unknown restartPolicy", `[{"resourceName":"memory","restartPolicy":"Sometimes"}]`, "", "[0].restartPolicy"},
		{"restartPolicy in lower case", `[{"resourceName":"cpu","restartPolicy":"notRequired"}]`, "", "[0].restartPolicy"},
		{"RestartContainer in a pod restartPolicy Never", `[{"resourceName":"memory","restartPolicy":"RestartContainer"}]`, `"restartPolicy":"Never",`, "[0].restartPolicy"},
	} {
		container := `,"resizePolicy":` + c.policy
		create("resizePolicy", "tapp "+c.name+" (create)", tapps, "r-"+fmt.Sprint(len(rows)), tappBody("r-"+fmt.Sprint(len(rows)), tappSpec("", container, c.podExtra)), 422, "spec.template"+c0+c.field)
		pool := `"templatePool":{"big":{"metadata":{"labels":{"app":"st"}},"spec":{` + c.podExtra + `"containers":[{"name":"c","image":"nginx"` + container + `}]}}},`
		create("resizePolicy", "tapp pool entry "+c.name+" (create)", tapps, "r-"+fmt.Sprint(len(rows)), tappBody("r-"+fmt.Sprint(len(rows)), tappSpec(pool, "", "")), 422, "spec.templatePool[big]"+c0+c.field)
		add(stRow{class: "resizePolicy", name: "tapp " + c.name + " (strategic)", method: http.MethodPatch, target: "tapp", ctype: ctSMP,
			body: `{"spec":{"template":{"spec":{` + c.podExtra + `"containers":[{"name":"c","resizePolicy":` + c.policy + `}]}}}}`, code: 422, field: "spec.template" + c0 + c.field})
		if c.podExtra == "" { // a workload template's restartPolicy is Always
			add(stRow{class: "resizePolicy", name: "deployment template " + c.name + " (json)", method: http.MethodPatch, target: "dep", ctype: ctJP,
				body: `[{"op":"add","path":"/spec/workloadTemplate/deploymentTemplate/spec/template/spec/containers/0/resizePolicy","value":` + c.policy + `}]`,
				code: 422, field: "spec.workloadTemplate.deploymentTemplate.spec.template" + c0 + c.field})
			add(stRow{class: "resizePolicy", name: "statefulset template " + c.name + " (json)", method: http.MethodPatch, target: "sts", ctype: ctJP,
				body: `[{"op":"add","path":"/spec/workloadTemplate/statefulSetTemplate/spec/template/spec/containers/0/resizePolicy","value":` + c.policy + `}]`,
				code: 422, field: "spec.workloadTemplate.statefulSetTemplate.spec.template" + c0 + c.field})
		}
	}
	create("resizePolicy", "tapp init container duplicate resource (create)", tapps, "r-init", tappBody("r-init", tappSpec("", "",
		`"initContainers":[{"name":"i","image":"busybox","resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"cpu","restartPolicy":"NotRequired"}]}],`)),
		422, "spec.template.spec.initContainers[0].resizePolicy[1].resourceName")

	// What the core API accepts is accepted.
	accept := func(class, name, coll, objName, body string) {
		add(stRow{class: class, name: name, method: http.MethodPost, path: coll, ctype: ctJSON, body: body, code: 201})
	}
	accept("accepted", "maxSurge 150%", yads, "ok-surge-150", yadBody("ok-surge-150", depSpec(`"strategy":{"rollingUpdate":{"maxSurge":"150%"}},`, "")))
	accept("accepted", "maxSurge 1000% with maxUnavailable 0", yads, "ok-surge-1000", yadBody("ok-surge-1000", depSpec(`"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"1000%","maxUnavailable":0}},`, "")))
	accept("accepted", "maxSurge 150% with maxUnavailable 100%", yads, "ok-surge-mu", yadBody("ok-surge-mu", depSpec(`"strategy":{"rollingUpdate":{"maxSurge":"150%","maxUnavailable":"100%"}},`, "")))
	accept("accepted", "maxSurge 50 pods of 2", yads, "ok-surge-int", yadBody("ok-surge-int", depSpec(`"replicas":2,"strategy":{"rollingUpdate":{"maxSurge":50}},`, "")))
	accept("accepted", "statefulset retention, ordinals and policies", yads, "ok-sts", yadBody("ok-sts", stsSpec(
		`"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Delete"},"ordinals":{"start":5},"podManagementPolicy":"Parallel","minReadySeconds":10,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"100%"}},`, "")))
	accept("accepted", "tapp resizePolicy", tapps, "ok-resize", tappBody("ok-resize", tappSpec("",
		`,"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"memory","restartPolicy":"RestartContainer"}]`,
		`"initContainers":[{"name":"side","image":"busybox","restartPolicy":"Always","resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"}]}],`)))
	accept("accepted", "tapp resizePolicy of an init container", tapps, "ok-resize-init", tappBody("ok-resize-init", tappSpec("", "",
		`"initContainers":[{"name":"i","image":"busybox","resizePolicy":[{"resourceName":"memory","restartPolicy":"RestartContainer"}]}],`)))
	accept("accepted", "tapp resizePolicy NotRequired in a pod restartPolicy Never", tapps, "ok-resize-never", tappBody("ok-resize-never", tappSpec("",
		`,"resizePolicy":[{"resourceName":"memory","restartPolicy":"NotRequired"}]`, `"restartPolicy":"Never",`)))
	add(stRow{class: "accepted", name: "tapp status counters equal to replicas", method: http.MethodPatch, target: "tapp", path: "/status", ctype: ctMP,
		body: `{"status":{"replicas":3,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":3,"updatedReadyReplicas":3}}`, code: 200})
	add(stRow{class: "accepted", name: "yad condition message of 32 KiB", method: http.MethodPatch, target: "dep", path: "/status", ctype: ctMP,
		body: cond("AllPoolsProvisioned", strings.Repeat("m", 32*1024)), code: 200})
	add(stRow{class: "accepted", name: "yad condition without a reason", method: http.MethodPatch, target: "dep", path: "/status", ctype: ctMP,
		body: `{"status":{"conditions":[{"type":"WorkLoadUpdated","status":"False","lastTransitionTime":"2024-01-01T00:00:00Z"}]}}`, code: 200})

	counts := map[string]int{}
	seen := map[string]bool{}
	for _, r := range rows {
		counts[r.class]++
		key := r.class + "/" + r.name
		if seen[key] {
			t.Fatalf("two rows named %q", key)
		}
		seen[key] = true
		t.Run(key, func(t *testing.T) {
			url, body := r.path, []byte(r.body)
			var before map[string]any
			if r.target != "" {
				url = targets[r.target] + r.path
				before = get(t, targets[r.target])
				if r.mutate != nil {
					obj := get(t, targets[r.target])
					r.mutate(obj)
					body, _ = json.Marshal(obj)
				}
			}
			code, out := do(t, r.method, url, r.ctype, body, r.params)
			if code >= 500 {
				t.Fatalf("%s %s answered %d: %s", r.method, url, code, out)
			}
			if code != r.code {
				t.Fatalf("%s %s (%s) = %d, want %d: %.600s", r.method, url, r.ctype, code, r.code, out)
			}
			if code < 300 {
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(out, &st); err != nil || st.Kind != "Status" || int(st.Code) != code {
				t.Errorf("the %d answer is not a Status with that code: %.300s", code, out)
			}
			if r.field != "" {
				found := strings.Contains(st.Message, r.field)
				if st.Details != nil {
					for _, c := range st.Details.Causes {
						if c.Field == r.field || strings.HasPrefix(c.Field, r.field+".") || strings.HasPrefix(c.Field, r.field+"[") {
							found = true
						}
					}
				}
				if !found {
					t.Errorf("the answer does not name %q: %.600s", r.field, out)
				}
			}
			if r.created != "" {
				if c, out := do(t, http.MethodGet, r.created, "", nil, nil); c != http.StatusNotFound {
					t.Errorf("a refused create stored something: GET %s = %d: %.200s", r.created, c, out)
				}
				return
			}
			after := get(t, targets[r.target])
			rvB := before["metadata"].(map[string]any)["resourceVersion"]
			rvA := after["metadata"].(map[string]any)["resourceVersion"]
			if rvA != rvB {
				t.Errorf("a refused request changed the object (resourceVersion %v -> %v)", rvB, rvA)
			}
		})
	}
	if len(rows) < 150 {
		t.Errorf("%d requests, want at least 150", len(rows))
	}
	t.Logf("%d requests: %v", len(rows), counts)
}
