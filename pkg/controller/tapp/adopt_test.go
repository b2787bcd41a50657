package tapp

import (
	"context"
	"encoding/json"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// originalPod returns instance id's pod as the original tkestack/tapp controller created it, Running and
// Ready, after the garbage collector removed its owner reference to the deleted CRD object: decimal fnv hash
// labels, generateName, the readiness gate, no TemplateKeysAnnotation; fields added by the API server.
func originalPod(t *testing.T, tapp *tkestackv1.TApp, id string) *corev1.Pod {
	t.Helper()
	pod, err := policy.NewPod(tapp, id)
	if err != nil {
		t.Fatal(err)
	}
	pod.UID = types.UID("original-" + id)
	pod.GenerateName = tapp.Name + "-"
	pod.OwnerReferences = nil
	pod.Labels[tkestack.TemplateHashLabel] = "8571628173525391740"
	pod.Labels[tkestack.UniqHashLabel] = "1740216837251739174"
	delete(pod.Annotations, tapppod.TemplateKeysAnnotation)
	pod.Spec.NodeName = "node-1"
	pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	pod.Spec.Containers[0].TerminationMessagePath = corev1.TerminationMessagePathDefault
	pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts,
		corev1.VolumeMount{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true})
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "kube-api-access-abcde"})
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "nginx:1", ImageID: "nginx@sha256:1", Ready: true, RestartCount: 3,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: inplace.ReadinessGate, Status: corev1.ConditionTrue},
	}
	return pod
}

func (h *harness) createPods(pods ...*corev1.Pod) {
	for _, p := range pods {
		if _, err := h.kube.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// showClaims puts the claims the fake API holds into the claim informer's cache.
func (h *harness) showClaims() {
	list, err := h.kube.CoreV1().PersistentVolumeClaims("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var objs []any
	for i := range list.Items {
		objs = append(objs, &list.Items[i])
	}
	if err := h.kubeInf.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Replace(objs, "1"); err != nil {
		h.t.Fatal(err)
	}
}

// originalClaim is the claim of instance id as the original controller created it (claim template labels
// and the selector's labels, no instance label), after the garbage collector removed its owner reference.
func originalClaim(t *testing.T, h *harness, name string) {
	t.Helper()
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("claim-" + name),
		Labels: map[string]string{"app": "web"}}}
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) claimPatches() []clienttesting.PatchAction {
	var out []clienttesting.PatchAction
	for _, a := range h.actions("patch", "persistentvolumeclaims") {
		out = append(out, a.(clienttesting.PatchAction))
	}
	return out
}

func (h *harness) podPatches() []clienttesting.PatchAction {
	var out []clienttesting.PatchAction
	for _, a := range h.actions("patch", "pods") {
		if a.GetSubresource() == "" {
			out = append(out, a.(clienttesting.PatchAction))
		}
	}
	return out
}

// patchMetadata decodes the metadata of a strategic merge patch.
func patchMetadata(t *testing.T, p clienttesting.PatchAction) map[string]any {
	t.Helper()
	if p.GetPatchType() != types.StrategicMergePatchType {
		t.Fatalf("patch of %s is %s", p.GetName(), p.GetPatchType())
	}
	var body struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
		t.Fatal(err)
	}
	return body.Metadata
}

