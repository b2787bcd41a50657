//go:build e2e

package e2e

// End-to-end tests of TApp updates: one instance, rolling updates in place, recreation on other template
// changes, and unused pool templates.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

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
