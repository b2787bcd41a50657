package frontproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"reflect"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// ca is a test certificate authority.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serial int64

// issue signs template with signer's key (template itself and a new key when signer is nil, for a CA).
func issue(t testing.TB, template *x509.Certificate, signer *ca) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	template.SerialNumber, template.NotBefore = big.NewInt(serial), time.Now().Add(-time.Hour)
	parent, parentKey := template, key
	if signer != nil {
		parent, parentKey = signer.cert, signer.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &ca{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func newCA(t testing.TB, name string) *ca {
	return issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}, nil)
}

// client issues a client certificate valid until notAfter.
func (c *ca) client(t testing.TB, commonName string, notAfter time.Time, usage x509.ExtKeyUsage) *x509.Certificate {
	return issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: commonName}, NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}}, c).cert
}

// swappableCA is a CA content provider whose bundle a test replaces, as a rotated front-proxy CA file is.
type swappableCA struct {
	current dynamiccertificates.CAContentProvider
}

func (s *swappableCA) Name() string                              { return "front-proxy" }
func (s *swappableCA) CurrentCABundleContent() []byte            { return s.current.CurrentCABundleContent() }
func (s *swappableCA) VerifyOptions() (x509.VerifyOptions, bool) { return s.current.VerifyOptions() }
func (s *swappableCA) AddListener(dynamiccertificates.Listener)  {}
func (s *swappableCA) set(t testing.TB, c *ca) {
	t.Helper()
	content, err := dynamiccertificates.NewStaticCAContent("front-proxy", c.pem)
	if err != nil {
		t.Fatal(err)
	}
	s.current = content
}

// request is a request on a connection that presented certs, with the front proxy's headers for user alice.
func request(certs ...*x509.Certificate) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1/apis/apps.tkestack.io/v1/tapps", nil)
	req.Header.Set("X-Remote-User", "alice")
	req.Header.Add("X-Remote-Group", "devs")
	req.Header.Set("X-Remote-Extra-Scopes", "view")
	if len(certs) > 0 {
		req.TLS = &tls.ConnectionState{PeerCertificates: certs}
	}
	return req
}

type result struct {
	User       string
	Groups     []string
	Extra      map[string][]string
	OK         bool
	Err        bool
	HeadersSet bool
}

func authenticate(a authenticator.Request, req *http.Request) result {
	resp, ok, err := a.AuthenticateRequest(req)
	r := result{OK: ok, Err: err != nil, HeadersSet: req.Header.Get("X-Remote-User") != ""}
	if resp != nil {
		r.User, r.Groups, r.Extra = resp.User.GetName(), resp.User.GetGroups(), resp.User.GetExtra()
	}
	return r
}

// TestAnswersAsTheDelegatedChain checks, request by request, that the server's authenticator with this package
// in front answers as the library's delegated chain alone does (user, groups, extra, refusal, headers
// removed), and that it checks a front-proxy certificate's chain once, again when the CA bundle changes.
func TestAnswersAsTheDelegatedChain(t *testing.T) {
	frontProxyCA, otherCA, clientCA := newCA(t, "front-proxy-ca"), newCA(t, "other-ca"), newCA(t, "client-ca")
	provider := &swappableCA{}
	provider.set(t, frontProxyCA)
	bothCAs := &ca{pem: append(append([]byte{}, otherCA.pem...), frontProxyCA.pem...)}
	clientCAContent, err := dynamiccertificates.NewStaticCAContent("client-ca", clientCA.pem)
	if err != nil {
		t.Fatal(err)
	}
	config := &authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders:     headerrequest.StaticStringSlice{"X-Remote-User"},
		UIDHeaders:          headerrequest.StaticStringSlice{"X-Remote-Uid"},
		GroupHeaders:        headerrequest.StaticStringSlice{"X-Remote-Group"},
		ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
		CAContentProvider:   provider,
		AllowedClientNames:  headerrequest.StaticStringSlice{"front-proxy-client"},
	}
	library, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		RequestHeaderConfig:                config,
		ClientCertificateCAContentProvider: clientCAContent,
	}.New()
	if err != nil {
		t.Fatal(err)
	}
	ours := New(config, library).(*Authenticator)

	day := time.Now().Add(24 * time.Hour)
	proxy := frontProxyCA.client(t, "front-proxy-client", day, x509.ExtKeyUsageClientAuth)
	for i, c := range []struct {
		name            string
		certs           []*x509.Certificate
		rotateTo        *ca
		wantUser        string
		wantErr         bool
		wantVerifiedNow int
	}{
		{name: "front proxy, first request", certs: []*x509.Certificate{proxy}, wantUser: "alice", wantVerifiedNow: 1},
		{name: "front proxy, again", certs: []*x509.Certificate{proxy}, wantUser: "alice"},
		{name: "front proxy with its CA as intermediate", certs: []*x509.Certificate{proxy, frontProxyCA.cert}, wantUser: "alice"},
		{name: "no certificate", wantUser: ""},
		{name: "a name the front proxy may not use", certs: []*x509.Certificate{frontProxyCA.client(t, "someone", day, x509.ExtKeyUsageClientAuth)}, wantErr: true},
		{name: "a server certificate", certs: []*x509.Certificate{frontProxyCA.client(t, "front-proxy-client", day, x509.ExtKeyUsageServerAuth)}, wantErr: true, wantVerifiedNow: 1},
		{name: "expired", certs: []*x509.Certificate{frontProxyCA.client(t, "front-proxy-client", time.Now().Add(-time.Minute), x509.ExtKeyUsageClientAuth)}, wantErr: true, wantVerifiedNow: 1},
		{name: "another CA", certs: []*x509.Certificate{otherCA.client(t, "front-proxy-client", day, x509.ExtKeyUsageClientAuth)}, wantErr: true, wantVerifiedNow: 1},
		{name: "a client certificate of the client CA", certs: []*x509.Certificate{clientCA.client(t, "bob", day, x509.ExtKeyUsageClientAuth)}, wantUser: "bob"},
		{name: "the front proxy after its CA was replaced", certs: []*x509.Certificate{proxy}, rotateTo: otherCA, wantErr: true, wantVerifiedNow: 1},
		// The same bundle as its verdict was reached against: the verdict holds.
		{name: "the front proxy when its CA is back", certs: []*x509.Certificate{proxy}, rotateTo: frontProxyCA, wantUser: "alice"},
		{name: "the front proxy under a bundle of both CAs", certs: []*x509.Certificate{proxy}, rotateTo: bothCAs, wantUser: "alice", wantVerifiedNow: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.rotateTo != nil {
				provider.set(t, c.rotateTo)
			}
			before := ours.verifications
			want := authenticate(library, request(c.certs...))
			got := authenticate(ours, request(c.certs...))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("request %d: got %+v, the delegated chain alone gives %+v", i, got, want)
			}
			if got.User != c.wantUser || got.Err != c.wantErr {
				t.Errorf("request %d: user %q error %v, want %q and %v", i, got.User, got.Err, c.wantUser, c.wantErr)
			}
			if n := ours.verifications - before; n != c.wantVerifiedNow {
				t.Errorf("request %d: %d chains checked here, want %d", i, n, c.wantVerifiedNow)
			}
		})
	}
}

