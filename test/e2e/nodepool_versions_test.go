//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// userNodePools are v1beta1 NodePools as users keep them in their repositories: a yurt-app-manager pool
// with a selector, node labels, annotations and taints, and an OpenYurt pool with hostNetwork.
const userNodePools = `apiVersion: apps.openyurt.io/v1beta1
kind: NodePool
metadata:
  name: npv-beijing
spec:
  type: Cloud
  selector:
    matchLabels:
      apps.openyurt.io/nodepool: npv-beijing
  labels:
    zone: beijing
  annotations:
    owner: ops
  taints:
  - key: example.com/cloud
    value: "true"
    effect: NoSchedule
---
apiVersion: apps.openyurt.io/v1beta1
kind: NodePool
metadata:
  name: npv-hangzhou
spec:
  type: Edge
  hostNetwork: true
  labels:
    zone: hangzhou
`

// nodePoolJSON is the part of a NodePool the test reads, in either version.
type nodePoolJSON struct {
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Annotations   map[string]string `json:"annotations"`
		ManagedFields []struct {
			Manager    string `json:"manager"`
			Operation  string `json:"operation"`
			APIVersion string `json:"apiVersion"`
			FieldsV1   json.RawMessage
		} `json:"managedFields"`
	} `json:"metadata"`
	Spec struct {
		Type        string            `json:"type"`
		HostNetwork *bool             `json:"hostNetwork"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Selector    *struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Taints []struct {
			Key, Value, Effect string
		} `json:"taints"`
	} `json:"spec"`
}

func getNodePool(t *testing.T, resource, name string, extra ...string) nodePoolJSON {
	t.Helper()
	out := mustKubectl(t, append([]string{"get", resource, name, "-o", "json"}, extra...)...)
	var pool nodePoolJSON
	if err := json.Unmarshal([]byte(out), &pool); err != nil {
		t.Fatalf("kubectl get %s %s: %v\n%s", resource, name, err, out)
	}
	return pool
}

// TestNodePoolVersionsKubectl applies users' v1beta1 NodePool manifests through kubectl and the aggregator,
// and reads, patches, watches and server-side applies them through both versions.
func TestNodePoolVersionsKubectl(t *testing.T) {
	const (
		alpha = "nodepools.v1alpha1.apps.openyurt.io"
		beta  = "nodepools.v1beta1.apps.openyurt.io"
	)
	mustKubectl(t, "wait", "--for=condition=Available", "--timeout=60s", "apiservice/v1beta1.apps.openyurt.io")
	t.Cleanup(func() {
		_, _ = kubectl(t, "delete", "nodepools", "npv-beijing", "npv-hangzhou", "npv-ssa", "--ignore-not-found", "--wait=false")
	})

	out := mustKubectlIn(t, userNodePools, "apply", "-f", "-")
	requireContains(t, "kubectl apply of v1beta1 manifests", out,
		"nodepool.apps.openyurt.io/npv-beijing created", "nodepool.apps.openyurt.io/npv-hangzhou created")
	out = mustKubectlIn(t, userNodePools, "apply", "-f", "-")
	requireContains(t, "second kubectl apply", out,
		"nodepool.apps.openyurt.io/npv-beijing unchanged", "nodepool.apps.openyurt.io/npv-hangzhou unchanged")

	t.Run("get", func(t *testing.T) {
		tb := parseTable(t, mustKubectl(t, "get", "nodepools"))
		tb.requireHeader(t, "NAME", "TYPE", "READYNODES", "NOTREADYNODES", "LEADERNODES", "LEADERELECTIONAGE", "AGE")
		if got := tb.cell(t, "npv-beijing", "TYPE"); got != "Cloud" {
			t.Errorf("kubectl get nodepools: npv-beijing TYPE = %q, want Cloud", got)
		}
		if got := tb.cell(t, "npv-hangzhou", "TYPE"); got != "Edge" {
			t.Errorf("kubectl get nodepools: npv-hangzhou TYPE = %q, want Edge", got)
		}
		// Plain `nodepools` and the short name resolve to the preferred version, v1beta2.
		for _, resource := range []string{"nodepool", "np"} {
			if got := mustKubectl(t, "get", resource, "npv-hangzhou", "-o", "jsonpath={.apiVersion} {.spec.hostNetwork}"); got != "apps.openyurt.io/v1beta2 true" {
				t.Errorf("kubectl get %s npv-hangzhou = %q, want apps.openyurt.io/v1beta2 true", resource, got)
			}
		}
		tb = parseTable(t, mustKubectl(t, "get", alpha))
		tb.requireHeader(t, "NAME", "TYPE", "READYNODES", "NOTREADYNODES", "LEADERNODES", "LEADERELECTIONAGE", "AGE")
		tb.cell(t, "npv-beijing", "TYPE")

		// Both versions hold every field; v1alpha1 carries hostNetwork as the annotation.
		b, a := getNodePool(t, beta, "npv-beijing"), getNodePool(t, alpha, "npv-beijing")
		for _, p := range []nodePoolJSON{a, b} {
			if p.Spec.Type != "Cloud" || p.Spec.Labels["zone"] != "beijing" || p.Spec.Annotations["owner"] != "ops" ||
				len(p.Spec.Taints) != 1 || p.Spec.Taints[0].Key != "example.com/cloud" ||
				p.Spec.Selector == nil || p.Spec.Selector.MatchLabels["apps.openyurt.io/nodepool"] != "npv-beijing" {
				t.Errorf("%s npv-beijing spec = %+v", p.APIVersion, p.Spec)
			}
		}
		if a.APIVersion != "apps.openyurt.io/v1alpha1" || b.APIVersion != "apps.openyurt.io/v1beta1" {
			t.Errorf("apiVersions = %s and %s", a.APIVersion, b.APIVersion)
		}
		hzAlpha, hzBeta := getNodePool(t, alpha, "npv-hangzhou"), getNodePool(t, beta, "npv-hangzhou")
		if hzAlpha.Metadata.Annotations["nodepool.openyurt.io/hostnetwork"] != "true" || hzAlpha.Spec.HostNetwork != nil {
			t.Errorf("v1alpha1 npv-hangzhou annotations %v hostNetwork %v, want the annotation and no field",
				hzAlpha.Metadata.Annotations, hzAlpha.Spec.HostNetwork)
		}
		if hzBeta.Spec.HostNetwork == nil || !*hzBeta.Spec.HostNetwork {
			t.Errorf("v1beta1 npv-hangzhou hostNetwork = %v, want true", hzBeta.Spec.HostNetwork)
		}
		if _, ok := hzBeta.Metadata.Annotations["nodepool.openyurt.io/hostnetwork"]; ok {
			t.Errorf("v1beta1 npv-hangzhou has the hostnetwork annotation beside the field")
		}
	})

	t.Run("patch one version, watch the other", func(t *testing.T) {
		w := startKubectl(t, "get", beta, "npv-beijing", "--watch", "-o", `jsonpath={.apiVersion} {.spec.labels.zone}{"\n"}`)
		w.waitLine(t, 30*time.Second, "the current v1beta1 object", func(l string) bool {
			return l == "apps.openyurt.io/v1beta1 beijing"
		})
		mustKubectl(t, "patch", alpha, "npv-beijing", "--type=merge", "-p", `{"spec":{"labels":{"zone":"through-alpha"}}}`)
		w.waitLine(t, 30*time.Second, "the v1alpha1 patch", func(l string) bool {
			return l == "apps.openyurt.io/v1beta1 through-alpha"
		})

		w = startKubectl(t, "get", alpha, "npv-beijing", "--watch", "-o", `jsonpath={.apiVersion} {.spec.labels.zone}{"\n"}`)
		w.waitLine(t, 30*time.Second, "the current v1alpha1 object", func(l string) bool {
			return l == "apps.openyurt.io/v1alpha1 through-alpha"
		})
		mustKubectl(t, "patch", beta, "npv-beijing", "--type=merge", "-p", `{"spec":{"labels":{"zone":"through-beta"}}}`)
		w.waitLine(t, 30*time.Second, "the v1beta1 patch", func(l string) bool {
			return l == "apps.openyurt.io/v1alpha1 through-beta"
		})
	})

	t.Run("server-side apply in both versions", func(t *testing.T) {
		betaManifest := `apiVersion: apps.openyurt.io/v1beta1
kind: NodePool
metadata:
  name: npv-ssa
spec:
  hostNetwork: true
  labels:
    zone: from-beta
`
		alphaManifest := `apiVersion: apps.openyurt.io/v1alpha1
kind: NodePool
metadata:
  name: npv-ssa
spec:
  labels:
    zone: from-alpha
  taints:
  - key: example.com/edge
    value: "true"
    effect: NoSchedule
`
		requireContains(t, "v1beta1 server-side apply",
			mustKubectlIn(t, betaManifest, "apply", "--server-side", "--field-manager=beta-user", "-f", "-"),
			"nodepool.apps.openyurt.io/npv-ssa serverside-applied")
		// The v1alpha1 manager conflicts on the label the v1beta1 manager owns.
		_, err := kubectlIn(t, []byte(alphaManifest), "apply", "--server-side", "--field-manager=alpha-user", "-f", "-")
		if err == nil || !strings.Contains(err.Error(), "beta-user") || !strings.Contains(err.Error(), ".spec.labels.zone") {
			t.Fatalf("v1alpha1 apply of a label applied through v1beta1: %v, want a conflict with beta-user on .spec.labels.zone", err)
		}
		mustKubectlIn(t, alphaManifest, "apply", "--server-side", "--field-manager=alpha-user", "--force-conflicts", "-f", "-")

		for _, resource := range []string{alpha, beta} {
			p := getNodePool(t, resource, "npv-ssa", "--show-managed-fields")
			managers := map[string]string{}
			for _, m := range p.Metadata.ManagedFields {
				if m.Operation == "Apply" {
					managers[m.Manager] = m.APIVersion
				}
			}
			if managers["beta-user"] != "apps.openyurt.io/v1beta1" || managers["alpha-user"] != "apps.openyurt.io/v1alpha1" {
				t.Errorf("%s managedFields appliers = %v, want beta-user in v1beta1 and alpha-user in v1alpha1", resource, managers)
			}
			if p.Spec.Labels["zone"] != "from-alpha" || len(p.Spec.Taints) != 1 {
				t.Errorf("%s spec after both applies = %+v", resource, p.Spec)
			}
		}
		if got := mustKubectl(t, "get", beta, "npv-ssa", "-o", "jsonpath={.spec.hostNetwork}"); got != "true" {
			t.Errorf("hostNetwork after the v1alpha1 apply = %q, want true", got)
		}
		// Re-applying the v1beta1 manifest (forced) takes the label back and keeps alpha-user's taints.
		mustKubectlIn(t, betaManifest, "apply", "--server-side", "--field-manager=beta-user", "--force-conflicts", "-f", "-")
		p := getNodePool(t, alpha, "npv-ssa")
		if p.Spec.Labels["zone"] != "from-beta" || len(p.Spec.Taints) != 1 || p.Metadata.Annotations["nodepool.openyurt.io/hostnetwork"] != "true" {
			t.Errorf("v1alpha1 after the forced v1beta1 re-apply: spec %+v annotations %v", p.Spec, p.Metadata.Annotations)
		}
	})

	t.Run("validation in the request's version", func(t *testing.T) {
		cloud := "apiVersion: apps.openyurt.io/v1beta1\nkind: NodePool\nmetadata:\n  name: npv-invalid\nspec:\n  type: Cloud\n  hostNetwork: true\n"
		_, err := kubectlIn(t, []byte(cloud), "apply", "-f", "-")
		if err == nil || !strings.Contains(err.Error(), "spec.hostNetwork") {
			t.Errorf("v1beta1 Cloud pool with hostNetwork: %v, want an error on spec.hostNetwork", err)
		}
		cloud = "apiVersion: apps.openyurt.io/v1alpha1\nkind: NodePool\nmetadata:\n  name: npv-invalid\n" +
			"  annotations:\n    nodepool.openyurt.io/hostnetwork: \"true\"\nspec:\n  type: Cloud\n"
		_, err = kubectlIn(t, []byte(cloud), "apply", "-f", "-")
		if err == nil || !strings.Contains(err.Error(), "metadata.annotations[nodepool.openyurt.io/hostnetwork]") {
			t.Errorf("v1alpha1 Cloud pool with the hostnetwork annotation: %v, want an error on the annotation", err)
		}
	})

	t.Run("explain", func(t *testing.T) {
		out := mustKubectl(t, "explain", "nodepool.spec", "--api-version=apps.openyurt.io/v1beta1")
		requireContains(t, "kubectl explain nodepool.spec v1beta1", out, "VERSION:    v1beta1", "hostNetwork", "selector", "taints")
		out = mustKubectl(t, "explain", "nodepool.spec", "--api-version=apps.openyurt.io/v1alpha1")
		requireContains(t, "kubectl explain nodepool.spec v1alpha1", out, "VERSION:    v1alpha1", "selector", "taints")
		if strings.Contains(out, "hostNetwork") {
			t.Errorf("kubectl explain v1alpha1 nodepool.spec shows hostNetwork:\n%s", out)
		}
		requireContains(t, "kubectl explain nodepool", mustKubectl(t, "explain", "nodepool"), "VERSION:    v1beta2")
		requireContains(t, "kubectl explain nodepool.spec v1beta2", mustKubectl(t, "explain", "nodepool.spec", "--api-version=apps.openyurt.io/v1beta2"),
			"VERSION:    v1beta2", "enableLeaderElection", "interConnectivity", "leaderElectionStrategy", "leaderNodeLabelSelector",
			"leaderReplicas", "poolScopeMetadata")
		out = mustKubectl(t, "explain", "nodepool", "--api-version=apps.openyurt.io/v1beta1")
		requireContains(t, "kubectl explain nodepool v1beta1", out, "KIND:       NodePool", "spec", "status")
	})
}

// coexistenceCRD is a CRD of another kind in apps.openyurt.io/v1beta1, a group-version tapp-apiserver
// serves: the aggregator keeps routing v1beta1 to tapp-apiserver (its APIService is not kube-apiserver's to
// manage), so the CRD is hidden, and tapp-apiserver says so.
const coexistenceCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: coexistencechecks.apps.openyurt.io
spec:
  group: apps.openyurt.io
  scope: Namespaced
  names:
    plural: coexistencechecks
    singular: coexistencecheck
    kind: CoexistenceCheck
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

// TestCoexistenceEvent: a CRD in one of tapp-apiserver's group-versions gets a Warning Event with reason
// ServedElsewhere, and NodePools stay served.
func TestCoexistenceEvent(t *testing.T) {
	t.Parallel()
	const name = "coexistencechecks.apps.openyurt.io"
	mustKubectlIn(t, coexistenceCRD, "apply", "-f", "-")
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "crd", name, "--ignore-not-found", "--wait=false") })

	var message string
	eventually(t, 60*time.Second, "a ServedElsewhere Event on the CRD", func() error {
		out, err := kubectl(t, "get", "events", "-n", "default",
			"--field-selector", "reason=ServedElsewhere,involvedObject.name="+name,
			"-o", `jsonpath={range .items[*]}{.type} {.involvedObject.kind} {.message}{"\n"}{end}`)
		if err != nil {
			return err
		}
		if !strings.Contains(out, "Warning CustomResourceDefinition ") {
			return fmt.Errorf("no Warning Event yet: %q", out)
		}
		message = out
		return nil
	})
	requireContains(t, "the Event's message", message, "apps.openyurt.io", "v1beta1")

	// The APIService stays tapp-apiserver's: v1beta1 NodePools are still served.
	if got := mustKubectl(t, "get", "apiservice", "v1beta1.apps.openyurt.io", "-o", "jsonpath={.spec.service.name}"); got != "tapp-apiserver" {
		t.Errorf("APIService v1beta1.apps.openyurt.io points to %q", got)
	}
	mustKubectl(t, "get", "nodepools.v1beta1.apps.openyurt.io")
}
