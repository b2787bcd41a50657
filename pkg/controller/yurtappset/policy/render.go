package policy

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/poolplacement"
	"github.com/tapp-io/tapp-apiserver/pkg/workloadtweak"
)

// Keys written on the workloads, as yurt-manager writes them.
const (
	// PoolNameLabel on a workload, in its selector and on its pods names the pool it serves.
	PoolNameLabel = openyurt.PoolNameLabel
	// RevisionHashLabel on a workload (and on its pods, from when its pod template was rendered) is the
	// name of the ControllerRevision it was rendered from.
	RevisionHashLabel = openyurt.RevisionHashLabel
	// RefYurtAppSetLabel on a workload names its YurtAppSet; orphans carrying it are adopted.
	RefYurtAppSetLabel = openyurt.YurtAppSetOwnerLabel
	// RefNodePoolAnnotation on a workload names its pool (written as yurt-manager does; read only when
	// PoolNameLabel is absent).
	RefNodePoolAnnotation = "apps.openyurt.io/ref-nodepool"
)

// ControllerKind is the kind written in the controller ownerReference of every workload.
var ControllerKind = v1beta1.SchemeGroupVersion.WithKind("YurtAppSet")

// Kind is the kind of a YurtAppSet's workloads.
type Kind string

// Workload kinds.
const (
	DeploymentKind  Kind = "Deployment"
	StatefulSetKind Kind = "StatefulSet"
)

// TemplateKind returns the kind of the workload template, or an error when the YurtAppSet has no template
// or both: nothing is rendered from it.
func TemplateKind(yas *v1beta1.YurtAppSet) (Kind, error) {
	t := &yas.Spec.Workload.WorkloadTemplate
	switch {
	case t.DeploymentTemplate != nil && t.StatefulSetTemplate == nil:
		return DeploymentKind, nil
	case t.StatefulSetTemplate != nil && t.DeploymentTemplate == nil:
		return StatefulSetKind, nil
	}
	return "", fmt.Errorf("spec.workload.workloadTemplate must hold exactly one of deploymentTemplate and statefulSetTemplate")
}

// GenerateName returns the name prefix of the workload of pool: "<yas>-<pool>-", or "<yas>-" when that is
// not a valid object name prefix (the API server appends five random characters).
func GenerateName(yasName, pool string) string {
	prefix := yasName + "-" + pool + "-"
	if len(apivalidation.NameIsDNSSubdomain(prefix, true)) != 0 {
		prefix = yasName + "-"
	}
	return prefix
}

// RenderDeployment returns the Deployment of pool at revision (a ControllerRevision name) for a YurtAppSet
// with a deploymentTemplate, as yurt-manager renders it (see the package doc): the template, its selector
// with the pool's label, the pool's placement (poolplacement.Pin), the tweaks that select the pool
// (pkg/workloadtweak, in order), then the identity keys (stamp). Its name is empty: it is created with
// GenerateName. An error is a tweak that cannot apply to the rendering.
func RenderDeployment(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, revision string) (*appsv1.Deployment, error) {
	t := yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate
	if t == nil {
		return nil, fmt.Errorf("YurtAppSet %s/%s has no deploymentTemplate", yas.Namespace, yas.Name)
	}
	meta, err := renderMeta(yas, pool, revision, &t.ObjectMeta)
	if err != nil {
		return nil, err
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"},
		ObjectMeta: meta,
		Spec:       *t.Spec.DeepCopy(),
	}
	d.Spec.Selector = poolSelector(d.Spec.Selector, pool.Name)
	poolplacement.Pin(&d.Spec.Template, pool.Name, pool.Spec.Taints)
	if err := workloadtweak.ApplyToDeployment(d, pool.Name, workloadtweak.For(yas.Spec.Workload.WorkloadTweaks, pool.Name, pool.Labels)); err != nil {
		return nil, fmt.Errorf("applying the workloadTweaks of pool %s: %w", pool.Name, err)
	}
	stamp(&d.ObjectMeta, &d.Spec.Template.Labels, yas, pool, revision)
	return d, nil
}

