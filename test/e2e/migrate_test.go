//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// The migration test builds, on a cluster of its own, an installation as tkestack/tapp and yurt-app-manager
// leave it (their CRDs, objects served by them, pods, claims and a per-pool Deployment shaped as their
// controllers make them, their webhook configurations and a stopped controller Deployment), then moves it
// onto tapp-apiserver with `tapp-apiserver migrate`. The shared cluster of the other tests registers
// tapp-apiserver's APIServices, which would hide the CRDs; this cluster starts without them.

var (
	tappsV1   = schema.GroupVersionResource{Group: "apps.tkestack.io", Version: "v1", Resource: "tapps"}
	poolsV1a1 = schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "nodepools"}
	yadsV1a1  = schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "yurtappdaemons"}
	crdsV1    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

const migrateTimeout = 3 * time.Minute

type migrationCluster struct {
	*localcluster.Cluster
	kube kubernetes.Interface
	dyn  dynamic.Interface
	dir  string
}

func startMigrationCluster(t *testing.T) *migrationCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "tapp-e2e-migrate-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Config{
		WorkDir:            dir,
		ToolsDir:           absolute(os.Getenv("TAPP_E2E_TOOLS_DIR")),
		ServerBinary:       absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")),
		Nodes:              2,
		WithoutAPIServices: true,
		Log:                func(format string, args ...interface{}) { t.Logf("[migration cluster] "+format, args...) },
	})
	if err != nil {
		t.Fatalf("starting the migration cluster: %v (logs in %s)", err, filepath.Join(dir, "logs"))
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			t.Logf("the migration cluster's logs are in %s", filepath.Join(dir, "logs"))
			return
		}
		_ = os.RemoveAll(dir)
	})
	mc := &migrationCluster{Cluster: c, dir: dir}
	if mc.kube, err = kubernetes.NewForConfig(c.AdminConfig); err != nil {
		t.Fatal(err)
	}
	if mc.dyn, err = dynamic.NewForConfig(c.AdminConfig); err != nil {
		t.Fatal(err)
	}
	return mc
}