// TestVerdictsExpire checks that a remembered certificate is checked again once its verdict's lifetime has
// passed, and refused once the certificate itself has expired.
func TestVerdictsExpire(t *testing.T) {
	frontProxyCA := newCA(t, "front-proxy-ca")
	provider := &swappableCA{}
	provider.set(t, frontProxyCA)
	config := &authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders: headerrequest.StaticStringSlice{"X-Remote-User"}, UIDHeaders: headerrequest.StaticStringSlice{},
		GroupHeaders: headerrequest.StaticStringSlice{}, ExtraHeaderPrefixes: headerrequest.StaticStringSlice{},
		CAContentProvider: provider, AllowedClientNames: headerrequest.StaticStringSlice{},
	}
	library, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{RequestHeaderConfig: config}.New()
	if err != nil {
		t.Fatal(err)
	}
	ours := New(config, library).(*Authenticator)
	now := time.Now()
	ours.now = func() time.Time { return now }
	proxy := frontProxyCA.client(t, "front-proxy-client", now.Add(2*verdictLifetime+time.Minute), x509.ExtKeyUsageClientAuth)

	for _, step := range []struct {
		after        time.Duration
		wantUser     string
		wantVerified int
	}{
		{0, "alice", 1},
		{verdictLifetime - time.Second, "alice", 1},
		{verdictLifetime + time.Second, "alice", 2},
		// Past the certificate's end: the verdict ends with it; the chain fails here, and the delegated chain
		// (on the real clock, still within the certificate) is asked.
		{2*verdictLifetime + 2*time.Minute, "alice", 3},
	} {
		now = time.Now().Add(step.after)
		if r := authenticate(ours, request(proxy)); r.User != step.wantUser {
			t.Errorf("after %v: user %q, want %q", step.after, r.User, step.wantUser)
		}
		if ours.verifications != step.wantVerified {
			t.Errorf("after %v: %d chains checked, want %d", step.after, ours.verifications, step.wantVerified)
		}
	}
	now = time.Now().Add(2*verdictLifetime + 2*time.Minute)
	if ours.isFrontProxy([]*x509.Certificate{proxy}) {
		t.Errorf("an expired certificate was taken as the front proxy's")
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	t := b
	frontProxyCA := newCA(t, "front-proxy-ca")
	provider := &swappableCA{}
	provider.set(t, frontProxyCA)
	config := &authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders: headerrequest.StaticStringSlice{"X-Remote-User"}, UIDHeaders: headerrequest.StaticStringSlice{},
		GroupHeaders: headerrequest.StaticStringSlice{"X-Remote-Group"}, ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
		CAContentProvider: provider, AllowedClientNames: headerrequest.StaticStringSlice{"front-proxy-client"},
	}
	library, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{RequestHeaderConfig: config}.New()
	if err != nil {
		b.Fatal(err)
	}
	proxy := frontProxyCA.client(t, "front-proxy-client", time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	for _, c := range []struct {
		name string
		auth authenticator.Request
	}{{"delegated chain", library}, {"remembered certificate", New(config, library)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok, err := c.auth.AuthenticateRequest(request(proxy)); !ok || err != nil {
					b.Fatalf("not authenticated: %v", err)
				}
			}
		})
	}
}
