// Package embeddedetcd runs a single-member etcd inside the server process, on loopback, persisting
// under a data directory, for installations that do not bring an external etcd cluster.
//
// The server itself calls etcd in-process (Etcd.InProcessClient, pkg/resourcestorage). Over the network only
// the server can use it: etcd serves TLS on its client port and requires a client certificate signed
// by a CA that Start issues afresh on every start (pkg/etcdpki) and writes into Options.CertDir, the only
// place the client certificate exists. Another local process reaching the port is refused at the TLS
// handshake. It opens no peer port: a single member has no peers to talk to (etcd records a peer URL in its
// membership, which nothing listens on).
package embeddedetcd

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"

	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
)

// Options configure the embedded etcd.
type Options struct {
	// DataDir is where etcd keeps its data; objects survive a restart on the same directory.
	DataDir string
	// UnsafeNoFsync skips fsync: faster, but a machine crash can lose writes. For tests and benchmarks.
	UnsafeNoFsync bool
	// LogLevel is etcd's log level (debug, info, warn, error).
	LogLevel string
	// ClientURL is the loopback https URL etcd serves clients on; empty lets Start pick a free loopback port
	// and listen on it at once (Etcd.ClientURL says which).
	ClientURL string
	// AvoidPorts are ports Start does not pick when ClientURL is empty: those the process is about to listen
	// on itself (a port its caller found free and closed again, as --secure-port often is, is free until the
	// process listens on it, and the system may offer it here).
	AvoidPorts []int
	// CertDir is where Start writes the CA, etcd's serving certificate and the client certificate
	// (ClientTLS names the files the client uses). Readable by the server's user only.
	CertDir string
}

// ClientTLS returns the client certificate, its key and the CA that the client of an etcd started with
// these options uses, as the storage configuration's --etcd-certfile, --etcd-keyfile and --etcd-cafile.
func (o Options) ClientTLS() (certFile, keyFile, caFile string) {
	return filepath.Join(o.CertDir, etcdpki.ClientCertFile), filepath.Join(o.CertDir, etcdpki.ClientKeyFile),
		filepath.Join(o.CertDir, etcdpki.CAFile)
}

// singleMemberCatchUpEntries is how many applied raft entries the embedded etcd keeps in memory.
const singleMemberCatchUpEntries = 100

// Etcd is a running embedded etcd.
type Etcd struct {
	etcd *embed.Etcd
	// ClientURL is the loopback https URL clients connect to.
	ClientURL string
	// CertFile, KeyFile and CAFile are the client certificate, its key and the CA clients trust
	// (Options.ClientTLS).
	CertFile, KeyFile, CAFile string
}

// Start starts etcd and waits until it serves clients. Without Options.ClientURL it picks a free loopback
// port and etcd listens on it at once; should another process take the port in between, it picks another.
func Start(opts Options) (*Etcd, error) {
	return start(opts, freeLoopbackURL)
}

// start is Start with the probe of a free port given.
func start(opts Options, probe func() (*url.URL, error)) (*Etcd, error) {
	if opts.DataDir == "" {
		return nil, fmt.Errorf("embedded etcd needs a data directory")
	}
	if opts.CertDir == "" {
		return nil, fmt.Errorf("embedded etcd needs a certificate directory")
	}
	var given *url.URL
	if opts.ClientURL != "" {
		u, err := url.Parse(opts.ClientURL)
		if err != nil {
			return nil, err
		}
		if u.Scheme != "https" {
			return nil, fmt.Errorf("embedded etcd serves https only, not %s", u)
		}
		given = u
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating etcd data directory: %w", err)
	}
	bundle, err := etcdpki.Issue("embedded-etcd", []string{"127.0.0.1", "localhost"}, etcdpki.DefaultValidity)
	if err != nil {
		return nil, err
	}
	if err := bundle.Write(opts.CertDir); err != nil {
		return nil, fmt.Errorf("writing the embedded etcd's certificates: %w", err)
	}
	for attempt := 1; ; attempt++ {
		clientURL := given
		if clientURL == nil {
			if clientURL, err = pickClientURL(probe, opts.AvoidPorts); err != nil {
				return nil, err
			}
		}
		e, err := startOn(opts, clientURL)
		if err == nil {
			return e, nil
		}
		// The port was free when picked and taken before etcd listened on it: pick another. etcd fails to
		// listen before it opens the data directory, so nothing is left behind.
		if given != nil || !errors.Is(err, syscall.EADDRINUSE) || attempt == 10 {
			return nil, err
		}
	}
}

// startOn starts etcd serving clients on clientURL.
func startOn(opts Options, clientURL *url.URL) (*Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "tapp-apiserver"
	cfg.Dir = opts.DataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ClientTLSInfo.CertFile = filepath.Join(opts.CertDir, etcdpki.ServerCertFile)
	cfg.ClientTLSInfo.KeyFile = filepath.Join(opts.CertDir, etcdpki.ServerKeyFile)
	cfg.ClientTLSInfo.TrustedCAFile = filepath.Join(opts.CertDir, etcdpki.CAFile)
	cfg.ClientTLSInfo.ClientCertAuth = true
	// No peer listener. etcd still needs a peer URL for the member in its membership; the default
	// (http://localhost:2380) is recorded there and never listened on or dialled.
	cfg.ListenPeerUrls = nil
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = opts.UnsafeNoFsync
	// etcd keeps the newest applied raft entries in memory (5000 by default) for a slow follower to catch up
	// from. A single member has no follower, and each entry holds a whole written object: with 10,000 TApps
	// written in a burst that was about 8 MB of the heap. Keep as many as one in-memory raft snapshot
	// interval (100 entries).
	cfg.SnapshotCatchUpEntries = singleMemberCatchUpEntries
	cfg.LogLevel = opts.LogLevel
	if cfg.LogLevel == "" {
		cfg.LogLevel = "error"
	}
	cfg.LogOutputs = []string{"stderr"}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return nil, fmt.Errorf("embedded etcd did not become ready within a minute")
	}
	certFile, keyFile, caFile := opts.ClientTLS()
	return &Etcd{etcd: e, ClientURL: clientURL.String(), CertFile: certFile, KeyFile: keyFile, CAFile: caFile}, nil
}

// InProcessClient returns a client that calls this etcd's services directly, without gRPC, TLS or a socket:
// what the server itself uses to reach its embedded etcd. Its Endpoints are empty, it checks no client
// certificate, and it stops working when etcd stops. Close it when done.
func (e *Etcd) InProcessClient() *clientv3.Client {
	return v3client.New(e.etcd.Server)
}

// Stop shuts etcd down.
func (e *Etcd) Stop() {
	e.etcd.Close()
}

// pickClientURL returns an https URL on a loopback port that probe finds free and that is none of avoid.
func pickClientURL(probe func() (*url.URL, error), avoid []int) (*url.URL, error) {
	for range 100 {
		u, err := probe()
		if err != nil {
			return nil, err
		}
		port, _ := strconv.Atoi(u.Port())
		if !slices.Contains(avoid, port) {
			return u, nil
		}
	}
	return nil, fmt.Errorf("no free loopback port apart from %v", avoid)
}

// freeLoopbackURL returns an https URL on a loopback port that is free right now.
func freeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: addr}, nil
}
