package policy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/ownership"
)

// Adoption is an orphan workload the YurtAppDaemon adopts as the child of Pool, under its existing name
// (for instance one that yurt-app-manager created, named <yad>-<pool>-<random>). The executor adds the
// controller reference with a patch bound to UID, after re-reading the YurtAppDaemon from the API server.
type Adoption struct {
	Pool string
	Kind v1alpha1.TemplateType
	Name string
	UID  types.UID
}

// Release is a child whose pod template labels spec.selector no longer matches: the executor removes the
// YurtAppDaemon's reference (only it) with a patch bound to UID; the workload keeps running.
type Release struct {
	Pool string
	Kind v1alpha1.TemplateType
	Name string
	UID  types.UID
}

// podLabelled is a workload seen by pkg/ownership through the labels of its pod template:
// spec.selector is a query over the pods of the children (validation makes it match the template's pod
// labels), and both the children of this controller and those of yurt-app-manager carry them there.
type podLabelled struct {
	*metav1.ObjectMeta
	podLabels map[string]string
}

func (p podLabelled) GetLabels() map[string]string { return p.podLabels }

// Owner is the YurtAppDaemon as pkg/ownership sees it, for workloads seen through their pod
// template labels (ownershipView): its spec.selector, and the workloads that belong to it are those of
// the template's kind that name one of the pools in valid (PoolNameLabel, or RefNodePoolAnnotation).
func Owner(yad *v1alpha1.YurtAppDaemon, kind v1alpha1.TemplateType, valid map[string]*v1alpha1.NodePool) ownership.Owner {
	return ownership.OwnerOf(yad, yad.Spec.Selector, func(obj metav1.Object) bool {
		v, ok := obj.(podLabelled)
		if !ok {
			return false
		}
		c := &child{meta: v.ObjectMeta}
		return valid[c.pool()] != nil
	})
}

// ownershipView returns the view of a workload of the template's kind that Owner decides on.
func ownershipView(c *child) metav1.Object {
	return podLabelled{ObjectMeta: c.meta, podLabels: c.pod.Labels}
}
