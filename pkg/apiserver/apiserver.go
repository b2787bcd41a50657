// Package apiserver assembles the aggregated API server: the scheme, the REST storage of every resource
// and the API groups apps.tkestack.io/v1 and apps.openyurt.io/v1beta1 (NodePools, preferred) and v1alpha1.
package apiserver

import (
	"net/http"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/coexistence"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappdaemon"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/tkestack/tapp"
	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

// Config is the configuration of the server.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	// APIServiceTarget is the Service this server's APIServices point to (default tapp-system/tapp-apiserver).
	// In cluster mode the server warns when an APIService of one of its group-versions points elsewhere.
	APIServiceTarget types.NamespacedName
	// StorageFence, in cluster mode, keeps the server from serving a store that is not the cluster's
	// (readiness fails and requests for both groups answer 503); nil in standalone mode.
	StorageFence *storagefence.Fence
}

// CompletedConfig is a Config whose defaults have been filled in.
type CompletedConfig struct {
	generic          genericapiserver.CompletedConfig
	apiServiceTarget types.NamespacedName
	// clientConfig reaches the cluster in cluster mode; nil when standalone.
	clientConfig *restclient.Config
	fence        *storagefence.Fence
	// patchFront sees strategic merge patches before the generic PATCH handler; New gives it the storage.
	patchFront *strategicMergeFront
}

// Server is the running aggregated API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// Complete fills in the defaults of the generic configuration.
func (c *Config) Complete() CompletedConfig {
	target := c.APIServiceTarget
	if target.Name == "" {
		target = coexistence.DefaultService
	}
	if fence := c.StorageFence; fence != nil {
		build := c.GenericConfig.BuildHandlerChainFunc
		c.GenericConfig.BuildHandlerChainFunc = func(api http.Handler, config *genericapiserver.Config) http.Handler {
			// Innermost, so that requests are authenticated and authorized before they learn why.
			return build(fence.WithFence(api, []string{tkestack.GroupName, openyurt.GroupName}, Codecs), config)
		}
		c.GenericConfig.AddReadyzChecks(fence.HealthChecker())
	}
	// The strategic merge patch front is innermost (set last): it reads the store only for
	// authorized requests to a store the fence lets through. Before it, in order: server-side apply
	// requests are marked for the registry's size check (markApply), the TApp alias "DefaultTemplateName"
	// is folded into defaultTemplateName (legacyAlias), and instance keys are checked (instanceKeys).
	front := &strategicMergeFront{scheme: Scheme, codecs: Codecs, maxBody: c.GenericConfig.MaxRequestBodyBytes}
	if front.maxBody <= 0 {
		front.maxBody = defaultMaxPatchBody
	}
	buildWithFront := c.GenericConfig.BuildHandlerChainFunc
	c.GenericConfig.BuildHandlerChainFunc = func(api http.Handler, config *genericapiserver.Config) http.Handler {
		return buildWithFront(markApply(front.legacyAlias(front.instanceKeys(front.handler(api)))), config)
	}
	return CompletedConfig{generic: c.GenericConfig.Complete(), apiServiceTarget: target,
		clientConfig: c.GenericConfig.ClientConfig, fence: c.StorageFence, patchFront: front}
}

// defaultMaxPatchBody is the body limit of the strategic merge patch front when the generic configuration
// sets none (k8s.io/apiserver's default).
const defaultMaxPatchBody = 3 * 1024 * 1024

// New builds the server and installs both API groups.
func (c CompletedConfig) New() (*Server, error) {
	generic, err := c.generic.New("tapp-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	optsGetter := c.generic.RESTOptionsGetter

	tapps, err := tapp.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	tkestackGroup := genericapiserver.NewDefaultAPIGroupInfo(tkestack.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	tkestackGroup.NegotiatedSerializer = withoutProtobuf{tkestackGroup.NegotiatedSerializer}
	tkestackGroup.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{
		"tapps":        tapps.TApp,
		"tapps/status": tapps.Status,
		"tapps/scale":  tapps.Scale,
	}

	yads, err := yurtappdaemon.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	pools, err := nodepool.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	openyurtGroup := genericapiserver.NewDefaultAPIGroupInfo(openyurt.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	openyurtGroup.NegotiatedSerializer = withoutProtobuf{openyurtGroup.NegotiatedSerializer}
	openyurtGroup.VersionedResourcesStorageMap["v1alpha1"] = map[string]rest.Storage{
		"yurtappdaemons":        yads.YurtAppDaemon,
		"yurtappdaemons/status": yads.Status,
		"nodepools":             pools.NodePool,
		"nodepools/status":      pools.Status,
	}
	// One store serves NodePools in both versions; requests are converted through the internal type and
	// stored as v1alpha1. YurtAppDaemon never had another version.
	openyurtGroup.VersionedResourcesStorageMap["v1beta1"] = map[string]rest.Storage{
		"nodepools":        pools.NodePool,
		"nodepools/status": pools.Status,
	}

	c.patchFront.targets = map[string]patchTarget{
		tkestack.GroupName + "/tapps":          {store: tapps.TApp},
		tkestack.GroupName + "/tapps/scale":    {store: tapps.Scale, version: autoscalingv1.SchemeGroupVersion},
		openyurt.GroupName + "/yurtappdaemons": {store: yads.YurtAppDaemon},
		openyurt.GroupName + "/nodepools":      {store: pools.NodePool},
	}
	if err := generic.InstallAPIGroups(&tkestackGroup, &openyurtGroup); err != nil {
		return nil, err
	}
	if c.fence != nil {
		if err := generic.AddPostStartHook("storage-fence", func(hook genericapiserver.PostStartHookContext) error {
			go c.fence.Run(hook.Context)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if c.clientConfig != nil {
		if err := c.watchCoexistence(generic, servedResources(&tkestackGroup, &openyurtGroup)); err != nil {
			return nil, err
		}
	}
	return &Server{GenericAPIServer: generic}, nil
}

// servedResources lists the group-version-resources of the groups, without subresources.
func servedResources(groups ...*genericapiserver.APIGroupInfo) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, g := range groups {
		for version, storage := range g.VersionedResourcesStorageMap {
			for resource := range storage {
				if !strings.Contains(resource, "/") {
					out = append(out, schema.GroupVersionResource{Group: g.PrioritizedVersions[0].Group, Version: version, Resource: resource})
				}
			}
		}
	}
	return out
}

// watchCoexistence starts, once the server runs, a watch of the cluster's APIServices and CRDs that warns
// (log and Event) when one of them serves our group-versions or resources elsewhere.
func (c CompletedConfig) watchCoexistence(generic *genericapiserver.GenericAPIServer, served []schema.GroupVersionResource) error {
	dyn, err := dynamic.NewForConfig(c.clientConfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(c.clientConfig)
	if err != nil {
		return err
	}
	return generic.AddPostStartHook("coexistence-check", func(hook genericapiserver.PostStartHookContext) error {
		broadcaster := record.NewBroadcaster(record.WithContext(hook.Context))
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
		watcher := &coexistence.Watcher{
			Client:   dyn,
			Recorder: broadcaster.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: "tapp-apiserver"}),
			Served:   served,
			Own:      c.apiServiceTarget,
		}
		go func() {
			defer broadcaster.Shutdown()
			watcher.Run(hook.Context)
		}()
		return nil
	})
}
