//go:build e2e

package e2e

// End-to-end tests of spec.lifecycle: a preDelete hook holds a scale-down and the TApp's own (background)
// deletion until a drain tool removes the hook's label; an inPlaceUpdate hook with markPodNotReady turns the
// pod unready before its image changes; orphan deletion keeps the pods and runs no hook.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// hookedTApp is nginxTApp whose pods start hooked (label drain=true in the template), with a preDelete and a
// markPodNotReady inPlaceUpdate hook on that label. Its selector is app=<name> only: one defaulted from the
// template would take the drain label too, and the API refuses a hook on a label of the selector.
func hookedTApp(name string, replicas int, image string) string {
	return strings.Replace(nginxTApp(name, replicas, image, ""), "        app: "+name+"\n", "        app: "+name+"\n        drain: \"true\"\n", 1) + `  selector:
    matchLabels:
      app: ` + name + `
  lifecycle:
    preDelete:
      labelsHandler:
        drain: "true"
    inPlaceUpdate:
      labelsHandler:
        drain: "true"
      markPodNotReady: true
`
}

// lifecycleState returns the pod's lifecycle state label; "gone" when the pod does not exist, "terminating"
// while it is being deleted.
func lifecycleState(t *testing.T, ns, name string) string {
	t.Helper()
	pod := getPod(t, ns, name)
	switch {
	case pod == nil:
		return "gone"
	case pod.DeletionTimestamp != nil:
		return "terminating"
	}
	return pod.Labels[tkestack.LifecycleStateLabel]
}

func waitLifecycleState(t *testing.T, ns, name, want string) {
	t.Helper()
	pollUntil(t, ctrlTimeout, fmt.Sprintf("pod %s/%s in lifecycle state %s", ns, name, want), func() error {
		if got := lifecycleState(t, ns, name); got != want {
			return fmt.Errorf("state %q", got)
		}
		return nil
	})
}

// waitDeleted waits until the pod is terminating or gone.
func waitDeleted(t *testing.T, ns, name string) {
	t.Helper()
	pollUntil(t, ctrlTimeout, fmt.Sprintf("pod %s/%s deleted", ns, name), func() error {
		if got := lifecycleState(t, ns, name); got != "gone" && got != "terminating" {
			return fmt.Errorf("state %q", got)
		}
		return nil
	})
}

