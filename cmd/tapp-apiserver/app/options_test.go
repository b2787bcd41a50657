package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
)

// Complete fills in defaults and has no error to return: flag errors are Validate's. Both assertions stop
// compiling if Complete returns anything.
var (
	_ func(*Options)      = (*Options).Complete
	_ func(*StoreOptions) = (*StoreOptions).Complete
)

// parse returns the options of the server after parsing args as its command line.
func parse(t *testing.T, args ...string) *Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("tapp-apiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return o
}

func TestCompleteStandaloneTurnsOffClusterDependencies(t *testing.T) {
	o := parse(t, "--standalone")
	o.Complete()
	if o.Recommended.Authentication != nil || o.Recommended.Authorization != nil ||
		o.Recommended.CoreAPI != nil || o.Recommended.Admission != nil {
		t.Fatalf("standalone must disable authentication, authorization, core API and admission")
	}
	if o.Recommended.Features.EnablePriorityAndFairness {
		t.Errorf("standalone must disable priority and fairness, which needs a core API client")
	}
	if ip := o.Recommended.SecureServing.BindAddress; !ip.IsLoopback() {
		t.Errorf("standalone bind address = %v, want loopback", ip)
	}
}

func TestCompleteClusterModeReusesKubeconfigForDelegation(t *testing.T) {
	o := parse(t, "--kubeconfig=/etc/kube/admin.conf", "--authorization-kubeconfig=/etc/kube/authz.conf")
	o.Complete()
	if got := o.Recommended.CoreAPI.CoreAPIKubeconfigPath; got != "/etc/kube/admin.conf" {
		t.Errorf("core API kubeconfig = %q, want the --kubeconfig value", got)
	}
	if got := o.Recommended.Authentication.RemoteKubeConfigFile; got != "/etc/kube/admin.conf" {
		t.Errorf("authentication kubeconfig = %q, want the --kubeconfig value", got)
	}
	if got := o.Recommended.Authorization.RemoteKubeConfigFile; got != "/etc/kube/authz.conf" {
		t.Errorf("authorization kubeconfig = %q, an explicit flag must win", got)
	}
	if o.Recommended.Admission == nil {
		t.Errorf("cluster mode must keep the admission chain")
	}
}

