// Package apiserver assembles the aggregated API server: the scheme, the REST storage of every resource
// and the API groups apps.tkestack.io/v1 and apps.openyurt.io/v1beta2 (NodePools, preferred), v1beta1
// (NodePools and YurtAppSets) and v1alpha1.
//
// Everything a request of a resource goes through is declared by that resource's folder under pkg/registry
// (pkg/registry/tkestack/tapp, pkg/registry/openyurt/yurtappdaemon, pkg/registry/openyurt/yurtappset,
// pkg/registry/openyurt/nodepool): its
// strategy, its storage, the size guard around the storage, and its request path, the steps its requests pass
// before the generic handlers (patch handling, instance-key checks, alias folding, the apply mark of the size
// guard). New finds the request paths while walking the storage maps of the groups it installs (every
// storage that is a requestpath.Provider), and puts them innermost in the handler chain, inside the storage
// fence; package pkg/registry/requestpath holds the mechanics the steps share. This package declares none.
package apiserver

import (
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/coexistence"
	"github.com/tapp-io/tapp-apiserver/pkg/registry"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappdaemon"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappset"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
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
	// generic is completed from a copy of the Config's GenericConfig, which New gives its handler chain.
	generic genericapiserver.CompletedConfig
	// buildChain is the GenericConfig's handler chain, without what New puts inside it.
	buildChain       func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler
	apiServiceTarget types.NamespacedName
	// clientConfig reaches the cluster in cluster mode; nil when standalone.
	clientConfig *restclient.Config
	fence        *storagefence.Fence
	// maxBody is the largest body a request-path step reads.
	maxBody int64
	// informers are the server's shared informers of the cluster; nil when standalone.
	informers informers.SharedInformerFactory
}

// Server is the running aggregated API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// Complete fills in the defaults of a copy of the generic configuration. The Config is left unchanged, so
// Complete can be called any number of times; New adds the server's own handlers to the completed copy.
func (c *Config) Complete() CompletedConfig {
	target := c.APIServiceTarget
	if target.Name == "" {
		target = coexistence.DefaultService
	}
	generic := *c.GenericConfig
	return CompletedConfig{
		generic:          generic.Complete(),
		buildChain:       generic.BuildHandlerChainFunc,
		apiServiceTarget: target,
		clientConfig:     generic.ClientConfig,
		fence:            c.StorageFence,
		maxBody:          generic.MaxRequestBodyBytes,
		informers:        c.GenericConfig.SharedInformerFactory,
	}
}