func (c *migrationCluster) kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary, append([]string{"--kubeconfig=" + c.Kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("kubectl %s", strings.Join(args, " "))
	if err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String(), nil
}

func (c *migrationCluster) mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := c.kubectl(t, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// migrate runs `tapp-apiserver migrate` against the cluster.
func (c *migrationCluster) migrate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*migrateTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")), append([]string{"migrate", "--kubeconfig=" + c.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	t.Logf("tapp-apiserver migrate %s: %v\n%s", strings.Join(args, " "), err, out)
	return string(out), err
}

// decimalHash is a hash label value in the original's format: a decimal 64-bit FNV hash.
func decimalHash(v interface{}) string {
	data, _ := json.Marshal(v)
	h := fnv.New64()
	_, _ = h.Write(data)
	return fmt.Sprintf("%d", h.Sum64())
}

// originalTAppManifest is a TApp as a user applied it and tkestack/tapp wrote its defaults and the template's
// hash labels back into it.
func originalTAppManifest(templateHash, uniqHash string) string {
	return fmt.Sprintf(`apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  defaultTemplateName: default
  updateStrategy: {template: default, maxUnavailable: 1, forceUpdate: {maxUnavailable: "100%%"}}
  template:
    metadata:
      labels: {app: web, tapp_template_hash_key: %q, tapp_uniq_hash_key: %q}
      annotations: {team: storage}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
  volumeClaimTemplates:
  - metadata: {name: data, labels: {tier: db}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`, templateHash, uniqHash)
}

// nodePoolV1beta1 is a NodePool manifest as yurt-app-manager's users keep them: v1beta1.
const nodePoolV1beta1 = `apiVersion: apps.openyurt.io/v1beta1
kind: NodePool
metadata:
  name: hangzhou
  labels: {region: hangzhou}
spec:
  type: Edge
  selector: {matchLabels: {apps.openyurt.io/nodepool: hangzhou}}
  labels: {topology.example.com/zone: hangzhou}
  annotations: {example.com/owner: team-a}
`

const originalYAD = `apiVersion: apps.openyurt.io/v1alpha1
kind: YurtAppDaemon
metadata:
  name: edge
spec:
  revisionHistoryLimit: 10
  selector: {matchLabels: {app: edge}}
  nodepoolSelector: {matchLabels: {region: hangzhou}}
  workloadTemplate:
    deploymentTemplate:
      metadata: {labels: {app: edge}}
      spec:
        replicas: 1
        selector: {matchLabels: {app: edge}}
        template:
          metadata: {labels: {app: edge}}
          spec:
            containers:
            - {name: edge, image: "busybox:1.36"}
`

// installOriginals creates what a cluster running the originals holds, and returns the namespace.
func (c *migrationCluster) installOriginals(t *testing.T, ctx context.Context) string {
	t.Helper()
	crds, err := os.ReadFile(repoPath("test", "e2e", "testdata", "migrate", "crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c.mustKubectl(t, string(crds), "apply", "-f", "-")
	c.mustKubectl(t, "", "wait", "--for=condition=Established", "--timeout=60s",
		"crd/tapps.apps.tkestack.io", "crd/nodepools.apps.openyurt.io", "crd/yurtappdaemons.apps.openyurt.io")
	pollUntil(t, time.Minute, "the CRDs are served", func() error {
		_, err := c.kubectl(t, "", "get", "tapps,nodepools.apps.openyurt.io,yurtappdaemons", "-A")
		return err
	})

	ns := "shop"
	c.mustKubectl(t, "", "create", "namespace", ns)
	// Pods are refused until the service account controller has made the namespace's default ServiceAccount.
	pollUntil(t, time.Minute, "the default ServiceAccount of "+ns, func() error {
		_, err := c.kubectl(t, "", "get", "serviceaccount", "default", "-n", ns)
		return err
	})

	// tkestack/tapp's controller, stopped later: a Deployment with one ready replica.
	c.mustKubectl(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: tapp-controller, namespace: kube-system}
spec:
  replicas: 1
  selector: {matchLabels: {app: tapp-controller}}
  template:
    metadata: {labels: {app: tapp-controller}}
    spec:
      containers:
      - name: tapp-controller
        image: ccr.ccs.tencentyun.com/tke-public/tapp-controller:v1.2.1
        args: ["--v=3", "--register-admission=true"]
`, "apply", "-f", "-")

	// The TApp, applied by a user; the original wrote its hash labels into the template.
	template := map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "web", "image": "nginx:1.25"}}}
	templateHash, uniqHash := decimalHash(map[string]interface{}{"t": template}), decimalHash(template)
	c.mustKubectl(t, originalTAppManifest(templateHash, uniqHash), "apply", "-n", ns, "-f", "-")
	tapp, err := c.dyn.Resource(tappsV1).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "web", UID: tapp.GetUID(), Controller: ptr.To(true)}

	// Claims and pods as the original's controller makes them, on pre-bound volumes (of no class: each
	// claim, of the default class, binds to the volume that names it rather than to a provisioned one).
	for id := 0; id < 4; id++ {
		claim := fmt.Sprintf("data-web-%d", id)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "migrate-" + claim},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim},
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/tapp-e2e-migrate/" + claim}},
			},
		}
		if _, err := c.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for id := 0; id < 3; id++ {
		sid := fmt.Sprint(id)
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data-web-" + sid, Namespace: ns,
				Labels:          map[string]string{"tier": "db", "app": "web"},
				OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := c.kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "web-" + sid, GenerateName: "web-", Namespace: ns,
				Labels: map[string]string{"app": "web", "tapp_template_hash_key": templateHash, "tapp_uniq_hash_key": uniqHash,
					"tapp_instance_key": sid},
				Annotations:     map[string]string{"team": "storage"},
				OwnerReferences: []metav1.OwnerReference{owner},
			},
			Spec: corev1.PodSpec{
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-" + sid}}}},
				Containers:     []corev1.Container{{Name: "web", Image: "nginx:1.25", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
				ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "tkestack.io/InPlaceUpdate"}},
			},
		}
		if _, err := c.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The original sets its readiness gate's condition on every pod that is not being updated.
	pollUntil(t, 2*time.Minute, "the original's pods run", func() error {
		for id := 0; id < 3; id++ {
			name := fmt.Sprintf("web-%d", id)
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				pod, err := c.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if pod.Status.Phase != corev1.PodRunning {
					return fmt.Errorf("pod %s is %s", name, pod.Status.Phase)
				}
				for _, cond := range pod.Status.Conditions {
					if cond.Type == "tkestack.io/InPlaceUpdate" {
						return nil
					}
				}
				pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: "tkestack.io/InPlaceUpdate",
					Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
				_, err = c.kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				return err
			}
			pod, err := c.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !podReady(pod) {
				return fmt.Errorf("pod %s is not Ready", name)
			}
		}
		return nil
	})
	// The status the original wrote.
	tapp, err = c.dyn.Resource(tappsV1).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tapp.Object["status"] = map[string]interface{}{"replicas": int64(3), "readyReplicas": int64(3), "scaleLabelSelector": "app=web",
		"appStatus": "Running", "observedGeneration": tapp.GetGeneration(),
		"statuses": map[string]interface{}{"0": "Running", "1": "Running", "2": "Running"}}
	if _, err := c.dyn.Resource(tappsV1).Namespace(ns).UpdateStatus(ctx, tapp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// yurt-app-manager: a NodePool applied in v1beta1 (stored as v1alpha1), a YurtAppDaemon and the per-pool
	// Deployment its controller made for the pool.
	c.mustKubectl(t, nodePoolV1beta1, "apply", "-f", "-")
	c.mustKubectl(t, originalYAD, "apply", "-n", ns, "-f", "-")
	yad, err := c.dyn.Resource(yadsV1a1).Namespace(ns).Get(ctx, "edge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	revision := "edge-" + decimalHash(yad.Object["spec"])[:9]
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "edge-hangzhou-", Namespace: ns,
			Labels: map[string]string{"app": "edge", "apps.openyurt.io/controller-revision-hash": revision,
				"apps.openyurt.io/pool-name": "hangzhou"},
			Annotations: map[string]string{"apps.openyurt.io/ref-nodepool": "hangzhou"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.openyurt.io/v1alpha1", Kind: "YurtAppDaemon", Name: "edge",
				UID: yad.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "edge", "apps.openyurt.io/pool-name": "hangzhou"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "edge", "apps.openyurt.io/pool-name": "hangzhou",
					"apps.openyurt.io/controller-revision-hash": revision}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"apps.openyurt.io/nodepool": "hangzhou"},
					Containers:   []corev1.Container{{Name: "edge", Image: "busybox:1.36"}},
				},
			},
		},
	}
	if _, err := c.kube.AppsV1().Deployments(ns).Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The pool's node, so that the Deployment's pod runs.
	c.labelPoolNode(t, ctx, 0, "hangzhou")
	c.waitAppPodsReady(t, ctx, ns, "app=edge", 1)

	// The originals' webhook configurations, registered by their controllers (failurePolicy Fail).
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	hook := func(name, service, ns, path, group, resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name: name, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1beta1", "v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: service, Path: &path}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: ops,
				Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1", "v1alpha1"}, Resources: []string{resource}}}},
		}
	}
	for _, cfg := range []*admissionregistrationv1.ValidatingWebhookConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: "tapp-admission"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{
			hook("tapp-controller.kube-system.svc", "tapp-controller", "kube-system", "/validate/tapp", "apps.tkestack.io", "tapps",
				admissionregistrationv1.Create, admissionregistrationv1.Update)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "yurt-app-manager"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{
			hook("vnodepool.kb.io", "yurt-app-manager", "kube-system", "/validate-apps-openyurt-io-v1alpha1-nodepool", "apps.openyurt.io", "nodepools",
				admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
			hook("vyurtappdaemon.kb.io", "yurt-app-manager", "kube-system", "/validate-apps-openyurt-io-v1alpha1-yurtappdaemon", "apps.openyurt.io", "yurtappdaemons",
				admissionregistrationv1.Create, admissionregistrationv1.Update)}},
	} {
		if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// snapshot is what must survive the migration unchanged.
type snapshot struct {
	uids     map[string]types.UID // "pod/web-0", "pvc/data-web-0", "deployment/<name>"
	restarts map[string]int32
	rvs      map[string]string // resourceVersions of the CRD-served objects and CRDs, for the dry run
}

func (c *migrationCluster) snapshot(t *testing.T, ctx context.Context, ns string) snapshot {
	t.Helper()
	s := snapshot{uids: map[string]types.UID{}, restarts: map[string]int32{}, rvs: map[string]string{}}
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app in (web, edge)"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		s.uids["pod/"+p.Name] = p.UID
		for _, cs := range p.Status.ContainerStatuses {
			s.restarts["pod/"+p.Name] += cs.RestartCount
		}
	}
	claims, err := c.kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range claims.Items {
		s.uids["pvc/"+p.Name] = p.UID
	}
	deployments, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deployments.Items {
		s.uids["deployment/"+d.Name] = d.UID
	}
	for _, r := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
	}{{tappsV1, ns}, {yadsV1a1, ns}, {poolsV1a1, ""}, {crdsV1, ""}} {
		list, err := c.dyn.Resource(r.gvr).Namespace(r.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue // not served (after the migration for the CRDs' kinds)
		}
		for _, item := range list.Items {
			s.rvs[r.gvr.Resource+"/"+item.GetName()] = item.GetResourceVersion()
		}
	}
	return s
}

// TestMigrate moves an installation of the originals onto tapp-apiserver: the running original is refused,
// a dry run changes nothing, a run interrupted after the CRD deletion completes when run again, and then
// every pod and claim keeps its UID and restart count under the new TApp, which then updates in place and
// scales; the YurtAppDaemon adopts its per-pool Deployment and the NodePool's users' v1beta1 manifest applies.
func TestMigrate(t *testing.T) {
	t.Parallel()
	c := startMigrationCluster(t)
	ctx := testContext(t, 15*time.Minute)
	ns := c.installOriginals(t, ctx)
	before := c.snapshot(t, ctx, ns)
	if len(before.uids) != 8 || before.uids["pod/web-2"] == "" || before.uids["pvc/data-web-2"] == "" {
		t.Fatalf("the original installation is incomplete: %v", before.uids)
	}

	manifest, err := c.APIServiceManifest()
	if err != nil {
		t.Fatal(err)
	}
	// The file migrate registers is a copy from a cluster (kubectl get -o yaml): a List with the server's fields.
	copied, err := apiServicesAsCopied(manifest)
	if err != nil {
		t.Fatal(err)
	}
	apiServices := filepath.Join(c.dir, "apiservices.yaml")
	if err := os.WriteFile(apiServices, copied, 0o644); err != nil {
		t.Fatal(err)
	}
	// The same APIServices pointing at a port nothing listens on: they never become Available.
	broken := filepath.Join(c.dir, "apiservices-broken.yaml")
	if err := os.WriteFile(broken, regexp.MustCompile(`port: \d+`).ReplaceAll(manifest, []byte("port: 1")), 0o644); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(c.dir, "backup.yaml")
	args := []string{"--apiservice-file=" + apiServices, "--backup-file=" + backup}

	// The original controller still runs: refused, nothing changed.
	pollUntil(t, time.Minute, "the original controller runs", func() error {
		d, err := c.kube.AppsV1().Deployments("kube-system").Get(ctx, "tapp-controller", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 1 {
			return fmt.Errorf("%d ready replicas", d.Status.ReadyReplicas)
		}
		return nil
	})
	out, err := c.migrate(t, args...)
	if err == nil {
		t.Fatal("migrate went on while the original controller runs")
	}
	requireContains(t, "migrate's refusal", out, "Deployment kube-system/tapp-controller: the original controller tapp-controller still runs",
		"kubectl -n kube-system scale deployment tapp-controller --replicas=0")
	c.mustKubectl(t, "", "-n", "kube-system", "scale", "deployment", "tapp-controller", "--replicas=0")
	pollUntil(t, time.Minute, "the original controller is stopped", func() error {
		d, err := c.kube.AppsV1().Deployments("kube-system").Get(ctx, "tapp-controller", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 0 {
			return fmt.Errorf("%d ready replicas", d.Status.ReadyReplicas)
		}
		return nil
	})

	// A dry run prints the plan and changes nothing.
	dryBefore := c.snapshot(t, ctx, ns)
	out, err = c.migrate(t, append(args, "--dry-run")...)
	if err != nil {
		t.Fatal(err)
	}
	requireContains(t, "the dry run's plan", out, "dry run: nothing is changed",
		"remove ValidatingWebhookConfiguration tapp-admission", "remove ValidatingWebhookConfiguration yurt-app-manager",
		"delete TApp shop/web (orphan propagation), orphaning 3 pods, 3 claims",
		"delete YurtAppDaemon shop/edge (orphan propagation), orphaning 1 Deployment",
		"delete CustomResourceDefinition tapps.apps.tkestack.io", "register APIService v1.apps.tkestack.io")
	if after := c.snapshot(t, ctx, ns); fmt.Sprint(after) != fmt.Sprint(dryBefore) {
		t.Fatalf("the dry run changed something:\nbefore %v\nafter  %v", dryBefore, after)
	}
	if _, err := os.Stat(backup); !os.IsNotExist(err) {
		t.Fatalf("the dry run wrote the backup file (%v)", err)
	}
	for _, name := range []string{"tapp-admission", "yurt-app-manager"} {
		if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("the dry run removed the webhook configuration %s: %v", name, err)
		}
	}

	// A run whose APIServices never become Available stops after the CRDs are gone.
	out, err = c.migrate(t, "--apiservice-file="+broken, "--backup-file="+backup, "--timeout=45s")
	if err == nil {
		t.Fatal("migrate succeeded with APIServices that cannot become Available")
	}
	requireContains(t, "the interrupted run", out, "deleted CustomResourceDefinition tapps.apps.tkestack.io", "is not Available after 45s", "run migrate again")
	// The wait reports what the aggregator says, not its own deadline.
	requireContains(t, "the interrupted run", out, "(Available=False: ")
	if strings.Contains(out, "exceed context deadline") {
		t.Errorf("the interrupted run reports the deadline instead of the last error:\n%s", out)
	}
	if _, err := c.dyn.Resource(crdsV1).Get(ctx, "tapps.apps.tkestack.io", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the TApp CRD is still there after the interrupted run: %v", err)
	}
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if len(p.OwnerReferences) != 0 || p.UID != before.uids["pod/"+p.Name] {
			t.Errorf("pod %s after the interrupted run: uid %s (was %s), ownerReferences %v", p.Name, p.UID, before.uids["pod/"+p.Name], p.OwnerReferences)
		}
	}

	// Run again: it continues from the backup file.
	out, err = c.migrate(t, append(args, "--timeout="+migrateTimeout.String())...)
	if err != nil {
		c.dumpState(t, ns)
		t.Fatalf("the second run failed: %v", err)
	}
	requireContains(t, "the second run", out, "ignoring the fields the API server sets", "registered APIService v1.apps.tkestack.io (Available)",
		"created TApp shop/web on tapp-apiserver", "created NodePool hangzhou on tapp-apiserver", "created YurtAppDaemon shop/edge on tapp-apiserver",
		"TApp shop/web: 6/6 pods and claims adopted with their UIDs", "0 replaced, 0 gone, 0 conflicts",
		"YurtAppDaemon shop/edge: 1/1 workloads adopted with their UIDs")

	// The YurtAppDaemon recognises the original's rendering of its template in the adopted Deployment and
	// records its revision there without touching the pod template: the pod keeps running.
	c.waitAdoptedTemplateRecorded(t, ctx, ns, 1)

	// Every pod and claim is the same object, controlled by the new TApp; no container restarted.
	tapp, err := c.dyn.Resource(tappsV1).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tapp.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		t.Error("the TApp kept kubectl's last-applied-configuration")
	}
	after := c.snapshot(t, ctx, ns)
	for key, uid := range before.uids {
		if after.uids[key] != uid {
			t.Errorf("%s: uid %s, was %s", key, after.uids[key], uid)
		}
	}
	for key, n := range before.restarts {
		if after.restarts[key] != n {
			t.Errorf("%s: %d restarts, was %d", key, after.restarts[key], n)
		}
	}
	checkControlled := func(kind, name string, meta metav1.ObjectMeta, uid types.UID) {
		t.Helper()
		if ref := metav1.GetControllerOf(&meta); ref == nil || ref.UID != uid {
			t.Errorf("%s %s is controlled by %v, want the new object %s", kind, name, ref, uid)
		}
	}
	pollUntil(t, ctrlTimeout, "every instance Running and Ready under the new TApp", func() error {
		tapp, err = c.dyn.Resource(tappsV1).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		ready, _, _ := unstructured.NestedInt64(tapp.Object, "status", "readyReplicas")
		statuses, _, _ := unstructured.NestedStringMap(tapp.Object, "status", "statuses")
		if ready != 3 || len(statuses) != 3 {
			return fmt.Errorf("status: readyReplicas %d, statuses %v", ready, statuses)
		}
		for id, s := range statuses {
			if s != "Running" {
				return fmt.Errorf("instance %s is %s", id, s)
			}
		}
		return nil
	})
	conditions, _, _ := unstructured.NestedSlice(tapp.Object, "status", "conditions")
	for _, cond := range conditions {
		if m, _ := cond.(map[string]interface{}); m["type"] == "ReplicaFailure" && m["status"] == "True" {
			t.Errorf("the TApp reports %v", m)
		}
	}
	for id := 0; id < 3; id++ {
		pod, err := c.kube.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("web-%d", id), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkControlled("pod", pod.Name, pod.ObjectMeta, tapp.GetUID())
		if !podReady(pod) {
			t.Errorf("pod %s is not Ready", pod.Name)
		}
		claim, err := c.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, fmt.Sprintf("data-web-%d", id), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkControlled("claim", claim.Name, claim.ObjectMeta, tapp.GetUID())
	}
	yad, err := c.dyn.Resource(yadsV1a1).Namespace(ns).Get(ctx, "edge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deployments, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(deployments.Items) != 1 {
		t.Errorf("%d per-pool Deployments, want the original one", len(deployments.Items))
	}
	for _, d := range deployments.Items {
		checkControlled("Deployment", d.Name, d.ObjectMeta, yad.GetUID())
	}
	pool, err := c.dyn.Resource(poolsV1a1).Get(ctx, "hangzhou", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if zone, _, _ := unstructured.NestedString(pool.Object, "spec", "labels", "topology.example.com/zone"); zone != "hangzhou" {
		t.Errorf("the NodePool lost spec.labels: %v", pool.Object["spec"])
	}
	if owner, _, _ := unstructured.NestedString(pool.Object, "spec", "annotations", "example.com/owner"); owner != "team-a" {
		t.Errorf("the NodePool lost spec.annotations: %v", pool.Object["spec"])
	}

	// Users' v1beta1 NodePool manifests apply again, where tapp-apiserver serves v1beta1 (issue 20).
	if versions := c.mustKubectl(t, "", "api-versions"); strings.Contains(versions, "apps.openyurt.io/v1beta1") {
		c.mustKubectl(t, nodePoolV1beta1, "apply", "-f", "-")
	} else {
		t.Log("tapp-apiserver does not serve apps.openyurt.io/v1beta1 here: the v1beta1 NodePool manifest is not re-applied")
	}

	// The adopted TApp updates in place and scales like any other.
	c.mustKubectl(t, "", "-n", ns, "patch", "tapp", "web", "--type=json",
		"-p", `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.26"}]`)
	pollUntil(t, 2*ctrlTimeout, "the image change rolls in place", func() error {
		for id := 0; id < 3; id++ {
			pod, err := c.kube.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("web-%d", id), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pod.UID != before.uids["pod/"+pod.Name] {
				return fmt.Errorf("pod %s was recreated (uid %s, was %s)", pod.Name, pod.UID, before.uids["pod/"+pod.Name])
			}
			if pod.Spec.Containers[0].Image != "nginx:1.26" || !podReady(pod) {
				return fmt.Errorf("pod %s: image %s, ready %v", pod.Name, pod.Spec.Containers[0].Image, podReady(pod))
			}
		}
		return nil
	})
	c.mustKubectl(t, "", "-n", ns, "scale", "tapp", "web", "--replicas=4")
	pollUntil(t, ctrlTimeout, "the scale-up creates instance 3", func() error {
		pod, err := c.kube.CoreV1().Pods(ns).Get(ctx, "web-3", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !podReady(pod) || pod.Spec.Containers[0].Image != "nginx:1.26" {
			return fmt.Errorf("pod web-3: image %s, ready %v", pod.Spec.Containers[0].Image, podReady(pod))
		}
		_, err = c.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-web-3", metav1.GetOptions{})
		return err
	})

	// A later change of the YurtAppDaemon's template rolls its pods.
	edgePods := func() ([]corev1.Pod, error) {
		list, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=edge"})
		return list.Items, err
	}
	c.mustKubectl(t, "", "-n", ns, "patch", "yurtappdaemon", "edge", "--type=json",
		"-p", `[{"op":"replace","path":"/spec/workloadTemplate/deploymentTemplate/spec/template/spec/containers/0/image","value":"busybox:1.37"}]`)
	pollUntil(t, 2*ctrlTimeout, "the template change replaces the YurtAppDaemon's pod", func() error {
		pods, err := edgePods()
		if err != nil {
			return err
		}
		if len(pods) != 1 || pods[0].UID == before.uids["pod/"+pods[0].Name] || pods[0].Spec.Containers[0].Image != "busybox:1.37" || !podReady(&pods[0]) {
			return fmt.Errorf("%d edge pods: %v", len(pods), describePodList(pods))
		}
		return nil
	})

	// The backup file reads as a kubectl List (the way back to the CRDs starts from it).
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string                   `json:"kind"`
		Items []map[string]interface{} `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil || list.Kind != "List" || len(list.Items) != 3+2+3 {
		t.Errorf("backup file: kind %q, %d items (want 3 CRDs, 2 webhook configurations, 3 objects), %v", list.Kind, len(list.Items), err)
	}
	if _, err := c.kubectl(t, "", "create", "--dry-run=client", "-f", backup); err != nil {
		t.Errorf("kubectl cannot read the backup file: %v", err)
	}
}

// dumpState logs what the cluster holds in ns, for a failure's diagnosis.
func (c *migrationCluster) dumpState(t *testing.T, ns string) {
	t.Helper()
	for _, args := range [][]string{
		{"-n", ns, "describe", "tapp", "web"},
		{"-n", ns, "get", "pods,pvc,deployments", "-o", "yaml"},
		{"-n", ns, "get", "events", "--sort-by=.lastTimestamp"},
	} {
		out, err := c.kubectl(t, "", args...)
		t.Logf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// labelPoolNode puts the index-th node of the cluster into pool, as OpenYurt's node webhook or yurtadm leave
// it (the apps.openyurt.io/nodepool label), and returns the node's name.
func (c *migrationCluster) labelPoolNode(t *testing.T, ctx context.Context, index int, pool string) string {
	t.Helper()
	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	if index >= len(names) {
		t.Fatalf("no node %d among %v", index, names)
	}
	c.mustKubectl(t, "", "label", "node", names[index], "apps.openyurt.io/nodepool="+pool, "--overwrite")
	return names[index]
}

// waitAppPodsReady waits until n pods match selector, all Ready.
func (c *migrationCluster) waitAppPodsReady(t *testing.T, ctx context.Context, ns, selector string, n int) {
	t.Helper()
	pollUntil(t, 2*time.Minute, fmt.Sprintf("%d Ready pods %s", n, selector), func() error {
		pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		ready := 0
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				ready++
			}
		}
		if len(pods.Items) != n || ready != n {
			return fmt.Errorf("%d pods, %d Ready: %v", len(pods.Items), ready, describePodList(pods.Items))
		}
		return nil
	})
}

// waitAdoptedTemplateRecorded waits until n Deployments of ns carry the YurtAppDaemon's record that their pod
// template is the original's rendering of its current revision, and have rolled out that generation.
func (c *migrationCluster) waitAdoptedTemplateRecorded(t *testing.T, ctx context.Context, ns string, n int) {
	t.Helper()
	pollUntil(t, ctrlTimeout, "the adopted Deployments record the revision", func() error {
		list, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		recorded := 0
		for _, d := range list.Items {
			revision := d.Annotations["apps.openyurt.io/adopted-template-revision"]
			if revision != "" && revision == d.Labels["apps.openyurt.io/controller-revision-hash"] && d.Status.ObservedGeneration == d.Generation {
				recorded++
			}
		}
		if recorded != n {
			return fmt.Errorf("%d of %d Deployments recorded", recorded, len(list.Items))
		}
		return nil
	})
}

func describePodList(pods []corev1.Pod) string {
	var out []string
	for i := range pods {
		p := &pods[i]
		image := ""
		if len(p.Spec.Containers) > 0 {
			image = p.Spec.Containers[0].Image
		}
		out = append(out, fmt.Sprintf("%s(uid %s, %s, %s, ready %v)", p.Name, p.UID, image, p.Status.Phase, podReady(p)))
	}
	return strings.Join(out, ", ")
}
