package app

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
	"github.com/tapp-io/tapp-apiserver/pkg/embeddedetcd"
	"github.com/tapp-io/tapp-apiserver/pkg/storagefence"
)

// etcdPrefix is where objects live in etcd: <prefix>/<group>/<resource>/<namespace>/<name>.
const etcdPrefix = "/registry/tapp-apiserver"

// The help texts of the flags the server shares with the storage subcommand.
const (
	certDirUsage = "The directory where the TLS certs are located: the self-signed serving certificate when " +
		"--tls-cert-file and --tls-private-key-file are not provided, and, without --etcd-servers, the CA and " +
		"certificates the embedded etcd issues at every start (in its etcd subdirectory)."
	kubeconfigUsage = "kubeconfig file pointing at the 'core' kubernetes server, which also holds the record of the " +
		"store (--storage-identity-configmap). Without it, the in-cluster configuration."
	embeddedEtcdDataDirUsage = "Data directory of the embedded etcd that stores objects when --etcd-servers is not " +
		"set. The embedded etcd serves one process alone (the server, or the storage subcommand while the server " +
		"is stopped): TLS with a client certificate it issues at every start into <cert-dir>/etcd."
	storageRecordUsage = "The ConfigMap (namespace/name) that records, in the cluster, the identity of this server's " +
		"store and the highest revision served from it. In cluster mode the server does not serve a store that is " +
		"empty, another one or rewound while this record exists (readiness fails, requests answer 503, the " +
		"controllers wait), so that the garbage collector never deletes workloads whose owners a wrong store " +
		"lacks; see 'tapp-apiserver storage --help'. Standalone mode keeps no record and has no such protection."
	storageCheckPeriodUsage = "How often a serving replica compares its store with the cluster's record and moves " +
		"the record's high-water revision forward (a server that does not serve checks every 2 s)."
)

// newRecommendedOptions returns k8s.io/apiserver's options with the server's storage defaults: objects are
// stored in protobuf (--storage-media-type; NewConfig sets the storage codec from it).
func newRecommendedOptions() *genericoptions.RecommendedOptions {
	codec, err := apiserver.StorageCodec(runtime.ContentTypeJSON)
	if err != nil {
		panic(err) // the scheme's serializers always include JSON
	}
	o := genericoptions.NewRecommendedOptions(etcdPrefix, codec)
	o.Etcd.StorageConfig.EncodeVersioner = apiserver.StorageVersions
	o.Etcd.DefaultStorageMediaType = runtime.ContentTypeProtobuf
	return o
}

// StoreOptions name the server's store and the cluster's record of it. The server and the storage subcommand
// share them: each of their flags is defined here, once, with one help text.
type StoreOptions struct {
	// Etcd is k8s.io/apiserver's storage configuration (--etcd-servers, --etcd-prefix, --etcd-certfile, ...).
	// Without --etcd-servers the objects live in the embedded etcd.
	Etcd *genericoptions.EtcdOptions
	// EmbeddedEtcd configures the embedded etcd. Complete sets its CertDir to <cert-dir>/etcd; its URL is known
	// once it listens (StartEmbeddedEtcd).
	EmbeddedEtcd embeddedetcd.Options
	// CertDir is --cert-dir. In the server it is the serving certificate's directory of k8s.io/apiserver.
	CertDir *string
	// Kubeconfig is --kubeconfig, the cluster that holds the record; empty means the in-cluster configuration.
	// In the server it is k8s.io/apiserver's core API kubeconfig.
	Kubeconfig *string
	// Record is the ConfigMap that records the identity of the store in the cluster (cluster mode).
	Record NamespacedName
	// CheckPeriod is how often a serving replica compares the record with the store.
	CheckPeriod time.Duration

	// runningEtcd is the embedded etcd StartEmbeddedEtcd started, nil before and with --etcd-servers.
	runningEtcd *embeddedetcd.Etcd
}

// newStoreOptions returns the defaults, keeping the values of the storage flags in etcd, the cert-dir flag in
// certDir and the kubeconfig flag in kubeconfig.
func newStoreOptions(etcd *genericoptions.EtcdOptions, certDir, kubeconfig *string) *StoreOptions {
	return &StoreOptions{
		Etcd:         etcd,
		EmbeddedEtcd: embeddedetcd.Options{DataDir: "tapp-apiserver.etcd", LogLevel: "error"},
		CertDir:      certDir,
		Kubeconfig:   kubeconfig,
		Record:       NewNamespacedName(storagefence.DefaultRecord),
		CheckPeriod:  10 * time.Second,
	}
}

