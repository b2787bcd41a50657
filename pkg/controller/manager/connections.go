package manager

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// writeConnections is how many HTTP/2 connections a controller's client of the cluster spreads its requests
// over. An HTTP/2 connection carries at most 250 streams (Go's default, which kube-apiserver keeps), and a
// client with more requests in flight dials a TLS connection for each request beyond them; a sync has up to
// actions.MaxParallelCreates creations and actions.MaxParallel other calls in flight, and a few syncs run
// at once.
const writeConnections = 3

// overConnections returns a copy of config whose requests are spread over n HTTP/2 connections of their own,
// each request on the connection with the fewest requests in flight. The rate limit (QPS, Burst or
// RateLimiter) stays one, for the client made from the copy.
func overConnections(config *rest.Config, n int) (*rest.Config, error) {
	s := &spreadTransport{conns: make([]spreadConn, n)}
	for i := range s.conns {
		c := rest.CopyConfig(config)
		// A config with a Dial of its own does not share client-go's cached transport: a connection of its own.
		c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		rt, err := rest.TransportFor(c)
		if err != nil {
			return nil, fmt.Errorf("transport %d of %d: %w", i+1, n, err)
		}
		s.conns[i].rt = rt
	}
	out := rest.CopyConfig(config)
	// The transports carry the TLS configuration and the credentials.
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.BearerToken, out.BearerTokenFile, out.Username, out.Password = "", "", "", ""
	out.Impersonate = rest.ImpersonationConfig{}
	out.AuthProvider, out.AuthConfigPersister, out.ExecProvider = nil, nil, nil
	out.WrapTransport, out.Dial, out.Proxy = nil, nil, nil
	out.Transport = s
	return out, nil
}

// spreadTransport sends each request on the connection with the fewest requests in flight. A request is in
// flight until its response body is closed (or the round trip fails).
type spreadTransport struct {
	mu    sync.Mutex
	conns []spreadConn
}

type spreadConn struct {
	rt       http.RoundTripper
	inFlight atomic.Int64
}

func (s *spreadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	c := &s.conns[0]
	for i := 1; i < len(s.conns); i++ {
		if s.conns[i].inFlight.Load() < c.inFlight.Load() {
			c = &s.conns[i]
		}
	}
	c.inFlight.Add(1)
	s.mu.Unlock()
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		c.inFlight.Add(-1)
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: func() { c.inFlight.Add(-1) }}
	return resp, nil
}

// countedBody calls done once, when the body is closed.
type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
