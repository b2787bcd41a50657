//go:build e2e

package e2e

// End-to-end tests of the TApp controller embedded in tapp-apiserver: every example of the TApp tutorial
// (artifacts/examples/tutorial, unchanged) and the behaviour the controller issue asks for, driven
// with kubectl as a user would and checked precisely with client-go. Each test works in a namespace of its
// own, so all of them share the one local cluster. Pods are run by the local cluster's pod simulator
// (pkg/localcluster/kubelet.go): they become Ready at once unless a readiness gate is False, and a container
// whose image changes in place restarts with the new image, a new imageID and restartCount+1.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// TestTAppCreate: the tutorial's first TApp runs pods example-tapp-0..2 with the controller's labels and
// controller reference, and its status and `kubectl get tapp` report them.
func TestTAppCreate(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-create")
	out := mustKubectlIn(t, tutorialTApp(t, "tutorial-same-template.yaml"), "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/example-tapp created")

	pods, tapp := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
	for id, pod := range pods {
		checkIdentity(t, tapp, id, pod)
	}
	s := tapp.Status
	if s.Replicas != 3 || s.ReadyReplicas != 3 || s.UpdatedReplicas != 3 || s.AppStatus != policy.AppRunning {
		t.Errorf("status: %s; want replicas, readyReplicas and updatedReplicas 3, appStatus Running", describeStatus(tapp))
	}
	if len(s.Statuses) != 3 {
		t.Errorf("status.statuses = %v, want the instances 0, 1 and 2", s.Statuses)
	}
	if s.ScaleLabelSelector != "app=example-tapp" {
		t.Errorf("status.scaleLabelSelector = %q, want app=example-tapp", s.ScaleLabelSelector)
	}
	if len(s.Conditions) == 0 {
		t.Errorf("status.conditions is empty, want the controller's conditions (e.g. Available/Progressing)")
	}
	for _, c := range s.Conditions {
		t.Logf("condition %s=%s reason=%s message=%q observedGeneration=%d", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
		if c.Type == "Available" && c.Status != metav1.ConditionTrue {
			t.Errorf("condition Available = %s (%s: %s) with every pod ready", c.Status, c.Reason, c.Message)
		}
	}

	// What a user sees.
	pollUntil(t, ctrlTimeout, "kubectl get tapp shows 3 ready instances", func() error {
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "example-tapp"))
		got := []string{tb.cell(t, "example-tapp", "DESIRED"), tb.cell(t, "example-tapp", "CURRENT"),
			tb.cell(t, "example-tapp", "READY"), tb.cell(t, "example-tapp", "APPSTATUS")}
		if strings.Join(got, " ") != "3 3 3 Running" {
			return fmt.Errorf("DESIRED CURRENT READY APPSTATUS = %q, want 3 3 3 Running", got)
		}
		return nil
	})
	tb := parseTable(t, mustKubectl(t, "get", "pods", "-n", ns, "-l", "app=example-tapp"))
	if len(tb.rows) != 3 {
		t.Errorf("kubectl get pods -l app=example-tapp lists %d pods, want 3: %q", len(tb.rows), tb.rows)
	}
	for id := 0; id < 3; id++ {
		name := podName("example-tapp", id)
		if got := tb.cell(t, name, "STATUS"); got != "Running" {
			t.Errorf("kubectl get pods: %s STATUS = %q, want Running", name, got)
		}
		if got := tb.cell(t, name, "READY"); got != "1/1" {
			t.Errorf("kubectl get pods: %s READY = %q, want 1/1", name, got)
		}
	}
	// The instance label selects one pod, as Services built on it expect.
	if got := mustKubectl(t, "get", "pods", "-n", ns, "-l", "tapp_instance_key=1", "-o", "name"); got != "pod/example-tapp-1\n" {
		t.Errorf("kubectl get pods -l tapp_instance_key=1 = %q, want pod/example-tapp-1", got)
	}
	out = mustKubectl(t, "describe", "-n", ns, "tapp", "example-tapp")
	requireContains(t, "kubectl describe tapp", out, "Status:", "Running")
}

