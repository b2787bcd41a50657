//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// TestStatefulExample walks through README.md's "Operating stateful services" with
// artifacts/examples/stateful-tapp.yaml, as a user types it: the example applies unchanged and its three
// instances run with bound claims; raising the claim template's storage grows every claim online (kubectl wait
// on VolumeClaimsUpdated returns once they have grown, with the same pods); a scale-down holds the highest
// instance in PreparingDelete, unready, until its drain label is removed, and its claim stays.
func TestStatefulExample(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "stateful")
	mustKubectl(t, "apply", "-n", ns, "-f", repoPath("artifacts", "examples", "stateful-tapp.yaml"))
	waitPodsRun(t, ns, "db", images(3, "postgres:16"))
	waitClaimsAt(t, ns, "db", "data", 3, "1Gi")
	mustKubectl(t, "wait", "tapp/db", "-n", ns, "--for=condition=VolumeClaimsUpdated", "--timeout=60s")
	tb := parseTable(t, mustKubectlTApp(t, "instances", "db", "-n", ns))
	for _, id := range []string{"0", "1", "2"} {
		if claims, lifecycle := tb.cell(t, id, "CLAIMS"), tb.cell(t, id, "LIFECYCLE"); claims != "data=1Gi" || lifecycle != "Normal" {
			t.Errorf("kubectl tapp instances: instance %s CLAIMS %q LIFECYCLE %q, want data=1Gi and Normal", id, claims, lifecycle)
		}
	}

	// Grow a volume.
	before := podIdentities(t, ns, "db")
	mustKubectl(t, "patch", "tapp", "db", "-n", ns, "--type=json",
		"-p", `[{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/storage","value":"2Gi"}]`)
	mustKubectl(t, "wait", "tapp/db", "-n", ns, "--for=condition=VolumeClaimsUpdated", "--timeout=3m")
	claims, err := instanceClaims(testContext(t, 30*time.Second), ns, "db", "data", 3)
	if err != nil {
		t.Fatal(err)
	}
	for id := 0; id < 3; id++ {
		c := claims[id]
		if c == nil {
			t.Fatalf("no claim of instance %d", id)
		}
		if got := c.Status.Capacity.Storage().String(); got != "2Gi" {
			t.Errorf("kubectl wait returned with claim %s at %s, want 2Gi", c.Name, got)
		}
	}
	if after := podIdentities(t, ns, "db"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("pods after the expansion %v, before %v: want the same pods, not restarted", after, before)
	}

	// Drain before an instance goes.
	uid := getPod(t, ns, "db-2").UID
	mustKubectl(t, "scale", "tapp", "db", "-n", ns, "--replicas=2")
	pollUntil(t, 60*time.Second, "db-2 held in PreparingDelete", func() error {
		pod := getPod(t, ns, "db-2")
		if pod.UID != uid || pod.DeletionTimestamp != nil {
			return fmt.Errorf("db-2 was deleted while its drain label was on")
		}
		if state := pod.Labels[tkestack.LifecycleStateLabel]; state != tkestack.LifecycleStatePreparingDelete {
			return fmt.Errorf("db-2 lifecycle state %q", state)
		}
		if podReady(pod) {
			return fmt.Errorf("db-2 is still ready (markPodNotReady)")
		}
		return nil
	})
	holdsFor(t, 3*time.Second, "db-2 stays while drain=hold", func() error {
		if pod := getPod(t, ns, "db-2"); pod.UID != uid || pod.DeletionTimestamp != nil {
			return fmt.Errorf("db-2 was deleted while its drain label was on")
		}
		return nil
	})
	if cell := parseTable(t, mustKubectlTApp(t, "instances", "db", "-n", ns)).cell(t, "2", "LIFECYCLE"); !strings.HasPrefix(cell, "PreparingDelete[preDelete:drain=hold") {
		t.Errorf("kubectl tapp instances: instance 2 LIFECYCLE %q, want PreparingDelete[preDelete:drain=hold...]", cell)
	}
	mustKubectl(t, "label", "pod", "db-2", "-n", ns, "drain-")
	ctx := testContext(t, 90*time.Second)
	pollUntil(t, 60*time.Second, "db-2 deleted once drained", func() error {
		pod, err := kubeClient.CoreV1().Pods(ns).Get(ctx, "db-2", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case pod.UID != uid:
			return fmt.Errorf("db-2 was recreated")
		}
		return fmt.Errorf("db-2 still exists")
	})
	if _, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-db-2", metav1.GetOptions{}); err != nil {
		t.Errorf("the claim of the drained instance: %v, want it kept", err)
	}
}
