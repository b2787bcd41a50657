package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/certauthority"
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

// newAuthority creates a CA named name and writes its certificate to dir/name.crt.
func newAuthority(dir, name string) (*authority, error) {
	ca, err := certauthority.New(name)
	if err != nil {
		return nil, err
	}
	a := &authority{ca: ca, CertFile: filepath.Join(dir, name+".crt")}
	return a, os.WriteFile(a.CertFile, ca.CertPEM(), 0o600)
}

// issue signs a certificate for subject and writes dir/name.crt and dir/name.key. Certificates with
// hosts are serving certificates; the others are client certificates.
func (a *authority) issue(dir, name string, subject pkix.Name, hosts ...string) (certFiles, error) {
	usages := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if len(hosts) > 0 {
		usages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	certPEM, keyPEM, err := a.ca.Sign(subject, hosts, usages, certValidity)
	if err != nil {
		return certFiles{}, err
	}
	files := certFiles{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(files.CertFile, certPEM, 0o600); err != nil {
		return certFiles{}, err
	}
	return files, os.WriteFile(files.KeyFile, keyPEM, 0o600)
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
