// Package quota makes ResourceQuota object counts (count/tapps.apps.tkestack.io,
// count/yurtappdaemons.apps.openyurt.io, count/yurtappsets.apps.openyurt.io) hold for the resources this server stores. Requests for them are
// proxied by kube-apiserver's aggregator, so its own quota admission never sees them: the ResourceQuota
// admission plugin has to run here, with an evaluator per counted resource.
package quota

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	quotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// PluginName is the name of the admission plugin that enforces quota.
const PluginName = resourcequota.PluginName

// CountedResources are the namespaced resources whose objects a ResourceQuota can count.
var CountedResources = []schema.GroupVersionResource{
	{Group: "apps.tkestack.io", Version: "v1", Resource: "tapps"},
	{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "yurtappdaemons"},
	{Group: "apps.openyurt.io", Version: "v1beta1", Resource: "yurtappsets"},
}

// Register adds the ResourceQuota admission plugin.
func Register(plugins *admission.Plugins) {
	resourcequota.Register(plugins)
}

// initializer hands the quota configuration to the ResourceQuota plugin.
type initializer struct {
	configuration quotav1.Configuration
}

// NewInitializer returns the plugin initializer that configures object counting for CountedResources,
// listing objects through the server's own loopback connection when usage has to be recomputed.
func NewInitializer(loopback *rest.Config) (admission.PluginInitializer, error) {
	client, err := dynamic.NewForConfig(loopback)
	if err != nil {
		return nil, err
	}
	evaluators := make([]quotav1.Evaluator, 0, len(CountedResources))
	for _, gvr := range CountedResources {
		evaluators = append(evaluators, generic.NewObjectCountEvaluator(gvr.GroupResource(), lister(client, gvr), ""))
	}
	return initializer{configuration: generic.NewConfiguration(evaluators, nil)}, nil
}

// Initialize implements admission.PluginInitializer.
func (i initializer) Initialize(plugin admission.Interface) {
	if wants, ok := plugin.(genericadmissioninitializer.WantsQuotaConfiguration); ok {
		wants.SetQuotaConfiguration(i.configuration)
	}
}

// lister lists the objects of one resource in a namespace.
func lister(client dynamic.Interface, gvr schema.GroupVersionResource) generic.ListFuncByNamespace {
	return func(namespace string) ([]runtime.Object, error) {
		list, err := client.Resource(gvr).Namespace(namespace).List(context.TODO(), metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return meta.ExtractList(list)
	}
}