// AddFlags registers the flags of the store.
func (s *StoreOptions) AddFlags(fs *pflag.FlagSet) {
	s.Etcd.AddFlags(fs)
	fs.StringVar(&s.EmbeddedEtcd.DataDir, "embedded-etcd-data-dir", s.EmbeddedEtcd.DataDir, embeddedEtcdDataDirUsage)
	fs.StringVar(s.CertDir, "cert-dir", *s.CertDir, certDirUsage)
	fs.StringVar(s.Kubeconfig, "kubeconfig", *s.Kubeconfig, kubeconfigUsage)
	fs.Var(&s.Record, "storage-identity-configmap", storageRecordUsage)
	fs.DurationVar(&s.CheckPeriod, "storage-check-period", s.CheckPeriod, storageCheckPeriodUsage)
}

// embedded says whether the objects live in the embedded etcd: no --etcd-servers.
func (s *StoreOptions) embedded() bool {
	return len(s.Etcd.StorageConfig.Transport.ServerList) == 0
}

// Complete fills in what the flags leave open: the embedded etcd's certificates go to <cert-dir>/etcd.
func (s *StoreOptions) Complete() {
	if s.embedded() && s.EmbeddedEtcd.CertDir == "" && *s.CertDir != "" {
		s.EmbeddedEtcd.CertDir = filepath.Join(*s.CertDir, "etcd")
	}
}

// Validate checks the completed flags of the store, all of them.
func (s *StoreOptions) Validate() []error {
	etcd := s.Etcd
	var errs []error
	if s.embedded() {
		// The embedded etcd's URL is known once it listens: an https URL on loopback stands in for
		// --etcd-servers, so that k8s.io/apiserver checks the other storage flags.
		standIn := *s.Etcd
		standIn.StorageConfig.Transport.ServerList = []string{"https://127.0.0.1:2379"}
		etcd = &standIn
		if t := s.Etcd.StorageConfig.Transport; t.CertFile != "" || t.KeyFile != "" || t.TrustedCAFile != "" {
			errs = append(errs, fmt.Errorf("--etcd-cafile, --etcd-certfile and --etcd-keyfile go with --etcd-servers; "+
				"the embedded etcd issues its own certificates"))
		}
		if *s.CertDir == "" {
			errs = append(errs, fmt.Errorf("the embedded etcd writes its certificates under --cert-dir, which is empty"))
		}
		if s.EmbeddedEtcd.DataDir == "" {
			errs = append(errs, fmt.Errorf("--embedded-etcd-data-dir must be set when --etcd-servers is not"))
		}
		var level zapcore.Level
		if err := level.UnmarshalText([]byte(s.EmbeddedEtcd.LogLevel)); err != nil {
			errs = append(errs, fmt.Errorf("--embedded-etcd-log-level must be debug, info, warn, error, dpanic, "+
				"panic or fatal, not %q", s.EmbeddedEtcd.LogLevel))
		}
	}
	errs = append(errs, etcd.Validate()...)
	if err := s.Record.Err(); err != nil {
		errs = append(errs, fmt.Errorf("--storage-identity-configmap %w", err))
	}
	if s.CheckPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--storage-check-period must be positive"))
	}
	return errs
}

// StartEmbeddedEtcd starts the embedded etcd when --etcd-servers is not set, on a loopback port it picks and
// listens on at once (none of avoidPorts, the ports the process is about to listen on itself), and points the
// storage configuration at it, as --etcd-servers, --etcd-certfile, --etcd-keyfile and --etcd-cafile would: the
// server reaches it as any etcd. It returns what stops it; with --etcd-servers it does nothing.
func (s *StoreOptions) StartEmbeddedEtcd(avoidPorts ...int) (stop func(), err error) {
	if !s.embedded() {
		return func() {}, nil
	}
	opts := s.EmbeddedEtcd
	opts.AvoidPorts = append(opts.AvoidPorts, avoidPorts...)
	etcd, err := embeddedetcd.Start(opts)
	if err != nil {
		return nil, err
	}
	transport := &s.Etcd.StorageConfig.Transport
	transport.ServerList = []string{etcd.ClientURL}
	transport.CertFile, transport.KeyFile, transport.TrustedCAFile = etcd.CertFile, etcd.KeyFile, etcd.CAFile
	s.EmbeddedEtcd.ClientURL = etcd.ClientURL
	s.runningEtcd = etcd
	return func() {
		s.runningEtcd = nil
		etcd.Stop()
		// The options name no etcd again, so that they can start another one.
		transport.ServerList = nil
		transport.CertFile, transport.KeyFile, transport.TrustedCAFile = "", "", ""
		s.EmbeddedEtcd.ClientURL = ""
	}, nil
}
