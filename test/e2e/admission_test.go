//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// tappManifest is a minimal TApp named name with replicas instances.
func tappManifest(name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: %[1]s
spec:
  replicas: %[2]d
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: app
        image: nginx:1.25
`, name, replicas)
}

// TestAdmissionNamespaceLifecycle checks that tapp-apiserver's admission refuses objects in a namespace that
// does not exist.
func TestAdmissionNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	missing := "e2e-missing-" + rand.String(6)
	_, err := kubectlIn(t, []byte(tappManifest("orphan", 1)), "create", "-n", missing, "-f", "-")
	if err == nil {
		t.Fatalf("created a TApp in the namespace %s, which does not exist", missing)
	}
	requireContains(t, "kubectl create in a missing namespace", err.Error(), "NotFound", `namespaces "`+missing+`" not found`)

	ctx := testContext(t, 30*time.Second)
	_, err = tappClient.TKEStackAppsV1().TApps(missing).Create(ctx, &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan"},
		Spec:       tkestackv1.TAppSpec{Replicas: 1, Template: podTemplate("orphan")},
	}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("client-go create in a missing namespace: err = %v, want NotFound", err)
	}
	_, err = kubectlIn(t, []byte(yadWithUnknownField), "create", "-n", missing, "-f", "-", "--validate=false")
	if err == nil || !strings.Contains(err.Error(), `namespaces "`+missing+`" not found`) {
		t.Errorf("creating a YurtAppDaemon in a missing namespace: err = %v, want NotFound", err)
	}
}

// TestValidatingAdmissionPolicy checks that a ValidatingAdmissionPolicy of the cluster is enforced on TApps.
func TestValidatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "vap")
	policy := "e2e-tapp-max-replicas-" + rand.String(5)
	const message = "e2e: a TApp may run at most 10 replicas"
	manifest := fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: %[1]s
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps.tkestack.io"]
      apiVersions: ["v1"]
      resources: ["tapps"]
      operations: ["CREATE", "UPDATE"]
  validations:
  - expression: "object.spec.replicas <= 10"
    message: %[2]q
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: %[1]s
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: %[3]s
`, policy, message, ns)
	mustKubectlIn(t, manifest, "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = kubectl(t, "delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", policy, "--ignore-not-found")
	})

	// The policy reaches tapp-apiserver's admission through informers: retry until it is enforced.
	eventually(t, 60*time.Second, "the policy refuses a TApp with 11 replicas", func() error {
		out, err := kubectlIn(t, []byte(tappManifest("big", 11)), "create", "-n", ns, "-f", "-")
		if err == nil {
			_, _ = kubectl(t, "delete", "-n", ns, "tapp", "big", "--wait=false")
			return fmt.Errorf("created: %s", out)
		}
		if !strings.Contains(err.Error(), message) {
			return err
		}
		requireContains(t, "the refusal", err.Error(), "ValidatingAdmissionPolicy", policy, "denied request")
		return nil
	})
	// No stray TApp from the retries may remain.
	if _, err := kubectl(t, "get", "-n", ns, "tapp", "big"); err == nil {
		// A create that succeeded before the policy applied was deleted without waiting.
		mustKubectl(t, "wait", "-n", ns, "--for=delete", "tapp/big", "--timeout=30s")
	}

	out := mustKubectlIn(t, tappManifest("small", 2), "create", "-n", ns, "-f", "-")
	requireContains(t, "creating a TApp with 2 replicas", out, "tapp.apps.tkestack.io/small created")

	// UPDATE is checked too.
	_, err := kubectl(t, "patch", "-n", ns, "tapp", "small", "--type=merge", "-p", `{"spec":{"replicas":11}}`)
	if err == nil || !strings.Contains(err.Error(), message) {
		t.Errorf("patching replicas to 11: err = %v, want the policy's message", err)
	}
	out = mustKubectl(t, "patch", "-n", ns, "tapp", "small", "--type=merge", "-p", `{"spec":{"replicas":10}}`)
	requireContains(t, "patching replicas to 10", out, "tapp.apps.tkestack.io/small patched")

	// The binding is limited to this namespace.
	other := newNamespace(t, "vap-other")
	out = mustKubectlIn(t, tappManifest("big", 11), "create", "-n", other, "-f", "-")
	requireContains(t, "creating a TApp with 11 replicas outside the binding", out, "tapp.apps.tkestack.io/big created")
}

// TestResourceQuotaObjectCount checks that a ResourceQuota counting TApps holds. Requests for TApps are
// proxied by kube-apiserver, so the count is enforced by tapp-apiserver's own admission chain.
func TestResourceQuotaObjectCount(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "quota")
	mustKubectlIn(t, `apiVersion: v1
kind: ResourceQuota
metadata:
  name: tapps
spec:
  hard:
    count/tapps.apps.tkestack.io: "1"
`, "-n", ns, "apply", "-f", "-")
	// The quota controller must have recorded the quota's usage before admission can count against it.
	eventually(t, 60*time.Second, "quota status to be computed", func() error {
		used, err := kubectl(t, "-n", ns, "get", "resourcequota", "tapps", "-o", `jsonpath={.status.used.count/tapps\.apps\.tkestack\.io}`)
		if err != nil {
			return err
		}
		if strings.TrimSpace(used) != "0" {
			return fmt.Errorf("used = %q, want 0", used)
		}
		return nil
	})
	mustKubectlIn(t, tappManifest("first", 1), "-n", ns, "apply", "-f", "-")
	_, stderr, err := kubectlOutputs(t, []byte(tappManifest("second", 1)), "-n", ns, "apply", "-f", "-")
	if err == nil {
		t.Fatalf("a second TApp was admitted beyond count/tapps.apps.tkestack.io=1")
	}
	requireContains(t, "quota refusal", stderr, "exceeded quota", "count/tapps.apps.tkestack.io")
	if _, err := kubectl(t, "-n", ns, "get", "tapp", "second"); err == nil {
		t.Fatalf("the refused TApp exists")
	}
}
