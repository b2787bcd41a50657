package app

import (
	"net"
	"strings"
	"testing"
)

func TestCompleteStandaloneTurnsOffClusterDependencies(t *testing.T) {
	o := NewOptions()
	o.Standalone = true
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
	o := NewOptions()
	o.Recommended.CoreAPI.CoreAPIKubeconfigPath = "/etc/kube/admin.conf"
	o.Recommended.Authorization.RemoteKubeConfigFile = "/etc/kube/authz.conf"
	o.Complete()
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
			o.Complete()
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
