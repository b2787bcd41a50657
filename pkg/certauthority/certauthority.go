// Package certauthority is the project's one certificate authority: it makes a CA (ECDSA P-256) and signs
// serving and client certificates with it. pkg/etcdpki issues etcd's certificates with it, and
// pkg/localcluster those of the local control plane (kube-apiserver's serving certificate, the client
// certificates of its users, the front proxy's).
package certauthority

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
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Authority is a CA and its key.
type Authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// New makes a self-signed CA with the common name commonName (valid for ten years, as client-go's
// self-signed CAs are).
func New(commonName string) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: commonName}, key)
	if err != nil {
		return nil, fmt.Errorf("creating the CA %s: %w", commonName, err)
	}
	return &Authority{cert: cert, key: key}, nil
}

// Certificate is the CA's certificate.
func (a *Authority) Certificate() *x509.Certificate { return a.cert }

// CertPEM is the CA's certificate in PEM.
func (a *Authority) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: a.cert.Raw})
}

// Sign issues a certificate for subject with a new key, valid for validity (at most as long as the CA) from
// five minutes ago, for hosts (DNS names or IP addresses; none for a client certificate) and the extended
// key usages given. It returns the certificate and the key in PEM.
func (a *Authority) Sign(subject pkix.Name, hosts []string, usages []x509.ExtKeyUsage, validity time.Duration) (certPEM, keyPEM []byte, err error) {
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
	if notAfter.After(a.cert.NotAfter) {
		notAfter = a.cert.NotAfter
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
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
	der, err := x509.CreateCertificate(rand.Reader, template, a.cert, key.Public(), a.key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the certificate %s: %w", subject.CommonName, err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der}), keyPEM, nil
}

// KeyPEM is the CA's key in PEM, for Load to read back.
func (a *Authority) KeyPEM() ([]byte, error) {
	return keyutil.MarshalPrivateKeyToPEM(a.key)
}

// Load reads back a CA written as CertPEM and KeyPEM. It fails when the key is not the certificate's or the
// certificate is not a CA.
func Load(certPEM, keyPEM []byte) (*Authority, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	if len(certs) != 1 || !certs[0].IsCA {
		return nil, fmt.Errorf("want one CA certificate, got %d certificates", len(certs))
	}
	parsed, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	key, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("the CA key cannot sign")
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(certs[0].PublicKey) {
		return nil, fmt.Errorf("the key is not the CA certificate's")
	}
	return &Authority{cert: certs[0], key: key}, nil
}
