//go:build e2e

package e2e

// End-to-end tests of TApp rollout control: ControllerRevisions and the controller-revision-hash label,
// spec.updateStrategy.partition and spec.updateStrategy.paused.

import (
	"context"
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitPodsRun waits until the TApp's pods are exactly want (id → image), each Running and Ready with its
// container reporting that image, and returns them. Unlike waitInstances it does not require every instance
// to be updated (instances held by a partition or a pause are not).
func waitPodsRun(t *testing.T, ns, name string, want map[int]string) map[int]string {
	t.Helper()
	ctx := testContext(t, ctrlTimeout+30*time.Second)
	revisions := map[int]string{}
	pollUntil(t, ctrlTimeout, fmt.Sprintf("TApp %s/%s pods run %v", ns, name, want), func() error {
		pods, err := instancePods(ctx, ns, name)
		if err != nil {
			return err
		}
		if len(pods) != len(want) {
			return fmt.Errorf("%d pods, want %d:\n%s", len(pods), len(want), describePods(pods))
		}
		for id, image := range want {
			pod := pods[id]
			if pod == nil || !podReady(pod) || pod.DeletionTimestamp != nil {
				return fmt.Errorf("pod %d not Running and Ready:\n%s", id, describePods(pods))
			}
			s := containerStatus(pod, pod.Spec.Containers[0].Name)
			if pod.Spec.Containers[0].Image != image || s == nil || s.Image != image || !s.Ready {
				return fmt.Errorf("pod %d does not run %s yet:\n%s", id, image, describePods(pods))
			}
			revisions[id] = pod.Labels[tkestack.ControllerRevisionHashLabel]
		}
		return nil
	})
	return revisions
}

// tappRevisions lists the ControllerRevisions the TApp controls, oldest first.
func tappRevisions(t *testing.T, ns, name string) []appsv1.ControllerRevision {
	t.Helper()
	tapp := getTApp(t, ns, name)
	list, err := kubeClient.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []appsv1.ControllerRevision
	for _, r := range list.Items {
		if ref := metav1.GetControllerOf(&r); ref != nil && ref.UID == tapp.UID && ref.Kind == "TApp" {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out
}

// TestTAppRollout: revisions are recorded and pods labelled; partition 3 updates only id 3 and a deleted low
// id comes back on the current revision; pausing with partition 0 stops the roll mid-way (and a scale-up
// creates its instance on the current revision); resuming finishes it and the update revision becomes
// current. The new fields are in the OpenAPI document (kubectl explain).
func TestTAppRollout(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-rollout")
	const name = "roll"
	mustKubectlIn(t, nginxTApp(name, 4, "nginx:1.7.9", "1"), "apply", "-n", ns, "-f", "-")
	labels := waitPodsRun(t, ns, name, images(4, "nginx:1.7.9"))

	var first string
	pollUntil(t, ctrlTimeout, "status names the first revision", func() error {
		revs := tappRevisions(t, ns, name)
		tapp := getTApp(t, ns, name)
		if len(revs) != 1 || tapp.Status.CurrentRevision != revs[0].Name || tapp.Status.UpdateRevision != revs[0].Name {
			return fmt.Errorf("%d revisions, status current %q update %q", len(revs), tapp.Status.CurrentRevision, tapp.Status.UpdateRevision)
		}
		first = revs[0].Name
		return nil
	})
	for id, rev := range labels {
		if rev != first {
			t.Errorf("pod %d has %s=%q, want %q", id, tkestack.ControllerRevisionHashLabel, rev, first)
		}
	}
	if tapp := getTApp(t, ns, name); tapp.Spec.RevisionHistoryLimit == nil || *tapp.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("spec.revisionHistoryLimit = %v, want the default 10", tapp.Spec.RevisionHistoryLimit)
	}

	// Partition 3: only instance 3 moves to the new image.
	mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type=merge", "-p",
		`{"spec":{"updateStrategy":{"partition":3},"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.8.1"}]}}}}`)
	labels = waitPodsRun(t, ns, name, map[int]string{0: "nginx:1.7.9", 1: "nginx:1.7.9", 2: "nginx:1.7.9", 3: "nginx:1.8.1"})
	tapp := getTApp(t, ns, name)
	second := tapp.Status.UpdateRevision
	if tapp.Status.CurrentRevision != first || second == first || second == "" || labels[3] != second || labels[0] != first {
		t.Fatalf("after partition 3: status current %q update %q, pod labels %v (first %q)", tapp.Status.CurrentRevision, second, labels, first)
	}
	if n := len(tappRevisions(t, ns, name)); n != 2 {
		t.Errorf("%d revisions, want 2", n)
	}
	holdsFor(t, ctrlHold, "instances below the partition keep nginx:1.7.9", func() error {
		pods, err := instancePods(context.Background(), ns, name)
		if err != nil {
			return err
		}
		for id := 0; id < 3; id++ {
			if pods[id] != nil && pods[id].Spec.Containers[0].Image != "nginx:1.7.9" {
				return fmt.Errorf("pod %d runs %s", id, pods[id].Spec.Containers[0].Image)
			}
		}
		return nil
	})
	// A deleted instance below the partition is recreated from the current revision.
	mustKubectl(t, "delete", "pod", "-n", ns, podName(name, 1), "--wait=false")
	pollUntil(t, ctrlTimeout, "pod 1 recreated", func() error {
		pod := getPod(t, ns, podName(name, 1))
		if pod == nil || pod.UID == "" || pod.DeletionTimestamp != nil || pod.Spec.Containers[0].Image != "nginx:1.7.9" || pod.Labels[tkestack.ControllerRevisionHashLabel] != first {
			return fmt.Errorf("pod 1: %v", pod)
		}
		return nil
	})

	// Pause, and lift the partition: the roll stops where it is.
	mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type=merge", "-p", `{"spec":{"updateStrategy":{"paused":true,"partition":0}}}`)
	pollUntil(t, ctrlTimeout, "the Paused condition", func() error {
		tapp := getTApp(t, ns, name)
		if tapp.Status.ObservedGeneration != tapp.Generation {
			return fmt.Errorf("generation %d not observed", tapp.Generation)
		}
		for _, c := range tapp.Status.Conditions {
			if c.Type == "Paused" && c.Status == metav1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", tapp.Status.Conditions)
	})
	holdsFor(t, ctrlHold, "a paused TApp updates nothing", func() error {
		pods, err := instancePods(context.Background(), ns, name)
		if err != nil {
			return err
		}
		for id := 0; id < 3; id++ {
			if pods[id] != nil && pods[id].Spec.Containers[0].Image != "nginx:1.7.9" {
				return fmt.Errorf("pod %d runs %s", id, pods[id].Spec.Containers[0].Image)
			}
		}
		return nil
	})
	// Scale-up while paused creates the new instance on the current revision.
	mustKubectl(t, "scale", "-n", ns, "tapp", name, "--replicas=5")
	labels = waitPodsRun(t, ns, name, map[int]string{0: "nginx:1.7.9", 1: "nginx:1.7.9", 2: "nginx:1.7.9", 3: "nginx:1.8.1", 4: "nginx:1.7.9"})
	if labels[4] != first {
		t.Errorf("instance 4 created while paused has revision %q, want %q", labels[4], first)
	}

	// Resume: the roll finishes and the update revision becomes current.
	mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type=merge", "-p", `{"spec":{"updateStrategy":{"paused":false}}}`)
	waitInstances(t, ns, name, images(5, "nginx:1.8.1"))
	pollUntil(t, ctrlTimeout, "currentRevision becomes the update revision", func() error {
		tapp := getTApp(t, ns, name)
		for _, c := range tapp.Status.Conditions {
			if c.Type == "Paused" {
				return fmt.Errorf("Paused condition still there")
			}
		}
		if tapp.Status.CurrentRevision != second || tapp.Status.UpdateRevision != second {
			return fmt.Errorf("status current %q update %q, want %q", tapp.Status.CurrentRevision, tapp.Status.UpdateRevision, second)
		}
		pods, err := instancePods(context.Background(), ns, name)
		if err != nil {
			return err
		}
		for id, pod := range pods {
			if pod.Labels[tkestack.ControllerRevisionHashLabel] != second {
				return fmt.Errorf("pod %d has revision %q", id, pod.Labels[tkestack.ControllerRevisionHashLabel])
			}
		}
		return nil
	})

	// Validation and kubectl explain.
	_, stderr, err := kubectlOutputs(t, nil, "patch", "-n", ns, "tapp", name, "--type=merge", "-p", `{"spec":{"updateStrategy":{"partition":-1},"revisionHistoryLimit":-1}}`)
	if err == nil {
		t.Fatalf("negative partition and revisionHistoryLimit accepted")
	}
	requireContains(t, "kubectl patch", stderr, "is invalid", "spec.updateStrategy.partition", "spec.revisionHistoryLimit")
	requireContains(t, "kubectl explain", mustKubectl(t, "explain", "tapp.spec.updateStrategy.paused"), "no instance is updated")
	requireContains(t, "kubectl explain", mustKubectl(t, "explain", "tapp.status.currentRevision"), "ControllerRevision")
}
