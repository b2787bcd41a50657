//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// webTApp is a TApp with two containers, for strategic merge patches.
const webTApp = `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: web
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1.25
      - name: sidecar
        image: busybox:1.36
        command: ["sleep", "3600"]
`

// ssaTApp is applied server-side; %REPLICAS% and %IMAGE% are replaced.
const ssaTApp = `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: ssa
spec:
  replicas: %REPLICAS%
  template:
    metadata:
      labels:
        app: ssa
    spec:
      containers:
      - name: app
        image: %IMAGE%
`

func ssaManifest(replicas, image string) string {
	return strings.NewReplacer("%REPLICAS%", replicas, "%IMAGE%", image).Replace(ssaTApp)
}

// jsonpath returns a jsonpath expression of an object, read with kubectl get.
func jsonpath(t *testing.T, ns, object, expr string) string {
	t.Helper()
	return mustKubectl(t, "get", "-n", ns, object, "-o", "jsonpath="+expr)
}

// TestKubectlTApp drives a TApp through the verbs of kubectl, through the aggregator.
func TestKubectlTApp(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "kubectl")
	example := repoPath("artifacts", "examples", "tapp.yaml")

	t.Run("apply", func(t *testing.T) {
		out := mustKubectl(t, "apply", "-n", ns, "-f", example)
		requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/example-tapp created")
		// Re-applying changes nothing. kubectl cannot compute a strategic merge patch for a TApp with a
		// templatePool (its OpenAPI patch-metadata lookup does not descend into maps of structs), falls back to
		// a JSON merge patch that resends the containers, and says "configured"; the object must stay as is.
		// (The controller writes the status meanwhile, so the resourceVersion moves; the generation must not.)
		out = mustKubectl(t, "apply", "-n", ns, "-f", example)
		requireContains(t, "second kubectl apply", out, "tapp.apps.tkestack.io/example-tapp")
		if got := jsonpath(t, ns, "tapp/example-tapp", "{.metadata.generation}"); got != "1" {
			t.Errorf("generation after re-applying = %q, want 1", got)
		}
		if got := jsonpath(t, ns, "tapp/example-tapp", "{.spec.updateStrategy.maxUnavailable} {.spec.defaultTemplateName} {.spec.selector.matchLabels.app}"); got != "50% default example-tapp" {
			t.Errorf("stored maxUnavailable, defaultTemplateName, selector = %q, want %q", got, "50% default example-tapp")
		}
	})

	t.Run("get", func(t *testing.T) {
		for _, resource := range []string{"tapp", "tapps", "tapps.apps.tkestack.io", "tapps.v1.apps.tkestack.io"} {
			tb := parseTable(t, mustKubectl(t, "get", "-n", ns, resource))
			tb.requireHeader(t, "NAME", "DESIRED", "CURRENT", "READY", "APPSTATUS", "AGE")
			if got := tb.cell(t, "example-tapp", "DESIRED"); got != "3" {
				t.Errorf("get %s: DESIRED = %q, want 3", resource, got)
			}
		}
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "example-tapp", "-o", "wide"))
		// As for built-in workloads, AGE comes after the default columns and before the wide ones.
		tb.requireHeader(t, "NAME", "DESIRED", "CURRENT", "READY", "APPSTATUS", "AGE", "IMAGES", "SELECTOR", "AVAILABLE", "REVISION")
		if got := tb.cell(t, "example-tapp", "IMAGES"); got != "nginx:1.7.9" {
			t.Errorf("IMAGES = %q, want nginx:1.7.9", got)
		}
		if got := tb.cell(t, "example-tapp", "SELECTOR"); got != "app=example-tapp" {
			t.Errorf("SELECTOR = %q, want app=example-tapp", got)
		}
	})

	t.Run("describe", func(t *testing.T) {
		out := mustKubectl(t, "describe", "-n", ns, "tapp", "example-tapp")
		requireContains(t, "kubectl describe", out, "example-tapp", "Namespace:", ns, "Spec:", "Replicas:", "nginx:1.7.9", "Max Unavailable:")
	})

	t.Run("explain", func(t *testing.T) {
		out := mustKubectl(t, "explain", "tapp.spec.updateStrategy")
		requireContains(t, "kubectl explain", out, "TApp", "apps.tkestack.io", "maxUnavailable", "forceUpdate")
		out = mustKubectl(t, "explain", "tapps.spec.updateStrategy.maxUnavailable")
		requireContains(t, "kubectl explain maxUnavailable", out, "maxUnavailable")
	})

	containers := func(t *testing.T) string {
		return jsonpath(t, ns, "tapp/web", `{range .spec.template.spec.containers[*]}{.name}={.image};{end}`)
	}

	t.Run("patch strategic", func(t *testing.T) {
		out := mustKubectlIn(t, webTApp, "apply", "-n", ns, "-f", "-")
		requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/web created")
		// Without a templatePool kubectl computes a strategic merge patch: the defaults the API adds are no
		// difference.
		out = mustKubectlIn(t, webTApp, "apply", "-n", ns, "-f", "-")
		requireContains(t, "second kubectl apply", out, "tapp.apps.tkestack.io/web unchanged")
		out = mustKubectl(t, "patch", "-n", ns, "tapp", "web", "--type=strategic",
			"-p", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.26"}]}}}}`)
		requireContains(t, "kubectl patch", out, "tapp.apps.tkestack.io/web patched")
		if got, want := containers(t), "app=nginx:1.26;sidecar=busybox:1.36;"; got != want {
			t.Errorf("containers after a strategic merge patch = %q, want %q (the sidecar must be kept)", got, want)
		}
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "web", "-o", "wide"))
		if got := tb.cell(t, "web", "IMAGES"); got != "nginx:1.26,busybox:1.36" {
			t.Errorf("IMAGES = %q, want nginx:1.26,busybox:1.36", got)
		}
	})

	t.Run("patch merge", func(t *testing.T) {
		out := mustKubectl(t, "patch", "-n", ns, "tapp", "web", "--type=merge",
			"-p", `{"metadata":{"labels":{"tier":"frontend"}},"spec":{"updateStrategy":{"maxUnavailable":2}}}`)
		requireContains(t, "kubectl patch", out, "tapp.apps.tkestack.io/web patched")
		if got := jsonpath(t, ns, "tapp/web", "{.metadata.labels.tier} {.spec.updateStrategy.maxUnavailable}"); got != "frontend 2" {
			t.Errorf("label tier and maxUnavailable = %q, want %q", got, "frontend 2")
		}
		if got, want := containers(t), "app=nginx:1.26;sidecar=busybox:1.36;"; got != want {
			t.Errorf("containers after a merge patch = %q, want %q", got, want)
		}
		// A JSON patch too, with a test operation that fails on the wrong value.
		out = mustKubectl(t, "patch", "-n", ns, "tapp", "web", "--type=json",
			"-p", `[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3}]`)
		requireContains(t, "kubectl patch --type=json", out, "tapp.apps.tkestack.io/web patched")
		if got := jsonpath(t, ns, "tapp/web", "{.spec.replicas}"); got != "3" {
			t.Errorf("replicas after a JSON patch = %q, want 3", got)
		}
		// An invalid patch is refused with the field path.
		_, err := kubectl(t, "patch", "-n", ns, "tapp", "web", "--type=merge", "-p", `{"spec":{"replicas":-1}}`)
		if err == nil || !strings.Contains(err.Error(), "spec.replicas") || !strings.Contains(err.Error(), "Invalid") {
			t.Errorf("patching replicas to -1: err = %v, want an Invalid error on spec.replicas", err)
		}
	})

	t.Run("apply server-side", func(t *testing.T) {
		out := mustKubectlIn(t, ssaManifest("1", "nginx:1.25"), "apply", "--server-side", "--field-manager=e2e", "-n", ns, "-f", "-")
		requireContains(t, "kubectl apply --server-side", out, "tapp.apps.tkestack.io/ssa serverside-applied")
		out = mustKubectlIn(t, ssaManifest("2", "nginx:1.26"), "apply", "--server-side", "--field-manager=e2e", "-n", ns, "-f", "-")
		requireContains(t, "kubectl apply --server-side", out, "tapp.apps.tkestack.io/ssa serverside-applied")
		if got := jsonpath(t, ns, "tapp/ssa", "{.spec.replicas} {.spec.template.spec.containers[0].image}"); got != "2 nginx:1.26" {
			t.Errorf("replicas and image = %q, want %q", got, "2 nginx:1.26")
		}
		managers := jsonpath(t, ns, "tapp/ssa", `{range .metadata.managedFields[*]}{.manager}/{.operation};{end}`)
		requireContains(t, "managedFields", managers, "e2e/Apply;")

		// Another manager takes spec.replicas; applying it again without --force-conflicts is a conflict.
		mustKubectl(t, "patch", "-n", ns, "tapp", "ssa", "--type=merge", "-p", `{"spec":{"replicas":4}}`)
		_, err := kubectlIn(t, []byte(ssaManifest("2", "nginx:1.26")), "apply", "--server-side", "--field-manager=e2e", "-n", ns, "-f", "-")
		if err == nil || !strings.Contains(err.Error(), "conflict") || !strings.Contains(err.Error(), ".spec.replicas") {
			t.Errorf("server-side apply over another manager's replicas: err = %v, want a conflict on .spec.replicas", err)
		}
		mustKubectlIn(t, ssaManifest("2", "nginx:1.26"), "apply", "--server-side", "--force-conflicts", "--field-manager=e2e", "-n", ns, "-f", "-")
		if got := jsonpath(t, ns, "tapp/ssa", "{.spec.replicas}"); got != "2" {
			t.Errorf("replicas after --force-conflicts = %q, want 2", got)
		}
	})

	t.Run("scale", func(t *testing.T) {
		stale := jsonpath(t, ns, "tapp/example-tapp", "{.metadata.resourceVersion}")
		out := mustKubectl(t, "scale", "-n", ns, "tapp", "example-tapp", "--replicas=5")
		requireContains(t, "kubectl scale", out, "tapp.apps.tkestack.io/example-tapp scaled")
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "example-tapp"))
		if got := tb.cell(t, "example-tapp", "DESIRED"); got != "5" {
			t.Errorf("DESIRED after scaling to 5 = %q", got)
		}
		if got := jsonpath(t, ns, "tapp/example-tapp", "{.spec.replicas}"); got != "5" {
			t.Errorf("spec.replicas after scaling to 5 = %q", got)
		}
		scale := mustKubectl(t, "get", "-n", ns, "tapp", "example-tapp", "--subresource=scale", "-o", "jsonpath={.kind} {.apiVersion} {.spec.replicas} {.status.selector}")
		if scale != "Scale autoscaling/v1 5 app=example-tapp" {
			t.Errorf("scale subresource = %q, want %q", scale, "Scale autoscaling/v1 5 app=example-tapp")
		}

		// kubectl checks --resource-version against the scale it reads first.
		_, err := kubectl(t, "scale", "-n", ns, "tapp/example-tapp", "--replicas=7", "--resource-version="+stale)
		if err == nil {
			t.Fatalf("kubectl scale with the stale resourceVersion %s succeeded", stale)
		}
		if !strings.Contains(err.Error(), "Expected resource version to be "+stale) && !strings.Contains(err.Error(), "the object has been modified") {
			t.Errorf("kubectl scale with a stale resourceVersion: %v, want a resource version conflict", err)
		}
		// The server refuses a stale resourceVersion on the scale subresource with 409 Conflict.
		_, err = kubectl(t, "patch", "-n", ns, "tapp/example-tapp", "--subresource=scale", "--type=merge",
			"-p", `{"metadata":{"resourceVersion":"`+stale+`"},"spec":{"replicas":7}}`)
		if err == nil || !strings.Contains(err.Error(), "Conflict") || !strings.Contains(err.Error(), "the object has been modified") {
			t.Errorf("patching the scale with a stale resourceVersion: err = %v, want a Conflict", err)
		}
		ctx := testContext(t, 30*time.Second)
		scaleObj, err := tappClient.TKEStackAppsV1().TApps(ns).GetScale(ctx, "example-tapp", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scaleObj.ResourceVersion, scaleObj.Spec.Replicas = stale, 7
		if _, err := tappClient.TKEStackAppsV1().TApps(ns).UpdateScale(ctx, "example-tapp", scaleObj, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("UpdateScale with a stale resourceVersion: err = %v, want a Conflict", err)
		}
		if got := jsonpath(t, ns, "tapp/example-tapp", "{.spec.replicas}"); got != "5" {
			t.Errorf("spec.replicas after the refused scale = %q, want 5", got)
		}
		// --current-replicas is a precondition too.
		if _, err := kubectl(t, "scale", "-n", ns, "tapp/example-tapp", "--replicas=7", "--current-replicas=3"); err == nil {
			t.Errorf("kubectl scale --current-replicas=3 succeeded on a TApp with 5 replicas")
		}
	})

	t.Run("watch kubectl", func(t *testing.T) {
		w := startKubectl(t, "get", "tapps", "-n", ns, "-w", "--output-watch-events")
		w.waitLine(t, 30*time.Second, "the ADDED event of example-tapp", func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 1 && f[0] == "ADDED" && f[1] == "example-tapp"
		})
		mustKubectl(t, "scale", "-n", ns, "tapp", "example-tapp", "--replicas=6")
		w.waitLine(t, 30*time.Second, "a MODIFIED event of example-tapp with 6 replicas", func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 2 && f[0] == "MODIFIED" && f[1] == "example-tapp" && f[2] == "6"
		})
	})

	t.Run("watch client-go", func(t *testing.T) {
		ctx := testContext(t, 30*time.Second)
		tapps := tappClient.TKEStackAppsV1().TApps(ns)
		list, err := tapps.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := tapps.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=web"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		mustKubectl(t, "label", "-n", ns, "tapp", "web", "watched=yes")
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("the watch ended before the update")
				}
				if ev.Type == watch.Error {
					t.Fatalf("watch error: %v", ev.Object)
				}
				tapp, ok := ev.Object.(*tkestackv1.TApp)
				if !ok {
					t.Fatalf("watch event %s carries %T", ev.Type, ev.Object)
				}
				if tapp.Name != "web" {
					t.Fatalf("the field selector metadata.name=web let %s through", tapp.Name)
				}
				if ev.Type == watch.Modified && tapp.Labels["watched"] == "yes" {
					return
				}
			case <-ctx.Done():
				t.Fatal("no MODIFIED event with the label watched=yes within 30s")
			}
		}
	})

	t.Run("get all", func(t *testing.T) {
		out := mustKubectl(t, "apply", "-n", ns, "-f", repoPath("artifacts", "examples", "yurtappdaemon.yaml"))
		requireContains(t, "kubectl apply", out, "yurtappdaemon.apps.openyurt.io/coredns created")
		out = mustKubectl(t, "get", "all", "-n", ns)
		requireContains(t, "kubectl get all", out, "tapp.apps.tkestack.io/example-tapp", "tapp.apps.tkestack.io/web", "yurtappdaemon.apps.openyurt.io/coredns")
		names := mustKubectl(t, "get", "all", "-n", ns, "-o", "name")
		requireContains(t, "kubectl get all -o name", names, "tapp.apps.tkestack.io/example-tapp\n", "yurtappdaemon.apps.openyurt.io/coredns\n")
	})

	t.Run("list options", func(t *testing.T) {
		// Pagination through the aggregator: one object per page.
		if got := mustKubectl(t, "get", "tapps", "-n", ns, "--chunk-size=1", "-o", "name"); got != "tapp.apps.tkestack.io/example-tapp\ntapp.apps.tkestack.io/ssa\ntapp.apps.tkestack.io/web\n" {
			t.Errorf("chunked list = %q", got)
		}
		if got := mustKubectl(t, "get", "tapps", "-n", ns, "-l", "tier=frontend", "-o", "name"); got != "tapp.apps.tkestack.io/web\n" {
			t.Errorf("list with -l tier=frontend = %q", got)
		}
		if got := mustKubectl(t, "get", "tapps", "-n", ns, "--field-selector", "metadata.name=ssa", "-o", "name"); got != "tapp.apps.tkestack.io/ssa\n" {
			t.Errorf("list with --field-selector metadata.name=ssa = %q", got)
		}
		tb := parseTable(t, mustKubectl(t, "get", "tapps", "-A", "-l", "tier=frontend"))
		if len(tb.rows) != 1 || tb.header[0] != "NAMESPACE" || tb.rows[0][0] != ns || tb.rows[0][1] != "web" {
			t.Errorf("get tapps -A -l tier=frontend: header %q rows %q", tb.header, tb.rows)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		out := mustKubectlIn(t, tappManifest("dry", 1), "create", "-n", ns, "--dry-run=server", "-f", "-")
		requireContains(t, "kubectl create --dry-run=server", out, "tapp.apps.tkestack.io/dry created (server dry run)")
		out = mustKubectl(t, "delete", "-n", ns, "tapp", "ssa", "--dry-run=server")
		requireContains(t, "kubectl delete --dry-run=server", out, "(server dry run)")
		if got := mustKubectl(t, "get", "tapps", "-n", ns, "-o", "name"); got != "tapp.apps.tkestack.io/example-tapp\ntapp.apps.tkestack.io/ssa\ntapp.apps.tkestack.io/web\n" {
			t.Errorf("tapps after the dry runs = %q, want the three of before", got)
		}
		// kubectl diff (a dry-run patch) sees a change of the manifest, and none in an applied one.
		if out, err := kubectlIn(t, []byte(webTApp), "diff", "-n", ns, "-f", "-"); err == nil || !strings.Contains(out, "nginx:1.25") {
			t.Errorf("kubectl diff of a changed manifest: err = %v, output %q; want exit 1 and the image in the diff", err, out)
		}
		live := mustKubectl(t, "get", "-n", ns, "tapp", "web", "-o", "yaml")
		if out, err := kubectlIn(t, []byte(live), "diff", "-n", ns, "-f", "-"); err != nil {
			t.Errorf("kubectl diff of the live object: %v\n%s", err, out)
		}
	})

	t.Run("status subresource", func(t *testing.T) {
		// The controller owns the status and rewrites it, so the checks read the objects the writes return.
		out := mustKubectl(t, "patch", "-n", ns, "tapp", "ssa", "--subresource=status", "--type=merge",
			"-p", `{"status":{"replicas":2,"readyReplicas":2,"appStatus":"Running"},"spec":{"replicas":9}}`,
			"-o", "jsonpath={.spec.replicas} {.status.replicas} {.status.readyReplicas} {.status.appStatus}")
		if out != "2 2 2 Running" {
			t.Errorf("object after a status patch: spec.replicas, replicas, readyReplicas, appStatus = %q, want 2 2 2 Running (the status write must not change the spec)", out)
		}
		// A write of the main resource ignores the status it carries and keeps the stored one.
		out = mustKubectl(t, "patch", "-n", ns, "tapp", "ssa", "--type=merge",
			"-p", `{"metadata":{"labels":{"status":"kept"}},"status":{"appStatus":"Failed","readyReplicas":7}}`,
			"-o", "jsonpath={.metadata.labels.status} {.status.appStatus} {.status.readyReplicas}")
		if fields := strings.Fields(out); len(fields) < 2 || fields[0] != "kept" || fields[1] == "Failed" || strings.HasSuffix(out, " 7") {
			t.Errorf("object after a label patch carrying a status = %q, want the label and the stored status", out)
		}
	})

	t.Run("delete", func(t *testing.T) {
		out := mustKubectl(t, "delete", "-n", ns, "tapp", "web", "--wait=false")
		requireContains(t, "kubectl delete", out, `tapp.apps.tkestack.io "web" deleted`)
		mustKubectl(t, "wait", "-n", ns, "--for=delete", "tapp/web", "--timeout=60s")
		_, err := kubectl(t, "get", "-n", ns, "tapp", "web")
		if err == nil || !strings.Contains(err.Error(), "NotFound") {
			t.Errorf("get of the deleted TApp: err = %v, want NotFound", err)
		}
		out = mustKubectl(t, "delete", "-n", ns, "tapp", "example-tapp")
		requireContains(t, "kubectl delete", out, `tapp.apps.tkestack.io "example-tapp" deleted`)
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapps", "-o", "wide"))
		for _, r := range tb.rows {
			if r[0] == "example-tapp" || r[0] == "web" {
				t.Errorf("deleted TApp %s is still listed", r[0])
			}
		}
	})
}
