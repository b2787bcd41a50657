//go:build e2e

package e2e

// End-to-end tests of the lifecycle of single TApp instances: killed and revived, finished and restarted.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// TestTAppKillAndRevive: spec.statuses {"1": "Killed"} deletes pod 1 and keeps it down; removing the entry
// brings it back. The tutorial's kill manifest, applied as is, never creates the killed instance.
func TestTAppKillAndRevive(t *testing.T) {
	t.Parallel()
	killed := func(ctx context.Context, ns, name string, alive map[int]string, id int) func() error {
		return func() error {
			_, tapp, err := checkInstances(ctx, ns, name, alive)
			if err != nil {
				return err
			}
			if pod, err := kubeClient.CoreV1().Pods(ns).Get(ctx, podName(name, id), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("pod %s of the killed instance exists (err %v): %s", podName(name, id), err, describePod(pod))
			}
			if got := tapp.Status.Statuses[strconv.Itoa(id)]; got != policy.StatusKilled {
				return fmt.Errorf("status.statuses[%d] = %q, want Killed; %s", id, got, describeStatus(tapp))
			}
			return nil
		}
	}

	t.Run("patch", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-kill")
		ctx := testContext(t, 3*ctrlTimeout)
		mustKubectlIn(t, tutorialTApp(t, "tutorial-same-template.yaml"), "apply", "-n", ns, "-f", "-")
		before, _ := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))

		mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "--type=merge", "-p", `{"spec":{"statuses":{"1":"Killed"}}}`)
		alive := map[int]string{0: "nginx:1.7.9", 2: "nginx:1.7.9"}
		pollUntil(t, ctrlTimeout, "pod 1 is killed", killed(ctx, ns, "example-tapp", alive, 1))
		holdsFor(t, ctrlHold, "the killed pod stays down", killed(ctx, ns, "example-tapp", alive, 1))
		tapp := getTApp(t, ns, "example-tapp")
		if tapp.Status.AppStatus != policy.AppRunning {
			t.Errorf("appStatus with one killed instance = %q, want Running", tapp.Status.AppStatus)
		}
		pods, err := instancePods(ctx, ns, "example-tapp")
		if err != nil {
			t.Fatal(err)
		}
		checkUntouched(t, before[0], pods[0])
		checkUntouched(t, before[2], pods[2])
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "example-tapp"))
		if got := tb.cell(t, "example-tapp", "DESIRED") + " " + tb.cell(t, "example-tapp", "READY"); got != "3 2" {
			t.Errorf("kubectl get tapp: DESIRED READY = %q, want \"3 2\"", got)
		}

		// Reviving: the entry goes, the pod comes back with a new uid.
		mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "--type=merge", "-p", `{"spec":{"statuses":null}}`)
		after, tapp := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
		if after[1].UID == before[1].UID {
			t.Errorf("revived pod example-tapp-1 has the uid of the killed one")
		}
		checkIdentity(t, tapp, 1, after[1])
		checkUntouched(t, before[0], after[0])
		checkUntouched(t, before[2], after[2])
	})

	t.Run("tutorial", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-kill")
		ctx := testContext(t, 2*ctrlTimeout)
		mustKubectlIn(t, tutorialTApp(t, "tutorial-kill-pod.yaml"), "apply", "-n", ns, "-f", "-")
		alive := map[int]string{0: "nginx:latest", 2: "nginx:latest"}
		pollUntil(t, ctrlTimeout, "instances 0 and 2 run, 1 is killed", killed(ctx, ns, "example-tapp", alive, 1))
		holdsFor(t, ctrlHold, "the killed instance is never created", killed(ctx, ns, "example-tapp", alive, 1))
		// "If you want to run pod 1 again, just delete spec.statuses": with the tutorial's manifest minus statuses.
		manifest := strings.Replace(tutorialTApp(t, "tutorial-kill-pod.yaml"), "  statuses:\n    \"1\": \"Killed\"\n", "", 1)
		mustKubectlIn(t, manifest, "apply", "-n", ns, "-f", "-")
		waitInstances(t, ns, "example-tapp", map[int]string{0: "nginx:latest", 1: "nginx:1.7.9", 2: "nginx:latest"})
	})
}

