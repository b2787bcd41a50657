// Package app holds the flags of tapp-apiserver and turns them into a running server.
package app

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/tapp-io/tapp-apiserver/pkg/admission/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/podtemplate"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/quota"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/coexistence"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/manager"
	"github.com/tapp-io/tapp-apiserver/pkg/embeddedetcd"
	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

// etcdPrefix is where objects live in etcd: <prefix>/<group>/<resource>/<namespace>/<name>.
const etcdPrefix = "/registry/tapp-apiserver"

// Options are the flags of tapp-apiserver.
type Options struct {
	Recommended *genericoptions.RecommendedOptions

	// Standalone serves without a Kubernetes cluster: loopback only, no authentication, authorization or
	// core-API admission.
	Standalone bool
	// EmbeddedEtcd is used when no --etcd-servers are given.
	EmbeddedEtcd embeddedetcd.Options
	// WriteKubeconfig, when set, is where a kubeconfig for this server is written once it serves.
	WriteKubeconfig string
	// AlternateDNS are extra DNS names for the self-signed serving certificate, e.g. <service>.<namespace>.svc.
	AlternateDNS []string
	// APIServiceService is the Service, namespace/name, that this server's APIServices point to; in cluster
	// mode an APIService of one of its group-versions that points elsewhere is reported.
	APIServiceService string
	// PodTemplateCheckQPS and PodTemplateCheckBurst limit the dry-run pod creates of TAppPodTemplateDryRun;
	// a QPS of 0 sets no client-side limit.
	PodTemplateCheckQPS   float32
	PodTemplateCheckBurst int
	// Controllers configures the controllers embedded in cluster mode.
	Controllers *manager.Options
	// ShutdownWatchTerminationGracePeriod bounds how long a stopping server takes to end its open watches
	// (it ends them, clients re-establish them elsewhere); ShutdownDelayDuration keeps serving, with /readyz
	// failing, for that long after SIGTERM so that load balancers and endpoints stop sending requests first.
	// Both are k8s.io/apiserver's graceful termination, with kube-apiserver's flag names.
	ShutdownWatchTerminationGracePeriod time.Duration
	ShutdownDelayDuration               time.Duration
	// StorageRecord is the ConfigMap, namespace/name, that records the identity of the store in the cluster
	// (cluster mode); StorageCheckPeriod is how often a serving replica compares it with the store.
	StorageRecord      string
	StorageCheckPeriod time.Duration
}