// TestTAppDifferentTemplates: instances listed in spec.templates, and all instances when
// defaultTemplateName names a pool entry, run the pool template.
func TestTAppDifferentTemplates(t *testing.T) {
	t.Parallel()
	t.Run("tutorial defaultTemplateName", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-templates")
		mustKubectlIn(t, tutorialTApp(t, "tutorial-different-templates.yaml"), "apply", "-n", ns, "-f", "-")
		pods, tapp := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
		test := tapp.Spec.TemplatePool["test"]
		for id, pod := range pods {
			checkIdentity(t, tapp, id, pod)
			if got, want := pod.Labels[policy.TemplateHashLabel], policy.TemplateHash(&test); got != want {
				t.Errorf("pod %s runs template hash %s, want %s of the pool template test", pod.Name, got, want)
			}
		}
	})
	t.Run("templates pin one instance", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-templates")
		// The notes' variant: spec.template runs nginx:1.8.1, the pool template test nginx:1.7.9, instance 1 runs test.
		mustKubectlIn(t, tutorialTApp(t, "notes-zh-different-templates.yaml"), "apply", "-n", ns, "-f", "-")
		pods, tapp := waitInstances(t, ns, "example-tapp", map[int]string{0: "nginx:1.8.1", 1: "nginx:1.7.9", 2: "nginx:1.8.1"})
		for id, pod := range pods {
			checkIdentity(t, tapp, id, pod)
		}
		test := tapp.Spec.TemplatePool["test"]
		if got, want := pods[1].Labels[policy.TemplateHashLabel], policy.TemplateHash(&test); got != want {
			t.Errorf("pod example-tapp-1 runs template hash %s, want %s of the pool template test", got, want)
		}
		if got, want := pods[0].Labels[policy.TemplateHashLabel], policy.TemplateHash(&tapp.Spec.Template); got != want {
			t.Errorf("pod example-tapp-0 runs template hash %s, want %s of spec.template", got, want)
		}
	})
}

// TestTAppUpdateOnePod: the tutorial's "update specified pod", then moving one instance to another pool
// template that differs only in its image and metadata, and back: the pod is updated in place (template
// labels and annotations added and removed) and the others are left alone.
func TestTAppUpdateOnePod(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-update-one")
	mustKubectlIn(t, tutorialTApp(t, "tutorial-same-template.yaml"), "apply", "-n", ns, "-f", "-")
	before, _ := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))

	// The tutorial's manifest: spec.template moves to nginx:latest, instance 1 to the pool template test2
	// (nginx:1.7.9, the image it already runs).
	out := mustKubectlIn(t, tutorialTApp(t, "tutorial-update-specified-pod.yaml"), "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/example-tapp configured")
	after, tapp := waitInstances(t, ns, "example-tapp", map[int]string{0: "nginx:latest", 1: "nginx:1.7.9", 2: "nginx:latest"})
	checkInPlace(t, before[0], after[0], "nginx:latest")
	checkInPlace(t, before[2], after[2], "nginx:latest")
	checkUntouched(t, before[1], after[1])
	for id, pod := range after {
		checkIdentity(t, tapp, id, pod)
	}

	// Instance 1 moves to a new pool template test3 that differs from test2 only in its image and metadata.
	before = after
	monitor := monitorAvailability(t, ns, podName("example-tapp", 0), podName("example-tapp", 2))
	mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "--type=merge", "-p",
		`{"spec":{"templatePool":{"test3":{"metadata":{"labels":{"app":"example-tapp","track":"canary"},"annotations":{"e2e.tapp.io/note":"canary"}},`+
			`"spec":{"containers":[{"name":"nginx","image":"nginx:1.8.1"}]}}},"templates":{"1":"test3"}}}`)
	after, tapp = waitInstances(t, ns, "example-tapp", map[int]string{0: "nginx:latest", 1: "nginx:1.8.1", 2: "nginx:latest"})
	checkInPlace(t, before[1], after[1], "nginx:1.8.1")
	checkUntouched(t, before[0], after[0])
	checkUntouched(t, before[2], after[2])
	checkIdentity(t, tapp, 1, after[1])
	if after[1].Labels["track"] != "canary" || after[1].Annotations["e2e.tapp.io/note"] != "canary" {
		t.Errorf("pod example-tapp-1 did not get the label and annotation of test3: labels %v annotations %v", after[1].Labels, after[1].Annotations)
	}

	// Back to test2: in place again, and the label and annotation that test2 does not have are removed.
	before = after
	ctx := testContext(t, ctrlTimeout+30*time.Second)
	mustKubectl(t, "patch", "-n", ns, "tapp", "example-tapp", "--type=merge", "-p", `{"spec":{"templates":{"1":"test2"}}}`)
	pollUntil(t, ctrlTimeout, "instance 1 runs test2 without test3's metadata", func() error {
		pods, _, err := checkInstances(ctx, ns, "example-tapp", map[int]string{0: "nginx:latest", 1: "nginx:1.7.9", 2: "nginx:latest"})
		if err != nil {
			return err
		}
		if _, ok := pods[1].Labels["track"]; ok {
			return fmt.Errorf("pod example-tapp-1 still has the label track: %v", pods[1].Labels)
		}
		if _, ok := pods[1].Annotations["e2e.tapp.io/note"]; ok {
			return fmt.Errorf("pod example-tapp-1 still has the annotation e2e.tapp.io/note: %v", pods[1].Annotations)
		}
		after = pods
		return nil
	})
	checkInPlace(t, before[1], after[1], "nginx:1.7.9")
	checkUntouched(t, before[0], after[0])
	checkUntouched(t, before[2], after[2])
	checkIdentity(t, getTApp(t, ns, "example-tapp"), 1, after[1])
	if r := monitor.result(t); r.Max != 0 || len(r.Deleted) != 0 {
		t.Errorf("instances 0 and 2 were disturbed by updates of instance 1: %d unavailable at once, deleted %v; %s", r.Max, r.Deleted, r.MaxAt)
	}
}

