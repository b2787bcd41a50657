//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// The chart and its documented profiles (artifacts/chart), rendered and installed with the Helm v3 and v4
// clients hack/build-helm.sh builds (TAPP_E2E_HELM_DIR, set by `make e2e`).

// chartProfiles are the documented values profiles, artifacts/chart/profiles/<name>.yaml.
var chartProfiles = []string{"default", "external-etcd", "cert-manager", "dev"}

// apiServiceNames are the APIServices the chart and the local cluster register.
var apiServiceNames = []string{"v1.apps.tkestack.io", "v1alpha1.apps.openyurt.io", "v1beta1.apps.openyurt.io", "v1beta2.apps.openyurt.io"}

// helmClient is one Helm binary, run against the local cluster with directories of the test's own.
type helmClient struct {
	name   string
	binary string
	env    []string
}

// helmClients returns Helm v3 and v4 from TAPP_E2E_HELM_DIR; the test fails without them.
func helmClients(t *testing.T) []helmClient {
	t.Helper()
	dir := os.Getenv("TAPP_E2E_HELM_DIR")
	if dir == "" {
		t.Fatal("TAPP_E2E_HELM_DIR (the directory hack/build-helm.sh prints) is not set; run the suite with `make e2e`")
	}
	var clients []helmClient
	for _, name := range []string{"helm3", "helm4"} {
		binary := filepath.Join(absolute(dir), name)
		if _, err := os.Stat(binary); err != nil {
			t.Fatalf("%v (hack/build-helm.sh builds it)", err)
		}
		home := t.TempDir()
		clients = append(clients, helmClient{name: name, binary: binary, env: append(os.Environ(),
			"KUBECONFIG="+cluster.Kubeconfig,
			"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
			"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
			"HELM_DATA_HOME="+filepath.Join(home, "data"))})
	}
	return clients
}

// run runs helm with args and returns its stdout; the error carries stderr.
func (h helmClient) run(t testing.TB, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.binary, args...)
	cmd.Env = h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("%s %s", h.name, strings.Join(args, " "))
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\nstdout: %s\nstderr: %s", h.name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

func (h helmClient) mustRun(t testing.TB, args ...string) string {
	t.Helper()
	out, err := h.run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func chartDir() string { return repoPath("artifacts", "chart", "tapp-apiserver") }

func profileFile(name string) string { return repoPath("artifacts", "chart", "profiles", name+".yaml") }

// renderedObject is one object of a rendering, with its document.
type renderedObject struct {
	Kind, Name, Namespace string
	Doc                   string
	Object                map[string]interface{}
}

// splitRendering parses the documents of a rendering.
func splitRendering(t *testing.T, out string) []renderedObject {
	t.Helper()
	var objs []renderedObject
	for _, doc := range regexp.MustCompile(`(?m)^---.*$`).Split(out, -1) {
		obj := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("a rendered document is not YAML: %v\n%s", err, doc)
		}
		if len(obj) == 0 {
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		objs = append(objs, renderedObject{Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Doc: doc, Object: obj})
	}
	return objs
}

func findRendered(objs []renderedObject, kind, name string) *renderedObject {
	for i := range objs {
		if objs[i].Kind == kind && objs[i].Name == name {
			return &objs[i]
		}
	}
	return nil
}

// TestChartProfiles lints the chart with every documented profile, renders each with Helm v3 and v4 (the
// same output from both), checks what distinguishes each profile, and dry-runs every rendering on the
// cluster server-side (admission, schemas, strict field validation), in a namespace of its own.
func TestChartProfiles(t *testing.T) {
	t.Parallel()
	clients := helmClients(t)
	// Bad values are refused before anything reaches the cluster, naming the value.
	t.Run("bad values", func(t *testing.T) {
		for _, bad := range []struct{ set, want string }{
			{"replica=3", "additional properties 'replica' not allowed"},
			{"etcd.members=2", "/etcd/members"},
			{"image.digest=latest", "/image/digest"},
			{"etcd.bundled=false", "etcd.bundled=false needs etcd.external.endpoints"},
		} {
			for _, h := range clients {
				_, err := h.run(t, "template", "tapp-apiserver", chartDir(), "--set", bad.set)
				if err == nil || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("%s template --set %s: err = %v, want it to say %q", h.name, bad.set, err, bad.want)
				}
			}
		}
	})
	for _, profile := range chartProfiles {
		profile := profile
		t.Run(profile, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t, "chart-"+profile)
			var renderings []string
			for _, h := range clients {
				h.mustRun(t, "lint", "--strict", chartDir(), "--namespace", ns, "-f", profileFile(profile))
				renderings = append(renderings, h.mustRun(t, "template", "tapp-apiserver", chartDir(), "--namespace", ns, "-f", profileFile(profile)))
			}
			// Helm v4 ends each document with an empty line, v3 does not; otherwise the two must agree.
			if a, b := withoutEmptyLines(renderings[0]), withoutEmptyLines(renderings[1]); a != b {
				t.Errorf("helm3 and helm4 render the %s profile differently:\nhelm3:\n%s\nhelm4:\n%s", profile, a, b)
			}
			objs := splitRendering(t, renderings[0])
			checkProfile(t, profile, ns, objs)

			// cert-manager's kinds are not served by the local cluster (cert-manager is not installed): they
			// are left out of the dry run, and checked above only.
			var docs []string
			for _, o := range objs {
				if strings.HasPrefix(o.Object["apiVersion"].(string), "cert-manager.io/") {
					continue
				}
				docs = append(docs, o.Doc)
			}
			out := mustKubectlIn(t, strings.Join(docs, "\n---\n"), "apply", "--dry-run=server", "-f", "-")
			if got, want := strings.Count(out, "(server dry run)"), len(docs); got != want {
				t.Errorf("the server-side dry run of the %s profile reported %d objects, want %d:\n%s", profile, got, want, out)
			}
		})
	}
}

