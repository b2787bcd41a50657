package manager

import (
	"context"
	"fmt"
	"os"
	"sync"

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
// election, the controllers run only while this process holds the Lease; when it is lost they are stopped
// and the process campaigns again.
func Run(ctx context.Context, o *Options, kubeConfig, serverConfig *rest.Config) error {
	enabled := o.Enabled()
	if len(enabled) == 0 {
		klog.InfoS("No controllers enabled")
		return nil
	}
	kubeClient, err := kubernetes.NewForConfig(withLimits(kubeConfig, o))
	if err != nil {
		return fmt.Errorf("client of the cluster: %w", err)
	}
	client, err := versioned.NewForConfig(withLimits(serverConfig, o))
	if err != nil {
		return fmt.Errorf("client of tapp-apiserver: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := tappscheme.AddToScheme(scheme); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartStructuredLogging(3)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeClient.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme, corev1.EventSource{Component: Component})

	runControllers := func(ctx context.Context) {
		c := &Context{
			KubeClient:    kubeClient,
			Client:        client,
			KubeInformers: informers.NewSharedInformerFactory(kubeClient, o.ResyncPeriod),
			Informers:     externalversions.NewSharedInformerFactory(client, o.ResyncPeriod),
			Recorder:      recorder,
		}
		var running []Controller
		for _, name := range enabled {
			// Every controller gets clients with rate limits of their own, as kube-controller-manager's
			// controllers do, so that one busy controller does not slow the others down.
			own := *c
			var err error
			if own.KubeClient, err = kubernetes.NewForConfig(withLimits(kubeConfig, o)); err == nil {
				own.PodStatusClient, err = kubernetes.NewForConfig(withLimits(kubeConfig, o))
			}
			if err == nil {
				own.Client, err = versioned.NewForConfig(withLimits(serverConfig, o))
			}
			if err != nil {
				klog.ErrorS(err, "Cannot create the clients of a controller", "controller", name)
				continue
			}
			ctrl, err := registry[name](&own)
			if err != nil {
				klog.ErrorS(err, "Cannot start controller", "controller", name)
				continue
			}
			klog.InfoS("Starting controller", "controller", name, "workers", o.Workers)
			running = append(running, ctrl)
		}
		c.KubeInformers.Start(ctx.Done())
		c.Informers.Start(ctx.Done())
		var wg sync.WaitGroup
		for _, ctrl := range running {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctrl.Run(ctx, o.Workers)
			}()
		}
		wg.Wait()
		c.KubeInformers.Shutdown()
		c.Informers.Shutdown()
	}

	if !o.LeaderElection.LeaderElect {
		runControllers(ctx)
		return nil
	}
	hostname, _ := os.Hostname()
	identity := hostname + "_" + string(uuid.NewUUID())
	le := o.LeaderElection
	lock, err := resourcelock.New(le.ResourceLock, le.ResourceNamespace, le.ResourceName,
		kubeClient.CoreV1(), kubeClient.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: identity, EventRecorder: recorder})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	for ctx.Err() == nil {
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            Component,
			LeaseDuration:   le.LeaseDuration.Duration,
			RenewDeadline:   le.RenewDeadline.Duration,
			RetryPeriod:     le.RetryPeriod.Duration,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: runControllers,
				OnStoppedLeading: func() { klog.InfoS("Controllers stopped: not the leader", "identity", identity) },
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
		elector.Run(ctx)
	}
	return nil
}

// withLimits copies config with the controllers' user agent and rate limits.
func withLimits(config *rest.Config, o *Options) *rest.Config {
	c := rest.CopyConfig(config)
	c.QPS = o.KubeAPIQPS
	c.Burst = o.KubeAPIBurst
	c.UserAgent = Component
	return c
}
