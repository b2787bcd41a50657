//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// tappWithPool is a TApp with spec.template and a pool entry "big" (run by instance 1). templateExtra and
// poolExtra are extra, already indented fields of their pod specs.
func tappWithPool(name, templateExtra, poolExtra string) string {
	return fmt.Sprintf(`apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: %[1]s
spec:
  replicas: 2
  templates:
    "1": big
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: app
        image: nginx:1.25
%[2]s
  templatePool:
    big:
      metadata:
        labels:
          app: %[1]s
      spec:
        containers:
        - name: app
          image: nginx:1.26
%[3]s
`, name, templateExtra, poolExtra)
}

// TestTAppPodTemplateDryRun checks that a TApp whose pod template the core API refuses is refused at kubectl
// apply, with the core API's message on the TApp's field path, while valid TApps and edits that do not touch a
// template pass.
func TestTAppPodTemplateDryRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "podtpl")
	waitDefaultServiceAccount(t, ns)

	out := mustKubectlIn(t, tappWithPool("good", "", ""), "apply", "-n", ns, "-f", "-")
	requireContains(t, "applying a valid TApp", out, "tapp.apps.tkestack.io/good created")

	// spec.template: a DNS policy the core API does not know (this server's own validation leaves it alone).
	_, err := kubectlIn(t, []byte(tappWithPool("bad-template", "      dnsPolicy: Bogus", "")), "apply", "-n", ns, "-f", "-")
	if err == nil {
		t.Fatalf("a TApp with dnsPolicy Bogus was admitted")
	}
	requireContains(t, "refusal of spec.template", err.Error(), `The TApp "bad-template" is invalid`,
		`spec.template.spec.dnsPolicy: Unsupported value: "Bogus"`)

	// A pool entry: activeDeadlineSeconds must be positive.
	_, err = kubectlIn(t, []byte(tappWithPool("bad-pool", "", "        activeDeadlineSeconds: 0")), "apply", "-n", ns, "-f", "-")
	if err == nil {
		t.Fatalf("a TApp with a pool entry with activeDeadlineSeconds 0 was admitted")
	}
	requireContains(t, "refusal of a pool entry", err.Error(), `The TApp "bad-pool" is invalid`,
		`spec.templatePool[big].spec.activeDeadlineSeconds: Invalid value: 0`)
	for _, name := range []string{"bad-template", "bad-pool"} {
		if _, err := kubectl(t, "get", "-n", ns, "tapp", name); err == nil {
			t.Errorf("the refused TApp %s exists", name)
		}
	}

	// An update that breaks a template: hugepages without cpu or memory.
	_, err = kubectl(t, "patch", "-n", ns, "tapp", "good", "--type=json", "-p",
		`[{"op":"add","path":"/spec/template/spec/containers/0/resources","value":{"limits":{"hugepages-2Mi":"2Mi"},"requests":{"hugepages-2Mi":"2Mi"}}}]`)
	if err == nil {
		t.Fatalf("a template update with hugepages only was admitted")
	}
	requireContains(t, "refusal of a template update", err.Error(), `The TApp "good" is invalid`,
		"spec.template.spec.containers[0].resources", "HugePages require cpu or memory")
	if got := mustKubectl(t, "get", "-n", ns, "tapp", "good", "-o", "jsonpath={.spec.template.spec.containers[0].resources}"); strings.Contains(got, "hugepages") {
		t.Errorf("the refused update was stored: resources = %s", got)
	}

	// A service account that does not exist yet only warns: the pods are created once it does.
	manifest := tappWithPool("later-sa", "      serviceAccountName: created-later", "        serviceAccountName: created-later")
	_, stderr, err := kubectlOutputs(t, []byte(manifest), "apply", "-n", ns, "-f", "-")
	if err != nil {
		t.Fatalf("a TApp whose service account does not exist yet was refused: %v", err)
	}
	requireContains(t, "kubectl's warnings", stderr,
		`Warning: spec.template: error looking up service account `+ns+`/created-later`, "its pods will be refused until that exists")

	// PodSecurity of the namespace is enforced on the templates, on create and on template changes only.
	mustKubectl(t, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
	// kube-apiserver's PodSecurity admission reads namespaces from a cache: wait until it sees the label.
	eventually(t, 30*time.Second, "PodSecurity to refuse a dry-run TApp", func() error {
		_, err := kubectlIn(t, []byte(tappWithPool("privileged", "", "")), "apply", "--dry-run=server", "-n", ns, "-f", "-")
		if err == nil {
			return fmt.Errorf("admitted")
		}
		if !strings.Contains(err.Error(), "violates PodSecurity") {
			return err
		}
		return nil
	})
	_, err = kubectlIn(t, []byte(tappWithPool("privileged", "", "")), "apply", "-n", ns, "-f", "-")
	if err == nil {
		t.Fatalf("a TApp violating the namespace's PodSecurity level was admitted")
	}
	requireContains(t, "PodSecurity refusal", err.Error(), `The TApp "privileged" is invalid`,
		`spec.template: Forbidden: violates PodSecurity "restricted:latest"`, `spec.templatePool[big]: Forbidden: violates PodSecurity`)
	out = mustKubectl(t, "scale", "-n", ns, "tapp", "good", "--replicas=3")
	requireContains(t, "scaling a TApp whose templates predate the PodSecurity label", out, "scaled")
	out = mustKubectl(t, "patch", "-n", ns, "tapp", "good", "--type=merge", "-p", `{"spec":{"replicas":1}}`)
	requireContains(t, "patching replicas of a TApp whose templates predate the PodSecurity label", out, "patched")
	_, err = kubectl(t, "patch", "-n", ns, "tapp", "good", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.27"}]`)
	if err == nil || !strings.Contains(err.Error(), `spec.template: Forbidden: violates PodSecurity`) {
		t.Errorf("changing the template under a restricted PodSecurity level: err = %v, want the PodSecurity refusal", err)
	}
}

// TestTAppPodTemplateDryRunIgnoresPodQuota checks that a ResourceQuota on pods does not refuse TApps: quota
// bounds running pods, and the controller creates them once there is room.
func TestTAppPodTemplateDryRunIgnoresPodQuota(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "podquota")
	waitDefaultServiceAccount(t, ns)
	mustKubectlIn(t, `apiVersion: v1
kind: ResourceQuota
metadata:
  name: no-pods
spec:
  hard:
    pods: "0"
`, "-n", ns, "apply", "-f", "-")
	eventually(t, 60*time.Second, "quota status to be computed", func() error {
		used, err := kubectl(t, "-n", ns, "get", "resourcequota", "no-pods", "-o", "jsonpath={.status.used.pods}")
		if err != nil {
			return err
		}
		if strings.TrimSpace(used) != "0" {
			return fmt.Errorf("used = %q, want 0", used)
		}
		return nil
	})
	// The core API itself refuses pods here.
	_, err := kubectlIn(t, []byte(`apiVersion: v1
kind: Pod
metadata:
  name: probe
spec:
  containers:
  - name: app
    image: nginx:1.25
`), "-n", ns, "create", "--dry-run=server", "-f", "-")
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("a dry-run pod create in a namespace with pods=0: err = %v, want exceeded quota", err)
	}
	out := mustKubectlIn(t, tappWithPool("waits-for-quota", "", ""), "-n", ns, "apply", "-f", "-")
	requireContains(t, "creating a TApp where no pod fits the quota", out, "tapp.apps.tkestack.io/waits-for-quota created")
}

