package manager

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	// Workqueue and leader election metrics on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	tappscheme "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/scheme"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/informers/externalversions"
)

// Component is the name the controllers use in events, user agents and the Lease.
const Component = "tapp-apiserver-controllers"

// The Lease that elects the replica running the controllers, unless --leader-elect-resource-name and
// --leader-elect-resource-namespace say otherwise.
const (
	LeaseNamespace = "kube-system"
	LeaseName      = Component
)

// Context is what a controller is built from. The informer factories are shared by every controller of one
// leadership term and started by the manager after all controllers have registered their informers.
// Each controller gets its own clients, each with the rate limit of --controller-kube-api-qps/-burst.
type Context struct {
	// KubeClient reaches the cluster.
	KubeClient kubernetes.Interface
	// PodStatusClient reaches the cluster for pod status writes (the readiness-gate condition of in-place
	// updates, the writes a kubelet would otherwise make with its own budget).
	PodStatusClient kubernetes.Interface
	// Client reaches this server.
	Client        versioned.Interface
	KubeInformers informers.SharedInformerFactory
	Informers     externalversions.SharedInformerFactory
	Recorder      record.EventRecorder
}

// Controller is a running controller: Run blocks until ctx is done and its workers have stopped.
type Controller interface {
	Run(ctx context.Context, workers int)
}

type initFunc func(*Context) (Controller, error)

// Run runs the enabled controllers until ctx is done. kubeConfig reaches the cluster (pods, nodes, events,
// workloads, the Lease); serverConfig reaches this server (TApps, YurtAppDaemons, NodePools). With leader
// election, the controllers run only while this process holds the Lease.
//
// Run returns an error when a controller cannot be built (none runs then) or when this process loses the
// Lease it held; the caller stops the process, as kube-controller-manager does, so that it is restarted
// and campaigns afresh. It returns nil when ctx is done.
func Run(ctx context.Context, o *Options, kubeConfig, serverConfig *rest.Config) error {
	enabled := o.Enabled()
	if len(enabled) == 0 {
		klog.InfoS("No controllers enabled")
		return nil
	}
	m, err := newManager(ctx, o, kubeConfig, serverConfig)
	if err != nil {
		return err
	}
	defer m.broadcaster.Shutdown()
	if !o.LeaderElection.LeaderElect {
		return m.runControllers(ctx, enabled)
	}
	return m.runWhileLeading(ctx, enabled)
}

// manager holds what the controllers of every leadership term share.
type manager struct {
	o *Options
	// kubeClient and client back the shared informers, the events and the Lease.
	kubeClient  kubernetes.Interface
	client      versioned.Interface
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	// newClients gives each controller clients with rate limits of their own.
	newClients func() (kube, podStatus kubernetes.Interface, client versioned.Interface, err error)
	// controllers builds a controller by name.
	controllers map[string]initFunc
}

