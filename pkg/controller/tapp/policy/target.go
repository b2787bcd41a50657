package policy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/inplace"
)

// InPlaceTarget returns what the in-place engine needs to carry out u on pod.
//
// Desired is the instance's template (with the TemplateKeysAnnotation it records). Previous is the template
// the pod carries, rebuilt from the pod itself: the uniq hash (checked by ComputePlan) guarantees that it
// equals Desired except for container images and metadata, so Previous is Desired with the pod's container
// images and with the label and annotation keys recorded on the pod (TemplateKeysAnnotation) at the pod's
// values. Keys the pod's template had and Desired has not are therefore removed by the update. Labels are
// the instance and hash labels of Desired.
func InPlaceTarget(tapp *tkestackv1.TApp, pod *corev1.Pod, u InPlaceUpdate) (inplace.Target, error) {
	t, err := TemplateFor(tapp, u.Template)
	if err != nil {
		return inplace.Target{}, err
	}
	desired := t.DeepCopy()
	if desired.Annotations == nil {
		desired.Annotations = map[string]string{}
	}
	desired.Annotations[TemplateKeysAnnotation] = templateKeysValue(t)

	previous := desired.DeepCopy()
	for i := range previous.Spec.Containers {
		c := &previous.Spec.Containers[i]
		found := false
		for _, have := range pod.Spec.Containers {
			if have.Name == c.Name {
				c.Image, found = have.Image, true
			}
		}
		if !found {
			return inplace.Target{}, fmt.Errorf("pod %s has no container %q", pod.Name, c.Name)
		}
	}
	recorded := recordedTemplateKeys(pod)
	previous.Labels = map[string]string{}
	for _, k := range recorded.Labels {
		if v, ok := pod.Labels[k]; ok {
			previous.Labels[k] = v
		}
	}
	previous.Annotations = map[string]string{TemplateKeysAnnotation: pod.Annotations[TemplateKeysAnnotation]}
	for _, k := range recorded.Annotations {
		if v, ok := pod.Annotations[k]; ok {
			previous.Annotations[k] = v
		}
	}
	labels := PodLabels(t, u.ID)
	return inplace.Target{
		Previous: previous,
		Desired:  desired,
		Revision: labels[TemplateHashLabel],
		Labels: map[string]string{
			InstanceIDLabel:   u.ID,
			TemplateHashLabel: labels[TemplateHashLabel],
			UniqHashLabel:     labels[UniqHashLabel],
		},
	}, nil
}