// Complete only fills in defaults: it writes no file, picks no port and leaves even invalid flags to
// Validate, which then reports them.
func TestCompleteDoesNoIO(t *testing.T) {
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	o := parse(t, "--standalone", "--cert-dir="+certDir, "--embedded-etcd-data-dir="+filepath.Join(dir, "etcd"),
		"--write-kubeconfig="+filepath.Join(dir, "kubeconfig"),
		"--apiservice-service=not-namespaced", "--etcd-certfile=client.crt")
	o.Complete()

	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("Complete wrote into %s: %v (%v)", dir, entries, err)
	}
	if url := o.Store.EmbeddedEtcd.ClientURL; url != "" {
		t.Errorf("Complete chose the embedded etcd's URL %s; the port is chosen when etcd listens", url)
	}
	if servers := o.Recommended.Etcd.StorageConfig.Transport.ServerList; len(servers) != 0 {
		t.Errorf("Complete set the etcd servers %v before the embedded etcd runs", servers)
	}
	if got, want := o.Store.EmbeddedEtcd.CertDir, filepath.Join(certDir, "etcd"); got != want {
		t.Errorf("embedded etcd certificates in %q, want %q", got, want)
	}
	err := o.Validate()
	for _, want := range []string{"--apiservice-service must be namespace/name", "go with --etcd-servers"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate after Complete = %v, want an error containing %q", err, want)
		}
	}

	external := parse(t, "--etcd-servers=https://etcd:2379")
	external.Complete()
	if external.Store.EmbeddedEtcd.CertDir != "" {
		t.Errorf("--etcd-servers is set, yet the embedded etcd has certificates in %q", external.Store.EmbeddedEtcd.CertDir)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// want holds one part of each error Validate must report, and no other error.
		want []string
	}{
		{name: "defaults: the embedded etcd stands for --etcd-servers"},
		{name: "external etcd with its client certificate", args: []string{"--etcd-servers=https://etcd:2379",
			"--etcd-certfile=c.crt", "--etcd-keyfile=c.key", "--etcd-cafile=ca.crt"}},
		{name: "standalone on loopback", args: []string{"--standalone", "--write-kubeconfig=/tmp/k"}},
		{name: "apiservice-service in another namespace", args: []string{"--apiservice-service=platform/tapp"}},
		{name: "record in another namespace", args: []string{"--storage-identity-configmap=platform/record"}},
		{
			name: "standalone refuses a public bind address",
			args: []string{"--standalone", "--bind-address=10.1.2.3"},
			want: []string{"binds to loopback only, not 10.1.2.3"},
		},
		{
			name: "write-kubeconfig needs standalone",
			args: []string{"--write-kubeconfig=/tmp/k"},
			want: []string{"--write-kubeconfig is only supported with --standalone"},
		},
		{
			name: "apiservice-service is namespace/name",
			args: []string{"--apiservice-service=tapp-apiserver"},
			want: []string{`--apiservice-service must be namespace/name, not "tapp-apiserver"`},
		},
		{
			name: "storage-identity-configmap is namespace/name",
			args: []string{"--storage-identity-configmap=a/b/c"},
			want: []string{`--storage-identity-configmap must be namespace/name, not "a/b/c"`},
		},
		{
			name: "storage-check-period is positive",
			args: []string{"--storage-check-period=0s"},
			want: []string{"--storage-check-period must be positive"},
		},
		{
			name: "pod-template-check-qps is not negative",
			args: []string{"--pod-template-check-qps=-1"},
			want: []string{"--pod-template-check-qps must not be negative"},
		},
		{
			name: "pod-template-check-burst with a qps",
			args: []string{"--pod-template-check-qps=5", "--pod-template-check-burst=0"},
			want: []string{"--pod-template-check-burst must be at least 1"},
		},
		{
			name: "shutdown durations are not negative",
			args: []string{"--shutdown-delay-duration=-1s"},
			want: []string{"must not be negative"},
		},
		{
			name: "etcd client certificate without --etcd-servers",
			args: []string{"--etcd-keyfile=c.key"},
			want: []string{"go with --etcd-servers"},
		},
		{
			name: "the embedded etcd needs --cert-dir",
			args: []string{"--cert-dir="},
			want: []string{"--cert-dir, which is empty"},
		},
		{
			name: "the embedded etcd needs a data directory",
			args: []string{"--embedded-etcd-data-dir="},
			want: []string{"--embedded-etcd-data-dir must be set"},
		},
		{
			name: "embedded etcd log level",
			args: []string{"--embedded-etcd-log-level=loud"},
			want: []string{`--embedded-etcd-log-level must be debug, info, warn, error, dpanic, panic or fatal, not "loud"`},
		},
		{
			name: "k8s.io/apiserver's storage checks run with the embedded etcd",
			args: []string{"--storage-backend=etcd2"},
			want: []string{"--storage-backend invalid"},
		},
		{
			name: "controller workers",
			args: []string{"--controller-workers=0"},
			want: []string{"--controller-workers"},
		},
		{
			name: "every error at once",
			args: []string{"--standalone", "--bind-address=10.1.2.3", "--apiservice-service=x",
				"--storage-identity-configmap=/name", "--storage-check-period=-1s", "--pod-template-check-qps=-2",
				"--shutdown-watch-termination-grace-period=-1s", "--etcd-cafile=ca.crt",
				"--embedded-etcd-log-level=loud", "--controller-workers=0", "--storage-backend=etcd2"},
			want: []string{
				"binds to loopback only",
				"--apiservice-service must be namespace/name",
				"--storage-identity-configmap must be namespace/name",
				"--storage-check-period must be positive",
				"--pod-template-check-qps must not be negative",
				"must not be negative",
				"go with --etcd-servers",
				"--embedded-etcd-log-level must be",
				"--controller-workers",
				"--storage-backend invalid",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parse(t, tt.args...)
			o.Complete()
			err := o.Validate()
			var errs []error
			if err != nil {
				var agg utilerrors.Aggregate
				if !errors.As(err, &agg) {
					t.Fatalf("Validate = %T %v, want an aggregate of every error", err, err)
				}
				errs = agg.Errors()
			}
			if len(errs) != len(tt.want) {
				t.Errorf("Validate reported %d errors, want %d: %v", len(errs), len(tt.want), err)
			}
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Validate = %v, want an error containing %q", err, want)
				}
			}
		})
	}
}