// newManager creates the shared clients and the event broadcaster.
func newManager(ctx context.Context, o *Options, kubeConfig, serverConfig *rest.Config) (*manager, error) {
	kubeClient, err := kubernetes.NewForConfig(withLimits(kubeConfig, o))
	if err != nil {
		return nil, fmt.Errorf("client of the cluster: %w", err)
	}
	client, err := versioned.NewForConfig(inProtobuf(withLimits(serverConfig, o)))
	if err != nil {
		return nil, fmt.Errorf("client of tapp-apiserver: %w", err)
	}
	// The controllers' writes (a sync has a slow-start batch of creations in flight, as kube-controller-manager
	// has) go over connections of their own, made once and shared by every controller and leadership term;
	// each controller's client still has a rate limit of its own.
	writes, err := overConnections(withLimits(kubeConfig, o), writeConnections)
	if err != nil {
		return nil, fmt.Errorf("connections of the controllers' writes: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := tappscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartStructuredLogging(3)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeClient.CoreV1().Events("")})
	return &manager{
		o:           o,
		kubeClient:  kubeClient,
		client:      client,
		broadcaster: broadcaster,
		recorder:    broadcaster.NewRecorder(scheme, corev1.EventSource{Component: Component}),
		// Every controller gets clients with rate limits of their own, as kube-controller-manager's
		// controllers do, so that one busy controller does not slow the others down.
		newClients: func() (kubernetes.Interface, kubernetes.Interface, versioned.Interface, error) {
			kube, err := kubernetes.NewForConfig(writes)
			if err != nil {
				return nil, nil, nil, err
			}
			podStatus, err := kubernetes.NewForConfig(withLimits(kubeConfig, o))
			if err != nil {
				return nil, nil, nil, err
			}
			client, err := versioned.NewForConfig(inProtobuf(withLimits(serverConfig, o)))
			return kube, podStatus, client, err
		},
		controllers: registry,
	}, nil
}

// stripManagedFields drops the managed fields of every object before the controllers' informers keep it, as
// kube-controller-manager does: no controller reads them, they are a large share of each object (46 of the 191 MB
// of decoded TApps in a heap profile of the server with 10,000 of them), and an update sent without them keeps
// the stored ones.
func stripManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

// runControllers builds the named controllers on fresh informer factories, starts the informers and runs
// the controllers until ctx is done. If any controller cannot be built, none runs and the error says which.
func (m *manager) runControllers(ctx context.Context, names []string) error {
	c := &Context{
		KubeClient:    m.kubeClient,
		Client:        m.client,
		KubeInformers: informers.NewSharedInformerFactoryWithOptions(m.kubeClient, m.o.ResyncPeriod, informers.WithTransform(stripManagedFields)),
		Informers:     externalversions.NewSharedInformerFactoryWithOptions(m.client, m.o.ResyncPeriod, externalversions.WithTransform(stripManagedFields)),
		Recorder:      m.recorder,
	}
	defer c.KubeInformers.Shutdown()
	defer c.Informers.Shutdown()
	running, err := m.build(c, names)
	if err != nil {
		return err
	}
	c.KubeInformers.Start(ctx.Done())
	c.Informers.Start(ctx.Done())
	var wg sync.WaitGroup
	for name, ctrl := range running {
		klog.InfoS("Starting controller", "controller", name, "workers", m.o.Workers)
		wg.Go(func() { ctrl.Run(ctx, m.o.Workers) })
	}
	wg.Wait()
	return nil
}

// build builds every named controller, each with clients of its own, from c.
func (m *manager) build(c *Context, names []string) (map[string]Controller, error) {
	running := make(map[string]Controller, len(names))
	var errs []error
	for _, name := range names {
		own := *c
		var err error
		if own.KubeClient, own.PodStatusClient, own.Client, err = m.newClients(); err != nil {
			errs = append(errs, fmt.Errorf("controller %s: creating its clients: %w", name, err))
			continue
		}
		ctrl, err := m.controllers[name](&own)
		if err != nil {
			errs = append(errs, fmt.Errorf("controller %s cannot start: %w", name, err))
			continue
		}
		running[name] = ctrl
	}
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	return running, nil
}

// runWhileLeading campaigns for the Lease and runs the controllers while this process holds it. It returns
// once the controllers have stopped: nil when ctx is done, an error when they could not be built (the Lease
// is released) or when the Lease was lost.
func (m *manager) runWhileLeading(ctx context.Context, names []string) error {
	le := m.o.LeaderElection
	hostname, _ := os.Hostname()
	identity := hostname + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(le.ResourceLock, le.ResourceNamespace, le.ResourceName,
		m.kubeClient.CoreV1(), m.kubeClient.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: identity, EventRecorder: m.recorder})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	electing, stopElecting := context.WithCancel(ctx)
	defer stopElecting()
	var (
		started    atomic.Bool
		stopped    = make(chan struct{})
		controlErr error
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            Component,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				started.Store(true)
				defer close(stopped)
				klog.InfoS("Leading: starting the controllers", "identity", identity)
				if controlErr = m.runControllers(leading, names); controlErr != nil {
					stopElecting() // releases the Lease for another replica
				}
			},
			// The outcome is reported once the controllers have stopped, below.
			OnStoppedLeading: func() {},
			OnNewLeader: func(leader string) {
				if leader != identity {
					klog.InfoS("Controllers are run by another replica", "leader", leader)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	// Run returns when ctx is done, when the controllers stop electing, or when the Lease is lost; the last
	// two only after this process has led.
	elector.Run(electing)
	if ctx.Err() != nil && !started.Load() {
		return nil // done while campaigning
	}
	<-stopped
	switch {
	case controlErr != nil:
		return controlErr
	case ctx.Err() != nil:
		klog.InfoS("Controllers stopped", "identity", identity)
		return nil
	default:
		return fmt.Errorf("lost the Lease %s/%s that elects the replica running the controllers; the controllers "+
			"have stopped", le.ResourceNamespace, le.ResourceName)
	}
}

// inProtobuf makes the requests of a client of this server's own objects (TApps, YurtAppDaemons, NodePools,
// their lists, watches and scale) protobuf, as kube-controller-manager's clients of built-in objects are.
// Answers in JSON are still read. It changes config and returns it.
func inProtobuf(config *rest.Config) *rest.Config {
	config.ContentType = runtime.ContentTypeProtobuf
	config.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return config
}

// withLimits copies config with the controllers' user agent and rate limits.
func withLimits(config *rest.Config, o *Options) *rest.Config {
	c := rest.CopyConfig(config)
	c.QPS = o.KubeAPIQPS
	c.Burst = o.KubeAPIBurst
	c.UserAgent = Component
	return c
}
