package localcluster

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func testClass(name string) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:    metav1.ObjectMeta{Name: name},
		Provisioner:   StorageProvisioner,
		ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete),
		MountOptions:  []string{"noatime"},
	}
}

func testClaim(request string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "uid-1", ResourceVersion: "7", Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(StorageClassStandard),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}},
		},
	}
}

func TestShouldProvision(t *testing.T) {
	handed := map[string]string{annStorageProvisioner: StorageProvisioner}
	other := testClass("other")
	other.Provisioner = "example.com/other"
	bound := testClaim("1Gi", handed)
	bound.Spec.VolumeName = "pv"
	deleting := testClaim("1Gi", handed)
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name  string
		claim *corev1.PersistentVolumeClaim
		class *storagev1.StorageClass
		want  bool
	}{
		{"handed to us", testClaim("1Gi", handed), testClass(StorageClassStandard), true},
		{"handed to us (beta annotation)", testClaim("1Gi", map[string]string{annBetaStorageProvisioner: StorageProvisioner}), testClass(StorageClassFixed), true},
		{"not yet handed by the PV controller", testClaim("1Gi", nil), testClass(StorageClassStandard), false},
		{"handed to another provisioner", testClaim("1Gi", map[string]string{annStorageProvisioner: "example.com/other"}), testClass(StorageClassStandard), false},
		{"a class of another provisioner", testClaim("1Gi", handed), other, false},
		{"already bound", bound, testClass(StorageClassStandard), false},
		{"being deleted", deleting, testClass(StorageClassStandard), false},
	} {
		if got := shouldProvision(tc.claim, tc.class); got != tc.want {
			t.Errorf("%s: shouldProvision = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestProvisionedVolume(t *testing.T) {
	claim := testClaim("3Gi", nil)
	pv := provisionedVolume(claim, testClass(StorageClassStandard))
	if pv.Name != "pvc-uid-1" || pv.Annotations[annProvisionedBy] != StorageProvisioner {
		t.Errorf("name %s, annotations %v", pv.Name, pv.Annotations)
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "3Gi" {
		t.Errorf("capacity %s, want 3Gi", q.String())
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Namespace != "ns" || ref.Name != "data" || ref.UID != "uid-1" || ref.Kind != "PersistentVolumeClaim" {
		t.Errorf("claimRef %+v", ref)
	}
	if pv.Spec.StorageClassName != StorageClassStandard || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		!reflect.DeepEqual(pv.Spec.AccessModes, claim.Spec.AccessModes) || !reflect.DeepEqual(pv.Spec.MountOptions, []string{"noatime"}) {
		t.Errorf("spec %+v", pv.Spec)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != StorageProvisioner || pv.Spec.CSI.VolumeHandle == "" || pv.Spec.CSI.FSType != "ext4" {
		t.Errorf("csi source %+v", pv.Spec.CSI)
	}
	if !reflect.DeepEqual(pv.Finalizers, []string{provisionerFinalizer}) {
		t.Errorf("finalizers %v", pv.Finalizers)
	}

	block := testClaim("1Gi", nil)
	block.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	retain := testClass(StorageClassStandard)
	retain.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain)
	pv = provisionedVolume(block, retain)
	if pv.Spec.CSI.FSType != "" || *pv.Spec.VolumeMode != corev1.PersistentVolumeBlock || len(pv.Finalizers) != 0 ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("block volume of a Retain class: %+v", pv)
	}
}

func TestShouldDelete(t *testing.T) {
	volume := func(phase corev1.PersistentVolumePhase, policy corev1.PersistentVolumeReclaimPolicy, by string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annProvisionedBy: by}},
			Spec:       corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: policy},
			Status:     corev1.PersistentVolumeStatus{Phase: phase},
		}
	}
	for _, tc := range []struct {
		pv   *corev1.PersistentVolume
		want bool
	}{
		{volume(corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete, StorageProvisioner), true},
		{volume(corev1.VolumeBound, corev1.PersistentVolumeReclaimDelete, StorageProvisioner), false},
		{volume(corev1.VolumeAvailable, corev1.PersistentVolumeReclaimDelete, StorageProvisioner), false},
		{volume(corev1.VolumeReleased, corev1.PersistentVolumeReclaimRetain, StorageProvisioner), false},
		{volume(corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete, "example.com/other"), false},
	} {
		if got := shouldDelete(tc.pv); got != tc.want {
			t.Errorf("shouldDelete(%s, %s, %s) = %v, want %v", tc.pv.Status.Phase, tc.pv.Spec.PersistentVolumeReclaimPolicy,
				tc.pv.Annotations[annProvisionedBy], got, tc.want)
		}
	}
}

