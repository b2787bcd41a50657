package localcluster

import (
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
)

// authority is a certificate authority that signs the local cluster's certificates.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CertFile is the PEM file of the CA certificate.
	CertFile string
}

// certFiles are the PEM files of a signed certificate and its key.
type certFiles struct {
	CertFile, KeyFile string
}

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
}

// newAuthority creates a CA named name and writes its certificate to dir/name.crt.
func newAuthority(dir, name string) (*authority, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &authority{cert: cert, key: key, CertFile: filepath.Join(dir, name+".crt")}
	if err := writePEM(ca.CertFile, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return ca, nil
}

// issue signs a certificate for subject and writes dir/name.crt and dir/name.key. Certificates with
// hosts are serving certificates; the others are client certificates.
func (ca *authority) issue(dir, name string, subject pkix.Name, hosts ...string) (certFiles, error) {
	key, err := newKey()
	if err != nil {
		return certFiles{}, err
	}
	sn, err := serial()
	if err != nil {
		return certFiles{}, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: sn,
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(hosts) > 0 {
		template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				template.IPAddresses = append(template.IPAddresses, ip)
			} else {
				template.DNSNames = append(template.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, key.Public(), ca.key)
	if err != nil {
		return certFiles{}, fmt.Errorf("signing %s: %w", name, err)
	}
	files := certFiles{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if err := writePEM(files.CertFile, "CERTIFICATE", der); err != nil {
		return certFiles{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return certFiles{}, err
	}
	if err := writePEM(files.KeyFile, "EC PRIVATE KEY", keyDER); err != nil {
		return certFiles{}, err
	}
	return files, nil
}

// writeServiceAccountKeys writes the key pair that signs and verifies service account tokens.
func writeServiceAccountKeys(dir string) (public, private string, err error) {
	key, err := newKey()
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
