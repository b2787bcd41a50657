package policy

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/poolplacement"
)

// ControllerKind is the kind written in the controller ownerReference of every child.
var ControllerKind = v1alpha1.SchemeGroupVersion.WithKind("YurtAppDaemon")

// Template kinds, typed for the versioned API.
const (
	DeploymentKind  = v1alpha1.TemplateType(openyurt.DeploymentTemplateType)
	StatefulSetKind = v1alpha1.TemplateType(openyurt.StatefulSetTemplateType)
)

// TemplateType returns the kind of the workload template (openyurt.WorkloadTemplateType), or an error when
// the YurtAppDaemon has no template or both: nothing is rendered from it.
func TemplateType(yad *v1alpha1.YurtAppDaemon) (v1alpha1.TemplateType, error) {
	t := &yad.Spec.WorkloadTemplate
	kind := openyurt.WorkloadTemplateType(t.DeploymentTemplate != nil, t.StatefulSetTemplate != nil)
	if kind == "" {
		return "", fmt.Errorf("workloadTemplate must hold exactly one of deploymentTemplate and statefulSetTemplate")
	}
	return v1alpha1.TemplateType(kind), nil
}

// RenderDeployment returns the Deployment of pool at revision (a RevisionName) for a YurtAppDaemon with a
// deploymentTemplate:
//   - name ChildName(yad, pool), the YurtAppDaemon's namespace, a controller ownerReference to it
//     (blockOwnerDeletion);
//   - labels: the template's, plus PoolNameLabel=<pool> and RevisionHashLabel=<revision>;
//   - annotations: the template's, plus RefNodePoolAnnotation=<pool> and PlacementHashAnnotation;
//   - spec: the template's, with selector = spec.selector of the YurtAppDaemon plus PoolNameLabel=<pool>
//     (children of two pools never select each other's pods), and the pod template pinned (see
//     PinPodTemplate). Replicas are the template's; nil leaves them to the API server default (1) on
//     create and unmanaged afterwards.
func RenderDeployment(yad *v1alpha1.YurtAppDaemon, pool *v1alpha1.NodePool, revision string) (*appsv1.Deployment, error) {
	t := yad.Spec.WorkloadTemplate.DeploymentTemplate
	if t == nil {
		return nil, fmt.Errorf("YurtAppDaemon %s/%s has no deploymentTemplate", yad.Namespace, yad.Name)
	}
	meta, selector, err := renderCommon(yad, pool, revision, &t.ObjectMeta)
	if err != nil {
		return nil, err
	}
	spec := t.Spec.DeepCopy()
	spec.Selector = selector
	PinPodTemplate(&spec.Template, pool, revision)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"},
		ObjectMeta: meta,
		Spec:       *spec,
	}, nil
}

// RenderStatefulSet is RenderDeployment for a YurtAppDaemon with a statefulSetTemplate. serviceName,
// volumeClaimTemplates and the other StatefulSet fields are the template's.
func RenderStatefulSet(yad *v1alpha1.YurtAppDaemon, pool *v1alpha1.NodePool, revision string) (*appsv1.StatefulSet, error) {
	t := yad.Spec.WorkloadTemplate.StatefulSetTemplate
	if t == nil {
		return nil, fmt.Errorf("YurtAppDaemon %s/%s has no statefulSetTemplate", yad.Namespace, yad.Name)
	}
	meta, selector, err := renderCommon(yad, pool, revision, &t.ObjectMeta)
	if err != nil {
		return nil, err
	}
	spec := t.Spec.DeepCopy()
	spec.Selector = selector
	PinPodTemplate(&spec.Template, pool, revision)
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "StatefulSet"},
		ObjectMeta: meta,
		Spec:       *spec,
	}, nil
}

func renderCommon(yad *v1alpha1.YurtAppDaemon, pool *v1alpha1.NodePool, revision string, tmpl *metav1.ObjectMeta) (metav1.ObjectMeta, *metav1.LabelSelector, error) {
	if pool == nil {
		return metav1.ObjectMeta{}, nil, fmt.Errorf("no NodePool given")
	}
	if err := validatePoolName(pool.Name); err != nil {
		return metav1.ObjectMeta{}, nil, err
	}
	if errs := validation.IsValidLabelValue(revision); len(errs) > 0 || revision == "" {
		return metav1.ObjectMeta{}, nil, fmt.Errorf("revision %q is not a valid label value", revision)
	}
	if yad.Spec.Selector == nil {
		return metav1.ObjectMeta{}, nil, fmt.Errorf("YurtAppDaemon %s/%s has no selector", yad.Namespace, yad.Name)
	}
	selector := yad.Spec.Selector.DeepCopy()
	if selector.MatchLabels == nil {
		selector.MatchLabels = map[string]string{}
	}
	selector.MatchLabels[PoolNameLabel] = pool.Name

	labels := copyMap(tmpl.Labels)
	labels[PoolNameLabel] = pool.Name
	labels[RevisionHashLabel] = revision
	annotations := copyMap(tmpl.Annotations)
	annotations[RefNodePoolAnnotation] = pool.Name
	annotations[PlacementHashAnnotation] = PlacementHash(pool)

	meta := metav1.ObjectMeta{
		Name:            ChildName(yad.Name, pool.Name),
		Namespace:       yad.Namespace,
		Labels:          labels,
		Annotations:     annotations,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(yad, ControllerKind)},
	}
	return meta, selector, nil
}

// PinPodTemplate adds the pool's placement to a pod template, keeping everything the template has:
//   - labels PoolNameLabel=<pool> and RevisionHashLabel=<revision> (when revision is not empty);
//   - the pool's nodeSelector and tolerations (poolplacement.Pin).
func PinPodTemplate(t *corev1.PodTemplateSpec, pool *v1alpha1.NodePool, revision string) {
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[PoolNameLabel] = pool.Name
	if revision != "" {
		t.Labels[RevisionHashLabel] = revision
	}
	poolplacement.Pin(t, pool.Name, pool.Spec.Taints)
}

// PoolTolerations returns the tolerations of the pool's taints (poolplacement.Tolerations).
func PoolTolerations(pool *v1alpha1.NodePool) []corev1.Toleration {
	return poolplacement.Tolerations(pool.Spec.Taints)
}

// PlacementHash is a hash of what a pool contributes to its child beyond its name: its taints
// (poolplacement.Hash). It is recorded in PlacementHashAnnotation.
func PlacementHash(pool *v1alpha1.NodePool) string {
	return poolplacement.Hash(pool.Name, pool.Spec.Taints)
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}
