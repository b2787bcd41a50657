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
	RefNodePoolAnnotation = workloadtweak.RefNodePoolAnnotation
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
// with a deploymentTemplate, as yurt-manager renders it (see the package doc): the base every pool's
// rendering starts from, the one admission checks tweaks against (workloadtweak.Base: the template with the
// identity labels, annotation, selector and pod labels, generateName, the pool's nodeSelector), the
// YurtAppSet's controller reference, the pool's tolerations (poolplacement.Pin), the tweaks that select the
// pool (pkg/workloadtweak, in order; it refuses a tweak that would change the identity keys). Its name is
// empty: it is created with GenerateName. An error is a tweak that cannot apply.
func RenderDeployment(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, revision string) (*appsv1.Deployment, error) {
	t := yas.Spec.Workload.WorkloadTemplate.DeploymentTemplate
	if t == nil {
		return nil, fmt.Errorf("YurtAppSet %s/%s has no deploymentTemplate", yas.Namespace, yas.Name)
	}
	base, err := baseOf(yas, pool, revision)
	if err != nil {
		return nil, err
	}
	d := base.Deployment(&t.ObjectMeta, &t.Spec)
	own(&d.ObjectMeta, yas, pool)
	poolplacement.Pin(&d.Spec.Template, pool.Name, pool.Spec.Taints)
	if err := workloadtweak.ApplyToDeployment(d, pool.Name, workloadtweak.For(yas.Spec.Workload.WorkloadTweaks, pool.Name, pool.Labels)); err != nil {
		return nil, fmt.Errorf("applying the workloadTweaks of pool %s: %w", pool.Name, err)
	}
	return d, nil
}

// RenderStatefulSet is RenderDeployment for a YurtAppSet with a statefulSetTemplate.
func RenderStatefulSet(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, revision string) (*appsv1.StatefulSet, error) {
	t := yas.Spec.Workload.WorkloadTemplate.StatefulSetTemplate
	if t == nil {
		return nil, fmt.Errorf("YurtAppSet %s/%s has no statefulSetTemplate", yas.Namespace, yas.Name)
	}
	base, err := baseOf(yas, pool, revision)
	if err != nil {
		return nil, err
	}
	s := base.StatefulSet(&t.ObjectMeta, &t.Spec)
	own(&s.ObjectMeta, yas, pool)
	poolplacement.Pin(&s.Spec.Template, pool.Name, pool.Spec.Taints)
	if err := workloadtweak.ApplyToStatefulSet(s, pool.Name, workloadtweak.For(yas.Spec.Workload.WorkloadTweaks, pool.Name, pool.Labels)); err != nil {
		return nil, fmt.Errorf("applying the workloadTweaks of pool %s: %w", pool.Name, err)
	}
	return s, nil
}

func baseOf(yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool, revision string) (workloadtweak.Base, error) {
	if pool == nil {
		return workloadtweak.Base{}, fmt.Errorf("no NodePool given")
	}
	if err := validatePoolName(pool.Name); err != nil {
		return workloadtweak.Base{}, err
	}
	if errs := validation.IsValidLabelValue(revision); len(errs) > 0 || revision == "" {
		return workloadtweak.Base{}, fmt.Errorf("revision %q is not a valid label value", revision)
	}
	return workloadtweak.Base{YurtAppSet: yas.Name, Namespace: yas.Namespace, Pool: pool.Name, Revision: revision}, nil
}

// own sets the YurtAppSet's controller reference, and GenerateName's fallback for names too long to carry
// the pool's.
func own(meta *metav1.ObjectMeta, yas *v1beta1.YurtAppSet, pool *v1alpha1.NodePool) {
	meta.GenerateName = GenerateName(yas.Name, pool.Name)
	meta.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(yas, ControllerKind)}
}

// validatePoolName reports why a NodePool cannot get a workload: its name is written as a label value.
func validatePoolName(pool string) error {
	if errs := validation.IsValidLabelValue(pool); len(errs) > 0 {
		return fmt.Errorf("NodePool name %q cannot be used as a label value: %v", pool, errs)
	}
	return nil
}