// TestNodePoolInUse checks that a NodePool with a node cannot be deleted, and can once the node left.
func TestNodePoolInUse(t *testing.T) {
	t.Parallel()
	pool := "e2e-inuse-" + rand.String(5)
	nodeName := pool + "-node"
	out := mustKubectlIn(t, fmt.Sprintf(`apiVersion: apps.openyurt.io/v1alpha1
kind: NodePool
metadata:
  name: %s
spec:
  type: Edge
`, pool), "apply", "-f", "-")
	requireContains(t, "creating the NodePool", out, "nodepool.apps.openyurt.io/"+pool+" created")
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "nodepool", pool, "--ignore-not-found", "--wait=false") })

	// A node of its own, tainted so that no other test's pods land on it.
	ctx := testContext(t, 30*time.Second)
	_, err := kubeClient.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{"apps.openyurt.io/desired-nodepool": pool}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "e2e.tapp.io/no-workloads", Effect: corev1.TaintEffectNoSchedule}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", nodeName, err)
	}
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "node", nodeName, "--ignore-not-found", "--wait=false") })

	want := fmt.Sprintf(`nodepool %q still has 1 node (%s); remove the apps.openyurt.io/desired-nodepool label from it first`, pool, nodeName)
	// tapp-apiserver sees nodes through an informer: wait until a server-side dry run is refused.
	eventually(t, 30*time.Second, "deleting the pool to be refused", func() error {
		_, err := kubectl(t, "delete", "nodepool", pool, "--dry-run=server")
		if err == nil {
			return fmt.Errorf("a dry-run deletion of the pool with node %s was admitted", nodeName)
		}
		if !strings.Contains(err.Error(), want) {
			return err
		}
		return nil
	})
	_, err = kubectl(t, "delete", "nodepool", pool)
	if err == nil {
		t.Fatalf("the pool with node %s was deleted", nodeName)
	}
	requireContains(t, "the refusal", err.Error(), "Error from server (Forbidden)", want)
	mustKubectl(t, "get", "nodepool", pool)

	mustKubectl(t, "label", "node", nodeName, "apps.openyurt.io/desired-nodepool-")
	// Once the node left (and the NodePool controller, if any, removed its membership label), the pool goes.
	eventually(t, 60*time.Second, "deleting the pool once its node left", func() error {
		_, err := kubectl(t, "delete", "nodepool", pool)
		return err
	})
	if _, err := kubectl(t, "get", "nodepool", pool); err == nil {
		t.Errorf("the pool still exists after its deletion")
	}
}

// waitDefaultServiceAccount waits for the service account controller to create the namespace's default
// service account: until then the core API refuses every pod of the namespace, and the dry run only warns.
func waitDefaultServiceAccount(t *testing.T, ns string) {
	t.Helper()
	eventually(t, 60*time.Second, "the default service account of "+ns, func() error {
		_, err := kubectl(t, "get", "serviceaccount", "default", "-n", ns)
		return err
	})
}
