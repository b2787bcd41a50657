package embeddedetcd

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

// TestOnlyTheClientCertificateIsServed starts the embedded etcd and checks that a client with the client
// certificate it wrote can write, and that every other client is refused: one without a certificate, one with
// a certificate of another CA, and one speaking plain HTTP. It also checks that no peer port is open, and that
// it keeps few raft entries in memory, as a member without followers can.
func TestOnlyTheClientCertificateIsServed(t *testing.T) {
	certDir := filepath.Join(t.TempDir(), "etcd")
	e, err := Start(Options{DataDir: t.TempDir(), CertDir: certDir, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)

	if !strings.HasPrefix(e.ClientURL, "https://127.0.0.1:") {
		t.Errorf("ClientURL = %s, want https on loopback", e.ClientURL)
	}
	if n := len(e.etcd.Peers); n != 0 {
		t.Errorf("the single member opened %d peer listeners, want none", n)
	}
	if got := e.etcd.Server.Cfg.SnapshotCatchUpEntries; got != singleMemberCatchUpEntries {
		t.Errorf("the single member keeps %d raft entries in memory for followers, want %d", got, singleMemberCatchUpEntries)
	}
	for _, name := range []string{etcdpki.ClientKeyFile, etcdpki.ServerKeyFile, etcdpki.PeerKeyFile} {
		info, err := os.Stat(filepath.Join(certDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if mode := info.Mode().Perm(); mode&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group and others", name, mode)
		}
	}

	ca, err := os.ReadFile(e.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("no CA certificate in", e.CAFile)
	}
	clientCert, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	other, err := etcdpki.Issue("another-ca", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherCert, err := tls.X509KeyPair(other.ClientCert, other.ClientKey)
	if err != nil {
		t.Fatal(err)
	}

	put := func(scheme string, certs []tls.Certificate) (int, error) {
		config := &tls.Config{RootCAs: roots}
		if len(certs) > 0 {
			// Sent whether or not etcd names its CA as acceptable, so that etcd has to verify it.
			config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
		}
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: config}}
		url := strings.Replace(e.ClientURL, "https://", scheme+"://", 1) + "/v3/kv/put"
		// key "tapps" and value "forged", base64-encoded as the JSON gateway wants.
		resp, err := client.Post(url, "application/json", strings.NewReader(`{"key":"dGFwcHM=","value":"Zm9yZ2Vk"}`))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}

	if code, err := put("https", []tls.Certificate{clientCert}); err != nil || code != http.StatusOK {
		t.Fatalf("a put with the client certificate: %d, %v; want 200", code, err)
	}
	for _, c := range []struct {
		name   string
		scheme string
		certs  []tls.Certificate
	}{
		{"no client certificate", "https", nil},
		{"a client certificate of another CA", "https", []tls.Certificate{otherCert}},
		{"plain http", "http", nil},
	} {
		code, err := put(c.scheme, c.certs)
		if err == nil {
			t.Errorf("a put with %s was answered %d, want the connection refused", c.name, code)
		} else {
			t.Logf("a put with %s: %v", c.name, err)
		}
	}
}

// TestStartNeedsHTTPSAndCertDir checks that Start refuses to serve without certificates or on plain HTTP.
func TestStartNeedsHTTPSAndCertDir(t *testing.T) {
	if _, err := Start(Options{DataDir: t.TempDir()}); err == nil {
		t.Error("Start without a certificate directory succeeded")
	}
	if _, err := Start(Options{DataDir: t.TempDir(), CertDir: t.TempDir(), ClientURL: "http://127.0.0.1:1"}); err == nil {
		t.Error("Start on a plain http URL succeeded")
	}
}

func TestPickClientURLAvoidsTheServersOwnPort(t *testing.T) {
	offered := []string{"127.0.0.1:6443", "127.0.0.1:6443", "127.0.0.1:40001"}
	probe := func() (*url.URL, error) {
		host := offered[0]
		offered = offered[1:]
		return &url.URL{Scheme: "https", Host: host}, nil
	}
	got, err := pickClientURL(probe, []int{6443})
	if err != nil || got.String() != "https://127.0.0.1:40001" {
		t.Fatalf("pickClientURL = %v, %v; want https://127.0.0.1:40001 (the system offered the secure port twice)", got, err)
	}
	if _, err := pickClientURL(func() (*url.URL, error) { return &url.URL{Scheme: "https", Host: "127.0.0.1:6443"}, nil }, []int{6443}); err == nil {
		t.Fatal("pickClientURL returned the avoided port")
	}
}

// TestStartPicksAnotherPortWhenItsPortIsTaken: a port found free can be taken by another process before etcd
// listens on it; Start then listens on another one instead of failing.
func TestStartPicksAnotherPortWhenItsPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	probes := 0
	probe := func() (*url.URL, error) {
		probes++
		if probes == 1 {
			return &url.URL{Scheme: "https", Host: taken.Addr().String()}, nil
		}
		return freeLoopbackURL()
	}
	e, err := start(Options{DataDir: t.TempDir(), CertDir: t.TempDir(), UnsafeNoFsync: true}, probe)
	if err != nil {
		t.Fatalf("Start with its first port taken: %v", err)
	}
	t.Cleanup(e.Stop)
	if probes != 2 || e.ClientURL == "https://"+taken.Addr().String() {
		t.Errorf("etcd serves on %s after %d probes; want another port than the taken %s", e.ClientURL, probes, taken.Addr())
	}

	// A URL the caller gave is used as given: a taken one is an error.
	_, err = Start(Options{DataDir: t.TempDir(), CertDir: t.TempDir(), ClientURL: "https://" + taken.Addr().String()})
	if err == nil {
		t.Error("Start on a taken port the caller gave succeeded")
	}
}
