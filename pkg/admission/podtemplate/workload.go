package podtemplate

import (
	"fmt"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon/policy"
)

// dryRunPool stands for the NodePool of the dry-run workload: the controller renders one workload per pool,
// all alike but for the pool's name, labels and tolerations, so any pool name shows the template's problems.
const dryRunPool = "dry-run"

// dryRunRevision stands for the revision label of the dry-run workload.
const dryRunRevision = "dry-run"

// workloadTemplateChanged says whether a YurtAppDaemon write changes what its workloads are rendered from:
// always on create; on update when the workload template or the selector (which render puts into every
// workload) changed.
func workloadTemplateChanged(old, yad *openyurt.YurtAppDaemon) bool {
	return old == nil ||
		!apiequality.Semantic.DeepEqual(old.Spec.WorkloadTemplate, yad.Spec.WorkloadTemplate) ||
		!apiequality.Semantic.DeepEqual(old.Spec.Selector, yad.Spec.Selector)
}

// buildWorkload returns the check of the YurtAppDaemon's workload template: the Deployment or StatefulSet
// the YurtAppDaemon controller would create for a pool (policy.RenderDeployment or RenderStatefulSet, as the
// controller does), named with generateName "<yurtappdaemon>-".
func buildWorkload(yad *openyurt.YurtAppDaemon, namespace string) (*templateCheck, error) {
	versioned := &v1alpha1.YurtAppDaemon{}
	if err := v1alpha1.Convert_openyurt_YurtAppDaemon_To_v1alpha1_YurtAppDaemon(yad, versioned, nil); err != nil {
		return nil, err
	}
	versioned.Namespace = namespace
	pool := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: dryRunPool}}
	workloadTemplate := field.NewPath("spec", "workloadTemplate")
	var object runtime.Object
	var template *field.Path
	var meta *metav1.ObjectMeta
	switch kind, err := policy.TemplateType(versioned); {
	case err != nil:
		return nil, err
	case kind == policy.DeploymentKind:
		deployment, err := policy.RenderDeployment(versioned, pool, dryRunRevision)
		if err != nil {
			return nil, err
		}
		object, meta, template = deployment, &deployment.ObjectMeta, workloadTemplate.Child("deploymentTemplate")
	case kind == policy.StatefulSetKind:
		statefulSet, err := policy.RenderStatefulSet(versioned, pool, dryRunRevision)
		if err != nil {
			return nil, err
		}
		object, meta, template = statefulSet, &statefulSet.ObjectMeta, workloadTemplate.Child("statefulSetTemplate")
	default:
		return nil, fmt.Errorf("unknown workload template kind %q", kind)
	}
	meta.GenerateName = yad.Name + "-"
	meta.Name = ""
	// Without a uid (only possible outside a real request) the workload has no owner reference, which would
	// be invalid.
	if yad.UID == "" {
		meta.OwnerReferences = nil
	}
	return &templateCheck{template: template, object: object, fieldPath: workloadField(template)}, nil
}

// workloadField maps a field path of the dry-run workload onto the YurtAppDaemon: the workload's name to
// metadata.name, its selector to spec.selector (render makes it from the YurtAppDaemon's), and everything
// else into the template, e.g. spec.template.spec.containers[0].image of the Deployment to
// spec.workloadTemplate.deploymentTemplate.spec.template.spec.containers[0].image.
func workloadField(template *field.Path) func(string) string {
	return func(f string) string {
		switch {
		case f == "" || f == "<nil>":
			return template.String()
		case f == "metadata.name" || f == "metadata.generateName":
			return "metadata.name"
		case f == "metadata.namespace":
			return "metadata.namespace"
		case f == "spec.selector" || strings.HasPrefix(f, "spec.selector."):
			return f
		}
		return underTemplate(template, f)
	}
}
