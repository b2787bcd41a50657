package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/admission/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/podtemplate"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/quota"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/manager"
	"github.com/tapp-io/tapp-apiserver/pkg/frontproxy"
	"github.com/tapp-io/tapp-apiserver/pkg/resourcestorage"
	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

// NewCommand returns the tapp-apiserver command.
func NewCommand(ctx context.Context, o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tapp-apiserver",
		Short: "Serve TApp, YurtAppDaemon, YurtAppSet and NodePool as an aggregated Kubernetes API",
		Long: "tapp-apiserver serves apps.tkestack.io/v1 TApps, apps.openyurt.io/v1alpha1 YurtAppDaemons, " +
			"apps.openyurt.io/v1beta1 YurtAppSets and apps.openyurt.io/v1beta2, v1beta1 and v1alpha1 NodePools from its own etcd. Register it with a cluster " +
			"through APIServices, or run it with --standalone for local development. In cluster mode it records " +
			"its store's identity in the cluster and does not serve an empty, other or rewound store (see " +
			"`tapp-apiserver storage --help`); standalone mode records nothing and has no such protection.",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	utilfeature.DefaultMutableFeatureGate.AddFlag(cmd.Flags())
	cmd.AddCommand(NewMigrateCommand(ctx))
	cmd.AddCommand(NewStorageCommand(ctx))
	cmd.AddCommand(NewMigrateStorageCommand(ctx))
	cmd.AddCommand(NewEtcdCertsCommand(ctx))
	return cmd
}

// Run completes and validates the options, then starts the embedded etcd (without --etcd-servers) and the
// server, and blocks until ctx is done.
func Run(ctx context.Context, o *Options) error {
	o.Complete()
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Standalone {
		klog.InfoS("Standalone mode: no admission chain, so these admission plugins are skipped",
			"plugins", []string{podtemplate.PluginName, nodepool.PluginName, quota.PluginName})
	}
	// The embedded etcd never takes --secure-port, which the server may not listen on yet.
	stopEtcd, err := o.Store.StartEmbeddedEtcd(o.Recommended.SecureServing.BindPort)
	if err != nil {
		return err
	}
	defer stopEtcd()
	if etcd := o.Store.EmbeddedEtcd; etcd.ClientURL != "" {
		klog.InfoS("Started embedded etcd", "dataDir", etcd.DataDir, "url", etcd.ClientURL, "certDir", etcd.CertDir)
	}
	config, err := NewConfig(o)
	if err != nil {
		return err
	}
	var (
		kubeConfig *rest.Config
		fence      *storagefence.Fence
	)
	if !o.Standalone {
		if kubeConfig, err = clusterConfig(*o.Store.Kubeconfig); err != nil {
			return err
		}
		// The server does not serve a store that is not the cluster's (docs/install.md).
		var closeFence func()
		if fence, closeFence, err = newStorageFence(ctx, o.Store, kubeConfig); err != nil {
			return err
		}
		defer closeFence()
		config.StorageFence = fence
	}
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	if o.Standalone {
		klog.InfoS("Standalone mode: controllers are not started, and no storage identity is recorded")
	} else {
		// A controller that cannot start, or the loss of the controllers' Lease, stops the server: the process
		// exits non-zero and is restarted, as kube-controller-manager is, instead of serving without
		// controllers or running half-stopped ones.
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		server.GenericAPIServer.AddPostStartHookOrDie("start-controllers", func(hook genericapiserver.PostStartHookContext) error {
			go func() {
				// The controllers run only while the server serves its store.
				run := func(ctx context.Context) error {
					return manager.Run(ctx, o.Controllers, kubeConfig, hook.LoopbackClientConfig)
				}
				if err := fence.RunWhileServing(ctx, run); err != nil {
					klog.ErrorS(err, "Controllers failed: stopping the server")
					stop(fmt.Errorf("%w: %w", errControllers, err))
				}
			}()
			return nil
		})
	}
	if o.WriteKubeconfig != "" {
		serving := config.GenericConfig.SecureServing
		server.GenericAPIServer.AddPostStartHookOrDie("write-kubeconfig", func(genericapiserver.PostStartHookContext) error {
			return writeKubeconfig(o.WriteKubeconfig, serving)
		})
	}
	if err := server.GenericAPIServer.PrepareRun().RunWithContext(ctx); err != nil {
		return err
	}
	if cause := context.Cause(ctx); errors.Is(cause, errControllers) {
		return cause
	}
	return nil
}

// errControllers is why the server stopped when its controllers failed.
var errControllers = errors.New("the embedded controllers failed")

