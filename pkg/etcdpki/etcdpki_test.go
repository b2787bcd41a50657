package etcdpki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestIssuedCertificatesChainToTheirCAOnly checks every certificate of a bundle against its CA, its hosts
// and its usages, and against another bundle's CA, which must not accept it.
func TestIssuedCertificatesChainToTheirCAOnly(t *testing.T) {
	hosts := []string{"etcd-0.etcd.ns.svc", "*.etcd.ns.svc", "127.0.0.1"}
	b, err := Issue("test", hosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Issue("other", hosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	roots, otherRoots := x509.NewCertPool(), x509.NewCertPool()
	roots.AppendCertsFromPEM(b.CA)
	otherRoots.AppendCertsFromPEM(other.CA)

	for _, c := range []struct {
		name     string
		cert     []byte
		key      []byte
		usage    x509.ExtKeyUsage
		hostname string
	}{
		{"server as server", b.ServerCert, b.ServerKey, x509.ExtKeyUsageServerAuth, "etcd-0.etcd.ns.svc"},
		{"server as server on a member added later", b.ServerCert, b.ServerKey, x509.ExtKeyUsageServerAuth, "etcd-7.etcd.ns.svc"},
		{"server as server on loopback", b.ServerCert, b.ServerKey, x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{"server as client (etcd's gateway)", b.ServerCert, b.ServerKey, x509.ExtKeyUsageClientAuth, ""},
		{"peer as server", b.PeerCert, b.PeerKey, x509.ExtKeyUsageServerAuth, "etcd-0.etcd.ns.svc"},
		{"peer as client", b.PeerCert, b.PeerKey, x509.ExtKeyUsageClientAuth, ""},
		{"client as client", b.ClientCert, b.ClientKey, x509.ExtKeyUsageClientAuth, ""},
	} {
		if _, err := tls.X509KeyPair(c.cert, c.key); err != nil {
			t.Errorf("%s: the key does not match the certificate: %v", c.name, err)
		}
		cert := parseCert(t, c.cert)
		opts := x509.VerifyOptions{Roots: roots, DNSName: c.hostname, KeyUsages: []x509.ExtKeyUsage{c.usage}}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		opts.Roots = otherRoots
		if _, err := cert.Verify(opts); err == nil {
			t.Errorf("%s: another CA accepts it", c.name)
		}
	}
	client := parseCert(t, b.ClientCert)
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("the client certificate serves as a server certificate")
	}
	if client.Subject.CommonName != ClientCommonName {
		t.Errorf("client common name %q, want %q", client.Subject.CommonName, ClientCommonName)
	}
	// Members accept peers by this name (--peer-cert-allowed-cn): the client certificate must not have it.
	if cn := parseCert(t, b.PeerCert).Subject.CommonName; cn != PeerCommonName("test") || cn == client.Subject.CommonName {
		t.Errorf("peer common name %q, want %q", cn, PeerCommonName("test"))
	}
	if _, err := Issue("x", nil, time.Hour); err == nil {
		t.Error("Issue without hosts succeeded")
	}
}

func TestWriteKeepsKeysPrivate(t *testing.T) {
	b, err := Issue("test-ca", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "etcd")
	// A directory and a key left readable by others, e.g. from an earlier start, are made private.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ClientKeyFile), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{
		CAFile: 0o644, ServerCertFile: 0o644, PeerCertFile: 0o644, ClientCertFile: 0o644,
		ServerKeyFile: 0o600, PeerKeyFile: 0o600, ClientKeyFile: 0o600,
	} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", name, got, want)
		}
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("directory: %v, %v; want mode 0700", info.Mode(), err)
	}
}

func TestDeploymentSecrets(t *testing.T) {
	d := DefaultDeployment
	secrets, err := d.Secrets(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets) != 2 {
		t.Fatalf("%d Secrets, want 2", len(secrets))
	}
	members, client := secrets[0], secrets[1]
	if members.Name != "tapp-etcd-certs" || members.Namespace != "tapp-system" || client.Name != "tapp-apiserver-etcd-client" ||
		client.Type != corev1.SecretTypeTLS {
		t.Errorf("Secrets %s/%s and %s/%s (%s), want the names artifacts/deploy mounts", members.Namespace, members.Name,
			client.Namespace, client.Name, client.Type)
	}
	for _, key := range []string{CAFile, ServerCertFile, ServerKeyFile, PeerCertFile, PeerKeyFile} {
		if len(members.Data[key]) == 0 {
			t.Errorf("the members' Secret lacks %s", key)
		}
	}
	if _, ok := members.Data[ClientKeyFile]; ok {
		t.Error("the members' Secret holds the client key")
	}
	for _, key := range []string{CAFile, corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if len(client.Data[key]) == 0 {
			t.Errorf("the client Secret lacks %s", key)
		}
	}
	if _, ok := client.Data[ServerKeyFile]; ok {
		t.Error("the client Secret holds the server key")
	}
	// Every member's name is in the serving certificate.
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(members.Data[CAFile])
	server := parseCert(t, members.Data[ServerCertFile])
	for _, host := range []string{"tapp-etcd-0.tapp-etcd.tapp-system.svc", "tapp-etcd-2.tapp-etcd.tapp-system.svc",
		"tapp-etcd-client.tapp-system.svc", "127.0.0.1"} {
		if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	// 10-etcd.yaml's --peer-cert-allowed-cn.
	if cn := parseCert(t, members.Data[PeerCertFile]).Subject.CommonName; cn != "tapp-etcd-peer" {
		t.Errorf("peer common name %q, want tapp-etcd-peer", cn)
	}
	d.Members = 0
	if _, err := d.Secrets(time.Hour); err == nil {
		t.Error("Secrets for no member succeeded")
	}
}
