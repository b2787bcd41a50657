//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHostileTemplatesAndStatusVsBuiltin sends the same bad workload template or status to a TApp or a
// YurtAppDaemon through the aggregator and to a StatefulSet, Deployment or Pod on kube-apiserver, and
// requires both to refuse it with 422 (the TApp or YurtAppDaemon naming the field); what the core API
// accepts (a Deployment's maxSurge above 100%, resize policies of containers) both must accept. The server
// refuses these with its own validation, not only through the dry run of cluster mode, so standalone mode
// answers the same (test/integration TestBadInputStatusTemplates).
func TestHostileTemplatesAndStatusVsBuiltin(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "hostile-tpl")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := kubeClient.CoreV1().RESTClient()

	type answer struct {
		code   int
		status metav1.Status
		body   string
	}
	send := func(method, path, ctype, body string, params map[string]string) answer {
		req := client.Verb(method).AbsPath(path).SetHeader("Content-Type", ctype).Body([]byte(body))
		for k, v := range params {
			req = req.Param(k, v)
		}
		result := req.Do(ctx)
		var a answer
		result.StatusCode(&a.code)
		raw, _ := result.Raw()
		a.body = string(raw)
		_ = json.Unmarshal(raw, &a.status)
		return a
	}
	names := func(a answer, fld string) bool {
		if strings.Contains(a.status.Message, fld) {
			return true
		}
		if a.status.Details != nil {
			for _, c := range a.status.Details.Causes {
				if strings.HasPrefix(c.Field, fld) {
					return true
				}
			}
		}
		return false
	}
	dryRun := map[string]string{"dryRun": "All"}
	apis := func(group, resource string) string {
		return fmt.Sprintf("/apis/%s/namespaces/%s/%s", group, ns, resource)
	}
	tapps, yads := apis("apps.tkestack.io/v1", "tapps"), apis("apps.openyurt.io/v1alpha1", "yurtappdaemons")
	statefulSets, deployments, pods := apis("apps/v1", "statefulsets"), apis("apps/v1", "deployments"), fmt.Sprintf("/api/v1/namespaces/%s/pods", ns)

	// Workload specs shared by the YurtAppDaemon's template and the built-in workload.
	podSpec := func(podExtra, containerExtra string) string {
		return `{"metadata":{"labels":{"app":"h"}},"spec":{` + podExtra + `"containers":[{"name":"c","image":"nginx:1.25"` + containerExtra + `}]}}`
	}
	workloadSpec := func(specExtra, podExtra, containerExtra string) string {
		return `{"replicas":0,"selector":{"matchLabels":{"app":"h"}},` + specExtra + `"template":` + podSpec(podExtra, containerExtra) + `}`
	}
	yad := func(kind, spec string) string {
		key := map[string]string{"Deployment": "deploymentTemplate", "StatefulSet": "statefulSetTemplate"}[kind]
		return `{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"YurtAppDaemon","metadata":{"generateName":"h-"},"spec":{` +
			`"selector":{"matchLabels":{"app":"h"}},"nodepoolSelector":{"matchLabels":{"pool":"none"}},"workloadTemplate":{"` + key +
			`":{"metadata":{"labels":{"app":"h"}},"spec":` + spec + `}}}}`
	}
	builtin := func(kind, spec string) string {
		return `{"apiVersion":"apps/v1","kind":"` + kind + `","metadata":{"generateName":"h-"},"spec":` + spec + `}`
	}
	tapp := func(podExtra, containerExtra string) string {
		return `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"generateName":"h-"},"spec":{"replicas":1,"template":` + podSpec(podExtra, containerExtra) + `}}`
	}
	pod := func(podExtra, containerExtra string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"h-"},"spec":{` + podExtra + `"containers":[{"name":"c","image":"nginx:1.25"` + containerExtra + `}]}}`
	}

	type request struct{ path, body string }
	cases := []struct {
		name string
		// ours goes through the aggregator, theirs to kube-apiserver; both are dry-run creates.
		ours, theirs request
		// field is the field our answer must name; empty when both must accept (201).
		field string
	}{}
	addPair := func(name string, ours, theirs request, field string) {
		cases = append(cases, struct {
			name         string
			ours, theirs request
			field        string
		}{name, ours, theirs, field})
	}
	const stsT, depT = "spec.workloadTemplate.statefulSetTemplate.", "spec.workloadTemplate.deploymentTemplate."
	for _, c := range []struct{ name, specExtra, podExtra, field string }{
		{"retention whenDeleted Bogus", `"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Bogus"},`, "", "spec.persistentVolumeClaimRetentionPolicy.whenDeleted"},
		{"retention whenScaled Sometimes", `"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Sometimes"},`, "", "spec.persistentVolumeClaimRetentionPolicy.whenScaled"},
		{"ordinals.start -1", `"ordinals":{"start":-1},`, "", "spec.ordinals"},
		{"podManagementPolicy Random", `"podManagementPolicy":"Random",`, "", "spec.podManagementPolicy"},
		{"updateStrategy type Rolling", `"updateStrategy":{"type":"Rolling"},`, "", "spec.updateStrategy"},
		{"rollingUpdate with OnDelete", `"updateStrategy":{"type":"OnDelete","rollingUpdate":{"partition":0}},`, "", "spec.updateStrategy.rollingUpdate"},
		{"minReadySeconds -1", `"minReadySeconds":-1,`, "", "spec.minReadySeconds"},
		{"replicas -1 in the template", `"replicas":-1,`, "", "spec.replicas"},
		{"activeDeadlineSeconds", "", `"activeDeadlineSeconds":30,`, "spec.template.spec.activeDeadlineSeconds"},
		{"restartPolicy Never", "", `"restartPolicy":"Never",`, "spec.template.spec.restartPolicy"},
	} {
		spec := strings.Replace(workloadSpec(c.specExtra, c.podExtra, ""), `{"replicas":0,"selector"`, `{"serviceName":"h","replicas":0,"selector"`, 1)
		if strings.Contains(c.specExtra, `"replicas"`) {
			spec = strings.Replace(spec, `"replicas":0,`, "", 1)
		}
		addPair("StatefulSet "+c.name, request{yads, yad("StatefulSet", spec)}, request{statefulSets, builtin("StatefulSet", spec)}, stsT+c.field)
	}
	for _, c := range []struct{ name, specExtra, podExtra, containerExtra, field string }{
		{"maxUnavailable 150%", `"strategy":{"rollingUpdate":{"maxUnavailable":"150%"}},`, "", "", "spec.strategy.rollingUpdate.maxUnavailable"},
		{"maxSurge ten%", `"strategy":{"rollingUpdate":{"maxSurge":"ten%"}},`, "", "", "spec.strategy.rollingUpdate.maxSurge"},
		{"maxSurge -1", `"strategy":{"rollingUpdate":{"maxSurge":-1}},`, "", "", "spec.strategy.rollingUpdate.maxSurge"},
		{"maxSurge 0% and maxUnavailable 0", `"strategy":{"rollingUpdate":{"maxSurge":"0%","maxUnavailable":0}},`, "", "", "spec.strategy.rollingUpdate.maxUnavailable"},
		{"strategy Recreate with rollingUpdate", `"strategy":{"type":"Recreate","rollingUpdate":{"maxSurge":1}},`, "", "", "spec.strategy.rollingUpdate"},
		{"minReadySeconds -1", `"minReadySeconds":-1,`, "", "", "spec.minReadySeconds"},
		{"progressDeadlineSeconds -1", `"progressDeadlineSeconds":-1,`, "", "", "spec.progressDeadlineSeconds"},
		{"progressDeadlineSeconds equal to minReadySeconds", `"minReadySeconds":20,"progressDeadlineSeconds":20,`, "", "", "spec.progressDeadlineSeconds"},
		{"activeDeadlineSeconds", "", `"activeDeadlineSeconds":30,`, "", "spec.template.spec.activeDeadlineSeconds"},
		{"resizePolicy duplicate", "", "", `,"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"cpu","restartPolicy":"NotRequired"}]`, "spec.template.spec.containers[0].resizePolicy"},
		{"resizePolicy unknown resource", "", "", `,"resizePolicy":[{"resourceName":"gpu","restartPolicy":"NotRequired"}]`, "spec.template.spec.containers[0].resizePolicy"},
		{"maxSurge 150% (accepted)", `"strategy":{"rollingUpdate":{"maxSurge":"150%"}},`, "", "", ""},
		{"maxSurge 1000% and maxUnavailable 0 (accepted)", `"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"1000%","maxUnavailable":0}},`, "", "", ""},
		{"maxSurge 150% and maxUnavailable 100% (accepted)", `"strategy":{"rollingUpdate":{"maxSurge":"150%","maxUnavailable":"100%"}},`, "", "", ""},
	} {
		spec := workloadSpec(c.specExtra, c.podExtra, c.containerExtra)
		field := ""
		if c.field != "" {
			field = depT + c.field
		}
		addPair("Deployment "+c.name, request{yads, yad("Deployment", spec)}, request{deployments, builtin("Deployment", spec)}, field)
	}
	addPair("StatefulSet retention, ordinals and policies (accepted)",
		request{yads, yad("StatefulSet", workloadSpec(`"serviceName":"h","persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Delete"},"ordinals":{"start":5},"podManagementPolicy":"Parallel","updateStrategy":{"type":"OnDelete"},`, "", ""))},
		request{statefulSets, builtin("StatefulSet", workloadSpec(`"serviceName":"h","persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Delete"},"ordinals":{"start":5},"podManagementPolicy":"Parallel","updateStrategy":{"type":"OnDelete"},`, "", ""))}, "")

	// Container resizePolicy in a TApp template against a Deployment (which validates its pod template as
	// the core API validates a pod) and against a Pod where the pod's restartPolicy matters.
	for _, c := range []struct{ name, podExtra, containerExtra, field string }{
		{"unknown resource", "", `,"resizePolicy":[{"resourceName":"gpu","restartPolicy":"NotRequired"}]`, "spec.template.spec.containers[0].resizePolicy[0]"},
		{"duplicate resource", "", `,"resizePolicy":[{"resourceName":"memory","restartPolicy":"NotRequired"},{"resourceName":"memory","restartPolicy":"RestartContainer"}]`, "spec.template.spec.containers[0].resizePolicy[1]"},
		{"empty entry", "", `,"resizePolicy":[{}]`, "spec.template.spec.containers[0].resizePolicy[0]"},
		{"restartPolicy Sometimes", "", `,"resizePolicy":[{"resourceName":"cpu","restartPolicy":"Sometimes"}]`, "spec.template.spec.containers[0].resizePolicy[0].restartPolicy"},
		{"no restartPolicy", "", `,"resizePolicy":[{"resourceName":"cpu"}]`, "spec.template.spec.containers[0].resizePolicy[0]"},
		{"init container duplicate resource", `"initContainers":[{"name":"i","image":"busybox","resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"cpu","restartPolicy":"NotRequired"}]}],`, "", "spec.template.spec.initContainers[0].resizePolicy[1]"},
		{"init container (accepted)", `"initContainers":[{"name":"i","image":"busybox","resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"}]}],`, "", ""},
		{"cpu and memory (accepted)", "", `,"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"memory","restartPolicy":"RestartContainer"}]`, ""},
	} {
		addPair("TApp resizePolicy "+c.name, request{tapps, tapp(c.podExtra, c.containerExtra)},
			request{deployments, builtin("Deployment", workloadSpec("", c.podExtra, c.containerExtra))}, c.field)
	}
	addPair("TApp resizePolicy RestartContainer under restartPolicy Never",
		request{tapps, tapp(`"restartPolicy":"Never",`, `,"resizePolicy":[{"resourceName":"memory","restartPolicy":"RestartContainer"}]`)},
		request{pods, pod(`"restartPolicy":"Never",`, `,"resizePolicy":[{"resourceName":"memory","restartPolicy":"RestartContainer"}]`)},
		"spec.template.spec.containers[0].resizePolicy[0].restartPolicy")
	addPair("TApp resizePolicy NotRequired under restartPolicy Never (accepted)",
		request{tapps, tapp(`"restartPolicy":"Never",`, `,"resizePolicy":[{"resourceName":"memory","restartPolicy":"NotRequired"}]`)},
		request{pods, pod(`"restartPolicy":"Never",`, `,"resizePolicy":[{"resourceName":"memory","restartPolicy":"NotRequired"}]`)}, "")

	var report []string
	for _, c := range cases {
		ours := send(http.MethodPost, c.ours.path, "application/json", c.ours.body, dryRun)
		theirs := send(http.MethodPost, c.theirs.path, "application/json", c.theirs.body, dryRun)
		report = append(report, fmt.Sprintf("%-70s ours %d, core %d", c.name, ours.code, theirs.code))
		want := http.StatusUnprocessableEntity
		if c.field == "" {
			want = http.StatusCreated
		}
		if theirs.code != want {
			t.Errorf("%s: kube-apiserver answered %d, the test expects %d (the core API's rule changed?): %.400s", c.name, theirs.code, want, theirs.body)
		}
		if ours.code != want {
			t.Errorf("%s: answered %d, want %d as the core API: %.600s", c.name, ours.code, want, ours.body)
			continue
		}
		if c.field != "" && !names(ours, c.field) {
			t.Errorf("%s: the answer does not name %s: %.600s", c.name, c.field, ours.body)
		}
	}

	// Status counters: a TApp against a StatefulSet and a Deployment.
	mustCreate := func(path, body string) string {
		a := send(http.MethodPost, path, "application/json", body, nil)
		if a.code != http.StatusCreated {
			t.Fatalf("POST %s = %d: %s", path, a.code, a.body)
		}
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(a.body), &obj); err != nil {
			t.Fatal(err)
		}
		return path + "/" + obj.Metadata.Name
	}
	tappPath := mustCreate(tapps, strings.Replace(tapp("", ""), `"replicas":1`, `"replicas":0`, 1))
	stsPath := mustCreate(statefulSets, builtin("StatefulSet", strings.Replace(workloadSpec("", "", ""), `{"replicas":0,`, `{"serviceName":"h","replicas":0,`, 1)))
	depPath := mustCreate(deployments, builtin("Deployment", workloadSpec("", "", "")))
	for _, c := range []struct{ name, status, field string }{
		{"readyReplicas above replicas", `{"replicas":1,"readyReplicas":2,"availableReplicas":0}`, "status.readyReplicas"},
		{"updatedReplicas above replicas", `{"replicas":1,"readyReplicas":0,"updatedReplicas":3,"availableReplicas":0}`, "status.updatedReplicas"},
		{"availableReplicas above replicas", `{"replicas":1,"readyReplicas":1,"availableReplicas":2}`, "status.availableReplicas"},
		{"availableReplicas above readyReplicas", `{"replicas":3,"readyReplicas":1,"availableReplicas":2}`, "status.availableReplicas"},
	} {
		body := `{"status":` + c.status + `}`
		ours := send(http.MethodPatch, tappPath+"/status", "application/merge-patch+json", body, nil)
		for _, tg := range []struct{ kind, path string }{{"StatefulSet", stsPath}, {"Deployment", depPath}} {
			theirs := send(http.MethodPatch, tg.path+"/status", "application/merge-patch+json", body, nil)
			report = append(report, fmt.Sprintf("%-70s ours %d, core %d", "status "+c.name+" vs "+tg.kind, ours.code, theirs.code))
			if theirs.code != http.StatusUnprocessableEntity {
				t.Errorf("status %s: the %s answered %d, the test expects 422: %.300s", c.name, tg.kind, theirs.code, theirs.body)
			}
		}
		if ours.code != http.StatusUnprocessableEntity || !names(ours, c.field) {
			t.Errorf("status %s: the TApp answered %d, want 422 naming %s: %.400s", c.name, ours.code, c.field, ours.body)
		}
	}
	t.Logf("answers:\n%s", strings.Join(report, "\n"))
}