func TestSyncAdoptsPodsOfTheOriginalControllerAndRelabelsThemWithoutRestart(t *testing.T) {
	tapp := testTApp(2)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	h := newHarness(t, tapp)
	h.createPods(originalPod(t, tapp, "0"), originalPod(t, tapp, "1"))
	originalClaim(t, h, "data-web-0")
	originalClaim(t, h, "data-web-1")
	h.showPods()
	h.showClaims()
	h.tapps.ClearActions()
	h.kube.ClearActions()

	// Sync 1: adoption, one patch per pod and claim bound to its UID; nothing created or deleted.
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	patches := h.podPatches()
	if len(patches) != 2 {
		t.Fatalf("%d pod patches, want 2 adoptions", len(patches))
	}
	for _, p := range patches {
		md := patchMetadata(t, p)
		if md["uid"] != "original-"+strings.TrimPrefix(p.GetName(), "web-") {
			t.Errorf("adoption patch of %s not bound to its UID: %s", p.GetName(), p.GetPatch())
		}
		refs, _ := md["ownerReferences"].([]any)
		if len(refs) != 1 || refs[0].(map[string]any)["uid"] != "tapp-uid" || refs[0].(map[string]any)["controller"] != true {
			t.Errorf("adoption patch of %s: %s", p.GetName(), p.GetPatch())
		}
	}
	gets := 0
	for _, a := range h.tapps.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "tapps" {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("the TApp was read %d times from the API before adopting, want once per sync", gets)
	}
	if n := len(h.actions("create", "pods")) + len(h.actions("delete", "pods")); n != 0 {
		t.Fatalf("%d pod creates/deletes while adopting", n)
	}
	claimPatches := h.claimPatches()
	if len(claimPatches) != 2 {
		t.Fatalf("%d claim patches, want 2 adoptions", len(claimPatches))
	}
	for _, p := range claimPatches {
		md := patchMetadata(t, p)
		if md["uid"] != "claim-"+p.GetName() || !strings.Contains(string(p.GetPatch()), `"uid":"tapp-uid"`) {
			t.Errorf("adoption patch of claim %s: %s", p.GetName(), p.GetPatch())
		}
	}
	if n := len(h.actions("create", "persistentvolumeclaims")); n != 0 {
		t.Errorf("%d claim creates", n)
	}
	if got := eventsWithReason(drainEvents(h.recorder), "Adopted"); len(got) != 4 {
		t.Errorf("Adopted events %v", got)
	}
	for _, name := range []string{"data-web-0", "data-web-1"} {
		claim, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || claim.UID != types.UID("claim-"+name) || !policy.IsControlledBy(claim, tapp) {
			t.Errorf("claim %s after adoption: %+v (%v)", name, claim, err)
		}
	}

	// Sync 2: the cache shows the adopted pods with foreign hashes; they run their template: one
	// label patch each, no readiness gate change, no image change.
	h.showPods()
	h.showClaims()
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	patches = h.podPatches()
	if len(patches) != 2 || len(h.claimPatches()) != 0 {
		t.Fatalf("%d pod patches, want 2 relabels, and %d claim patches", len(patches), len(h.claimPatches()))
	}
	for _, p := range patches {
		if strings.Contains(string(p.GetPatch()), `"containers"`) {
			t.Errorf("relabel of %s touches containers: %s", p.GetName(), p.GetPatch())
		}
	}
	if n := len(h.actions("patch", "pods")) - len(patches); n != 0 {
		t.Errorf("%d pods/status writes during the relabel, want none", n)
	}
	want := tapppod.TemplateHash(&tapp.Spec.Template)
	for _, id := range []string{"0", "1"} {
		pod := h.apiPod("web-" + id)
		if pod.UID != types.UID("original-"+id) || pod.Labels[tkestack.TemplateHashLabel] != want ||
			pod.Labels[tkestack.UniqHashLabel] != tapppod.UniqHash(&tapp.Spec.Template) || !policy.IsControlledBy(pod, tapp) {
			t.Errorf("pod %s after the relabel: uid %s labels %v", pod.Name, pod.UID, pod.Labels)
		}
		if pod.Status.ContainerStatuses[0].RestartCount != 3 || pod.Spec.Containers[0].Image != "nginx:1" {
			t.Errorf("pod %s was restarted or changed", pod.Name)
		}
	}
	if got := eventsWithReason(drainEvents(h.recorder), "Relabelled"); len(got) != 2 {
		t.Errorf("Relabelled events %v", got)
	}

	// Sync 3: nothing left to do.
	h.showPods()
	h.showClaims()
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(h.podPatches()) + len(h.claimPatches()) + len(h.actions("create", "pods")) + len(h.actions("delete", "pods")); n != 0 {
		t.Errorf("%d pod and claim writes once adopted and relabelled", n)
	}
	st := h.storedTApp().Status
	if st.Replicas != 2 || st.ReadyReplicas != 2 || st.Statuses["0"] != "Running" || st.Statuses["1"] != "Running" {
		t.Errorf("status = %+v", st)
	}
}