// TestTAppRestartFinishedInstance: a finished instance that does not migrate keeps its pod; deleting the pod
// (the documented way to restart it) brings it back, as it does for a running pod deleted by hand, and a
// finished pod that migrates is recreated on its own.
func TestTAppRestartFinishedInstance(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-restart")
	ctx := testContext(t, 5*ctrlTimeout)

	t.Run("restartPolicy Never", func(t *testing.T) {
		manifest := strings.Replace(nginxTApp("batch", 2, "nginx:1.7.9", ""), "    spec:\n      containers:", "    spec:\n      restartPolicy: Never\n      containers:", 1)
		mustKubectlIn(t, manifest, "apply", "-n", ns, "-f", "-")
		before, _ := waitInstances(t, ns, "batch", images(2, "nginx:1.7.9"))

		finished := finishPod(t, ns, "batch-1", corev1.PodSucceeded)
		stays := func() error {
			pod, err := kubeClient.CoreV1().Pods(ns).Get(ctx, "batch-1", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("the finished pod batch-1: %v", err)
			}
			if pod.UID != finished.UID || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodSucceeded {
				return fmt.Errorf("the finished pod was touched: %s", describePod(pod))
			}
			tapp, err := tappClient.TKEStackAppsV1().TApps(ns).Get(ctx, "batch", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := tapp.Status.Statuses["1"]; got != policy.StatusSucc {
				return fmt.Errorf("status.statuses[1] = %q, want Succ; %s", got, describeStatus(tapp))
			}
			if tapp.Status.AppStatus != policy.AppRunning || tapp.Status.Statuses["0"] != policy.StatusRunning {
				return fmt.Errorf("want instance 0 Running and appStatus Running; %s", describeStatus(tapp))
			}
			return nil
		}
		pollUntil(t, ctrlTimeout, "instance 1 is Succ", stays)
		holdsFor(t, ctrlHold, "the finished pod is kept", stays)

		mustKubectl(t, "delete", "-n", ns, "pod", "batch-1")
		after, tapp := waitInstances(t, ns, "batch", images(2, "nginx:1.7.9"))
		if after[1].UID == before[1].UID {
			t.Errorf("pod batch-1 was not recreated")
		}
		checkIdentity(t, tapp, 1, after[1])
		checkUntouched(t, before[0], after[0])
	})

	t.Run("deleted running pod", func(t *testing.T) {
		mustKubectlIn(t, nginxTApp("svc", 2, "nginx:1.7.9", ""), "apply", "-n", ns, "-f", "-")
		before, _ := waitInstances(t, ns, "svc", images(2, "nginx:1.7.9"))
		mustKubectl(t, "delete", "-n", ns, "pod", "svc-0")
		after, _ := waitInstances(t, ns, "svc", images(2, "nginx:1.7.9"))
		if after[0].UID == before[0].UID {
			t.Errorf("pod svc-0 was not recreated")
		}
		checkUntouched(t, before[1], after[1])
	})

	t.Run("migrate", func(t *testing.T) {
		// restartPolicy Always (the default): a failed pod is deleted and created again.
		mustKubectlIn(t, nginxTApp("svc", 2, "nginx:1.7.9", ""), "apply", "-n", ns, "-f", "-")
		before, _ := waitInstances(t, ns, "svc", images(2, "nginx:1.7.9"))
		finishPod(t, ns, "svc-1", corev1.PodFailed)
		var after map[int]*corev1.Pod
		pollUntil(t, ctrlTimeout, "the failed pod svc-1 is recreated", func() error {
			pods, _, err := checkInstances(ctx, ns, "svc", images(2, "nginx:1.7.9"))
			if err != nil {
				return err
			}
			if pods[1].UID == before[1].UID {
				return fmt.Errorf("svc-1 not recreated yet: %s", describePod(pods[1]))
			}
			after = pods
			return nil
		})
		checkUntouched(t, before[0], after[0])
	})
}