// rollingUpdate patches the TApp with kubectl while watching its pods, waits for want, and checks that
// every pod was updated in place and that no more than maxUnavailable pods were unavailable at once.
func rollingUpdate(t *testing.T, ns, name string, before map[int]*corev1.Pod, patchType, patch string, want map[int]string, maxUnavailable int) (map[int]*corev1.Pod, availabilityResult) {
	t.Helper()
	var names []string
	for _, id := range sortedIDs(before) {
		names = append(names, before[id].Name)
	}
	monitor := monitorAvailability(t, ns, names...)
	mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type="+patchType, "-p", patch)
	after, _ := waitInstances(t, ns, name, want)
	r := monitor.result(t)
	for _, id := range sortedIDs(before) {
		if after[id].Spec.Containers[0].Image != before[id].Spec.Containers[0].Image {
			checkInPlace(t, before[id], after[id], want[id])
		} else {
			checkUntouched(t, before[id], after[id])
		}
	}
	if len(r.Deleted) != 0 {
		t.Errorf("pods were deleted during an image-only rolling update: %v", r.Deleted)
	}
	if r.Max > maxUnavailable {
		t.Errorf("%d pods were unavailable at once, maxUnavailable is %d; %s", r.Max, maxUnavailable, r.MaxAt)
	}
	t.Logf("rolling update: at most %d of %d pods unavailable at once over %d pod events; order %v", r.Max, len(names), r.Events, r.Order)
	return after, r
}

