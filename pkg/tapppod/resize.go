package tapppod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

// ResizeHashLabel holds ResizeHash of the template a pod runs. Two templates with the same ResizeHash differ
// only in the images and resources of regular containers (and metadata) and give their pods the same QoS
// class: the TApp controller applies such a change to a running pod in place, resizing it through the
// pods/resize subresource. A pod without the label (created before it existed) is recreated on a resource
// change, as before.
//
// It is a label of its own rather than a change of UniqHash, so that upgrading does not change the uniq hash
// of any template and no pod is replaced for it.
const ResizeHashLabel = "tapp_resize_hash_key"

// ResizeHash returns the hash of the template spec with the image and the resources of every regular
// container blanked, together with the template's QoS class (QOSClass). A change of requests or limits
// that moves the pod to another QoS class therefore changes it: the kubelet refuses such a resize, so the
// pod is recreated. Init container resources are part of it (they are not resized in place here), and so is
// the RestartedAtAnnotation, as in UniqHash.
func ResizeHash(t *corev1.PodTemplateSpec) string {
	spec := specWithContainers(&t.Spec)
	for i := range spec.Containers {
		spec.Containers[i].Image = ""
		spec.Containers[i].Resources = corev1.ResourceRequirements{}
	}
	return stablehash.Object(struct {
		Spec        *corev1.PodSpec    `json:"spec"`
		QOS         corev1.PodQOSClass `json:"qos"`
		RestartedAt string             `json:"restartedAt,omitempty"`
	}{spec, QOSClass(&t.Spec), t.Annotations[RestartedAtAnnotation]})
}

// QOSClass is the QoS class the API server gives a pod with this spec, by the rules of the Kubernetes
// documentation ("Pod Quality of Service Classes"), counting cpu and memory of the regular and init
// containers (and spec.resources when set):
//   - BestEffort: no container has a cpu or memory request or limit;
//   - Guaranteed: every container has cpu and memory limits, and its requests, when set, equal them;
//   - Burstable: anything else.
func QOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	hasAny, guaranteed := false, true
	check := func(r corev1.ResourceRequirements) {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			limit, hasLimit := r.Limits[name]
			request, hasRequest := r.Requests[name]
			if (hasLimit && !limit.IsZero()) || (hasRequest && !request.IsZero()) {
				hasAny = true
			}
			if !hasLimit || limit.IsZero() {
				guaranteed = false
				continue
			}
			if hasRequest && !equality.Semantic.DeepEqual(request, limit) {
				guaranteed = false
			}
		}
	}
	if spec.Resources != nil {
		check(*spec.Resources)
	} else {
		for _, c := range spec.InitContainers {
			check(c.Resources)
		}
		for _, c := range spec.Containers {
			check(c.Resources)
		}
	}
	switch {
	case !hasAny:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