// clusterConfig is the client configuration of the cluster the controllers work in: --kubeconfig, else the
// in-cluster configuration.
func clusterConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	config, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("the controllers need --kubeconfig or an in-cluster configuration: %w", err)
	}
	return config, nil
}

// NewConfig turns the completed and validated options into a server configuration; without --etcd-servers,
// the embedded etcd must run (Options.Store.StartEmbeddedEtcd), its URL is the storage's. It writes the
// self-signed serving certificate when none is given.
func NewConfig(o *Options) (*apiserver.Config, error) {
	if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts(
		"localhost", o.AlternateDNS, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed certificates: %w", err)
	}
	config := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	namer := openapi.NewDefinitionNamer(apiserver.Scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(apiserver.OpenAPIDefinitions, namer)
	config.OpenAPIConfig.Info.Title = "tapp-apiserver"
	config.OpenAPIConfig.Info.Version = "v1"
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(apiserver.OpenAPIDefinitions, namer)
	config.OpenAPIV3Config.Info.Title = "tapp-apiserver"
	config.OpenAPIV3Config.Info.Version = "v1"
	config.EffectiveVersion = utilcompatibility.DefaultBuildEffectiveVersion()
	codec, err := apiserver.StorageCodec(o.Recommended.Etcd.DefaultStorageMediaType)
	if err != nil {
		return nil, err
	}
	o.Recommended.Etcd.StorageConfig.Codec = codec
	if err := o.Recommended.ApplyTo(config); err != nil {
		return nil, err
	}
	watchCache, err := watchCachedResources(o.Recommended.Etcd)
	if err != nil {
		return nil, err
	}
	if etcd := o.Store.runningEtcd; etcd != nil {
		// The resources' storage calls the embedded etcd in-process; health checks and the fence still
		// reach it as any etcd.
		config.RESTOptionsGetter = resourcestorage.New(etcd.InProcessClient).RESTOptionsGetter(config.RESTOptionsGetter, watchCache)
	} else {
		// The library's storages on --etcd-servers; their watch caches share the parts objects repeat.
		config.RESTOptionsGetter = resourcestorage.InterningWatchCache(config.RESTOptionsGetter, watchCache)
	}
	// Requests through the aggregator: the front proxy's certificate is checked once, not on every request.
	config.Authentication.Authenticator = frontproxy.New(config.Authentication.RequestHeaderConfig, config.Authentication.Authenticator)
	config.ShutdownWatchTerminationGracePeriod = o.ShutdownWatchTerminationGracePeriod
	config.ShutdownDelayDuration = o.ShutdownDelayDuration
	return &apiserver.Config{GenericConfig: config, APIServiceTarget: o.APIServiceService.Value()}, nil
}

// watchCachedResources says which resources k8s.io/apiserver keeps a watch cache of, given --watch-cache and
// --watch-cache-sizes: all but those sized 0 while the cache is on.
func watchCachedResources(etcd *genericoptions.EtcdOptions) (func(schema.GroupResource) bool, error) {
	sizes, err := genericoptions.ParseWatchCacheSizes(etcd.WatchCacheSizes)
	if err != nil {
		return nil, err
	}
	return func(resource schema.GroupResource) bool {
		size, sized := sizes[resource]
		return etcd.EnableWatchCache && (!sized || size > 0)
	}, nil
}

// writeKubeconfig writes a kubeconfig that reaches the server on its loopback address and trusts its
// serving certificate.
func writeKubeconfig(path string, serving *genericapiserver.SecureServingInfo) error {
	host := serving.Listener.Addr().String()
	cluster := &clientcmdapi.Cluster{Server: "https://" + host}
	if serving.Cert != nil {
		if cert, _ := serving.Cert.CurrentCertKeyContent(); len(cert) > 0 {
			cluster.CertificateAuthorityData = cert
		}
	}
	if len(cluster.CertificateAuthorityData) == 0 {
		cluster.InsecureSkipTLSVerify = true
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["tapp-apiserver"] = cluster
	// The token only keeps kubectl from prompting for credentials: standalone mode authenticates nobody.
	cfg.AuthInfos["standalone"] = &clientcmdapi.AuthInfo{Token: "standalone"}
	cfg.Contexts["tapp-apiserver"] = &clientcmdapi.Context{Cluster: "tapp-apiserver", AuthInfo: "standalone", Namespace: "default"}
	cfg.CurrentContext = "tapp-apiserver"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	klog.InfoS("Wrote kubeconfig", "path", path, "server", cluster.Server)
	return nil
}