func withoutEmptyLines(s string) string {
	return regexp.MustCompile(`(?m)^\n`).ReplaceAllString(s, "")
}

// checkProfile checks what the profile sets in its rendering.
func checkProfile(t *testing.T, profile, ns string, objs []renderedObject) {
	t.Helper()
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
		if o.Namespace != "" && o.Namespace != ns && !(o.Kind == "RoleBinding" && o.Namespace == "kube-system") {
			t.Errorf("%s %s/%s is outside the release's namespace %s", o.Kind, o.Namespace, o.Name, ns)
		}
	}
	deployment := findRendered(objs, "Deployment", "tapp-apiserver")
	if deployment == nil {
		t.Fatalf("no Deployment tapp-apiserver in the %s profile", profile)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(deployment.Doc), &d); err != nil {
		t.Fatal(err)
	}
	args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
	sts := findRendered(objs, "StatefulSet", "tapp-etcd")
	pdb := findRendered(objs, "PodDisruptionBudget", "tapp-apiserver")
	for _, name := range apiServiceNames {
		if findRendered(objs, "APIService", name) == nil {
			t.Errorf("no APIService %s", name)
		}
	}
	apiService := findRendered(objs, "APIService", apiServiceNames[0])
	annotations := (&unstructured.Unstructured{Object: apiService.Object}).GetAnnotations()
	if annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("APIService %s: annotations %v, want helm.sh/resource-policy: keep", apiService.Name, annotations)
	}
	injects := annotations["cert-manager.io/inject-ca-from"] == ns+"/tapp-apiserver-serving-cert"
	bundled := "--etcd-servers=https://tapp-etcd-0.tapp-etcd." + ns + ".svc:2379"
	switch profile {
	case "default", "cert-manager":
		if *d.Spec.Replicas != 2 || sts == nil || pdb == nil || !strings.Contains(args, bundled+",") {
			t.Errorf("%s: replicas %d, etcd StatefulSet %v, PDB %v, args %s; want 2 replicas on the bundled 3-member etcd with a PDB",
				profile, *d.Spec.Replicas, sts != nil, pdb != nil, args)
		}
		if got := d.Spec.Template.Spec.PriorityClassName; got != "system-cluster-critical" {
			t.Errorf("%s: priorityClassName %q, want system-cluster-critical", profile, got)
		}
		if profile == "cert-manager" {
			if !injects || kinds["Certificate"] != 2 || kinds["Issuer"] != 2 {
				t.Errorf("cert-manager: inject-ca-from %v, %d Certificates, %d Issuers; want the CA injected, 2 and 2", injects, kinds["Certificate"], kinds["Issuer"])
			}
		} else if injects || kinds["Certificate"] != 0 {
			t.Errorf("default: cert-manager objects or annotations (%d Certificates, inject %v)", kinds["Certificate"], injects)
		}
	case "external-etcd":
		if sts != nil || kinds["NetworkPolicy"] != 0 {
			t.Errorf("external-etcd renders the bundled etcd")
		}
		requireContains(t, "external-etcd's server flags", args,
			"--etcd-servers=https://etcd-a.example.com:2379,https://etcd-b.example.com:2379,https://etcd-c.example.com:2379",
			"--etcd-prefix=/registry/tapp-apiserver")
	case "dev":
		if *d.Spec.Replicas != 1 || pdb != nil || sts == nil || d.Spec.Template.Spec.PriorityClassName != "" {
			t.Errorf("dev: replicas %d, PDB %v, etcd %v, priority class %q; want 1 replica, no PDB, the bundled etcd, no priority class",
				*d.Spec.Replicas, pdb != nil, sts != nil, d.Spec.Template.Spec.PriorityClassName)
		}
		if !strings.Contains(args, bundled+" ") || strings.Contains(args, "tapp-etcd-1.") {
			t.Errorf("dev: args %s, want the one member tapp-etcd-0", args)
		}
		if findRendered(objs, "PodDisruptionBudget", "tapp-etcd") != nil {
			t.Errorf("dev: a PodDisruptionBudget on the one etcd member would block every drain of its node")
		}
	}
	// The release's namespace is not tapp-system: the server is told where its records and Service are.
	{
		requireContains(t, profile+"'s server flags", args, "--storage-identity-configmap="+ns+"/tapp-apiserver-storage-identity",
			"--apiservice-service="+ns+"/tapp-apiserver", "--leader-elect-resource-namespace="+ns)
	}
}