// expansion is a bound claim of 1Gi on its volume, asked to grow to 2Gi.
func expansion(annotations map[string]string) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	claim := testClaim("2Gi", annotations)
	claim.Spec.VolumeName = "pvc-uid-1"
	claim.Status = corev1.PersistentVolumeClaimStatus{
		Phase:      corev1.ClaimBound,
		Capacity:   corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		Conditions: []corev1.PersistentVolumeClaimCondition{{Type: "Other", Status: corev1.ConditionTrue}},
	}
	pv := provisionedVolume(testClaim("1Gi", nil), testClass(StorageClassStandard))
	return claim, pv
}

// apply makes the writes of nextExpansion until it has none (at most 20), returning the steps' names.
func apply(t *testing.T, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, inUse bool) []string {
	t.Helper()
	var names []string
	for i := 0; i < 20; i++ {
		step := nextExpansion(claim, pv, claim.Annotations[ResizeFailureAnnotation], inUse, metav1.Now())
		switch {
		case step.capacity != nil:
			pv.Spec.Capacity[corev1.ResourceStorage] = *step.capacity
		case step.status != nil:
			if reflect.DeepEqual(*step.status, claim.Status) {
				t.Fatalf("step %s writes the status unchanged", step.name)
			}
			claim.Status = *step.status
		default:
			return names
		}
		names = append(names, step.name)
	}
	t.Fatalf("no end after %v", names)
	return nil
}

func conditionTypes(claim *corev1.PersistentVolumeClaim) []string {
	var out []string
	for _, c := range claim.Status.Conditions {
		out = append(out, string(c.Type))
	}
	return out
}

func storageState(claim *corev1.PersistentVolumeClaim) corev1.ClaimResourceStatus {
	return claim.Status.AllocatedResourceStatuses[corev1.ResourceStorage]
}

func requireFinished(t *testing.T, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
	t.Helper()
	if q := claim.Status.Capacity[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("status.capacity %s, want 2Gi", q.String())
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("volume capacity %s, want 2Gi", q.String())
	}
	if q := claim.Status.AllocatedResources[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("allocatedResources %s, want 2Gi", q.String())
	}
	if claim.Status.AllocatedResourceStatuses != nil {
		t.Errorf("allocatedResourceStatuses %v, want none", claim.Status.AllocatedResourceStatuses)
	}
	if got := conditionTypes(claim); !reflect.DeepEqual(got, []string{"Other"}) {
		t.Errorf("conditions %v, want only the unrelated one", got)
	}
}

func TestNextExpansion(t *testing.T) {
	claim, pv := expansion(nil)
	if got, want := apply(t, claim, pv, false), []string{"ControllerResizeInProgress", "VolumeCapacity", "NodeResizePending"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("steps without a pod %v, want %v", got, want)
	}
	if got, want := conditionTypes(claim), []string{"Other", "Resizing", "FileSystemResizePending"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conditions waiting for the node %v, want %v", got, want)
	}
	if q := claim.Status.Capacity[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("status.capacity %s before the node resized the file system", q.String())
	}
	if got, want := apply(t, claim, pv, true), []string{"NodeResizeInProgress", "Finished"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("steps with a pod %v, want %v", got, want)
	}
	requireFinished(t, claim, pv)
}

