package migrate

import (
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kind is one kind that a CRD of an original served and that this server serves.
type kind struct {
	Group, Resource, Kind string
	Namespaced            bool
	// Dependents are the kinds its controller creates and owns: their ownerReferences are removed by the
	// garbage collector when the object is deleted with orphan propagation, and the new object adopts them.
	Dependents []string
}

// crdName is the name of the CustomResourceDefinition that served the kind.
func (k kind) crdName() string { return k.Resource + "." + k.Group }

func (k kind) gvr(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: version, Resource: k.Resource}
}

const (
	tkestackGroup = "apps.tkestack.io"
	openyurtGroup = "apps.openyurt.io"
)

// kinds are in restore order: NodePools before the YurtAppDaemons that select them.
var kinds = []kind{
	{Group: openyurtGroup, Resource: "nodepools", Kind: "NodePool"},
	{Group: openyurtGroup, Resource: "yurtappdaemons", Kind: "YurtAppDaemon", Namespaced: true,
		Dependents: []string{"Deployment", "StatefulSet"}},
	{Group: tkestackGroup, Resource: "tapps", Kind: "TApp", Namespaced: true,
		Dependents: []string{"Pod", "PersistentVolumeClaim"}},
}

func kindOf(group, k string) (kind, bool) {
	for _, candidate := range kinds {
		if candidate.Group == group && candidate.Kind == k {
			return candidate, true
		}
	}
	return kind{}, false
}

var (
	crdGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// The originals and what identifies them in a cluster.
const (
	// tkestack/tapp: Deployment kube-system/tapp-controller, leader lock kube-system/tapp-controller
	// (an Endpoints lock by default, any lock type by flag), ValidatingWebhookConfiguration tapp-admission.
	tappControllerName = "tapp-controller"
	// openyurtio/yurt-app-manager: Deployment yurt-app-manager (the Helm chart's full name, so possibly with
	// a release prefix), a Lease named yurt-app-manager, webhook configurations of the chart or of
	// kustomize.
	yurtAppManagerName = "yurt-app-manager"
	// leaderAnnotation holds the leader election record of Endpoints and ConfigMap locks.
	leaderAnnotation = "control-plane.alpha.kubernetes.io/leader"
)

// originalOf names the original controller of a group.
func originalOf(group string) string {
	if group == tkestackGroup {
		return tappControllerName
	}
	return yurtAppManagerName
}

// ruleMatches reports whether a webhook rule intercepts requests for resource of group.
func ruleMatches(rule admissionregistrationv1.RuleWithOperations, group, resource string) bool {
	if !slices.Contains(rule.APIGroups, group) && !slices.Contains(rule.APIGroups, "*") {
		return false
	}
	for _, r := range rule.Resources {
		if r == "*" || r == "*/*" || r == resource || r == resource+"/*" {
			return true
		}
	}
	return false
}

// ownGroups reports whether every rule targets only the groups of the originals.
func ownGroups(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, rule := range rules {
		for _, g := range rule.APIGroups {
			if g != tkestackGroup && g != openyurtGroup {
				return false
			}
		}
	}
	return true
}