// apiServiceMonitor reads the APIService v1.apps.tkestack.io and lists TApps through the aggregator every
// 200 ms, and records every time either is not Available or fails.
type apiServiceMonitor struct {
	mu       sync.Mutex
	checks   int
	failures []string
	cancel   context.CancelFunc
	done     chan struct{}
}

func monitorAPIService(ns string) *apiServiceMonitor {
	ctx, cancel := context.WithCancel(context.Background())
	m := &apiServiceMonitor{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		ticker := time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			failure := ""
			reqCtx, reqCancel := context.WithTimeout(ctx, 5*time.Second)
			if u, err := dynamicClient.Resource(apiServicesGVR).Get(reqCtx, apiServiceNames[0], metav1.GetOptions{}); err != nil {
				failure = err.Error()
			} else if !apiServiceIsAvailable(u) {
				failure = "APIService " + apiServiceNames[0] + " is not Available"
			} else if _, err := tappClient.TKEStackAppsV1().TApps(ns).List(reqCtx, metav1.ListOptions{}); err != nil {
				failure = "listing TApps: " + err.Error()
			}
			reqCancel()
			if ctx.Err() != nil {
				return
			}
			m.mu.Lock()
			m.checks++
			if failure != "" {
				m.failures = append(m.failures, time.Now().Format("15:04:05.000")+" "+failure)
			}
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *apiServiceMonitor) stop() (int, []string) {
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checks, m.failures
}

func apiServiceIsAvailable(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]interface{}); ok && c["type"] == "Available" {
			return c["status"] == "True"
		}
	}
	return false
}