// New builds the storage of every resource, the server with its handler chain, and installs both API groups.
func (c CompletedConfig) New() (*Server, error) {
	groups, err := apiGroups(c.generic.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	paths := requestPaths(requestpath.Env{Scheme: Scheme, Codecs: Codecs, MaxBody: c.maxBody}, groups...)
	c.generic.BuildHandlerChainFunc = c.handlerChain(paths)
	generic, err := c.generic.New("tapp-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		destroy(groups...)
		return nil, err
	}
	if err := generic.InstallAPIGroups(groups...); err != nil {
		return nil, err
	}
	if c.fence != nil {
		if err := generic.AddReadyzChecks(c.fence.HealthChecker()); err != nil {
			return nil, err
		}
		if err := generic.AddPostStartHook("storage-fence", func(hook genericapiserver.PostStartHookContext) error {
			go c.fence.Run(hook.Context)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if c.clientConfig != nil {
		if err := c.watchCoexistence(generic, servedResources(groups...)); err != nil {
			return nil, err
		}
	}
	return &Server{GenericAPIServer: generic}, nil
}

// handlerChain is the generic handler chain with, innermost, the storage fence (in cluster mode) and inside it
// the request paths: requests are authenticated and authorized before the fence tells them why it refuses
// them, and a request-path step reads the store only for requests the fence lets through. Innermost of all,
// PUTs are marked while no mutating webhook or policy reads the object an update replaces
// (registry.WithReplacedManagedFieldsUnread).
func (c CompletedConfig) handlerChain(paths *requestpath.Table) func(http.Handler, *genericapiserver.Config) http.Handler {
	build, fence := c.buildChain, c.fence
	unread := mutatingAdmissionAbsent(c.informers)
	return func(api http.Handler, config *genericapiserver.Config) http.Handler {
		handler := paths.Handler(registry.WithReplacedManagedFieldsUnread(api, unread))
		if fence != nil {
			handler = fence.WithFence(handler, []string{tkestack.GroupName, openyurt.GroupName}, Codecs)
		}
		return build(handler, config)
	}
}

// apiGroups builds the storage of every resource and the API groups serving it.
func apiGroups(optsGetter generic.RESTOptionsGetter) ([]*genericapiserver.APIGroupInfo, error) {
	tapps, err := tapp.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	tkestackGroup := genericapiserver.NewDefaultAPIGroupInfo(tkestack.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	tkestackGroup.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{
		"tapps":        tapps.TApp,
		"tapps/status": tapps.Status,
		"tapps/scale":  tapps.Scale,
	}

	yads, err := yurtappdaemon.NewStorage(Scheme, optsGetter)
	if err != nil {
		destroy(&tkestackGroup)
		return nil, err
	}
	pools, err := nodepool.NewStorage(Scheme, optsGetter)
	if err != nil {
		destroy(&tkestackGroup)
		yads.YurtAppDaemon.Destroy()
		return nil, err
	}
	yass, err := yurtappset.NewStorage(Scheme, optsGetter)
	if err != nil {
		destroy(&tkestackGroup)
		yads.YurtAppDaemon.Destroy()
		pools.NodePool.Destroy()
		return nil, err
	}
	openyurtGroup := genericapiserver.NewDefaultAPIGroupInfo(openyurt.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	openyurtGroup.VersionedResourcesStorageMap["v1alpha1"] = map[string]rest.Storage{
		"yurtappdaemons":        yads.YurtAppDaemon,
		"yurtappdaemons/status": yads.Status,
		"nodepools":             pools.NodePool,
		"nodepools/status":      pools.Status,
	}
	// One store serves NodePools in every version; requests are converted through the internal type and
	// stored as StorageVersions says (v1beta2). YurtAppDaemon never had another version, YurtAppSet exists in
	// v1beta1 only (its v1alpha1 was never served here) and is stored in it.
	openyurtGroup.VersionedResourcesStorageMap["v1beta1"] = map[string]rest.Storage{
		"nodepools":          pools.NodePool,
		"nodepools/status":   pools.Status,
		"yurtappsets":        yass.YurtAppSet,
		"yurtappsets/status": yass.Status,
	}
	openyurtGroup.VersionedResourcesStorageMap["v1beta2"] = map[string]rest.Storage{
		"nodepools":        pools.NodePool,
		"nodepools/status": pools.Status,
	}
	return []*genericapiserver.APIGroupInfo{&tkestackGroup, &openyurtGroup}, nil
}

// destroy releases the storage of groups that will not be installed (installed storage is released by the
// server when it stops). A storage served in several versions is released once.
func destroy(groups ...*genericapiserver.APIGroupInfo) {
	done := map[rest.Storage]bool{}
	for _, g := range groups {
		for _, storage := range g.VersionedResourcesStorageMap {
			for _, s := range storage {
				if !done[s] {
					done[s] = true
					s.Destroy()
				}
			}
		}
	}
}

// requestPaths is the table of the request paths of every storage of groups that declares one (every
// requestpath.Provider of their storage maps), under its group, version and resource.
func requestPaths(env requestpath.Env, groups ...*genericapiserver.APIGroupInfo) *requestpath.Table {
	table := requestpath.NewTable(env)
	for _, g := range groups {
		group := g.PrioritizedVersions[0].Group
		for version, storage := range g.VersionedResourcesStorageMap {
			for resource, s := range storage {
				table.Add(schema.GroupVersion{Group: group, Version: version}, resource, s)
			}
		}
	}
	return table
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