// TestTAppRollingUpdate: image changes roll in place within updateStrategy.maxUnavailable, as a number
// and as a percentage, and the tutorial's rolling update manifest works as written.
func TestTAppRollingUpdate(t *testing.T) {
	t.Parallel()
	const imagePatch = `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.8.1"}]}}}}`

	t.Run("maxUnavailable 1", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-roll")
		mustKubectlIn(t, nginxTApp("roll", 4, "nginx:1.7.9", "1"), "apply", "-n", ns, "-f", "-")
		before, _ := waitInstances(t, ns, "roll", images(4, "nginx:1.7.9"))
		statuses := recordInstanceStatuses(t, ns, "roll")
		_, r := rollingUpdate(t, ns, "roll", before, "strategic", imagePatch, images(4, "nginx:1.8.1"), 1)
		// While the readiness gate holds a pod, its instance reports Updating.
		seen := statuses.result(t)
		for id := 0; id < 4; id++ {
			if !slices.Contains(seen[strconv.Itoa(id)], policy.StatusUpdating) {
				t.Errorf("instance %d never reported Updating during its in-place update; states seen: %v", id, seen)
			}
		}
		if r.Max < 1 {
			t.Errorf("no pod was ever unavailable during the in-place update (the readiness gate was not used)")
		}
		if want := []string{"roll-0", "roll-1", "roll-2", "roll-3"}; strings.Join(r.Order, ",") != strings.Join(want, ",") {
			t.Errorf("pods were updated in the order %v, want ascending ids %v", r.Order, want)
		}
	})

	t.Run("maxUnavailable 50%", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-roll")
		mustKubectlIn(t, nginxTApp("roll", 4, "nginx:1.7.9", `"50%"`), "apply", "-n", ns, "-f", "-")
		before, _ := waitInstances(t, ns, "roll", images(4, "nginx:1.7.9"))
		_, r := rollingUpdate(t, ns, "roll", before, "strategic", imagePatch, images(4, "nginx:1.8.1"), 2)
		if r.Max < 2 {
			t.Errorf("at most %d pod unavailable at once with maxUnavailable 50%% of 4: the percentage was not used", r.Max)
		}
	})

	t.Run("tutorial", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-roll")
		mustKubectlIn(t, tutorialTApp(t, "tutorial-same-template.yaml"), "apply", "-n", ns, "-f", "-")
		before, _ := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
		// The tutorial's manifest: instance 0 moves to nginx:latest, instances 1 and 2 to test2 (nginx:1.7.9),
		// the rolling template with maxUnavailable 1.
		mustKubectlIn(t, tutorialTApp(t, "tutorial-rolling-update.yaml"), "apply", "-n", ns, "-f", "-")
		after, _ := waitInstances(t, ns, "example-tapp", map[int]string{0: "nginx:latest", 1: "nginx:1.7.9", 2: "nginx:1.7.9"})
		checkInPlace(t, before[0], after[0], "nginx:latest")
		checkUntouched(t, before[1], after[1])
		checkUntouched(t, before[2], after[2])
		// A new image in test2 rolls instances 1 and 2 one at a time.
		_, r := rollingUpdate(t, ns, "example-tapp", after, "merge",
			`{"spec":{"templatePool":{"test2":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.8.1"}]}}}}}`,
			map[int]string{0: "nginx:latest", 1: "nginx:1.8.1", 2: "nginx:1.8.1"}, 1)
		if want := "example-tapp-1,example-tapp-2"; strings.Join(r.Order, ",") != want {
			t.Errorf("pods were updated in the order %v, want %s", r.Order, want)
		}
	})
}

// TestTAppRecreateOnNonImageChange: a template change beyond container images (an env variable, an init
// container's image) recreates every pod under its name, one at a time (the default maxUnavailable 1).
func TestTAppRecreateOnNonImageChange(t *testing.T) {
	t.Parallel()
	const withInit = `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: web
spec:
  replicas: 3
  template:
    metadata:
      labels:
        app: web
    spec:
      initContainers:
      - name: setup
        image: busybox:1.36
        command: ["true"]
      containers:
      - name: nginx
        image: nginx:1.7.9
`
	for _, tc := range []struct {
		name, manifest, patch string
		recreated             func(pod *corev1.Pod) bool
	}{{
		name:     "env",
		manifest: nginxTApp("web", 3, "nginx:1.7.9", ""),
		patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"MODE","value":"e2e"}]}]}}}}`,
		recreated: func(pod *corev1.Pod) bool {
			env := pod.Spec.Containers[0].Env
			return len(env) == 1 && env[0].Name == "MODE" && env[0].Value == "e2e"
		},
	}, {
		// The kubelet does not run the init containers of a running pod again: an in-place update would
		// only half-apply the new init image.
		name:     "init container image",
		manifest: withInit,
		patch:    `{"spec":{"template":{"spec":{"initContainers":[{"name":"setup","image":"busybox:1.37"}]}}}}`,
		recreated: func(pod *corev1.Pod) bool {
			return len(pod.Spec.InitContainers) == 1 && pod.Spec.InitContainers[0].Image == "busybox:1.37" &&
				len(pod.Status.InitContainerStatuses) == 1 && pod.Status.InitContainerStatuses[0].Image == "busybox:1.37"
		},
	}} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := controllerNamespace(t, "tapp-recreate")
			mustKubectlIn(t, tc.manifest, "apply", "-n", ns, "-f", "-")
			before, _ := waitInstances(t, ns, "web", images(3, "nginx:1.7.9"))
			monitor := monitorAvailability(t, ns, "web-0", "web-1", "web-2")
			mustKubectl(t, "patch", "-n", ns, "tapp", "web", "-p", tc.patch)
			ctx := testContext(t, ctrlTimeout+30*time.Second)
			var after map[int]*corev1.Pod
			pollUntil(t, ctrlTimeout, "every pod is recreated with the new template", func() error {
				pods, tapp, err := checkInstances(ctx, ns, "web", images(3, "nginx:1.7.9"))
				if err != nil {
					return err
				}
				for id, pod := range pods {
					if pod.UID == before[id].UID || !tc.recreated(pod) {
						return fmt.Errorf("pod %s not recreated with the new template yet: %s\nstatus: %s", pod.Name, describePod(pod), describeStatus(tapp))
					}
				}
				after = pods
				return nil
			})
			tapp := getTApp(t, ns, "web")
			for id, pod := range after {
				checkIdentity(t, tapp, id, pod)
				if c := containerStatus(pod, "nginx"); c == nil || c.RestartCount != 0 {
					t.Errorf("recreated pod %s: container status %v, want a fresh container", pod.Name, c)
				}
			}
			r := monitor.result(t)
			for id := 0; id < 3; id++ {
				name := podName("web", id)
				if uids := r.Deleted[name]; len(uids) != 1 || uids[0] != before[id].UID {
					t.Errorf("pod %s: deleted uids %v, want exactly the old pod %s", name, uids, before[id].UID)
				}
			}
			if r.Max > 1 {
				t.Errorf("%d pods were unavailable at once while recreating with maxUnavailable 1; %s", r.Max, r.MaxAt)
			}
			if want := "web-0,web-1,web-2"; strings.Join(r.Order, ",") != want {
				t.Errorf("pods were recreated in the order %v, want %s", r.Order, want)
			}
		})
	}
}

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

const dataTApp = `apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: data
spec:
  replicas: %d
  template:
    metadata:
      labels:
        app: data
    spec:
      containers:
      - name: nginx
        image: nginx:1.7.9
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
      labels:
        app: data
    spec:
      accessModes: [ "ReadWriteOnce" ]
      resources:
        requests:
          storage: 1Gi