// TestChartLifecycle installs the chart with Helm v3 and then v4, upgrades the image and the replicas, rolls
// back and uninstalls, while the APIServices stay Available and a TApp's pods keep running throughout.
//
// What it proves, and what not: the local cluster's pods are simulated, so the chart's Deployment gets pods
// that report Running and Ready without running the server. The chart's APIServices are therefore pointed at
// the local cluster's real tapp-apiserver (apiServices.service, and its CA as apiServices.caBundle) and take
// over the APIServices the cluster registered, the way a kustomize installation is adopted (docs/install.md):
// the test shows that Helm adopts them, that install, upgrade and rollback never make the APIService
// unavailable (Helm 4 applies the chart's APIServices server-side, so a wrong rendering of the caBundle value
// or of the service would show there; Helm 3 patches adopted objects of kinds outside client-go's scheme only
// where the release's manifests differ, so it leaves them as registered), that the Deployment follows the image and
// replica changes and their rollback, and that uninstalling keeps the APIServices (helm.sh/resource-policy)
// so the TApp's pods are never touched. It does not show the chart's server pods serving. The cluster-scoped
// RBAC, user roles and FlowSchemas are not installed (rbac.create, userRoles.create, flowSchema.create off):
// they carry the names the local cluster's own server holds its permissions and priority under; the server-
// side dry run of TestChartProfiles covers them.
//
// Not parallel: it changes the APIServices every other test goes through (their spec stays the same).
func TestChartLifecycle(t *testing.T) {
	clients := helmClients(t)
	waitTAppOpenAPI(t)

	// The registration the local cluster made: where it points, and its CA.
	ctx := testContext(t, 30*time.Second)
	live, err := dynamicClient.Resource(apiServicesGVR).Get(ctx, apiServiceNames[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcNamespace, _, _ := unstructured.NestedString(live.Object, "spec", "service", "namespace")
	svcName, _, _ := unstructured.NestedString(live.Object, "spec", "service", "name")
	svcPort, _, _ := unstructured.NestedInt64(live.Object, "spec", "service", "port")
	bundle, _, _ := unstructured.NestedString(live.Object, "spec", "caBundle")
	caPEM, err := base64.StdEncoding.DecodeString(bundle)
	if err != nil || len(caPEM) == 0 {
		t.Fatalf("the caBundle of %s: %v", apiServiceNames[0], err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, the APIServices end as the local cluster registered them, without Helm's metadata.
	t.Cleanup(func() {
		manifest, err := cluster.APIServiceManifest()
		if err == nil {
			_, err = kubectlIn(t, manifest, "apply", "--server-side", "--force-conflicts", "-f", "-")
		}
		if err != nil {
			t.Errorf("restoring the APIServices: %v", err)
		}
		releaseAPIServices(t)
	})

	// A TApp served by the real server, whose pods must never be touched.
	tappNS := controllerNamespace(t, "chart-tapp")
	mustKubectlIn(t, nginxTApp("survivor", 2, "nginx:1.27", ""), "apply", "-n", tappNS, "-f", "-")
	before, _ := waitInstances(t, tappNS, "survivor", images(2, "nginx:1.27"))

	for _, h := range clients {
		h := h
		t.Run(h.name, func(t *testing.T) {
			ns := newNamespace(t, "chart-"+h.name)
			const release = "tapp-apiserver"
			// Adoption: what docs/install.md has a kustomize installation do before its first helm install.
			for _, name := range apiServiceNames {
				mustKubectl(t, "annotate", "apiservice", name, "--overwrite",
					"meta.helm.sh/release-name="+release, "meta.helm.sh/release-namespace="+ns)
				mustKubectl(t, "label", "apiservice", name, "--overwrite", "app.kubernetes.io/managed-by=Helm")
			}
			monitor := monitorAPIService(tappNS)
			common := []string{"--namespace", ns, "-f", profileFile("external-etcd"),
				"--set", "rbac.create=false,userRoles.create=false,flowSchema.create=false",
				"--set", fmt.Sprintf("apiServices.service.namespace=%s,apiServices.service.name=%s,apiServices.service.port=%d", svcNamespace, svcName, svcPort),
				"--set-file", "apiServices.caBundle=" + caFile,
				"--set", "image.repository=registry.example.test/tapp-apiserver",
				"--wait", "--timeout", "2m"}

			out := h.mustRun(t, append([]string{"install", release, chartDir(), "--set", "image.tag=v1,replicas=2"}, common...)...)
			// The release notes tell what the uninstall keeps.
			requireContains(t, h.name+" install's notes", out, "registry.example.test/tapp-apiserver:v1: 2 replica(s)",
				"`helm uninstall` keeps the APIServices")
			checkChartDeployment(t, ns, "registry.example.test/tapp-apiserver:v1", 2)
			// The release owns the APIServices, and its manifest keeps them on uninstall (Helm reads the policy
			// from the release's manifest: an adopted object's live metadata may not have been patched, since
			// Helm 3 patches objects of kinds outside client-go's scheme with a two-way merge of manifests).
			manifest := h.mustRun(t, "get", "manifest", release, "--namespace", ns)
			objs := splitRendering(t, manifest)
			for _, name := range apiServiceNames {
				o := findRendered(objs, "APIService", name)
				if o == nil {
					t.Errorf("the release's manifest has no APIService %s", name)
				} else if (&unstructured.Unstructured{Object: o.Object}).GetAnnotations()["helm.sh/resource-policy"] != "keep" {
					t.Errorf("APIService %s in the release's manifest is not kept on uninstall", name)
				}
			}

			h.mustRun(t, append([]string{"upgrade", release, chartDir(), "--set", "image.tag=v2,replicas=3"}, common...)...)
			checkChartDeployment(t, ns, "registry.example.test/tapp-apiserver:v2", 3)

			h.mustRun(t, "rollback", release, "1", "--namespace", ns, "--wait", "--timeout", "2m")
			checkChartDeployment(t, ns, "registry.example.test/tapp-apiserver:v1", 2)
			history := h.mustRun(t, "history", release, "--namespace", ns)
			requireContains(t, h.name+" history", history, "Rollback to 1")

			h.mustRun(t, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "2m")
			checks, failures := monitor.stop()
			t.Logf("%d checks of the APIService and TApp list during install, upgrade, rollback and uninstall", checks)
			if checks == 0 {
				t.Error("the APIService was never checked")
			}
			if len(failures) > 0 {
				t.Errorf("%d of %d checks failed: %s", len(failures), checks, strings.Join(failures, "\n"))
			}
			ctx := testContext(t, 30*time.Second)
			if _, err := kubeClient.AppsV1().Deployments(ns).Get(ctx, "tapp-apiserver", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the Deployment after the uninstall: err = %v, want NotFound", err)
			}
			for _, name := range apiServiceNames {
				u, err := dynamicClient.Resource(apiServicesGVR).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Errorf("APIService %s after the uninstall: %v (it must be kept)", name, err)
				} else if !apiServiceIsAvailable(u) {
					t.Errorf("APIService %s is not Available after the uninstall", name)
				}
			}
			releaseAPIServices(t)
		})
	}

	// The TApp's pods are the same pods, still running.
	after, _ := waitInstances(t, tappNS, "survivor", images(2, "nginx:1.27"))
	for id, pod := range before {
		if after[id] == nil || after[id].UID != pod.UID {
			t.Errorf("pod %s was replaced during the chart's lifecycle", pod.Name)
		}
	}
}

// releaseAPIServices removes Helm's metadata and the chart's labels from the APIServices.
func releaseAPIServices(t *testing.T) {
	t.Helper()
	for _, name := range apiServiceNames {
		patch := `{"metadata":{"annotations":{"meta.helm.sh/release-name":null,"meta.helm.sh/release-namespace":null,` +
			`"helm.sh/resource-policy":null},"labels":{"app.kubernetes.io/managed-by":null,"app.kubernetes.io/name":null,"app.kubernetes.io/part-of":null}}}`
		ctx := testContext(t, 30*time.Second)
		if _, err := dynamicClient.Resource(apiServicesGVR).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Errorf("removing Helm's metadata from APIService %s: %v", name, err)
		}
	}
}

// checkChartDeployment checks that the release's Deployment has replicas ready pods, all of image, and no other.
func checkChartDeployment(t *testing.T, ns, image string, replicas int) {
	t.Helper()
	ctx := testContext(t, 90*time.Second)
	pollUntil(t, 60*time.Second, fmt.Sprintf("Deployment %s/tapp-apiserver runs %d pods of %s", ns, replicas, image), func() error {
		d, err := kubeClient.AppsV1().Deployments(ns).Get(ctx, "tapp-apiserver", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != image || *d.Spec.Replicas != int32(replicas) {
			return fmt.Errorf("spec: image %s, replicas %d", got, *d.Spec.Replicas)
		}
		pods, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=tapp-apiserver"})
		if err != nil {
			return err
		}
		var seen []string
		ready := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			seen = append(seen, p.Name+"="+p.Spec.Containers[0].Image+"/"+string(p.Status.Phase))
			if p.DeletionTimestamp == nil && p.Spec.Containers[0].Image == image && podReady(p) {
				ready++
			}
		}
		sort.Strings(seen)
		if ready != replicas || len(pods.Items) != replicas {
			return fmt.Errorf("%d ready pods of %s among %v", ready, image, seen)
		}
		if got := d.Spec.Template.Spec.PriorityClassName; got != "system-cluster-critical" {
			return fmt.Errorf("priorityClassName %q", got)
		}
		return nil
	})
}
