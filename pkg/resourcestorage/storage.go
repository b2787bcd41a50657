// Package resourcestorage builds the server's storage of its resources. On the embedded etcd it makes direct
// calls into it (embeddedetcd.Etcd.InProcessClient) instead of gRPC over TLS on loopback: each write and each
// watch event then skips the TLS records, the HTTP/2 frames and the socket of a loopback connection in both
// directions. On either etcd, embedded or reached with --etcd-servers, each watch cache fills itself through
// a storage of its own that interns what it decodes (package interning), so that the objects it keeps share
// the parts they repeat.
//
// It is k8s.io/apiserver's etcd3 storage and watch cache, put together as its storage factory does, with only
// the client and the watch cache's codec changed: the library builds its client from endpoints and its watch
// cache on the storage it serves requests from, and has no place for either change. Everything else that
// reaches etcd (health checks, the storage fence, the storage commands) uses the network.
package resourcestorage

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/interning"
)

// Backend makes storages on one in-process etcd. They share one compactor, as the library's storages of one
// etcd do; it runs while any storage does.
type Backend struct {
	newClient func() *clientv3.Client
	// endpoint names the in-process etcd to the library's etcd feature checker.
	endpoint string

	// interned holds the values that the watch caches' objects share.
	interned *interning.Table

	mu        sync.Mutex
	compactor compactor
	refs      int
}

// compactor is the compactor of etcd3.NewCompactor.
type compactor interface {
	etcd3.Compactor
	Stop()
}

// New returns a backend whose storages reach etcd through the clients newClient returns.
func New(newClient func() *clientv3.Client) *Backend {
	b := &Backend{newClient: newClient, interned: interning.NewTable()}
	b.endpoint = fmt.Sprintf("in-process-etcd-%p", b)
	return b
}

// RESTOptionsGetter returns inner's options with every resource's storage made on this backend: behind the
// watch cache when watchCache says the resource has one, as inner's decorator would.
func (b *Backend) RESTOptionsGetter(inner generic.RESTOptionsGetter, watchCache func(schema.GroupResource) bool) generic.RESTOptionsGetter {
	return &optionsGetter{inner: inner, backend: b, watchCache: watchCache}
}

type optionsGetter struct {
	inner      generic.RESTOptionsGetter
	backend    *Backend
	watchCache func(schema.GroupResource) bool
}

func (g *optionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.inner.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	opts.Decorator = undecorated(g.backend.rawStorage)
	if g.watchCache(resource) {
		opts.Decorator = cached(g.backend.rawStorage, g.backend.interned)
	}
	return opts, nil
}

// InterningWatchCache returns inner's options with every watch cache filled through a storage that interns
// what it decodes, for storages on etcd servers reached over the network (--etcd-servers): the storages
// are the library's own, only the watch cache's objects share their repeated parts.
func InterningWatchCache(inner generic.RESTOptionsGetter, watchCache func(schema.GroupResource) bool) generic.RESTOptionsGetter {
	return &interningGetter{inner: inner, watchCache: watchCache, interned: interning.NewTable()}
}

type interningGetter struct {
	inner      generic.RESTOptionsGetter
	watchCache func(schema.GroupResource) bool
	interned   *interning.Table
}

func (g *interningGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.inner.GetRESTOptions(resource, example)
	if err != nil || !g.watchCache(resource) {
		return opts, err
	}
	opts.Decorator = cached(networkStorage, g.interned)
	return opts, nil
}

// rawMaker makes a resource's storage without a watch cache.
type rawMaker func(config *storagebackend.ConfigForResource, resourcePrefix string, newFunc, newListFunc func() runtime.Object) (storage.Interface, factory.DestroyFunc, error)

// networkStorage is the library's storage on the etcd servers of config.
func networkStorage(config *storagebackend.ConfigForResource, resourcePrefix string, newFunc, newListFunc func() runtime.Object) (storage.Interface, factory.DestroyFunc, error) {
	return generic.NewRawStorage(config, newFunc, newListFunc, resourcePrefix)
}

// undecorated is a generic.StorageDecorator of the storages makeRaw makes.
func undecorated(makeRaw rawMaker) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, _ func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, _ storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		return makeRaw(config, resourcePrefix, newFunc, newListFunc)
	}
}

