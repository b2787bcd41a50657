package policy

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
)

// TweaksFor returns the tweaks of the workloadTweaks that select pool (by name or nodepoolSelector), in
// list order: applied in that order, a later tweak wins.
func TweaksFor(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool) []v1beta1.Tweaks {
	var out []v1beta1.Tweaks
	for _, t := range yas.Spec.Workload.WorkloadTweaks {
		if Selects(t.Pools, t.NodePoolSelector, pool.Name, pool.Labels) {
			out = append(out, *t.Tweaks.DeepCopy())
		}
	}
	return out
}

// TODO(merge): replaced by the tweak package of the API.
func applyDeploymentTweaks(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, d *appsv1.Deployment) error {
	for _, t := range TweaksFor(yas, pool) {
		if t.Replicas != nil {
			r := *t.Replicas
			d.Spec.Replicas = &r
		}
		for _, ci := range t.ContainerImages {
			for i := range d.Spec.Template.Spec.Containers {
				if d.Spec.Template.Spec.Containers[i].Name == ci.Name {
					d.Spec.Template.Spec.Containers[i].Image = ci.TargetImage
				}
			}
		}
	}
	return nil
}

func applyStatefulSetTweaks(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, s *appsv1.StatefulSet) error {
	for _, t := range TweaksFor(yas, pool) {
		if t.Replicas != nil {
			r := *t.Replicas
			s.Spec.Replicas = &r
		}
	}
	return nil
}