func TestSyncDoesNotAdoptWhenTheTAppIsBeingDeleted(t *testing.T) {
	tapp := testTApp(1)
	h := newHarness(t, tapp)
	// The API server already has the deletion; the cache does not show it yet.
	deleting := tapp.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	deleting.Finalizers = []string{"orphan"}
	if _, err := h.tapps.TKEStackAppsV1().TApps("ns").Update(context.Background(), deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.createPods(originalPod(t, tapp, "0"))
	h.showPods()
	h.kube.ClearActions()
	_ = h.sync()
	if n := len(h.podPatches()); n != 0 {
		t.Errorf("%d pod patches: adopted for a TApp being deleted", n)
	}
	if n := len(h.actions("create", "pods")); n != 0 {
		t.Errorf("%d pod creates", n)
	}
}

func TestSyncReleasesPodsTheSelectorNoLongerMatches(t *testing.T) {
	tapp := testTApp(2)
	h := newHarness(t, tapp)
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	h.markRunning()
	h.showPods()
	pod := h.apiPod("web-1")
	pod.Labels["app"] = "debug"
	if _, err := h.kube.CoreV1().Pods("ns").Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.showPods()
	h.kube.ClearActions()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	patches := h.podPatches()
	if len(patches) != 1 || patches[0].GetName() != "web-1" {
		t.Fatalf("patches %v, want one release of web-1", patches)
	}
	md := patchMetadata(t, patches[0])
	if md["uid"] != string(pod.UID) || !strings.Contains(string(patches[0].GetPatch()), `"$patch":"delete"`) {
		t.Errorf("release patch %s", patches[0].GetPatch())
	}
	released := h.apiPod("web-1")
	if metav1.GetControllerOf(released) != nil || released.UID != pod.UID {
		t.Errorf("released pod %+v", released.ObjectMeta)
	}
	if n := len(h.actions("delete", "pods")) + len(h.actions("create", "pods")); n != 0 {
		t.Errorf("%d creates/deletes when releasing", n)
	}
	if got := eventsWithReason(drainEvents(h.recorder), "Released"); len(got) != 1 {
		t.Errorf("Released events %v", got)
	}
	// From now on the released pod holds the name: a conflict, never touched.
	h.showPods()
	h.kube.ClearActions()
	_ = h.sync()
	if n := len(h.podPatches()) + len(h.actions("delete", "pods")) + len(h.actions("create", "pods")); n != 0 {
		t.Errorf("%d writes to the released pod: %v", n, h.kube.Actions())
	}
	if got := eventsWithReason(drainEvents(h.recorder), "InstanceConflict"); len(got) != 1 {
		t.Errorf("InstanceConflict events %v", got)
	}
}

func TestSyncNeverTouchesPodsOrClaimsOfAnotherController(t *testing.T) {
	tapp := testTApp(2)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	h := newHarness(t, tapp)
	yes := true
	other := metav1.OwnerReference{APIVersion: "apps.tkestack.io/v1", Kind: "TApp", Name: "web", UID: "crd-tapp-uid", Controller: &yes}
	pod := originalPod(t, tapp, "0")
	pod.OwnerReferences = []metav1.OwnerReference{other}
	h.createPods(pod)
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-1", OwnerReferences: []metav1.OwnerReference{other}}}
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.showPods()
	h.kube.ClearActions()
	_ = h.sync()
	if n := len(h.podPatches()) + len(h.actions("delete", "pods")) + len(h.actions("create", "pods")); n != 0 {
		t.Errorf("%d pod writes: a pod or claim of another controller was touched or mounted", n)
	}
	if n := len(h.actions("patch", "persistentvolumeclaims")) + len(h.actions("update", "persistentvolumeclaims")); n != 0 {
		t.Errorf("%d claim writes", n)
	}
	if got := eventsWithReason(drainEvents(h.recorder), "InstanceConflict"); len(got) != 2 {
		t.Errorf("InstanceConflict events %v, want the pod's and the claim's", got)
	}
}

func TestSyncNeverAdoptsTheClaimsItCreated(t *testing.T) {
	tapp := testTApp(1)
	tapp.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	h := newHarness(t, tapp)
	// A claim this controller created for instance 0 earlier (it outlives its pods, without owner).
	claim := policy.NewPVCs(tapp, "0")[0]
	claim.UID = "claim-uid"
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.showClaims()
	if err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if p := h.claimPatches(); len(p) != 0 {
		t.Errorf("claim patches %v: a claim of this controller was adopted", p)
	}
	if n := len(h.actions("create", "pods")); n != 1 {
		t.Fatalf("%d pod creates, want 1", n)
	}
	got, err := h.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "data-web-0", metav1.GetOptions{})
	if err != nil || got.UID != "claim-uid" || len(got.OwnerReferences) != 0 {
		t.Errorf("claim %+v (%v): must be kept as is, without owner (never garbage-collected with the TApp)", got, err)
	}
}
