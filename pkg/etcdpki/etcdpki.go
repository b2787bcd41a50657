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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
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
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: caName}, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the etcd CA: %w", err)
	}
	b := &Bundle{CA: pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw})}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if b.ServerCert, b.ServerKey, err = sign(ca, caKey, name+"-server", hosts, both, validity); err != nil {
		return nil, err
	}
	if b.PeerCert, b.PeerKey, err = sign(ca, caKey, PeerCommonName(name), hosts, both, validity); err != nil {
		return nil, err
	}
	if b.ClientCert, b.ClientKey, err = sign(ca, caKey, ClientCommonName, nil,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, validity); err != nil {
		return nil, err
	}
	return b, nil
}

// sign issues a certificate for commonName and hosts with the given usages, signed by ca.
func sign(ca *x509.Certificate, caKey crypto.Signer, commonName string, hosts []string, usages []x509.ExtKeyUsage,
	validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	notAfter := now.Add(validity)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-5 * time.Minute).UTC(),
		NotAfter:     notAfter.UTC(),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usages,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the etcd certificate %s: %w", commonName, err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der}), keyPEM, nil
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