// NewOptions returns the default options.
func NewOptions() *Options {
	o := &Options{
		Recommended: genericoptions.NewRecommendedOptions(etcdPrefix,
			apiserver.Codecs.LegacyCodec(apiserver.StorageVersions...)),
		EmbeddedEtcd: embeddedetcd.Options{DataDir: "tapp-apiserver.etcd"},
		Controllers:  manager.NewOptions(),

		APIServiceService:                   coexistence.DefaultService.String(),
		ShutdownWatchTerminationGracePeriod: 2 * time.Second,
		StorageRecord:                       storagefence.DefaultRecord.String(),
		StorageCheckPeriod:                  10 * time.Second,
	}
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = apiserver.StorageVersions

	// Object-count quotas: kube-apiserver only proxies our resources, so quota is enforced here.
	quota.Register(o.Recommended.Admission.Plugins)
	// Pod templates of TApps are checked with a dry-run pod create, workload templates of YurtAppDaemons with
	// a dry-run Deployment or StatefulSet create; NodePools with nodes cannot be deleted.
	// The dry runs go through a client of their own (see ExtraAdmissionInitializers below). Both run before
	// ResourceQuota, which charges usage when it admits and must therefore come last.
	podtemplate.Register(o.Recommended.Admission.Plugins)
	nodepool.Register(o.Recommended.Admission.Plugins)
	o.Recommended.Admission.RecommendedPluginOrder = append(o.Recommended.Admission.RecommendedPluginOrder,
		podtemplate.PluginName, nodepool.PluginName, quota.PluginName)
	o.Recommended.ExtraAdmissionInitializers = func(c *genericapiserver.RecommendedConfig) ([]admission.PluginInitializer, error) {
		quotaInitializer, err := quota.NewInitializer(c.LoopbackClientConfig)
		if err != nil {
			return nil, err
		}
		initializers := []admission.PluginInitializer{quotaInitializer}
		if c.ClientConfig != nil {
			// The dry runs get a client and a rate limit of their own (the shared external clientset has
			// client-go's default of 5 requests per second for the whole server).
			config := rest.CopyConfig(c.ClientConfig)
			config.QPS, config.Burst = o.PodTemplateCheckQPS, o.PodTemplateCheckBurst
			if config.QPS <= 0 {
				config.QPS = -1 // no client-side limit: kube-apiserver's priority and fairness applies
			}
			client, err := kubernetes.NewForConfig(config)
			if err != nil {
				return nil, err
			}
			initializers = append(initializers, podtemplate.NewInitializer(client))
		}
		return initializers, nil
	}
	return o
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Recommended.AddFlags(fs)
	fs.BoolVar(&o.Standalone, "standalone", o.Standalone,
		"Serve without a Kubernetes cluster: bind to loopback only, no authentication, authorization, "+
			"core-API admission or controllers. For local development.")
	fs.StringVar(&o.EmbeddedEtcd.DataDir, "embedded-etcd-data-dir", o.EmbeddedEtcd.DataDir,
		"Data directory of the embedded etcd that stores objects when --etcd-servers is not set. The embedded "+
			"etcd serves the server alone: TLS with a client certificate it issues at every start into <cert-dir>/etcd.")
	fs.BoolVar(&o.EmbeddedEtcd.UnsafeNoFsync, "embedded-etcd-unsafe-no-fsync", o.EmbeddedEtcd.UnsafeNoFsync,
		"Skip fsync in the embedded etcd. Faster, but writes can be lost if the machine crashes. Tests only.")
	fs.StringVar(&o.EmbeddedEtcd.LogLevel, "embedded-etcd-log-level", "error", "Log level of the embedded etcd.")
	fs.StringVar(&o.WriteKubeconfig, "write-kubeconfig", o.WriteKubeconfig,
		"Write a kubeconfig that reaches this server directly to this file once it serves (standalone mode).")
	fs.StringSliceVar(&o.AlternateDNS, "alternate-dns", o.AlternateDNS,
		"Extra DNS names for the self-signed serving certificate, e.g. api.tapp-system.svc.")
	fs.StringVar(&o.APIServiceService, "apiservice-service", o.APIServiceService,
		"The Service (namespace/name) that this server's APIServices point to. In cluster mode the server warns "+
			"(log and Event) when an APIService of one of its group-versions points elsewhere.")
	fs.Float32Var(&o.PodTemplateCheckQPS, "pod-template-check-qps", o.PodTemplateCheckQPS,
		"Queries per second of the dry-run pod creates that the TAppPodTemplateDryRun admission plugin sends to "+
			"the cluster; 0 sets no client-side limit (kube-apiserver's priority and fairness still applies).")
	fs.IntVar(&o.PodTemplateCheckBurst, "pod-template-check-burst", o.PodTemplateCheckBurst,
		"Burst of the dry-run pod creates of TAppPodTemplateDryRun, with --pod-template-check-qps.")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period",
		o.ShutdownWatchTerminationGracePeriod,
		"After SIGTERM, how long the server takes at most to end its open watches (clients re-establish them, "+
			"on another replica when there is one). 0 leaves them open until the HTTP server's shutdown timeout.")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration,
		"After SIGTERM, how long the server keeps serving with /readyz failing before it stops accepting "+
			"requests, so that endpoints and load balancers stop routing to it first.")
	o.Controllers.AddFlags(fs)
	o.addStorageFlags(fs)
}

// addStorageFlags registers the flags of the storage fence, which the storage subcommands share.
func (o *Options) addStorageFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.StorageRecord, "storage-identity-configmap", o.StorageRecord,
		"The ConfigMap (namespace/name) that records, in the cluster, the identity of this server's store and the "+
			"highest revision served from it. In cluster mode the server does not serve a store that is empty, "+
			"another one or rewound while this record exists (readiness fails, requests answer 503, the controllers "+
			"wait), so that the garbage collector never deletes workloads whose owners a wrong store lacks; see "+
			"'tapp-apiserver storage --help'. Standalone mode keeps no record and has no such protection.")
	fs.DurationVar(&o.StorageCheckPeriod, "storage-check-period", o.StorageCheckPeriod,
		"How often a serving replica compares its store with the cluster's record and moves the record's "+
			"high-water revision forward (a server that does not serve checks every 2 s).")
}