func TestParseNamespacedName(t *testing.T) {
	tests := []struct {
		in      string
		ns, n   string
		invalid bool
	}{
		{in: "tapp-system/tapp-apiserver", ns: "tapp-system", n: "tapp-apiserver"},
		{in: "a/b", ns: "a", n: "b"},
		{in: "", invalid: true},
		{in: "name", invalid: true},
		{in: "/name", invalid: true},
		{in: "namespace/", invalid: true},
		{in: "/", invalid: true},
		{in: "a/b/c", invalid: true},
	}
	for _, tt := range tests {
		got, err := ParseNamespacedName(tt.in)
		if tt.invalid {
			if err == nil || !strings.Contains(err.Error(), "must be namespace/name") {
				t.Errorf("ParseNamespacedName(%q) = %v, %v; want an error", tt.in, got, err)
			}
			continue
		}
		if err != nil || got.Namespace != tt.ns || got.Name != tt.n {
			t.Errorf("ParseNamespacedName(%q) = %v, %v; want %s/%s", tt.in, got, err, tt.ns, tt.n)
		}
	}
}

// The flag value is parsed once, when set: Set never fails, the parsed value and the error are kept for the
// server and for Validate.
func TestNamespacedNameFlag(t *testing.T) {
	o := NewOptions()
	if got := o.APIServiceService.Value(); got.String() != "tapp-system/tapp-apiserver" || o.APIServiceService.Err() != nil {
		t.Errorf("default --apiservice-service = %v (%v)", got, o.APIServiceService.Err())
	}
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	o.AddFlags(fs)
	if f := fs.Lookup("apiservice-service"); f.DefValue != "tapp-system/tapp-apiserver" || f.Value.Type() != "string" {
		t.Errorf("--apiservice-service shows default %q, type %q", f.DefValue, f.Value.Type())
	}
	if err := fs.Parse([]string{"--apiservice-service=platform/api", "--storage-identity-configmap=broken"}); err != nil {
		t.Fatalf("a flag that is not namespace/name must fail in Validate, with the others, not in parsing: %v", err)
	}
	if got := o.APIServiceService.Value(); got.Namespace != "platform" || got.Name != "api" || o.APIServiceService.Err() != nil {
		t.Errorf("--apiservice-service=platform/api parsed as %v (%v)", got, o.APIServiceService.Err())
	}
	if o.Store.Record.Err() == nil || o.Store.Record.String() != "broken" {
		t.Errorf("--storage-identity-configmap=broken: value %q, error %v", o.Store.Record.String(), o.Store.Record.Err())
	}
	var zero NamespacedName
	if zero.Err() == nil {
		t.Error("a namespace/name flag never set must not be valid")
	}
}

// Run validates before it starts anything: invalid flags leave no embedded etcd data behind, and every error
// is reported.
func TestRunValidatesBeforeStartingEtcd(t *testing.T) {
	o := NewOptions()
	o.Standalone = true
	dir := t.TempDir()
	o.Store.EmbeddedEtcd.DataDir = filepath.Join(dir, "etcd")
	o.Recommended.SecureServing.ServerCert.CertDirectory = filepath.Join(dir, "certs")
	o.Controllers.Workers = 0
	o.Store.CheckPeriod = 0
	err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "--controller-workers") || !strings.Contains(err.Error(), "--storage-check-period") {
		t.Fatalf("Run = %v, want the validation errors of --controller-workers and --storage-check-period", err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("Run started something before validation: %s holds %v (%v)", dir, entries, err)
	}
}

