//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

// TestEtcdRefusesClientsWithoutCertificate checks every etcd of the local cluster, kube-apiserver's and
// tapp-apiserver's embedded one: a client with the client certificate reads and writes, and a client without
// it, with a certificate of another CA, or speaking plain HTTP, is refused.
func TestEtcdRefusesClientsWithoutCertificate(t *testing.T) {
	t.Parallel()
	serverEtcdURL, err := cluster.ServerEtcdURL()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct{ name, url, certDir string }{
		{"kube-apiserver's etcd", cluster.EtcdURL, cluster.EtcdCertDir()},
		{"tapp-apiserver's embedded etcd", serverEtcdURL, cluster.ServerEtcdCertDir},
	} {
		t.Run(e.name, func(t *testing.T) {
			checkEtcdRefusesStrangers(t, e.url, e.certDir)
		})
	}
	// kube-apiserver's etcd has a peer port; the embedded etcd has none (pkg/embeddedetcd tests that).
	t.Run("kube-apiserver's etcd peer port", func(t *testing.T) {
		dir := cluster.EtcdCertDir()
		checkPeerRefusesStrangers(t, cluster.EtcdPeerURL, filepath.Join(dir, etcdpki.CAFile),
			filepath.Join(dir, etcdpki.PeerCertFile), filepath.Join(dir, etcdpki.PeerKeyFile),
			loadCert(t, filepath.Join(dir, etcdpki.ClientCertFile), filepath.Join(dir, etcdpki.ClientKeyFile)))
	})
}

// checkEtcdRefusesStrangers checks that the etcd at url, whose certificates (pkg/etcdpki names) are in
// certDir, serves the client certificate and refuses everyone else, for writes and reads alike.
func checkEtcdRefusesStrangers(t *testing.T, url, certDir string) {
	t.Helper()
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("etcd URL %s, want https", url)
	}
	ca, err := os.ReadFile(filepath.Join(certDir, etcdpki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("no CA certificate in %s", certDir)
	}
	clientCert := loadCert(t, filepath.Join(certDir, etcdpki.ClientCertFile), filepath.Join(certDir, etcdpki.ClientKeyFile))
	other, err := etcdpki.Issue("e2e-stranger", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	strangerCert, err := tls.X509KeyPair(other.ClientCert, other.ClientKey)
	if err != nil {
		t.Fatal(err)
	}

	// A write of the key every object lives under and a range read of it, as the JSON gateway takes them
	// (keys base64): "/registry/e2e-forged" and "forged".
	requests := []struct{ path, body string }{
		{"/v3/kv/put", `{"key":"L3JlZ2lzdHJ5L2UyZS1mb3JnZWQ=","value":"Zm9yZ2Vk"}`},
		{"/v3/kv/range", `{"key":"L3JlZ2lzdHJ5L2UyZS1mb3JnZWQ="}`},
	}
	post := func(scheme string, cert *tls.Certificate, path, body string) (int, error) {
		config := &tls.Config{RootCAs: roots}
		if cert != nil {
			// Sent even when etcd does not name its CA as acceptable, so that etcd has to verify it.
			config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: config}}
		defer client.CloseIdleConnections()
		target := scheme + "://" + strings.TrimPrefix(url, "https://") + path
		resp, err := client.Post(target, "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}

	// The client certificate works (once etcd has a leader): the refusals below are about the certificate,
	// not the address.
	for _, r := range requests {
		eventually(t, 60*time.Second, "POST "+r.path+" with the client certificate", func() error {
			if code, err := post("https", &clientCert, r.path, r.body); err != nil || code != http.StatusOK {
				return fmt.Errorf("%d, %v; want 200", code, err)
			}
			return nil
		})
	}
	for _, c := range []struct {
		name   string
		scheme string
		cert   *tls.Certificate
	}{
		{"no client certificate", "https", nil},
		{"a client certificate of another CA", "https", &strangerCert},
		{"plain http", "http", nil},
	} {
		for _, r := range requests {
			code, err := post(c.scheme, c.cert, r.path, r.body)
			if err == nil {
				t.Errorf("POST %s with %s was answered %d, want the connection refused", r.path, c.name, code)
				continue
			}
			t.Logf("POST %s with %s: refused: %v", r.path, c.name, err)
		}
	}
	// The write above with the right certificate must be the only one: remove it again.
	if code, err := post("https", &clientCert, "/v3/kv/deleterange", `{"key":"L3JlZ2lzdHJ5L2UyZS1mb3JnZWQ="}`); err != nil || code != http.StatusOK {
		t.Errorf("deleting the test key: %d, %v", code, err)
	}
}

// checkPeerRefusesStrangers checks that the peer port at url answers the members' peer certificate
// (peerCertFile, peerKeyFile, of the CA in caFile) and refuses everyone else: no certificate, another CA's,
// the server's client certificate (clientCert: the right CA, but not a member), and plain HTTP.
func checkPeerRefusesStrangers(t *testing.T, url, caFile, peerCertFile, peerKeyFile string, clientCert tls.Certificate) {
	t.Helper()
	roots := caPool(t, caFile)
	peerCert := loadCert(t, peerCertFile, peerKeyFile)
	other, err := etcdpki.Issue("e2e-stranger", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	strangerPeer, err := tls.X509KeyPair(other.PeerCert, other.PeerKey)
	if err != nil {
		t.Fatal(err)
	}
	get := func(scheme string, cert *tls.Certificate) (int, error) {
		config := &tls.Config{RootCAs: roots}
		if cert != nil {
			config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: config}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(scheme + "://" + strings.TrimPrefix(url, "https://") + "/members")
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := get("https", &peerCert); err != nil || code != http.StatusOK {
		t.Fatalf("GET /members on the peer port with the peer certificate: %d, %v; want 200", code, err)
	}
	for _, c := range []struct {
		name   string
		scheme string
		cert   *tls.Certificate
	}{
		{"no certificate", "https", nil},
		{"a peer certificate of another CA", "https", &strangerPeer},
		{"the server's client certificate", "https", &clientCert},
		{"plain http", "http", nil},
	} {
		code, err := get(c.scheme, c.cert)
		if err == nil {
			t.Errorf("GET /members on the peer port with %s was answered %d, want the connection refused", c.name, code)
			continue
		}
		t.Logf("GET /members on the peer port with %s: refused: %v", c.name, err)
	}
}