func TestNextExpansionFirstStep(t *testing.T) {
	claim, pv := expansion(nil)
	step := nextExpansion(claim, pv, "", true, metav1.Now())
	if step.status == nil || step.status.AllocatedResourceStatuses[corev1.ResourceStorage] != corev1.PersistentVolumeClaimControllerResizeInProgress {
		t.Fatalf("first step %+v", step)
	}
	if q := step.status.AllocatedResources[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("allocatedResources %s", q.String())
	}
	if c := step.status.Conditions[len(step.status.Conditions)-1]; c.Type != corev1.PersistentVolumeClaimResizing || c.Status != corev1.ConditionTrue {
		t.Errorf("condition %+v", c)
	}
	if claim.Status.AllocatedResources != nil || len(claim.Status.Conditions) != 1 {
		t.Errorf("nextExpansion changed the claim it was given: %+v", claim.Status)
	}
}

func TestNextExpansionControllerFailure(t *testing.T) {
	claim, pv := expansion(map[string]string{ResizeFailureAnnotation: ResizeFailureController})
	if got, want := apply(t, claim, pv, true), []string{"ControllerResizeInProgress", "ControllerResizeInfeasible"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if storageState(claim) != corev1.PersistentVolumeClaimControllerResizeInfeasible {
		t.Errorf("allocatedResourceStatuses %v", claim.Status.AllocatedResourceStatuses)
	}
	if got, want := conditionTypes(claim), []string{"Other", "Resizing", "ControllerResizeError"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	if c := claim.Status.Conditions[2]; c.Message == "" {
		t.Errorf("ControllerResizeError has no message")
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("the volume grew to %s", q.String())
	}
	// Without the fault it is tried again, and finishes.
	delete(claim.Annotations, ResizeFailureAnnotation)
	if got, want := apply(t, claim, pv, true), []string{"ControllerResizeInProgress", "VolumeCapacity", "NodeResizePending", "NodeResizeInProgress", "Finished"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("steps after the fault is gone %v, want %v", got, want)
	}
	requireFinished(t, claim, pv)
}

func TestNextExpansionNodeFailure(t *testing.T) {
	claim, pv := expansion(map[string]string{ResizeFailureAnnotation: ResizeFailureNode})
	if got, want := apply(t, claim, pv, true), []string{"ControllerResizeInProgress", "VolumeCapacity", "NodeResizePending", "NodeResizeInProgress", "NodeResizeInfeasible"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if storageState(claim) != corev1.PersistentVolumeClaimNodeResizeInfeasible {
		t.Errorf("allocatedResourceStatuses %v", claim.Status.AllocatedResourceStatuses)
	}
	if got, want := conditionTypes(claim), []string{"Other", "Resizing", "FileSystemResizePending", "NodeResizeError"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	if q := claim.Status.Capacity[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("status.capacity %s after a failed node expansion", q.String())
	}
	delete(claim.Annotations, ResizeFailureAnnotation)
	if got, want := apply(t, claim, pv, true), []string{"NodeResizePending", "NodeResizeInProgress", "Finished"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("steps after the fault is gone %v, want %v", got, want)
	}
	requireFinished(t, claim, pv)
}

func TestNextExpansionNothingToDo(t *testing.T) {
	same, pv := expansion(nil)
	same.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1Gi")
	pending, _ := expansion(nil)
	pending.Status.Phase = corev1.ClaimPending
	otherDriver, _ := expansion(nil)
	otherVolume := pv.DeepCopy()
	otherVolume.Spec.CSI.Driver = "example.com/other"
	hostPath := pv.DeepCopy()
	hostPath.Spec.CSI = nil
	hostPath.Spec.HostPath = &corev1.HostPathVolumeSource{Path: "/tmp"}
	otherClaim := pv.DeepCopy()
	otherClaim.Spec.ClaimRef.UID = "uid-2"
	for _, tc := range []struct {
		name  string
		claim *corev1.PersistentVolumeClaim
		pv    *corev1.PersistentVolume
	}{
		{"request not above the capacity", same, pv},
		{"claim not bound", pending, pv},
		{"volume of another driver", otherDriver, otherVolume},
		{"volume not CSI", otherDriver, hostPath},
		{"volume bound to another claim", otherDriver, otherClaim},
	} {
		if step := nextExpansion(tc.claim, tc.pv, "", true, metav1.Now()); step.status != nil || step.capacity != nil {
			t.Errorf("%s: step %+v, want none", tc.name, step)
		}
	}
}

func TestMergeResizeConditions(t *testing.T) {
	old := metav1.Unix(1, 0)
	current := []corev1.PersistentVolumeClaimCondition{
		{Type: "Other", Status: corev1.ConditionTrue},
		{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue, LastTransitionTime: old},
		{Type: corev1.PersistentVolumeClaimControllerResizeError, Status: corev1.ConditionTrue, Message: "x"},
	}
	resizing := corev1.PersistentVolumeClaimCondition{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(2, 0)}
	got := mergeResizeConditions(current, []corev1.PersistentVolumeClaimCondition{resizing}, false)
	if len(got) != 2 || got[0].Type != "Other" || got[1].Type != corev1.PersistentVolumeClaimResizing || !got[1].LastTransitionTime.Equal(&old) {
		t.Errorf("without keep: %+v (want Other and the Resizing present before, unchanged)", got)
	}
	got = mergeResizeConditions(current, nil, true)
	if len(got) != 3 {
		t.Errorf("with keep: %+v", got)
	}
	got = mergeResizeConditions(current, nil, false)
	if len(got) != 1 || got[0].Type != "Other" {
		t.Errorf("cleared: %+v", got)
	}
}

// TestApplyStorageClasses: the classes are created, applied again unchanged (a cluster started again on its
// own data), and a class of that name with another provisioner (immutable) is replaced.
func TestApplyStorageClasses(t *testing.T) {
	old := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: StorageClassFixed}, Provisioner: "example.com/old"}
	client := fake.NewClientset(old)
	// The fake tracker does not enforce immutability: refuse a changed provisioner as kube-apiserver does.
	client.PrependReactor("patch", "storageclasses", func(action k8stesting.Action) (bool, runtime.Object, error) {
		name := action.(k8stesting.PatchAction).GetName()
		current, err := client.Tracker().Get(storagev1.SchemeGroupVersion.WithResource("storageclasses"), "", name)
		if err == nil && current.(*storagev1.StorageClass).Provisioner != StorageProvisioner {
			return true, nil, apierrors.NewInvalid(storagev1.SchemeGroupVersion.WithKind("StorageClass").GroupKind(), name, nil)
		}
		return false, nil, nil
	})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := applyStorageClasses(ctx, client); err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
	}
	var deleted []string
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" {
			deleted = append(deleted, a.(k8stesting.DeleteAction).GetName())
		}
	}
	if !reflect.DeepEqual(deleted, []string{StorageClassFixed}) {
		t.Errorf("deleted %v, want only the old %s once", deleted, StorageClassFixed)
	}
	for name, expandable := range map[string]bool{StorageClassStandard: true, StorageClassFixed: false} {
		sc, err := client.StorageV1().StorageClasses().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		isDefault := sc.Annotations[annDefaultStorageClass] == "true"
		if sc.Provisioner != StorageProvisioner || ptr.Deref(sc.AllowVolumeExpansion, false) != expandable || isDefault != expandable ||
			ptr.Deref(sc.ReclaimPolicy, "") != corev1.PersistentVolumeReclaimDelete || ptr.Deref(sc.VolumeBindingMode, "") != storagev1.VolumeBindingImmediate {
			t.Errorf("class %s: %+v", name, sc)
		}
	}
}

func TestStepEvent(t *testing.T) {
	for step, want := range map[string]string{
		"ControllerResizeInProgress": "Normal Resizing",
		"VolumeCapacity":             " ",
		"NodeResizePending":          "Normal FileSystemResizeRequired",
		"NodeResizeInProgress":       " ",
		"Finished":                   "Normal FileSystemResizeSuccessful",
		"ControllerResizeInfeasible": "Warning VolumeResizeFailed",
		"NodeResizeInfeasible":       "Warning FileSystemResizeFailed",
	} {
		eventType, reason, message := stepEvent(step, "pvc-1", "x")
		if got := eventType + " " + reason; got != want {
			t.Errorf("step %s: event %q, want %q", step, got, want)
		}
		if (reason == "") != (message == "") {
			t.Errorf("step %s: reason %q, message %q", step, reason, message)
		}
	}
}
