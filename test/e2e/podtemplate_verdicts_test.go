//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// verdictTApp is a TApp whose pods request and are limited to 100m of cpu, with labels that do not depend on
// its name: TApps alike but for their name share the remembered verdict of their templates.
const verdictTApp = `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: same
spec:
  replicas: 1
  template:
    metadata:
      labels:
        app: verdicts
    spec:
      containers:
      - name: app
        image: nginx:1.25
        resources:
          requests:
            cpu: 100m
          limits:
            cpu: 100m
`

// TestPodTemplateVerdictsForgottenOnChange checks that a TApp whose templates the core API allowed a moment
// ago is refused right after a change to what the core API's admission reads: TAppPodTemplateDryRun remembers
// a clean verdict for 30 s, and must forget it on any such change. Each change is followed by creates for at
// most 10 s (kube-apiserver itself applies a change through its informers), well within those 30 s: a
// remembered verdict that outlived the change would admit them all.
func TestPodTemplateVerdictsForgottenOnChange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// before is applied before the verdict is remembered, change after; refusal is in the refusal.
		before, change func(t *testing.T, ns string)
		refusal        string
	}{
		{name: "LimitRange", change: func(t *testing.T, ns string) {
			mustKubectlIn(t, `apiVersion: v1
kind: LimitRange
metadata:
  name: small
spec:
  limits:
  - type: Container
    max:
      cpu: 50m
`, "apply", "-n", ns, "-f", "-")
		}, refusal: "maximum cpu usage per Container is 50m"},
		{name: "ResourceQuota", change: func(t *testing.T, ns string) {
			mustKubectlIn(t, `apiVersion: v1
kind: ResourceQuota
metadata:
  name: memory
spec:
  hard:
    limits.memory: 1Gi
`, "apply", "-n", ns, "-f", "-")
		}, refusal: "must specify limits.memory"},
		{name: "PodSecurity namespace label", change: func(t *testing.T, ns string) {
			mustKubectl(t, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
		}, refusal: `violates PodSecurity "restricted:latest"`},
		{name: "ValidatingAdmissionPolicy binding", before: func(t *testing.T, ns string) {
			mustKubectlIn(t, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: %[1]s
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      resources: ["pods"]
      operations: ["CREATE"]
  validations:
  - expression: "object.spec.containers.all(c, c.image != 'nginx:1.25')"
    message: "e2e: nginx:1.25 is retired"
`, ns), "apply", "-f", "-")
			t.Cleanup(func() {
				_, _ = kubectl(t, "delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", ns, "--ignore-not-found")
			})
		}, change: func(t *testing.T, ns string) {
			mustKubectlIn(t, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: %[1]s
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: %[1]s
`, ns), "apply", "-f", "-")
		}, refusal: "e2e: nginx:1.25 is retired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t, "verdicts")
			waitDefaultServiceAccount(t, ns)
			if tc.before != nil {
				tc.before(t, ns)
			}
			// Server-side dry runs of the same TApp: tapp-apiserver's admission (and so the dry-run pod create)
			// runs for each; after the settling time of the namespace's own changes, the verdict is remembered.
			time.Sleep(4 * time.Second)
			for i := 0; i < 2; i++ {
				out := mustKubectlIn(t, verdictTApp, "create", "--dry-run=server", "-n", ns, "-f", "-")
				requireContains(t, "a dry-run create before the change", out, "tapp.apps.tkestack.io/same created")
			}
			tc.change(t, ns)
			eventually(t, 10*time.Second, "the TApp to be refused after the change", func() error {
				out, err := kubectlIn(t, []byte(verdictTApp), "create", "--dry-run=server", "-n", ns, "-f", "-")
				if err == nil {
					return fmt.Errorf("admitted: %s", out)
				}
				if !strings.Contains(err.Error(), tc.refusal) {
					return err
				}
				return nil
			})
		})
	}
}
