//go:build e2e

package e2e

// End-to-end test of the local cluster's storage (pkg/localcluster/storage.go): the StorageClasses, the
// simulated CSI driver's provisioning, deletion and expansion, and what kube-apiserver and kube-scheduler
// make of them.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// storageClaim is a claim of 1Gi of class (the default class when empty) with the given annotations.
func storageClaim(name, class string, annotations map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: %s\n", name)
	if len(annotations) > 0 {
		b.WriteString("  annotations:\n")
		for k, v := range annotations {
			fmt.Fprintf(&b, "    %s: %q\n", k, v)
		}
	}
	b.WriteString("spec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n")
	if class != "" {
		fmt.Fprintf(&b, "  storageClassName: %s\n", class)
	}
	return b.String()
}

// storagePod is a pod mounting claim at /data.
func storagePod(name, claim string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: app
    image: nginx:1.7.9
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: %s
`, name, claim)
}

// claimWatch records the expansion states a claim goes through, as "<allocatedResourceStatuses[storage]>
// [<condition types>]", each once, in order.
type claimWatch struct {
	mu     sync.Mutex
	states []string
}

func watchClaim(t *testing.T, ns, name string) *claimWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cw := &claimWatch{}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			claim, ok := ev.Object.(*corev1.PersistentVolumeClaim)
			if !ok {
				continue
			}
			state := claimState(claim)
			cw.mu.Lock()
			if len(cw.states) == 0 || cw.states[len(cw.states)-1] != state {
				cw.states = append(cw.states, state)
			}
			cw.mu.Unlock()
		}
	}()
	return cw
}

func claimState(claim *corev1.PersistentVolumeClaim) string {
	var types []string
	for _, c := range claim.Status.Conditions {
		types = append(types, string(c.Type))
	}
	return fmt.Sprintf("%s[%s]", claim.Status.AllocatedResourceStatuses[corev1.ResourceStorage], strings.Join(types, " "))
}

func (cw *claimWatch) seen() []string {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return append([]string(nil), cw.states...)
}

func getClaim(t *testing.T, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	claim, err := kubeClient.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return claim
}

// waitClaimBound waits until the claim is Bound with status.capacity 1Gi and returns it.
func waitClaimBound(t *testing.T, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	var claim *corev1.PersistentVolumeClaim
	pollUntil(t, ctrlTimeout, "claim "+name+" Bound", func() error {
		claim = getClaim(t, ns, name)
		q := claim.Status.Capacity[corev1.ResourceStorage]
		if claim.Status.Phase != corev1.ClaimBound || q.String() != "1Gi" {
			return fmt.Errorf("phase %s, capacity %s", claim.Status.Phase, q.String())
		}
		return nil
	})
	return claim
}

// waitExpanded waits until the claim's expansion to 2Gi is finished: status.capacity and the volume's
// capacity 2Gi, no condition and no allocatedResourceStatuses left.
func waitExpanded(t *testing.T, ns, name string) {
	t.Helper()
	pollUntil(t, ctrlTimeout, "claim "+name+" expanded to 2Gi", func() error {
		claim := getClaim(t, ns, name)
		pv, err := kubeClient.CoreV1().PersistentVolumes().Get(context.Background(), claim.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		q, v := claim.Status.Capacity[corev1.ResourceStorage], pv.Spec.Capacity[corev1.ResourceStorage]
		if q.String() != "2Gi" || v.String() != "2Gi" || len(claim.Status.Conditions) > 0 || len(claim.Status.AllocatedResourceStatuses) > 0 {
			return fmt.Errorf("status.capacity %s, volume capacity %s, state %s", q.String(), v.String(), claimState(claim))
		}
		return nil
	})
}

// waitFailed waits until the claim reports the failed expansion: condition cond True with a message,
// allocatedResourceStatuses[storage] state, status.capacity still 1Gi; it returns the claim.
func waitFailed(t *testing.T, ns, name string, cond corev1.PersistentVolumeClaimConditionType, state corev1.ClaimResourceStatus) *corev1.PersistentVolumeClaim {
	t.Helper()
	var claim *corev1.PersistentVolumeClaim
	pollUntil(t, ctrlTimeout, fmt.Sprintf("claim %s reports %s", name, cond), func() error {
		claim = getClaim(t, ns, name)
		var found *corev1.PersistentVolumeClaimCondition
		for i := range claim.Status.Conditions {
			if claim.Status.Conditions[i].Type == cond {
				found = &claim.Status.Conditions[i]
			}
		}
		if found == nil || found.Status != corev1.ConditionTrue || found.Message == "" || claim.Status.AllocatedResourceStatuses[corev1.ResourceStorage] != state {
			return fmt.Errorf("state %s", claimState(claim))
		}
		return nil
	})
	if q := claim.Status.Capacity[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("claim %s: status.capacity %s after a failed expansion, want 1Gi", name, q.String())
	}
	return claim
}

func expandClaim(t *testing.T, ns, name string) {
	t.Helper()
	mustKubectl(t, "patch", "-n", ns, "pvc", name, "-p", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
}

// TestLocalClusterStorage: the local cluster's default StorageClass provisions a volume for a claim, which
// binds with its capacity; a pod of an unbound claim stays unscheduled until its claim binds; a claim
// grows from 1Gi to 2Gi through the external-resizer's and kubelet's states; the class without expansion
// refuses a larger request (403); the fault annotation makes the controller or node step fail, and the
// expansion finishes once it is removed; a deleted claim's volume is deleted.
func TestLocalClusterStorage(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "storage")
	waitServiceAccount(t, ns)
	ctx := testContext(t, 5*ctrlTimeout)

	// The classes.
	out := mustKubectl(t, "get", "storageclass", localcluster.StorageClassStandard, localcluster.StorageClassFixed, "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.provisioner} {.reclaimPolicy} {.volumeBindingMode} {.allowVolumeExpansion} {.metadata.annotations.storageclass\.kubernetes\.io/is-default-class}{"\n"}{end}`)
	requireContains(t, "the StorageClasses", out,
		fmt.Sprintf("%s %s Delete Immediate true true\n", localcluster.StorageClassStandard, localcluster.StorageProvisioner),
		fmt.Sprintf("%s %s Delete Immediate false \n", localcluster.StorageClassFixed, localcluster.StorageProvisioner))

	// A claim of the default class binds to a volume of the simulated driver; a pod mounting it runs.
	mustKubectlIn(t, storageClaim("data", "", nil)+"---\n"+storagePod("user", "data"), "apply", "-n", ns, "-f", "-")
	claim := waitClaimBound(t, ns, "data")
	if claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != localcluster.StorageClassStandard {
		t.Errorf("claim data: storageClassName %v, want the default %s", claim.Spec.StorageClassName, localcluster.StorageClassStandard)
	}
	pv, err := kubeClient.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != localcluster.StorageProvisioner || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID ||
		pv.Spec.StorageClassName != localcluster.StorageClassStandard || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		pv.Annotations["pv.kubernetes.io/provisioned-by"] != localcluster.StorageProvisioner || pv.Status.Phase != corev1.VolumeBound {
		t.Errorf("volume %s: %+v, %+v", pv.Name, pv.Spec, pv.Status)
	}

	// A claim of a class nobody provisions stays Pending, and kube-scheduler's VolumeBinding plugin keeps
	// its pod unscheduled until the claim binds (here to a volume made for it).
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-unprovisioned"}, Provisioner: "nobody.localcluster.tapp.io",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}
	if _, err := kubeClient.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kubeClient.StorageV1().StorageClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	mustKubectlIn(t, storageClaim("orphan", class.Name, nil)+"---\n"+storagePod("waiting", "orphan"), "apply", "-n", ns, "-f", "-")
	pollUntil(t, ctrlTimeout, "pod waiting is unschedulable for its unbound claim", func() error {
		pod := getPod(t, ns, "waiting")
		c := podCondition(pod, corev1.PodScheduled)
		if pod.Spec.NodeName != "" || c == nil || c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "unbound immediate PersistentVolumeClaims") {
			return fmt.Errorf("node %q, PodScheduled %+v", pod.Spec.NodeName, c)
		}
		return nil
	})
	pollUntil(t, ctrlTimeout, "pod user runs", func() error {
		if pod := getPod(t, ns, "user"); !podReady(pod) {
			return fmt.Errorf("pod user: %s", describePod(pod))
		}
		return nil
	})
	if phase := getClaim(t, ns, "orphan").Status.Phase; phase != corev1.ClaimPending {
		t.Errorf("claim orphan of a class nobody provisions: phase %s", phase)
	}
	manual := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-orphan"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              class.Name,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: "orphan"},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/tapp-e2e/" + ns}},
		},
	}
	if _, err := kubeClient.CoreV1().PersistentVolumes().Create(ctx, manual, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kubeClient.CoreV1().PersistentVolumes().Delete(context.Background(), manual.Name, metav1.DeleteOptions{})
	})
	waitClaimBound(t, ns, "orphan")
	pollUntil(t, ctrlTimeout, "pod waiting runs once its claim is bound", func() error {
		if pod := getPod(t, ns, "waiting"); !podReady(pod) {
			return fmt.Errorf("pod waiting: %s", describePod(pod))
		}
		return nil
	})

	// Expansion 1Gi -> 2Gi of the claim of the running pod, through the resizer's and the kubelet's states.
	states := watchClaim(t, ns, "data")
	expandClaim(t, ns, "data")
	waitExpanded(t, ns, "data")
	if q := getClaim(t, ns, "data").Status.AllocatedResources[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("claim data: allocatedResources %s, want 2Gi", q.String())
	}
	pollUntil(t, ctrlTimeout, "the watch saw the expansion's states", func() error {
		want := []string{"[]", "ControllerResizeInProgress[Resizing]", "NodeResizePending[Resizing FileSystemResizePending]",
			"NodeResizeInProgress[Resizing FileSystemResizePending]", "[]"}
		got := states.seen()
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			return fmt.Errorf("states %q, want %q", got, want)
		}
		return nil
	})

	pollUntil(t, ctrlTimeout, "the claim's Events", func() error {
		out, err := kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=data",
			"-o", "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}")
		if err != nil {
			return err
		}
		for _, reason := range []string{"ProvisioningSucceeded", "Resizing", "FileSystemResizeRequired", "FileSystemResizeSuccessful"} {
			if !strings.Contains(out, reason+"\n") {
				return fmt.Errorf("no %s in %q", reason, out)
			}
		}
		return nil
	})

	// The class without expansion: kube-apiserver's admission refuses the larger request.
	mustKubectlIn(t, storageClaim("fixed", localcluster.StorageClassFixed, nil), "apply", "-n", ns, "-f", "-")
	waitClaimBound(t, ns, "fixed")
	_, stderr, err := kubectlOutputs(t, nil, "patch", "-n", ns, "pvc", "fixed", "-p", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
	if err == nil {
		t.Errorf("expanding a claim of %s succeeded", localcluster.StorageClassFixed)
	}
	requireContains(t, "kubectl patch of a claim of "+localcluster.StorageClassFixed, stderr, "(Forbidden)", "must support resize")

	// Faults: the controller step, then the node step, fails; without the annotation the expansion finishes.
	fault := func(mode string) map[string]string {
		return map[string]string{localcluster.ResizeFailureAnnotation: mode}
	}
	mustKubectlIn(t, storageClaim("broken-controller", "", fault(localcluster.ResizeFailureController))+"---\n"+
		storageClaim("broken-node", "", fault(localcluster.ResizeFailureNode))+"---\n"+storagePod("node-user", "broken-node"),
		"apply", "-n", ns, "-f", "-")
	waitClaimBound(t, ns, "broken-controller")
	waitClaimBound(t, ns, "broken-node")
	expandClaim(t, ns, "broken-controller")
	expandClaim(t, ns, "broken-node")
	broken := waitFailed(t, ns, "broken-controller", corev1.PersistentVolumeClaimControllerResizeError, corev1.PersistentVolumeClaimControllerResizeInfeasible)
	if pv, err := kubeClient.CoreV1().PersistentVolumes().Get(ctx, broken.Spec.VolumeName, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("volume of claim broken-controller grew to %s", q.String())
	}
	broken = waitFailed(t, ns, "broken-node", corev1.PersistentVolumeClaimNodeResizeError, corev1.PersistentVolumeClaimNodeResizeInfeasible)
	if pv, err := kubeClient.CoreV1().PersistentVolumes().Get(ctx, broken.Spec.VolumeName, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("volume of claim broken-node: capacity %s, want 2Gi (the controller step succeeded)", q.String())
	}
	mustKubectl(t, "annotate", "-n", ns, "pvc", "broken-controller", "broken-node", localcluster.ResizeFailureAnnotation+"-")
	waitExpanded(t, ns, "broken-node")
	// Claim broken-controller has no pod: its volume grows, its file system waits for one.
	pollUntil(t, ctrlTimeout, "claim broken-controller waits for a pod to resize its file system", func() error {
		if state := claimState(getClaim(t, ns, "broken-controller")); state != "NodeResizePending[Resizing FileSystemResizePending]" {
			return fmt.Errorf("state %s", state)
		}
		return nil
	})
	mustKubectlIn(t, storagePod("late-user", "broken-controller"), "apply", "-n", ns, "-f", "-")
	waitExpanded(t, ns, "broken-controller")

	// A deleted claim's volume (reclaimPolicy Delete) is deleted once released.
	mustKubectl(t, "delete", "-n", ns, "pod", "user", "--wait=false")
	mustKubectl(t, "delete", "-n", ns, "pvc", "data", "--wait=false")
	pollUntil(t, ctrlTimeout, "volume "+pv.Name+" is deleted", func() error {
		got, err := kubeClient.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("phase %s, finalizers %v, deletionTimestamp %v", got.Status.Phase, got.Finalizers, got.DeletionTimestamp)
	})
}
