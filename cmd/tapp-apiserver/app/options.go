// Package app holds the flags of tapp-apiserver and turns them into a running server.
package app

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/admission/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/podtemplate"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/quota"
	"github.com/tapp-io/tapp-apiserver/pkg/coexistence"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/manager"
)

// Options are the flags of tapp-apiserver. They go through NewOptions (defaults), AddFlags, Complete (what the
// flags leave open, no I/O), Validate (every flag error at once, before anything is started) and Run (the
// embedded etcd, the server's configuration, serving).
type Options struct {
	Recommended *genericoptions.RecommendedOptions
	// Store names the store and the cluster's record of it, flags the storage subcommand shares. Its etcd,
	// cert-dir and kubeconfig flags are Recommended's Etcd, SecureServing.ServerCert.CertDirectory and
	// CoreAPI.CoreAPIKubeconfigPath.
	Store *StoreOptions

	// Standalone serves without a Kubernetes cluster: loopback only, no authentication, authorization or
	// core-API admission.
	Standalone bool
	// WriteKubeconfig, when set, is where a kubeconfig for this server is written once it serves.
	WriteKubeconfig string
	// AlternateDNS are extra DNS names for the self-signed serving certificate, e.g. <service>.<namespace>.svc.
	AlternateDNS []string
	// APIServiceService is the Service that this server's APIServices point to; in cluster mode an APIService
	// of one of its group-versions that points elsewhere is reported.
	APIServiceService NamespacedName
	// PodTemplateCheckQPS and PodTemplateCheckBurst limit the dry-run pod creates of the podtemplate.PluginName plugin;
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
}

// NewOptions returns the default options.
func NewOptions() *Options {
	o := &Options{
		Recommended: newRecommendedOptions(),
		Controllers: manager.NewOptions(),

		APIServiceService:                   NewNamespacedName(coexistence.DefaultService),
		ShutdownWatchTerminationGracePeriod: 2 * time.Second,
	}
	o.Store = newStoreOptions(o.Recommended.Etcd, &o.Recommended.SecureServing.ServerCert.CertDirectory,
		&o.Recommended.CoreAPI.CoreAPIKubeconfigPath)

	// Object-count quotas: kube-apiserver only proxies our resources, so quota is enforced here.
	quota.Register(o.Recommended.Admission.Plugins)
	// Pod templates of TApps are checked with a dry-run pod create, workload templates of YurtAppDaemons and
	// YurtAppSets with a dry-run Deployment or StatefulSet create; NodePools with nodes cannot be deleted.
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
			config := o.dryRunClientConfig(c.ClientConfig)
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

// dryRunClientConfig is the client configuration of the pod template check's dry runs, from the server's
// client of the core API: a rate limit of its own (the shared external clientset has client-go's default of 5
// requests per second for the whole server; --pod-template-check-qps 0 means none, and kube-apiserver's
// priority and fairness applies), and protobuf both ways, as kube-controller-manager's pod creates are:
// kube-apiserver decodes a protobuf pod without the JSON decoder's pass for unknown fields.
func (o *Options) dryRunClientConfig(core *rest.Config) *rest.Config {
	config := rest.CopyConfig(core)
	config.ContentType = runtime.ContentTypeProtobuf
	config.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	config.QPS, config.Burst = o.PodTemplateCheckQPS, o.PodTemplateCheckBurst
	if config.QPS <= 0 {
		config.QPS = -1
	}
	return config
}

// AddFlags registers the flags: the store's, k8s.io/apiserver's recommended ones apart from those the store
// defines (--etcd-*, --cert-dir and --kubeconfig, the same values with the store's help), and the server's own.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Store.AddFlags(fs)
	recommended := pflag.NewFlagSet("recommended", pflag.ContinueOnError)
	o.Recommended.AddFlags(recommended)
	recommended.VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) == nil {
			fs.AddFlag(f)
		}
	})
	fs.BoolVar(&o.Standalone, "standalone", o.Standalone,
		"Serve without a Kubernetes cluster: bind to loopback only, no authentication, authorization, "+
			"core-API admission or controllers. For local development.")
	fs.BoolVar(&o.Store.EmbeddedEtcd.UnsafeNoFsync, "embedded-etcd-unsafe-no-fsync", o.Store.EmbeddedEtcd.UnsafeNoFsync,
		"Skip fsync in the embedded etcd. Faster, but writes can be lost if the machine crashes. Tests only.")
	fs.StringVar(&o.Store.EmbeddedEtcd.LogLevel, "embedded-etcd-log-level", o.Store.EmbeddedEtcd.LogLevel,
		"Log level of the embedded etcd.")
	fs.StringVar(&o.WriteKubeconfig, "write-kubeconfig", o.WriteKubeconfig,
		"Write a kubeconfig that reaches this server directly to this file once it serves (standalone mode).")
	fs.StringSliceVar(&o.AlternateDNS, "alternate-dns", o.AlternateDNS,
		"Extra DNS names for the self-signed serving certificate, e.g. api.tapp-system.svc.")
	fs.Var(&o.APIServiceService, "apiservice-service",
		"The Service (namespace/name) that this server's APIServices point to. In cluster mode the server warns "+
			"(log and Event) when an APIService of one of its group-versions points elsewhere.")
	fs.Float32Var(&o.PodTemplateCheckQPS, "pod-template-check-qps", o.PodTemplateCheckQPS,
		"Queries per second of the dry-run pod creates that the "+podtemplate.PluginName+" admission plugin sends to "+
			"the cluster; 0 sets no client-side limit (kube-apiserver's priority and fairness still applies).")
	fs.IntVar(&o.PodTemplateCheckBurst, "pod-template-check-burst", o.PodTemplateCheckBurst,
		"Burst of the dry-run pod creates of "+podtemplate.PluginName+", with --pod-template-check-qps.")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period",
		o.ShutdownWatchTerminationGracePeriod,
		"After SIGTERM, how long the server takes at most to end its open watches (clients re-establish them, "+
			"on another replica when there is one). 0 leaves them open until the HTTP server's shutdown timeout.")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration,
		"After SIGTERM, how long the server keeps serving with /readyz failing before it stops accepting "+
			"requests, so that endpoints and load balancers stop routing to it first.")
	o.Controllers.AddFlags(fs)
}

