package certauthority

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"
	"time"
)

func TestSignedCertificatesChainToTheirCA(t *testing.T) {
	ca, err := New("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := New("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Sign(pkix.Name{CommonName: "server", Organization: []string{"org"}}, []string{"127.0.0.1", "localhost"},
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "server" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "org" {
		t.Errorf("subject %v", cert.Subject)
	}
	if len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) || len(cert.DNSNames) != 1 || cert.DNSNames[0] != "localhost" {
		t.Errorf("hosts: %v %v", cert.IPAddresses, cert.DNSNames)
	}
	if d := cert.NotAfter.Sub(time.Now()); d > time.Hour || d < 50*time.Minute {
		t.Errorf("valid for %s more, want about an hour", d)
	}
	verify := func(a *Authority) error {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(a.CertPEM())
		_, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		return err
	}
	if err := verify(ca); err != nil {
		t.Errorf("not verified by its CA: %v", err)
	}
	if err := verify(other); err == nil {
		t.Errorf("verified by another CA")
	}
}

func TestValidityCappedByTheCA(t *testing.T) {
	ca, err := New("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := ca.Sign(pkix.Name{CommonName: "client"}, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, 100*365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.NotAfter.After(ca.Certificate().NotAfter) {
		t.Errorf("certificate valid until %s, after its CA (%s)", cert.NotAfter, ca.Certificate().NotAfter)
	}
}

func TestLoadReadsBackTheCA(t *testing.T) {
	ca, err := New("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(ca.CertPEM(), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := loaded.Sign(pkix.Name{CommonName: "client"}, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca.Certificate()); err != nil {
		t.Errorf("a certificate signed by the loaded CA does not chain to the original: %v", err)
	}

	other, err := New("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := other.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ca.CertPEM(), otherKey); err == nil {
		t.Error("Load took another CA's key")
	}
	if _, err := Load(certPEM, keyPEM); err == nil {
		t.Error("Load took a certificate that is not a CA")
	}
}