`

// creationRecorder records the resourceVersion at which each pod and claim of a namespace was created.
type creationRecorder struct {
	mu      sync.Mutex
	created map[string]uint64 // "pod/<name>" or "pvc/<name>" → resourceVersion of the first ADDED event
	done    chan struct{}
}

// TestTAppScale: kubectl scale and editing spec.replicas add and remove instances; every instance gets its
// claims <claim>-<tapp>-<id> from volumeClaimTemplates before its pod, and claims survive a scale-down and
// are mounted again by the instance that comes back.
func TestTAppScale(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-scale")
	ctx := testContext(t, 6*ctrlTimeout)
	// The cluster has no provisioner: one pre-bound PersistentVolume per claim lets the claims bind and the
	// pods schedule.
	for id := 0; id < 5; id++ {
		claim := fmt.Sprintf("www-data-%d", id)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim},
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/tapp-e2e/" + ns + "/" + claim},
				},
			},
		}
		if _, err := kubeClient.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		name := pv.Name
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = kubeClient.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
		})
	}

	rec := recordCreations(t, ns)
	out := mustKubectlIn(t, fmt.Sprintf(dataTApp, 2), "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/data created")
	pods, _ := waitInstances(t, ns, "data", images(2, "nginx:1.7.9"))

	claims := func(t *testing.T, ids ...int) map[int]*corev1.PersistentVolumeClaim {
		t.Helper()
		m := map[int]*corev1.PersistentVolumeClaim{}
		for _, id := range ids {
			name := fmt.Sprintf("www-data-%d", id)
			pvc, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("claim %s: %v", name, err)
			}
			if pvc.DeletionTimestamp != nil {
				t.Errorf("claim %s is being deleted", name)
			}
			if pvc.Labels[policy.InstanceIDLabel] != strconv.Itoa(id) || pvc.Labels["app"] != "data" {
				t.Errorf("claim %s: labels %v, want app=data and %s=%d", name, pvc.Labels, policy.InstanceIDLabel, id)
			}
			m[id] = pvc
		}
		return m
	}
	checkMounts := func(t *testing.T, pods map[int]*corev1.Pod) {
		t.Helper()
		for id, pod := range pods {
			want := fmt.Sprintf("www-data-%d", id)
			found := false
			for _, v := range pod.Spec.Volumes {
				if v.Name == "www" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == want {
					found = true
				}
			}
			if !found {
				t.Errorf("pod %s does not mount the claim %s as volume www: %v", pod.Name, want, pod.Spec.Volumes)
			}
		}
	}
	claims(t, 0, 1)
	checkMounts(t, pods)

	// kubectl scale up.
	out = mustKubectl(t, "scale", "-n", ns, "tapp", "data", "--replicas=5")
	requireContains(t, "kubectl scale", out, "tapp.apps.tkestack.io/data scaled")
	pods, _ = waitInstances(t, ns, "data", images(5, "nginx:1.7.9"))
	checkMounts(t, pods)
	kept := claims(t, 0, 1, 2, 3, 4)
	for id := 0; id < 5; id++ {
		rec.requireBefore(t, "pvc/"+fmt.Sprintf("www-data-%d", id), "pod/"+podName("data", id))
	}
	if got := mustKubectl(t, "get", "pvc", "-n", ns, "-l", "app=data", "-o", "name"); got != "persistentvolumeclaim/www-data-0\npersistentvolumeclaim/www-data-1\npersistentvolumeclaim/www-data-2\npersistentvolumeclaim/www-data-3\npersistentvolumeclaim/www-data-4\n" {
		t.Errorf("kubectl get pvc = %q, want www-data-0..4", got)
	}

	// Scale down by editing spec.replicas in the manifest: pods 2..4 go, their claims stay.
	mustKubectlIn(t, fmt.Sprintf(dataTApp, 2), "apply", "-n", ns, "-f", "-")
	waitInstances(t, ns, "data", images(2, "nginx:1.7.9"))
	pollUntil(t, ctrlTimeout, "kubectl get tapp shows 2 instances", func() error {
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "data"))
		got := []string{tb.cell(t, "data", "DESIRED"), tb.cell(t, "data", "CURRENT"), tb.cell(t, "data", "READY")}
		if strings.Join(got, " ") != "2 2 2" {
			return fmt.Errorf("DESIRED CURRENT READY = %q, want 2 2 2", got)
		}
		return nil
	})
	holdsFor(t, ctrlHold, "claims survive the scale-down", func() error {
		for id := 2; id < 5; id++ {
			name := fmt.Sprintf("www-data-%d", id)
			pvc, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("claim %s after the scale-down: %v", name, err)
			}
			if pvc.UID != kept[id].UID || pvc.DeletionTimestamp != nil {
				return fmt.Errorf("claim %s was deleted or replaced (uid %s → %s, deletionTimestamp %v)", name, kept[id].UID, pvc.UID, pvc.DeletionTimestamp)
			}
		}
		return nil
	})

	// The tutorial's form: kubectl scale with the resourceVersion just read. Instance 3 mounts its old claim.
	rv := mustKubectl(t, "get", "-n", ns, "tapp", "data", "-o", "jsonpath={.metadata.resourceVersion}")
	mustKubectl(t, "scale", "-n", ns, "--replicas=4", "--resource-version="+rv, "tapp/data")
	pods, _ = waitInstances(t, ns, "data", images(4, "nginx:1.7.9"))
	checkMounts(t, pods)
	for id, pvc := range claims(t, 0, 1, 2, 3, 4) {
		if pvc.UID != kept[id].UID {
			t.Errorf("claim %s was replaced (uid %s → %s)", pvc.Name, kept[id].UID, pvc.UID)
		}
	}

	// Killing an instance keeps its claim too.
	mustKubectl(t, "patch", "-n", ns, "tapp", "data", "--type=merge", "-p", `{"spec":{"statuses":{"0":"Killed"}}}`)
	pollUntil(t, ctrlTimeout, "instance 0 is killed", func() error {
		_, tapp, err := checkInstances(ctx, ns, "data", map[int]string{1: "nginx:1.7.9", 2: "nginx:1.7.9", 3: "nginx:1.7.9"})
		if err != nil {
			return err
		}
		if tapp.Status.Statuses["0"] != policy.StatusKilled {
			return fmt.Errorf("instance 0 not Killed yet: %s", describeStatus(tapp))
		}
		return nil
	})
	if pvc := claims(t, 0)[0]; pvc.UID != kept[0].UID {
		t.Errorf("claim %s of the killed instance was replaced (uid %s → %s)", pvc.Name, kept[0].UID, pvc.UID)
	}

	// Claims have no owner: deleting the TApp keeps them (the data outlives the workload, as with a
	// StatefulSet's default retention).
	mustKubectl(t, "delete", "-n", ns, "tapp", "data")
	pollUntil(t, ctrlTimeout, "the pods of the deleted TApp are gone", func() error {
		pods, err := instancePods(ctx, ns, "data")
		if err != nil || len(pods) == 0 {
			return err
		}
		return fmt.Errorf("pods left:\n%s", describePods(pods))
	})
	for id, pvc := range claims(t, 0, 1, 2, 3, 4) {
		if pvc.UID != kept[id].UID || len(pvc.OwnerReferences) != 0 {
			t.Errorf("claim %s after deleting the TApp: uid %s (was %s), owners %v", pvc.Name, pvc.UID, kept[id].UID, pvc.OwnerReferences)
		}
	}
}

// recordCreations starts watching the pods and claims of ns; it stops with the test.
func recordCreations(t *testing.T, ns string) *creationRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	podList, err := kubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pods, err := kubeClient.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: podList.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	claimList, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	claims, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: claimList.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &creationRecorder{created: map[string]uint64{}, done: make(chan struct{})}
	events := make(chan string, 1000)
	forward := func(prefix string, w watch.Interface) {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			if obj, ok := ev.Object.(metav1.Object); ok {
				select {
				case events <- prefix + obj.GetName() + " " + obj.GetResourceVersion():
				case <-ctx.Done():
					return
				}
			}
		}
	}
	go forward("pod/", pods)
	go forward("pvc/", claims)
	go func() {
		defer close(r.done)
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-events:
				name, rv, _ := strings.Cut(e, " ")
				n, err := strconv.ParseUint(rv, 10, 64)
				if err != nil {
					continue
				}
				r.mu.Lock()
				if _, ok := r.created[name]; !ok {
					r.created[name] = n
				}
				r.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		pods.Stop()
		claims.Stop()
		cancel()
		<-r.done
	})
	return r
}

// requireBefore fails unless first was created before second. Both live in kube-apiserver's one etcd, whose
// revisions (the resourceVersions of the ADDED events) order them.
func (r *creationRecorder) requireBefore(t *testing.T, first, second string) {
	t.Helper()
	var a, b uint64
	pollUntil(t, 10*time.Second, "the creations of "+first+" and "+second+" are seen", func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		var okA, okB bool
		a, okA = r.created[first]
		b, okB = r.created[second]
		if !okA || !okB {
			return fmt.Errorf("seen: %v", r.created)
		}
		return nil
	})
	if a >= b {
		t.Errorf("%s was created at resourceVersion %d, after %s at %d", first, a, second, b)
	}
}

// TestTAppDelete: deleting a TApp garbage-collects its pods, in the background (kubectl's default) and in
// the foreground; the controller creates nothing meanwhile.
func TestTAppDelete(t *testing.T) {
	t.Parallel()
	noPods := func(ctx context.Context, ns string) func() error {
		return func() error {
			pods, err := instancePods(ctx, ns, "gc")
			if err != nil {
				return err
			}
			if len(pods) != 0 {
				return fmt.Errorf("pods left:\n%s", describePods(pods))
			}
			return nil
		}
	}
	for _, cascade := range []string{"background", "foreground"} {
		cascade := cascade
		t.Run(cascade, func(t *testing.T) {
			t.Parallel()
			ns := controllerNamespace(t, "tapp-delete")
			ctx := testContext(t, 3*ctrlTimeout)
			mustKubectlIn(t, nginxTApp("gc", 3, "nginx:1.7.9", ""), "apply", "-n", ns, "-f", "-")
			waitInstances(t, ns, "gc", images(3, "nginx:1.7.9"))
			out := mustKubectl(t, "delete", "-n", ns, "tapp", "gc", "--cascade="+cascade)
			requireContains(t, "kubectl delete", out, `tapp.apps.tkestack.io "gc" deleted`)
			if cascade == "foreground" {
				// The TApp goes only once its pods (blockOwnerDeletion) are gone.
				pods, err := instancePods(ctx, ns, "gc")
				if err != nil {
					t.Fatal(err)
				}
				for _, pod := range pods {
					if pod.DeletionTimestamp == nil {
						t.Errorf("foreground deletion returned while pod %s is not being deleted", pod.Name)
					}
				}
			}
			pollUntil(t, ctrlTimeout, "the garbage collector deletes the pods", noPods(ctx, ns))
			holdsFor(t, ctrlHold, "no pod comes back", noPods(ctx, ns))
		})
	}
}

// TestTAppEvents: the controller records events on the TApp that name the pods it creates.
func TestTAppEvents(t *testing.T) {
	t.Parallel()
	// controllerNamespace waits for the ServiceAccount: a FailedCreate warning for a pod created before it
	// exists would be right, but is not what this test looks at.
	ns := controllerNamespace(t, "tapp-events")
	mustKubectlIn(t, tutorialTApp(t, "tutorial-same-template.yaml"), "apply", "-n", ns, "-f", "-")
	waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
	var out string
	pollUntil(t, ctrlTimeout, "events on the TApp name every created pod", func() error {
		var err error
		out, err = kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=TApp,involvedObject.name=example-tapp",
			"-o", `jsonpath={range .items[*]}{.type} {.reason} {.source.component}: {.message}{"\n"}{end}`)
		if err != nil {
			return err
		}
		for id := 0; id < 3; id++ {
			if !strings.Contains(out, podName("example-tapp", id)) {
				return fmt.Errorf("no event mentions %s:\n%s", podName("example-tapp", id), out)
			}
		}
		return nil
	})
	t.Logf("events of the TApp:\n%s", out)
	if strings.Contains(out, "Warning") {
		t.Errorf("warning events while creating a TApp:\n%s", out)
	}
	// kubectl describe shows them too.
	requireContains(t, "kubectl describe tapp", mustKubectl(t, "describe", "-n", ns, "tapp", "example-tapp"), "Events:", "example-tapp-0")
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

// headlessService is the Service of the tutorial's "stable, unique network identifiers" example.
const headlessService = `apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app: example-tapp
spec:
  ports:
  - port: 80
    name: web
  clusterIP: None
  selector:
    app: example-tapp
