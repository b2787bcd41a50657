// Package embeddedetcd runs a single-member etcd inside the server process, on loopback, persisting
// under a data directory, for installations that do not bring an external etcd cluster.
package embeddedetcd

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Options configure the embedded etcd.
type Options struct {
	// DataDir is where etcd keeps its data; objects survive a restart on the same directory.
	DataDir string
	// UnsafeNoFsync skips fsync: faster, but a machine crash can lose writes. For tests and benchmarks.
	UnsafeNoFsync bool
	// LogLevel is etcd's log level (debug, info, warn, error).
	LogLevel string
	// ClientURL is the loopback URL etcd serves clients on, e.g. from FreeClientURL; empty picks a free port
	// when etcd starts.
	ClientURL string
}

// Etcd is a running embedded etcd.
type Etcd struct {
	etcd *embed.Etcd
	// ClientURL is the loopback URL clients connect to.
	ClientURL string
}

// Start starts etcd and waits until it serves clients.
func Start(opts Options) (*Etcd, error) {
	if opts.DataDir == "" {
		return nil, fmt.Errorf("embedded etcd needs a data directory")
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating etcd data directory: %w", err)
	}
	clientURL, err := freeLoopbackURL()
	if opts.ClientURL != "" {
		clientURL, err = url.Parse(opts.ClientURL)
	}
	if err != nil {
		return nil, err
	}
	peerURL, err := freeLoopbackURL()
	if err != nil {
		return nil, err
	}

	cfg := embed.NewConfig()
	cfg.Name = "tapp-apiserver"
	cfg.Dir = opts.DataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = opts.UnsafeNoFsync
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
	return &Etcd{etcd: e, ClientURL: clientURL.String()}, nil
}

// Stop shuts etcd down.
func (e *Etcd) Stop() {
	e.etcd.Close()
}

// FreeClientURL returns an http URL on a loopback port that is free right now, for Options.ClientURL: it
// lets the etcd servers be known, and the flags validated, before etcd starts.
func FreeClientURL() (string, error) {
	u, err := freeLoopbackURL()
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// freeLoopbackURL returns an http URL on a loopback port that is free right now.
func freeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "http", Host: addr}, nil
}
