// Package frontproxy authenticates the requests kube-apiserver's aggregator forwards to this server: the user
// it names in request headers, believed because the connection presents a client certificate of the
// front-proxy CA. It checks a certificate's chain once and remembers the verdict, where the library's
// request-header authenticator checks the chain of every request again (a signature check that was about 5% of
// this server's CPU while it served creates through the aggregator).
package frontproxy

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
)

// verdictLifetime bounds how long a verified certificate is believed without checking its chain again, even
// while the CA bundle stays the same.
const verdictLifetime = 5 * time.Minute

// maxVerdicts bounds how many certificates are remembered; a front proxy presents one or two.
const maxVerdicts = 64

// Authenticator answers requests whose client certificate it has verified as the front proxy's from the
// request headers, as the library's request-header authenticator does, and hands every other request to the
// authenticator it wraps, which is the whole delegated chain and checks everything afresh.
type Authenticator struct {
	config  *authenticatorfactory.RequestHeaderConfig
	headers authenticator.Request
	next    authenticator.Request
	now     func() time.Time

	mu       sync.Mutex
	verdicts map[[sha256.Size]byte]verdict
	// verifications counts the chains checked here, for tests.
	verifications int
}

// verdict is a certificate found to chain to the front-proxy CA: the bundle it was checked against, and until
// when it is believed.
type verdict struct {
	caBundle []byte
	until    time.Time
}

// New wraps next, the server's authenticator, which config's front-proxy authentication is part of. A nil
// config (no front proxy configured) leaves next alone.
func New(config *authenticatorfactory.RequestHeaderConfig, next authenticator.Request) authenticator.Request {
	if config == nil || config.CAContentProvider == nil {
		return next
	}
	return &Authenticator{
		config: config,
		// The user comes from the headers as the library's request-header authenticator reads them (and then
		// removes them), with system:authenticated added as the delegated chain adds it.
		headers: group.NewAuthenticatedGroupAdder(headerrequest.NewDynamic(config.UsernameHeaders, config.UIDHeaders,
			config.GroupHeaders, config.ExtraHeaderPrefixes)),
		next:     next,
		now:      time.Now,
		verdicts: map[[sha256.Size]byte]verdict{},
	}
}

// AuthenticateRequest implements authenticator.Request.
func (a *Authenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 || !a.isFrontProxy(req.TLS.PeerCertificates) {
		return a.next.AuthenticateRequest(req)
	}
	resp, ok, err := a.headers.AuthenticateRequest(req)
	if err != nil || !ok {
		// No user in the headers: the rest of the chain decides, as it would have.
		return a.next.AuthenticateRequest(req)
	}
	return resp, true, nil
}

// isFrontProxy tells whether chain (the leaf first) is the front proxy's: signed by the current front-proxy
// CA bundle, valid now, for client authentication, and with a common name the front proxy may use.
func (a *Authenticator) isFrontProxy(chain []*x509.Certificate) bool {
	leaf := chain[0]
	allowed := a.config.AllowedClientNames.Value()
	if len(allowed) > 0 && !slices.Contains(allowed, leaf.Subject.CommonName) {
		return false
	}
	caBundle := a.config.CAContentProvider.CurrentCABundleContent()
	key := sha256.Sum256(leaf.Raw)
	now := a.now()
	a.mu.Lock()
	v, found := a.verdicts[key]
	a.mu.Unlock()
	if found && now.Before(v.until) && bytes.Equal(v.caBundle, caBundle) {
		return true
	}

	opts, ok := a.config.CAContentProvider.VerifyOptions()
	if !ok {
		return false
	}
	opts.CurrentTime = now
	if opts.Intermediates == nil && len(chain) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, intermediate := range chain[1:] {
			opts.Intermediates.AddCert(intermediate)
		}
	}
	a.mu.Lock()
	a.verifications++
	a.mu.Unlock()
	chains, err := leaf.Verify(opts)
	if err != nil {
		return false
	}
	until := now.Add(verdictLifetime)
	for _, cert := range chains[0] {
		if cert.NotAfter.Before(until) {
			until = cert.NotAfter
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.verdicts) >= maxVerdicts {
		clear(a.verdicts)
	}
	a.verdicts[key] = verdict{caBundle: caBundle, until: until}
	return true
}