`

// TestTAppHeadlessService: with spec.serviceName every pod gets hostname <pod> and subdomain <service>,
// which the headless Service's EndpointSlices publish as the pods' DNS names.
func TestTAppHeadlessService(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-dns")
	manifest := headlessService + "---\n" + tutorialTApp(t, "tutorial-headless-service.yaml")
	out := mustKubectlIn(t, manifest, "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply", out, "service/nginx created", "tapp.apps.tkestack.io/example-tapp created")
	pods, _ := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
	for _, pod := range pods {
		if pod.Spec.Hostname != pod.Name || pod.Spec.Subdomain != "nginx" {
			t.Errorf("pod %s: hostname %q subdomain %q, want %q and nginx", pod.Name, pod.Spec.Hostname, pod.Spec.Subdomain, pod.Name)
		}
	}
	ctx := testContext(t, ctrlTimeout+30*time.Second)
	pollUntil(t, ctrlTimeout, "the EndpointSlices of the Service name every pod", func() error {
		slices, err := kubeClient.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=nginx"})
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Hostname != nil && e.Conditions.Ready != nil && *e.Conditions.Ready && len(e.Addresses) > 0 {
					got[*e.Hostname] = e.Addresses[0]
				}
			}
		}
		for _, pod := range pods {
			if got[pod.Name] != pod.Status.PodIP {
				return fmt.Errorf("ready endpoints by hostname %v, want %s → %s (DNS %s.nginx.%s.svc)", got, pod.Name, pod.Status.PodIP, pod.Name, ns)
			}
		}
		return nil
	})
}

// TestTAppAutoDeleteUnusedTemplate: the tutorial's example; test2 is referenced by nothing and goes, the
// other pool templates stay.
func TestTAppAutoDeleteUnusedTemplate(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-autodelete")
	_, _, err := kubectlOutputs(t, []byte(tutorialTApp(t, "tutorial-auto-delete-unused-template.yaml")), "apply", "-n", ns, "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, ctrlTimeout, "the unused template test2 is removed from the pool", func() error {
		tapp := getTApp(t, ns, "example-tapp")
		var names []string
		for name := range tapp.Spec.TemplatePool {
			names = append(names, name)
		}
		sort.Strings(names)
		if strings.Join(names, ",") != "test1,test3,test4" {
			return fmt.Errorf("templatePool holds %v, want test1, test3 and test4", names)
		}
		return nil
	})
	// Instance 1 runs test1 (nginx:1.7.9), the others the default template test4 (nginx:1.7.7).
	pods, tapp := waitInstances(t, ns, "example-tapp", map[int]string{0: "nginx:1.7.7", 1: "nginx:1.7.9", 2: "nginx:1.7.7"})
	for id, pod := range pods {
		checkIdentity(t, tapp, id, pod)
	}
}