// Complete fills in what the flags leave open, without I/O and without errors (Validate reports those): the
// embedded etcd's certificate directory when --etcd-servers is not set; in cluster mode, --kubeconfig also
// serves for delegated authentication and authorization unless their own kubeconfig flags are set; with
// --standalone, no cluster dependencies and a loopback bind address.
func (o *Options) Complete() {
	o.Store.Complete()
	if !o.Standalone {
		if kubeconfig := o.Recommended.CoreAPI.CoreAPIKubeconfigPath; kubeconfig != "" {
			if o.Recommended.Authentication.RemoteKubeConfigFile == "" {
				o.Recommended.Authentication.RemoteKubeConfigFile = kubeconfig
			}
			if o.Recommended.Authorization.RemoteKubeConfigFile == "" {
				o.Recommended.Authorization.RemoteKubeConfigFile = kubeconfig
			}
		}
		return
	}
	o.Recommended.Authentication = nil
	o.Recommended.Authorization = nil
	o.Recommended.CoreAPI = nil
	o.Recommended.Admission = nil
	o.Recommended.Features.EnablePriorityAndFairness = false
	if o.Recommended.SecureServing.BindAddress == nil || o.Recommended.SecureServing.BindAddress.IsUnspecified() {
		o.Recommended.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	}
}

// Validate checks the completed flags, before anything is started, and reports every error at once.
func (o *Options) Validate() error {
	recommended := *o.Recommended
	recommended.Etcd = nil // checked with the rest of the store
	errs := recommended.Validate()
	errs = append(errs, o.Store.Validate()...)
	errs = append(errs, o.Controllers.Validate()...)
	if o.ShutdownWatchTerminationGracePeriod < 0 || o.ShutdownDelayDuration < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-watch-termination-grace-period and --shutdown-delay-duration must not be negative"))
	}
	if err := o.APIServiceService.Err(); err != nil {
		errs = append(errs, fmt.Errorf("--apiservice-service %w", err))
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