// cached is a generic.StorageDecorator: a storage of makeRaw behind the watch cache, as
// registry.StorageWithCacher builds it. The cache fills itself from a storage of its own, which interns what
// it decodes in table (package interning): the objects the cache keeps share the parts they repeat, and the
// objects a request decodes for itself (a create's, an update's) cost no interning.
func cached(makeRaw rawMaker, table *interning.Table) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string,
		keyFunc func(obj runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
		getAttrsFunc storage.AttrFunc, triggerFuncs storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		raw, destroyRaw, err := makeRaw(config, resourcePrefix, newFunc, newListFunc)
		if err != nil {
			return nil, nil, err
		}
		interningConfig := *config
		interningConfig.Codec = table.Decoding(config.Codec)
		source, destroySource, err := makeRaw(&interningConfig, resourcePrefix, newFunc, newListFunc)
		if err != nil {
			destroyRaw()
			return nil, nil, err
		}
		cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
			Storage:             source,
			Versioner:           storage.APIObjectVersioner{},
			GroupResource:       config.GroupResource,
			EventsHistoryWindow: config.EventsHistoryWindow,
			ResourcePrefix:      resourcePrefix,
			KeyFunc:             keyFunc,
			NewFunc:             newFunc,
			NewListFunc:         newListFunc,
			GetAttrsFunc:        getAttrsFunc,
			IndexerFuncs:        triggerFuncs,
			Indexers:            indexers,
			Codec:               config.Codec,
		})
		if err != nil {
			destroySource()
			destroyRaw()
			return nil, nil, err
		}
		delegator := cacherstorage.NewCacheDelegator(cacher, raw)
		var once sync.Once
		return delegator, func() {
			once.Do(func() {
				delegator.Stop()
				cacher.Stop()
				destroySource()
				destroyRaw()
			})
		}, nil
	}
}

// rawStorage is a rawMaker: k8s.io/apiserver's etcd3 store on an in-process client, made as the library's
// storage factory makes it for an etcd of its endpoints.
func (b *Backend) rawStorage(config *storagebackend.ConfigForResource, resourcePrefix string, newFunc, newListFunc func() runtime.Object) (storage.Interface, factory.DestroyFunc, error) {
	compactor := b.acquireCompactor(config.CompactionInterval)
	client := b.newClient()
	// Per-request etcd latency metrics, as the library's storages have.
	client.KV = etcd3.NewETCDLatencyTracker(client.KV)
	kube := &kubernetes.Client{Client: client}
	kube.Kubernetes = kube

	transformer := config.Transformer
	if transformer == nil {
		transformer = identity.NewEncryptCheckTransformer()
	}
	versioner := storage.APIObjectVersioner{}
	decoder := etcd3.NewDefaultDecoder(config.Codec, versioner)
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.AllowUnsafeMalformedObjectDeletion) {
		transformer = etcd3.WithCorruptObjErrorHandlingTransformer(transformer)
		decoder = etcd3.WithCorruptObjErrorHandlingDecoder(decoder)
	}
	store, err := etcd3.New(kube, compactor, config.Codec, newFunc, newListFunc, config.Prefix, resourcePrefix,
		config.GroupResource, transformer, config.LeaseManagerConfig, decoder, versioner)
	if err != nil {
		b.releaseCompactor()
		_ = client.Close()
		return nil, nil, fmt.Errorf("storage of %s on the embedded etcd: %w", config.GroupResource, err)
	}
	// The library asks each etcd endpoint whether it serves watch progress requests, which consistent reads
	// from the watch cache need; an in-process client has no endpoint, so ask the one etcd it reaches.
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.ConsistentListFromCache) ||
		utilfeature.DefaultFeatureGate.Enabled(genericfeatures.WatchList) {
		etcdfeature.DefaultFeatureSupportChecker.CheckClient(client.Ctx(), statusClient{client, b.endpoint}, storage.RequestWatchProgress)
	}
	var result storage.Interface = store
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.AllowUnsafeMalformedObjectDeletion) {
		result = etcd3.NewStoreWithUnsafeCorruptObjectDeletion(result, config.GroupResource)
	}
	var once sync.Once
	return result, func() {
		// The library calls a storage's destroy function once for each of its subresources.
		once.Do(func() {
			store.Close()
			_ = client.Close()
			b.releaseCompactor()
		})
	}, nil
}

// acquireCompactor returns the backend's compactor, started on first use; nil when compaction is off.
func (b *Backend) acquireCompactor(interval time.Duration) compactor {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refs++
	if b.compactor == nil && interval > 0 {
		client := b.newClient()
		b.compactor = etcd3.NewCompactor(client, interval, clock.RealClock{}, func() { _ = client.Close() })
	}
	return b.compactor
}

// releaseCompactor stops the compactor when no storage uses it any more.
func (b *Backend) releaseCompactor() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refs--
	if b.refs == 0 && b.compactor != nil {
		b.compactor.Stop()
		b.compactor = nil
	}
}

// statusClient is an in-process client as the library's etcd feature checker sees one: a single endpoint,
// which the in-process maintenance client answers for whatever its name. The checker asks each endpoint
// name once in the process, so each backend has a name of its own.
type statusClient struct {
	client   *clientv3.Client
	endpoint string
}

func (s statusClient) Endpoints() []string { return []string{s.endpoint} }

func (s statusClient) Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error) {
	return s.client.Maintenance.Status(ctx, endpoint)
}
