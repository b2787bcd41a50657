package workloadtweak

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// Admission knows no pool: it checks tweaks against the workload every pool's rendering starts from, the
// base. The YurtAppSet controller renders the same for a pool and adds the tolerations of the pool's taints,
// so a patch that applies to the base applies to every pool's workload.

// RefNodePoolAnnotation on a YurtAppSet's workload names its pool, as yurt-manager writes it.
const RefNodePoolAnnotation = "apps.openyurt.io/ref-nodepool"

// Base names the YurtAppSet, pool and revision a base workload is rendered for.
type Base struct {
	// YurtAppSet and Namespace are the name and namespace of the YurtAppSet.
	YurtAppSet, Namespace string
	// Pool is the name of the pool.
	Pool string
	// Revision is the name of the ControllerRevision, written as openyurt.RevisionHashLabel.
	Revision string
}

// Deployment returns the base Deployment of a deploymentTemplate with metadata meta and spec spec (not
// shared with the result): the template's labels and annotations with IdentityLabels and
// RefNodePoolAnnotation, generateName "<yas>-<pool>-", the pool's name added to the selector and with the
// revision to the pod labels, and the pool's node label added to the pods' nodeSelector.
func (b Base) Deployment(meta *metav1.ObjectMeta, spec *appsv1.DeploymentSpec) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"},
		ObjectMeta: b.meta(meta),
		Spec:       *spec.DeepCopy(),
	}
	d.Spec.Selector = b.selector(d.Spec.Selector)
	b.pin(&d.Spec.Template)
	return d
}

// StatefulSet is Deployment for a statefulSetTemplate.
func (b Base) StatefulSet(meta *metav1.ObjectMeta, spec *appsv1.StatefulSetSpec) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "StatefulSet"},
		ObjectMeta: b.meta(meta),
		Spec:       *spec.DeepCopy(),
	}
	s.Spec.Selector = b.selector(s.Spec.Selector)
	b.pin(&s.Spec.Template)
	return s
}

func (b Base) meta(template *metav1.ObjectMeta) metav1.ObjectMeta {
	labels := withEntries(template.Labels,
		openyurt.PoolNameLabel, b.Pool, openyurt.RevisionHashLabel, b.Revision, openyurt.YurtAppSetOwnerLabel, b.YurtAppSet)
	return metav1.ObjectMeta{
		GenerateName: b.YurtAppSet + "-" + b.Pool + "-",
		Namespace:    b.Namespace,
		Labels:       labels,
		Annotations:  withEntries(template.Annotations, RefNodePoolAnnotation, b.Pool),
	}
}

func (b Base) selector(in *metav1.LabelSelector) *metav1.LabelSelector {
	out := in.DeepCopy()
	if out == nil {
		out = &metav1.LabelSelector{}
	}
	out.MatchLabels = withEntries(out.MatchLabels, openyurt.PoolNameLabel, b.Pool)
	return out
}

func (b Base) pin(template *corev1.PodTemplateSpec) {
	template.Labels = withEntries(template.Labels, openyurt.PoolNameLabel, b.Pool, openyurt.RevisionHashLabel, b.Revision)
	template.Spec.NodeSelector = withEntries(template.Spec.NodeSelector, openyurt.NodePoolLabel, b.Pool)
}

// withEntries returns a copy of m with the key-value pairs kv set.
func withEntries(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
