package app

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompleteStandaloneTurnsOffClusterDependencies(t *testing.T) {
	o := NewOptions()
	o.Standalone = true
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
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
	o := NewOptions()
	o.Recommended.CoreAPI.CoreAPIKubeconfigPath = "/etc/kube/admin.conf"
	o.Recommended.Authorization.RemoteKubeConfigFile = "/etc/kube/authz.conf"
	if err := o.Complete(); err != nil {
		t.Fatal(err)
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

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		modify  func(o *Options)
		wantErr string
	}{
		{
			name:   "standalone on loopback",
			modify: func(o *Options) { o.Standalone = true; o.WriteKubeconfig = "/tmp/k" },
		},
		{
			name: "standalone refuses a public bind address",
			modify: func(o *Options) {
				o.Standalone = true
				o.Recommended.SecureServing.BindAddress = net.ParseIP("10.1.2.3")
			},
			wantErr: "binds to loopback only",
		},
		{
			name:    "write-kubeconfig needs standalone",
			modify:  func(o *Options) { o.WriteKubeconfig = "/tmp/k" },
			wantErr: "--write-kubeconfig is only supported with --standalone",
		},
		{
			name:   "apiservice-service in another namespace",
			modify: func(o *Options) { o.APIServiceService = "platform/tapp" },
		},
		{
			name:    "apiservice-service is namespace/name",
			modify:  func(o *Options) { o.APIServiceService = "tapp-apiserver" },
			wantErr: "--apiservice-service must be namespace/name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:2379"}
			tt.modify(o)
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCompleteWithoutEtcdServersChoosesTheEmbeddedEtcd(t *testing.T) {
	o := NewOptions()
	o.Standalone = true
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	servers := o.Recommended.Etcd.StorageConfig.Transport.ServerList
	if o.EmbeddedEtcd.ClientURL == "" || len(servers) != 1 || servers[0] != o.EmbeddedEtcd.ClientURL {
		t.Fatalf("embedded etcd URL %q, etcd servers %v: want the embedded etcd as the only server",
			o.EmbeddedEtcd.ClientURL, servers)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("the embedded etcd must satisfy the etcd checks: %v", err)
	}
	// The server reaches the embedded etcd through the standard storage configuration, with the client
	// certificate the embedded etcd issues under --cert-dir.
	if !strings.HasPrefix(servers[0], "https://127.0.0.1:") {
		t.Errorf("embedded etcd URL %s, want https on loopback", servers[0])
	}
	transport := o.Recommended.Etcd.StorageConfig.Transport
	certFile, keyFile, caFile := o.EmbeddedEtcd.ClientTLS()
	certDir := filepath.Join(o.Recommended.SecureServing.ServerCert.CertDirectory, "etcd")
	if o.EmbeddedEtcd.CertDir != certDir || transport.CertFile != certFile || transport.KeyFile != keyFile ||
		transport.TrustedCAFile != caFile || filepath.Dir(certFile) != certDir {
		t.Errorf("embedded etcd certificates in %q, storage transport %q %q %q: want the client certificate of %s",
			o.EmbeddedEtcd.CertDir, transport.CertFile, transport.KeyFile, transport.TrustedCAFile, certDir)
	}

	// --etcd-certfile and the others belong to --etcd-servers.
	misplaced := NewOptions()
	misplaced.Recommended.Etcd.StorageConfig.Transport.CertFile = "client.crt"
	if err := misplaced.Complete(); err == nil || !strings.Contains(err.Error(), "go with --etcd-servers") {
		t.Errorf("--etcd-certfile without --etcd-servers: err = %v, want a refusal", err)
	}

	external := NewOptions()
	external.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:2379"}
	if err := external.Complete(); err != nil {
		t.Fatal(err)
	}
	if external.EmbeddedEtcd.ClientURL != "" {
		t.Errorf("--etcd-servers is set, yet the embedded etcd would start on %s", external.EmbeddedEtcd.ClientURL)
	}
}

// Run validates before it starts anything: invalid flags leave no embedded etcd data behind.
func TestRunValidatesBeforeStartingEtcd(t *testing.T) {
	o := NewOptions()
	o.Standalone = true
	o.EmbeddedEtcd.DataDir = filepath.Join(t.TempDir(), "etcd")
	o.Controllers.Workers = 0
	err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "--controller-workers") {
		t.Fatalf("Run = %v, want the validation error of --controller-workers", err)
	}
	if _, err := os.Stat(o.EmbeddedEtcd.DataDir); !os.IsNotExist(err) {
		t.Errorf("the embedded etcd was started before validation: %s exists (%v)", o.EmbeddedEtcd.DataDir, err)
	}
}