// instancesLifecycle is the LIFECYCLE cell of instance id in `kubectl tapp instances`.
func instancesLifecycle(t *testing.T, ns, name, id string) string {
	t.Helper()
	out, err := kubectlTApp(t, "instances", name, "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	return parseTable(t, out).cell(t, id, "LIFECYCLE")
}

// TestTAppLifecycleHooks: through kubectl and kubectl tapp on the local cluster, a preDelete hook holds a
// scale-down until the label is removed; a markPodNotReady inPlaceUpdate hook turns the pod unready before its
// image changes, and the update goes on in place once released; deleting the TApp (background) waits for the
// preDelete hook of its last pod, then removes TApp and pod.
func TestTAppLifecycleHooks(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-hooks")
	const name = "hooked"
	mustKubectlIn(t, hookedTApp(name, 2, "nginx:1.7.9"), "apply", "-n", ns, "-f", "-")
	waitPodsRun(t, ns, name, images(2, "nginx:1.7.9"))
	if f := mustKubectl(t, "get", "tapp", name, "-n", ns, "-o", "jsonpath={.metadata.finalizers}"); !strings.Contains(f, tkestack.PreDeleteFinalizer) {
		t.Errorf("finalizers %s, want %s", f, tkestack.PreDeleteFinalizer)
	}
	if got := lifecycleState(t, ns, podName(name, 1)); got != tkestack.LifecycleStateNormal {
		t.Errorf("new pod state %q, want Normal", got)
	}

	// Scale-down: instance 1 is held while its label is there.
	mustKubectl(t, "scale", "tapp", name, "-n", ns, "--replicas=1")
	waitLifecycleState(t, ns, podName(name, 1), tkestack.LifecycleStatePreparingDelete)
	holdsFor(t, ctrlHold, "a pod held by its preDelete hook stays", func() error {
		if pod := getPod(t, ns, podName(name, 1)); pod == nil || pod.DeletionTimestamp != nil {
			return fmt.Errorf("pod %s deleted while its preDelete hook holds it", podName(name, 1))
		}
		return nil
	})
	if got := instancesLifecycle(t, ns, name, "1"); got != "PreparingDelete[preDelete:drain=true]" {
		t.Errorf("kubectl tapp instances: LIFECYCLE of 1 = %q, want PreparingDelete[preDelete:drain=true]", got)
	}
	events := mustKubectl(t, "get", "events", "-n", ns, "--field-selector", "reason=WaitingForPreDeleteHook", "-o", "jsonpath={.items[*].message}")
	requireContains(t, "WaitingForPreDeleteHook events", events, podName(name, 1), "label drain=true")
	mustKubectl(t, "label", "pod", podName(name, 1), "-n", ns, "drain-")
	waitDeleted(t, ns, podName(name, 1))

	// In-place update with markPodNotReady: the pod turns unready with its old image, and keeps it while held.
	before := getPod(t, ns, podName(name, 0))
	mustKubectl(t, "patch", "tapp", name, "-n", ns, "--type=merge",
		"-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.7.10"}]}}}}`)
	pollUntil(t, ctrlTimeout, "the pod prepared for its update turns unready", func() error {
		pod := getPod(t, ns, podName(name, 0))
		if pod.Labels[tkestack.LifecycleStateLabel] != tkestack.LifecycleStatePreparingUpdate || podReady(pod) {
			return fmt.Errorf("state %q, ready %v", pod.Labels[tkestack.LifecycleStateLabel], podReady(pod))
		}
		if c := podCondition(pod, tkestack.InPlaceUpdateReadinessGate); c == nil || c.Status != corev1.ConditionFalse || c.Reason != tkestack.LifecycleStatePreparingUpdate {
			return fmt.Errorf("gate condition %+v, want False/PreparingUpdate", c)
		}
		return nil
	})
	holdsFor(t, ctrlHold, "a pod held by its inPlaceUpdate hook keeps its image", func() error {
		if pod := getPod(t, ns, podName(name, 0)); pod.Spec.Containers[0].Image != "nginx:1.7.9" {
			return fmt.Errorf("image %s changed while the hook holds the pod", pod.Spec.Containers[0].Image)
		}
		return nil
	})
	if got := instancesLifecycle(t, ns, name, "0"); got != "PreparingUpdate[inPlaceUpdate:drain=true]" {
		t.Errorf("kubectl tapp instances: LIFECYCLE of 0 = %q, want PreparingUpdate[inPlaceUpdate:drain=true]", got)
	}
	events = mustKubectl(t, "get", "events", "-n", ns, "--field-selector", "reason=WaitingForInPlaceUpdateHook", "-o", "jsonpath={.items[*].message}")
	requireContains(t, "WaitingForInPlaceUpdateHook events", events, podName(name, 0))
	mustKubectl(t, "label", "pod", podName(name, 0), "-n", ns, "drain-")
	waitPodsRun(t, ns, name, images(1, "nginx:1.7.10"))
	// The update gives the template's drain label back: hooked again, the pod is Normal.
	waitLifecycleState(t, ns, podName(name, 0), tkestack.LifecycleStateNormal)
	if after := getPod(t, ns, podName(name, 0)); after.UID != before.UID {
		t.Errorf("pod %s was recreated (uid %s → %s), want an in-place update", after.Name, before.UID, after.UID)
	}

	// Background deletion of the TApp waits for the preDelete hook of its pod.
	mustKubectl(t, "delete", "tapp", name, "-n", ns, "--wait=false")
	waitLifecycleState(t, ns, podName(name, 0), tkestack.LifecycleStatePreparingDelete)
	holdsFor(t, ctrlHold, "the TApp and its held pod stay", func() error {
		tapp, err := tappClient.TKEStackAppsV1().TApps(ns).Get(testContext(t, 30*time.Second), name, metav1.GetOptions{})
		if err != nil || tapp.DeletionTimestamp == nil {
			return fmt.Errorf("TApp %v (err %v), want it being deleted", tapp, err)
		}
		if pod := getPod(t, ns, podName(name, 0)); pod == nil || pod.DeletionTimestamp != nil {
			return fmt.Errorf("pod deleted while its preDelete hook holds it")
		}
		return nil
	})
	mustKubectl(t, "label", "pod", podName(name, 0), "-n", ns, "drain-")
	mustKubectl(t, "wait", "--for=delete", "tapp/"+name, "-n", ns, "--timeout=60s")
	waitDeleted(t, ns, podName(name, 0))
}

// TestTAppLifecycleOrphanDeletion: deleting a TApp with a preDelete hook with --cascade=orphan removes the TApp
// at once and keeps its pod, untouched by the hook (still Normal) and without owner.
func TestTAppLifecycleOrphanDeletion(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-hooks-orphan")
	const name = "kept"
	mustKubectlIn(t, hookedTApp(name, 1, "nginx:1.7.9"), "apply", "-n", ns, "-f", "-")
	waitPodsRun(t, ns, name, images(1, "nginx:1.7.9"))
	mustKubectl(t, "delete", "tapp", name, "-n", ns, "--cascade=orphan", "--wait=false")
	mustKubectl(t, "wait", "--for=delete", "tapp/"+name, "-n", ns, "--timeout=60s")
	pollUntil(t, ctrlTimeout, "the orphaned pod loses its owner", func() error {
		pod := getPod(t, ns, podName(name, 0))
		if pod == nil || pod.DeletionTimestamp != nil {
			return fmt.Errorf("pod %s deleted, want it kept", podName(name, 0))
		}
		if len(pod.OwnerReferences) > 0 {
			return fmt.Errorf("owner references %v", pod.OwnerReferences)
		}
		return nil
	})
	if got := lifecycleState(t, ns, podName(name, 0)); got != tkestack.LifecycleStateNormal {
		t.Errorf("orphaned pod state %q, want Normal (no hook runs)", got)
	}
	events := mustKubectl(t, "get", "events", "-n", ns, "--field-selector", "reason=PreDeleteHookSkipped", "-o", "jsonpath={.items[*].message}")
	requireContains(t, "PreDeleteHookSkipped events", events, "Orphan deletion")
}
