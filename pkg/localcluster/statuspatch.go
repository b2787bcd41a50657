package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// simulatorFieldManager is the field manager of the simulator's status writes.
const simulatorFieldManager = "local-kubelet"

// kubeletConditions are the pod conditions a kubelet owns; every other condition of the pod (readiness
// gates, DisruptionTarget...) is someone else's and is kept as the API server has it.
var kubeletConditions = map[corev1.PodConditionType]bool{
	corev1.PodScheduled:              true,
	corev1.PodReadyToStartContainers: true,
	corev1.PodInitialized:            true,
	corev1.ContainersReady:           true,
	corev1.PodReady:                  true,
	corev1.PodResizePending:          true,
	corev1.PodResizeInProgress:       true,
}

// patchStatus writes status as a kubelet's status manager does: it reads the pod, keeps the conditions
// the kubelet does not own as the server has them, and sends a strategic merge patch of pods/status made
// from the server's status to the new one, bound to the pod's UID (metadata.uid in the patch) rather than
// to a resourceVersion; nothing is sent if the patch changes nothing, or if the pod is gone or replaced.
// Like the status manager, which compares only what the kubelet owns (isPodStatusByKubeletEqual) with the
// status it last saw, it neither reads nor writes the pod when status is what pod (the informer's copy)
// already reports: other writers' conditions and the simulator's own writes, as they come back through the
// watch, cost no request.
func (k *kubelet) patchStatus(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) error {
	if sameKubeletStatus(pod.Status, status) {
		return nil
	}
	current, err := k.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if current.UID != pod.UID || sameKubeletStatus(current.Status, status) {
		return nil
	}
	patch, unchanged, err := statusPatch(current.UID, current.Status, mergeKubeletStatus(current.Status, status))
	if err != nil || unchanged {
		return err
	}
	_, err = k.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: simulatorFieldManager}, "status")
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or the UID precondition failed: the pod was replaced by one of the same name.
		return nil
	}
	return err
}

// sameKubeletStatus reports whether the kubelet's part of server (every field but the conditions of other
// writers, conditions in any order) is status.
func sameKubeletStatus(server, status corev1.PodStatus) bool {
	return apiequality.Semantic.DeepEqual(kubeletPart(server), kubeletPart(status))
}

// kubeletPart is status without the conditions the kubelet does not own, the others sorted by type.
func kubeletPart(status corev1.PodStatus) corev1.PodStatus {
	conditions := make([]corev1.PodCondition, 0, len(status.Conditions))
	for _, c := range status.Conditions {
		if kubeletConditions[c.Type] {
			conditions = append(conditions, c)
		}
	}
	sort.Slice(conditions, func(i, j int) bool { return conditions[i].Type < conditions[j].Type })
	status.Conditions = conditions
	return status
}

// mergeKubeletStatus is status with the conditions the kubelet does not own taken from server.
func mergeKubeletStatus(server, status corev1.PodStatus) corev1.PodStatus {
	conditions := make([]corev1.PodCondition, 0, len(server.Conditions)+len(status.Conditions))
	for _, c := range server.Conditions {
		if !kubeletConditions[c.Type] {
			conditions = append(conditions, c)
		}
	}
	for _, c := range status.Conditions {
		if kubeletConditions[c.Type] {
			conditions = append(conditions, c)
		}
	}
	status.Conditions = conditions
	return status
}

// statusPatch is the two-way strategic merge patch from the status old to the status updated, with uid as
// metadata.uid so that the API server refuses it for another pod of the same name; unchanged reports a
// patch that would change nothing but the precondition.
func statusPatch(uid types.UID, old, updated corev1.PodStatus) ([]byte, bool, error) {
	oldJSON, err := json.Marshal(corev1.Pod{Status: old})
	if err != nil {
		return nil, false, err
	}
	newJSON, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: updated})
	if err != nil {
		return nil, false, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, corev1.Pod{})
	if err != nil {
		return nil, false, fmt.Errorf("status patch: %w", err)
	}
	return patch, bytes.Equal(patch, []byte(fmt.Sprintf(`{"metadata":{"uid":%q}}`, uid))), nil
}