// Without --etcd-servers the embedded etcd is started on a port it listens on at once, and the server reaches
// it through the standard storage configuration, with the client certificate it issued under --cert-dir.
func TestStartEmbeddedEtcdPointsTheStorageAtIt(t *testing.T) {
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	o := parse(t, "--standalone", "--cert-dir="+certDir, "--embedded-etcd-data-dir="+filepath.Join(dir, "etcd"),
		"--embedded-etcd-unsafe-no-fsync", "--secure-port=6443")
	o.Complete()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	stop, err := o.Store.StartEmbeddedEtcd(o.Recommended.SecureServing.BindPort)
	if err != nil {
		t.Fatal(err)
	}
	transport := o.Recommended.Etcd.StorageConfig.Transport
	if len(transport.ServerList) != 1 || transport.ServerList[0] != o.Store.EmbeddedEtcd.ClientURL ||
		!strings.HasPrefix(transport.ServerList[0], "https://127.0.0.1:") || transport.ServerList[0] == "https://127.0.0.1:6443" {
		t.Errorf("etcd servers %v, embedded etcd on %q: want the embedded etcd, on loopback, not on --secure-port",
			transport.ServerList, o.Store.EmbeddedEtcd.ClientURL)
	}
	certFile, keyFile, caFile := o.Store.EmbeddedEtcd.ClientTLS()
	if transport.CertFile != certFile || transport.KeyFile != keyFile || transport.TrustedCAFile != caFile ||
		filepath.Dir(certFile) != filepath.Join(certDir, "etcd") {
		t.Errorf("storage transport %q %q %q: want the client certificate of %s", transport.CertFile,
			transport.KeyFile, transport.TrustedCAFile, filepath.Join(certDir, "etcd"))
	}
	if _, err := os.Stat(certFile); err != nil {
		t.Errorf("the client certificate was not written: %v", err)
	}
	stop()
	if servers := o.Recommended.Etcd.StorageConfig.Transport.ServerList; len(servers) != 0 || o.Store.EmbeddedEtcd.ClientURL != "" {
		t.Errorf("after stop the options still name the stopped etcd: %v %q", servers, o.Store.EmbeddedEtcd.ClientURL)
	}

	external := parse(t, "--etcd-servers=https://etcd:2379")
	external.Complete()
	stop, err = external.Store.StartEmbeddedEtcd()
	if err != nil || external.Store.EmbeddedEtcd.ClientURL != "" {
		t.Errorf("with --etcd-servers an embedded etcd was started: %q, %v", external.Store.EmbeddedEtcd.ClientURL, err)
	}
	stop()
}

// TestDryRunClientConfig: the dry runs speak protobuf, read JSON answers too, have the check's own rate limit
// (none for --pod-template-check-qps 0), and leave the server's client configuration as it was.
func TestDryRunClientConfig(t *testing.T) {
	for _, tc := range []struct {
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{qps: 0, burst: 0, wantQPS: -1, wantBurst: 0},
		{qps: 50, burst: 100, wantQPS: 50, wantBurst: 100},
	} {
		o := NewOptions()
		o.PodTemplateCheckQPS, o.PodTemplateCheckBurst = tc.qps, tc.burst
		core := &rest.Config{Host: "https://127.0.0.1:6443", QPS: 5, Burst: 10}
		got := o.dryRunClientConfig(core)
		if got.ContentType != "application/vnd.kubernetes.protobuf" || got.AcceptContentTypes != "application/vnd.kubernetes.protobuf,application/json" {
			t.Errorf("content types %q, accept %q; want protobuf, accepting JSON too", got.ContentType, got.AcceptContentTypes)
		}
		if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst {
			t.Errorf("qps %v burst %d, want %v and %d", got.QPS, got.Burst, tc.wantQPS, tc.wantBurst)
		}
		if got.Host != core.Host || core.ContentType != "" || core.QPS != 5 {
			t.Errorf("host %q, server's config after %+v: want the same host and the server's config unchanged", got.Host, core)
		}
	}
}

// TestWatchCachedResources: the storage on the embedded etcd keeps a watch cache exactly where k8s.io/apiserver's
// own would, given --watch-cache and --watch-cache-sizes.
func TestWatchCachedResources(t *testing.T) {
	tapps := schema.GroupResource{Group: "apps.tkestack.io", Resource: "tapps"}
	pools := schema.GroupResource{Group: "apps.openyurt.io", Resource: "nodepools"}
	for _, c := range []struct {
		flags        []string
		tapps, pools bool
	}{
		{nil, true, true},
		{[]string{"--watch-cache=false"}, false, false},
		{[]string{"--watch-cache-sizes=tapps.apps.tkestack.io#0"}, false, true},
		{[]string{"--watch-cache-sizes=tapps.apps.tkestack.io#100"}, true, true},
		{[]string{"--watch-cache=false", "--watch-cache-sizes=nodepools.apps.openyurt.io#100"}, false, false},
	} {
		cached, err := watchCachedResources(parse(t, c.flags...).Recommended.Etcd)
		if err != nil {
			t.Fatalf("%q: %v", c.flags, err)
		}
		if cached(tapps) != c.tapps || cached(pools) != c.pools {
			t.Errorf("%q: tapps cached %v, nodepools cached %v; want %v, %v", c.flags, cached(tapps), cached(pools), c.tapps, c.pools)
		}
	}
	if _, err := watchCachedResources(parse(t, "--watch-cache-sizes=tapps.apps.tkestack.io#many").Recommended.Etcd); err == nil {
		t.Error("a size that is no number was accepted")
	}
}
