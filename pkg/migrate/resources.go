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
	// Versions are the versions tapp-apiserver can serve the kind in (when this build knows the kind).
	Versions []string
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

// kinds are in restore order: NodePools before the YurtAppDaemons and YurtAppSets that select them.
// YurtAppSet (OpenYurt v1.5+, apps.openyurt.io/v1beta1) is handled without its Go types: it is moved when
// the server serves it (Migrator.Serves), and refused otherwise.
var kinds = []kind{
	{Group: openyurtGroup, Resource: "nodepools", Kind: "NodePool", Versions: []string{"v1alpha1", "v1beta1", "v1beta2"}},
	{Group: openyurtGroup, Resource: "yurtappdaemons", Kind: "YurtAppDaemon", Namespaced: true,
		Dependents: []string{"Deployment", "StatefulSet"}, Versions: []string{"v1alpha1"}},
	{Group: openyurtGroup, Resource: "yurtappsets", Kind: "YurtAppSet", Namespaced: true,
		Dependents: []string{"Deployment", "StatefulSet"}, Versions: []string{"v1beta1"}},
	{Group: tkestackGroup, Resource: "tapps", Kind: "TApp", Namespaced: true,
		Dependents: []string{"Pod", "PersistentVolumeClaim"}, Versions: []string{"v1"}},
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
	// openyurtio/openyurt's yurt-manager (OpenYurt v1.3+, which took over yurt-app-manager's controllers):
	// Deployment yurt-manager of the chart charts/yurt-manager (labels app.kubernetes.io/name=yurt-manager),
	// a Lease named yurt-manager, the webhook configurations yurt-manager-mutating-webhook-configuration
	// and yurt-manager-validating-webhook-configuration (whose webhooks also serve other API groups), and
	// the NodePool CRD's conversion webhook, all behind the Service yurt-manager-webhook-service.
	yurtManagerName = "yurt-manager"
	// yurtManagerWebhookService is the Service of yurt-manager's webhooks.
	yurtManagerWebhookService = "yurt-manager-webhook-service"
	// leaderAnnotation holds the leader election record of Endpoints and ConfigMap locks.
	leaderAnnotation = "control-plane.alpha.kubernetes.io/leader"
)

// originalsOf names the original controllers of a group.
func originalsOf(group string) []string {
	if group == tkestackGroup {
		return []string{tappControllerName}
	}
	return []string{yurtAppManagerName, yurtManagerName}
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
