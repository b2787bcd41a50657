// Package etcdpki issues the certificates of an etcd that only its API server may use: a CA of its own, a
// serving certificate for the members' client port, a peer certificate for the traffic between members,
// and a client certificate for the API server. etcd runs with client-certificate authentication against
// that CA (--client-cert-auth, --peer-client-cert-auth), so a process without the client certificate is
// refused, whatever port it reaches.
//
// The embedded etcd of tapp-apiserver (pkg/embeddedetcd), the etcd of the local cluster (pkg/localcluster)
// and the install step of artifacts/deploy (tapp-apiserver etcd-certs) all issue their certificates here.
package etcdpki

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/tapp-io/tapp-apiserver/pkg/certauthority"
)

// File names of a written Bundle, in the directory given to Write. They follow kubeadm's etcd layout.
const (
	CAFile         = "ca.crt"
	ServerCertFile = "server.crt"
	ServerKeyFile  = "server.key"
	PeerCertFile   = "peer.crt"
	PeerKeyFile    = "peer.key"
	ClientCertFile = "client.crt"
	ClientKeyFile  = "client.key"
)

// DefaultValidity is how long the certificates of Issue are valid.
const DefaultValidity = 5 * 365 * 24 * time.Hour

// ClientCommonName is the subject of the client certificate.
const ClientCommonName = "tapp-apiserver"

// PeerCommonName is the common name of the peer certificate Issue(name, ...) signs.
func PeerCommonName(name string) string { return name + "-peer" }

// Bundle is an issued set of certificates and keys, in PEM. The CA's key is not kept: nothing signs with it
// after Issue, so no certificate can be added without issuing a new bundle.
type Bundle struct {
	CA                    []byte
	ServerCert, ServerKey []byte
	PeerCert, PeerKey     []byte
	ClientCert, ClientKey []byte
}

// Issue creates a CA with the common name <name>-ca and signs with it: a serving certificate (<name>-server)
// and a peer certificate (PeerCommonName(name)) for hosts (DNS names, wildcards such as *.etcd.ns.svc, or IP
// addresses), and a client certificate with the common name ClientCommonName. The serving certificate may
// also authenticate as a client (etcd's gRPC gateway connects to its own client port with it); the peer
// certificate is both a server and a client certificate, as members dial each other. Members given
// --peer-cert-allowed-cn=PeerCommonName(name) take no other certificate of the CA on their peer port.
func Issue(name string, hosts []string, validity time.Duration) (*Bundle, error) {
	caName := name + "-ca"
	if len(hosts) == 0 {
		return nil, fmt.Errorf("the etcd certificates need at least one host")
	}
	ca, err := certauthority.New(caName)
	if err != nil {
		return nil, err
	}
	b := &Bundle{CA: ca.CertPEM()}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if b.ServerCert, b.ServerKey, err = ca.Sign(pkix.Name{CommonName: name + "-server"}, hosts, both, validity); err != nil {
		return nil, err
	}
	if b.PeerCert, b.PeerKey, err = ca.Sign(pkix.Name{CommonName: PeerCommonName(name)}, hosts, both, validity); err != nil {
		return nil, err
	}
	if b.ClientCert, b.ClientKey, err = ca.Sign(pkix.Name{CommonName: ClientCommonName}, nil,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, validity); err != nil {
		return nil, err
	}
	return b, nil
}

// Write writes the bundle into dir (0700, created if missing) under the names CAFile, ServerCertFile and the
// others, replacing what is there; keys are written 0600, certificates 0644.
func (b *Bundle) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// An existing directory or file keeps its mode through MkdirAll and WriteFile.
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{CAFile: b.CA, ServerCertFile: b.ServerCert, PeerCertFile: b.PeerCert, ClientCertFile: b.ClientCert} {
		if err := certutil.WriteCert(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	for name, data := range map[string][]byte{ServerKeyFile: b.ServerKey, PeerKeyFile: b.PeerKey, ClientKeyFile: b.ClientKey} {
		// Removed first, so that no key is ever written into a file others can read.
		path := filepath.Join(dir, name)
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		if err := keyutil.WriteKey(path, data); err != nil {
			return err
		}
	}
	return nil
}
