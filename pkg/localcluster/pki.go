package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/tapp-io/tapp-apiserver/pkg/certauthority"
	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

// certValidity is how long the local cluster's certificates are valid.
const certValidity = 365 * 24 * time.Hour

// authority is a CA of the local cluster (pkg/certauthority) with its certificate written to a file.
type authority struct {
	ca *certauthority.Authority
	// CertFile is the PEM file of the CA certificate.
	CertFile string
}

// certFiles are the PEM files of a signed certificate and its key.
type certFiles struct {
	CertFile, KeyFile string
}

// renewBefore is how long before its expiry a kept certificate is issued again.
const renewBefore = 30 * 24 * time.Hour

// loadOrNewAuthority reads the CA dir/name.crt with its key dir/name.key, as an earlier start wrote them,
// or, when they are missing, unreadable or near their expiry, creates a new CA and writes both. Keeping the
// CAs keeps every certificate they signed, and every kubeconfig, valid across restarts.
func loadOrNewAuthority(dir, name string) (*authority, error) {
	a := &authority{CertFile: filepath.Join(dir, name+".crt")}
	keyFile := filepath.Join(dir, name+".key")
	certPEM, certErr := os.ReadFile(a.CertFile)
	keyPEM, keyErr := os.ReadFile(keyFile)
	if certErr == nil && keyErr == nil {
		if ca, err := certauthority.Load(certPEM, keyPEM); err == nil && time.Until(ca.Certificate().NotAfter) > renewBefore {
			a.ca = ca
			return a, nil
		}
	}
	ca, err := certauthority.New(name)
	if err != nil {
		return nil, err
	}
	if keyPEM, err = ca.KeyPEM(); err != nil {
		return nil, err
	}
	a.ca = ca
	if err := writeKey(keyFile, keyPEM); err != nil {
		return nil, err
	}
	return a, os.WriteFile(a.CertFile, ca.CertPEM(), 0o600)
}

// issue returns dir/name.crt and dir/name.key: kept when an earlier start wrote them for subject and hosts,
// signed by this CA and not near their expiry, otherwise signed now. Certificates with hosts are serving
// certificates; the others are client certificates.
func (a *authority) issue(dir, name string, subject pkix.Name, hosts ...string) (certFiles, error) {
	files := certFiles{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if a.signedEarlier(files, subject, hosts) {
		return files, nil
	}
	usages := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if len(hosts) > 0 {
		usages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	certPEM, keyPEM, err := a.ca.Sign(subject, hosts, usages, certValidity)
	if err != nil {
		return certFiles{}, err
	}
	if err := writeKey(files.KeyFile, keyPEM); err != nil {
		return certFiles{}, err
	}
	return files, os.WriteFile(files.CertFile, certPEM, 0o600)
}

// signedEarlier reports whether files hold a certificate and its key for subject and hosts, signed by a and
// valid for longer than renewBefore.
func (a *authority) signedEarlier(files certFiles, subject pkix.Name, hosts []string) bool {
	cert, ok := readKeyPair(files)
	if !ok || cert.CheckSignatureFrom(a.ca.Certificate()) != nil || time.Until(cert.NotAfter) < renewBefore {
		return false
	}
	if cert.Subject.CommonName != subject.CommonName || !sameStrings(cert.Subject.Organization, subject.Organization) {
		return false
	}
	var certHosts []string
	for _, ip := range cert.IPAddresses {
		certHosts = append(certHosts, ip.String())
	}
	return sameStrings(append(certHosts, cert.DNSNames...), hosts)
}

// readKeyPair parses the certificate of files and checks that the key is its key.
func readKeyPair(files certFiles) (*x509.Certificate, bool) {
	pair, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
	if err != nil {
		return nil, false
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	return cert, err == nil
}

func sameStrings(a, b []string) bool {
	return sets.New(a...).Equal(sets.New(b...))
}

// writeKey writes a private key readable by its owner only (removing the file first, so that a key is never
// written into a file others can read).
func writeKey(path string, keyPEM []byte) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(path, keyPEM, 0o600)
}

// serviceAccountKeys returns the key pair that signs and verifies service account tokens: the one an earlier
// start wrote when it is there (the tokens it signed stay valid), a new one otherwise.
func serviceAccountKeys(dir string) (public, private string, err error) {
	private, public = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if keyPEM, err := os.ReadFile(private); err == nil {
		if key, err := keyutil.ParsePrivateKeyPEM(keyPEM); err == nil {
			if keys, err := keyutil.PublicKeysFromFile(public); err == nil && len(keys) == 1 {
				if signer, ok := key.(crypto.Signer); ok {
					if pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool }); ok && pub.Equal(keys[0]) {
						return public, private, nil
					}
				}
			}
		}
	}
	return writeServiceAccountKeys(dir)
}

// etcdCerts writes the certificates of an etcd (pkg/etcdpki) named name into dir, unless an earlier start
// wrote them there for hosts and they are valid for longer than renewBefore.
func etcdCerts(dir, name string, hosts []string) error {
	if etcdCertsValid(dir, name, hosts) {
		return nil
	}
	bundle, err := etcdpki.Issue(name, hosts, etcdpki.DefaultValidity)
	if err != nil {
		return err
	}
	return bundle.Write(dir)
}

func etcdCertsValid(dir, name string, hosts []string) bool {
	caPEM, err := os.ReadFile(filepath.Join(dir, etcdpki.CAFile))
	if err != nil {
		return false
	}
	cas, err := certutil.ParseCertsPEM(caPEM)
	if err != nil || len(cas) != 1 {
		return false
	}
	for _, want := range []struct {
		cert, key, commonName string
		hosts                 []string
	}{
		{etcdpki.ServerCertFile, etcdpki.ServerKeyFile, name + "-server", hosts},
		{etcdpki.PeerCertFile, etcdpki.PeerKeyFile, etcdpki.PeerCommonName(name), hosts},
		{etcdpki.ClientCertFile, etcdpki.ClientKeyFile, etcdpki.ClientCommonName, nil},
	} {
		cert, ok := readKeyPair(certFiles{CertFile: filepath.Join(dir, want.cert), KeyFile: filepath.Join(dir, want.key)})
		if !ok || cert.CheckSignatureFrom(cas[0]) != nil || time.Until(cert.NotAfter) < renewBefore || cert.Subject.CommonName != want.commonName {
			return false
		}
		var certHosts []string
		for _, ip := range cert.IPAddresses {
			certHosts = append(certHosts, ip.String())
		}
		if !sameStrings(append(certHosts, cert.DNSNames...), want.hosts) {
			return false
		}
	}
	return true
}

// writeServiceAccountKeys writes the key pair that signs and verifies service account tokens.
func writeServiceAccountKeys(dir string) (public, private string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	private, public = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	if err := writePEM(private, "EC PRIVATE KEY", keyDER); err != nil {
		return "", "", err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", err
	}
	return public, private, writePEM(public, "PUBLIC KEY", pubDER)
}

func writePEM(path, blockType string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600)
}