// Complete fills in what the flags leave open: without --etcd-servers, the loopback https URL of the
// embedded etcd (started by Run after Validate) and the client certificate it issues into <cert-dir>/etcd; with --standalone, no cluster dependencies. In cluster mode, --kubeconfig
// also serves for delegated authentication and authorization unless their own kubeconfig flags are set.
func (o *Options) Complete() error {
	if transport := &o.Recommended.Etcd.StorageConfig.Transport; len(transport.ServerList) == 0 {
		if transport.CertFile != "" || transport.KeyFile != "" || transport.TrustedCAFile != "" {
			return fmt.Errorf("--etcd-cafile, --etcd-certfile and --etcd-keyfile go with --etcd-servers; " +
				"the embedded etcd issues its own certificates")
		}
		certDir := o.Recommended.SecureServing.ServerCert.CertDirectory
		if certDir == "" {
			return fmt.Errorf("the embedded etcd writes its certificates under --cert-dir, which is empty")
		}
		url, err := embeddedetcd.FreeClientURL(o.Recommended.SecureServing.BindPort)
		if err != nil {
			return fmt.Errorf("embedded etcd: %w", err)
		}
		o.EmbeddedEtcd.ClientURL = url
		o.EmbeddedEtcd.CertDir = filepath.Join(certDir, "etcd")
		// The server reaches it as any etcd: through the storage configuration of --etcd-servers,
		// --etcd-certfile, --etcd-keyfile and --etcd-cafile.
		transport.ServerList = []string{url}
		transport.CertFile, transport.KeyFile, transport.TrustedCAFile = o.EmbeddedEtcd.ClientTLS()
	}
	if !o.Standalone {
		if kubeconfig := o.Recommended.CoreAPI.CoreAPIKubeconfigPath; kubeconfig != "" {
			if o.Recommended.Authentication.RemoteKubeConfigFile == "" {
				o.Recommended.Authentication.RemoteKubeConfigFile = kubeconfig
			}
			if o.Recommended.Authorization.RemoteKubeConfigFile == "" {
				o.Recommended.Authorization.RemoteKubeConfigFile = kubeconfig
			}
		}
		return nil
	}
	o.Recommended.Authentication = nil
	o.Recommended.Authorization = nil
	o.Recommended.CoreAPI = nil
	o.Recommended.Admission = nil
	klog.InfoS("Standalone mode: no admission chain, so these admission plugins are skipped",
		"plugins", []string{podtemplate.PluginName, nodepool.PluginName, quota.PluginName})
	o.Recommended.Features.EnablePriorityAndFairness = false
	if o.Recommended.SecureServing.BindAddress == nil || o.Recommended.SecureServing.BindAddress.IsUnspecified() {
		o.Recommended.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	}
	return nil
}

// Validate checks the completed flags, before anything is started.
func (o *Options) Validate() error {
	errs := o.Recommended.Validate()
	errs = append(errs, o.Controllers.Validate()...)
	if o.ShutdownWatchTerminationGracePeriod < 0 || o.ShutdownDelayDuration < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-watch-termination-grace-period and --shutdown-delay-duration must not be negative"))
	}
	if _, err := o.apiServiceTarget(); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.storageRecord(); err != nil {
		errs = append(errs, err)
	}
	if o.StorageCheckPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--storage-check-period must be positive"))
	}
	if o.PodTemplateCheckQPS < 0 {
		errs = append(errs, fmt.Errorf("--pod-template-check-qps must not be negative"))
	}
	if o.PodTemplateCheckQPS > 0 && o.PodTemplateCheckBurst < 1 {
		errs = append(errs, fmt.Errorf("--pod-template-check-burst must be at least 1 when --pod-template-check-qps is set"))
	}
	if o.Standalone {
		if ip := o.Recommended.SecureServing.BindAddress; ip != nil && !ip.IsLoopback() {
			errs = append(errs, fmt.Errorf("--standalone serves without authentication and binds to loopback only, not %s", ip))
		}
		if o.Recommended.SecureServing.Listener != nil {
			if addr, ok := o.Recommended.SecureServing.Listener.Addr().(*net.TCPAddr); ok && !addr.IP.IsLoopback() {
				errs = append(errs, fmt.Errorf("--standalone listens on loopback only, not %s", addr))
			}
		}
	} else if o.WriteKubeconfig != "" {
		errs = append(errs, fmt.Errorf("--write-kubeconfig is only supported with --standalone"))
	}
	return utilerrors.NewAggregate(errs)
}

// storageRecord parses --storage-identity-configmap.
func (o *Options) storageRecord() (types.NamespacedName, error) {
	namespace, name, ok := strings.Cut(o.StorageRecord, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--storage-identity-configmap must be namespace/name, not %q", o.StorageRecord)
	}
	return types.NamespacedName{Namespace: namespace, Name: name}, nil
}

// apiServiceTarget parses --apiservice-service.
func (o *Options) apiServiceTarget() (types.NamespacedName, error) {
	namespace, name, ok := strings.Cut(o.APIServiceService, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--apiservice-service must be namespace/name, not %q", o.APIServiceService)
	}
	return types.NamespacedName{Namespace: namespace, Name: name}, nil
}