// RenderStatefulSet is RenderDeployment for a YurtAppSet with a statefulSetTemplate.
func RenderStatefulSet(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, revision string) (*appsv1.StatefulSet, error) {
	t := yas.Spec.Workload.WorkloadTemplate.StatefulSetTemplate
	if t == nil {
		return nil, fmt.Errorf("YurtAppSet %s/%s has no statefulSetTemplate", yas.Namespace, yas.Name)
	}
	meta, err := renderMeta(yas, pool, revision, &t.ObjectMeta)
	if err != nil {
		return nil, err
	}
	s := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "StatefulSet"},
		ObjectMeta: meta,
		Spec:       *t.Spec.DeepCopy(),
	}
	s.Spec.Selector = poolSelector(s.Spec.Selector, pool.Name)
	poolplacement.Pin(&s.Spec.Template, pool.Name, pool.Spec.Taints)
	if err := workloadtweak.ApplyToStatefulSet(s, pool.Name, workloadtweak.For(yas.Spec.Workload.WorkloadTweaks, pool.Name, pool.Labels)); err != nil {
		return nil, fmt.Errorf("applying the workloadTweaks of pool %s: %w", pool.Name, err)
	}
	stamp(&s.ObjectMeta, &s.Spec.Template.Labels, yas, pool, revision)
	return s, nil
}

func renderMeta(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, revision string, tmpl *metav1.ObjectMeta) (metav1.ObjectMeta, error) {
	if pool == nil {
		return metav1.ObjectMeta{}, fmt.Errorf("no NodePool given")
	}
	if err := validatePoolName(pool.Name); err != nil {
		return metav1.ObjectMeta{}, err
	}
	if errs := validation.IsValidLabelValue(revision); len(errs) > 0 || revision == "" {
		return metav1.ObjectMeta{}, fmt.Errorf("revision %q is not a valid label value", revision)
	}
	return metav1.ObjectMeta{
		GenerateName:    GenerateName(yas.Name, pool.Name),
		Namespace:       yas.Namespace,
		Labels:          copyMap(tmpl.Labels),
		Annotations:     copyMap(tmpl.Annotations),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(yas, ControllerKind)},
	}, nil
}

// stamp sets, after the tweaks, the keys a workload and its pods are identified by (the tweaks see the
// template's labels only: a patch that replaces metadata.labels, as OpenYurt's own sample does, adds to
// them): labels PoolNameLabel, RevisionHashLabel and RefYurtAppSetLabel, annotation RefNodePoolAnnotation,
// and pod labels PoolNameLabel and RevisionHashLabel.
func stamp(meta *metav1.ObjectMeta, podLabels *map[string]string, yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, revision string) {
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	meta.Labels[PoolNameLabel] = pool.Name
	meta.Labels[RevisionHashLabel] = revision
	meta.Labels[RefYurtAppSetLabel] = yas.Name
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[RefNodePoolAnnotation] = pool.Name
	if *podLabels == nil {
		*podLabels = map[string]string{}
	}
	(*podLabels)[PoolNameLabel] = pool.Name
	(*podLabels)[RevisionHashLabel] = revision
}

// poolSelector returns the template's selector with PoolNameLabel=<pool> added (an empty one when the
// template has none), so that the workloads of two pools never select each other's pods.
func poolSelector(sel *metav1.LabelSelector, pool string) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	if sel != nil {
		out = sel.DeepCopy()
	}
	if out.MatchLabels == nil {
		out.MatchLabels = map[string]string{}
	}
	out.MatchLabels[PoolNameLabel] = pool
	return out
}

// validatePoolName reports why a NodePool cannot get a workload: its name is written as a label value.
func validatePoolName(pool string) error {
	if errs := validation.IsValidLabelValue(pool); len(errs) > 0 {
		return fmt.Errorf("NodePool name %q cannot be used as a label value: %v", pool, errs)
	}
	return nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	return out
}
