package manager

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	fake "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/fake"
)

// blockingController runs until its context is done.
type blockingController struct {
	ran, stopped chan struct{}
}

func newBlockingController() *blockingController {
	return &blockingController{ran: make(chan struct{}), stopped: make(chan struct{})}
}

func (c *blockingController) Run(ctx context.Context, _ int) {
	close(c.ran)
	<-ctx.Done()
	close(c.stopped)
}

func builds(c Controller) initFunc {
	return func(*Context) (Controller, error) { return c, nil }
}

func fails(err error) initFunc {
	return func(*Context) (Controller, error) { return nil, err }
}

// testManager is a manager on fake clientsets with short leader election periods.
func testManager(controllers map[string]initFunc) (*manager, *kubefake.Clientset) {
	o := NewOptions()
	o.LeaderElection.LeaseDuration = metav1.Duration{Duration: time.Second}
	o.LeaderElection.RenewDeadline = metav1.Duration{Duration: 500 * time.Millisecond}
	o.LeaderElection.RetryPeriod = metav1.Duration{Duration: 100 * time.Millisecond}
	kube := kubefake.NewClientset()
	return &manager{
		o:          o,
		kubeClient: kube,
		client:     fake.NewClientset(),
		recorder:   record.NewFakeRecorder(100),
		newClients: func() (kubernetes.Interface, kubernetes.Interface, versioned.Interface, error) {
			return kubefake.NewClientset(), kubefake.NewClientset(), fake.NewClientset(), nil
		},
		controllers: controllers,
	}, kube
}

// requireLeaseReleased fails unless nobody holds the manager's Lease.
func requireLeaseReleased(t *testing.T, m *manager, kube *kubefake.Clientset) {
	t.Helper()
	le := m.o.LeaderElection
	lease, err := kube.CoordinationV1().Leases(le.ResourceNamespace).Get(t.Context(), le.ResourceName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Lease: %v", err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the Lease is still held by %s after the controllers stopped", *h)
	}
}

// runAsync runs f and returns the channel its result arrives on.
func runAsync(f func() error) chan error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	return done
}

func waitResult(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the manager did not return")
		return nil
	}
}

func waitClosed(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting until %s", what)
	}
}

func TestRunControllersRunsNoneWhenOneCannotBeBuilt(t *testing.T) {
	good := newBlockingController()
	m, _ := testManager(map[string]initFunc{"bad": fails(errors.New("no informer")), "good": builds(good)})
	err := m.runControllers(t.Context(), []string{"bad", "good"})
	if err == nil || !strings.Contains(err.Error(), "controller bad cannot start: no informer") {
		t.Fatalf("runControllers = %v, want the build error of controller bad", err)
	}
	select {
	case <-good.ran:
		t.Error("controller good ran although controller bad could not be built")
	default:
	}
}

func TestRunControllersRefusesWhenClientsCannotBeCreated(t *testing.T) {
	m, _ := testManager(map[string]initFunc{"good": builds(newBlockingController())})
	m.newClients = func() (kubernetes.Interface, kubernetes.Interface, versioned.Interface, error) {
		return nil, nil, nil, errors.New("bad TLS configuration")
	}
	err := m.runControllers(t.Context(), []string{"good"})
	if err == nil || !strings.Contains(err.Error(), "controller good: creating its clients: bad TLS configuration") {
		t.Fatalf("runControllers = %v, want the client error of controller good", err)
	}
}

func TestRunWhileLeadingReleasesTheLeaseWhenAControllerCannotBeBuilt(t *testing.T) {
	m, kube := testManager(map[string]initFunc{"bad": fails(errors.New("no informer"))})
	err := waitResult(t, runAsync(func() error { return m.runWhileLeading(t.Context(), []string{"bad"}) }))
	if err == nil || !strings.Contains(err.Error(), "controller bad cannot start") {
		t.Fatalf("runWhileLeading = %v, want the build error of controller bad", err)
	}
	requireLeaseReleased(t, m, kube)
}

func TestRunWhileLeadingFailsWhenTheLeaseIsLost(t *testing.T) {
	ctrl := newBlockingController()
	m, kube := testManager(map[string]initFunc{"good": builds(ctrl)})
	var unreachable atomic.Bool
	kube.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		return unreachable.Load(), nil, errors.New("connection refused")
	})
	done := runAsync(func() error { return m.runWhileLeading(t.Context(), []string{"good"}) })
	waitClosed(t, ctrl.ran, "the controller runs")

	// The Lease can no longer be renewed: the cluster cannot be reached.
	unreachable.Store(true)
	err := waitResult(t, done)
	if err == nil || !strings.Contains(err.Error(), "lost the Lease kube-system/tapp-apiserver-controllers") {
		t.Fatalf("runWhileLeading = %v, want the loss of the Lease", err)
	}
	select {
	case <-ctrl.stopped:
	default:
		t.Error("runWhileLeading returned while the controller still ran")
	}
}

func TestRunWhileLeadingStopsTheControllersWhenDone(t *testing.T) {
	ctrl := newBlockingController()
	m, kube := testManager(map[string]initFunc{"good": builds(ctrl)})
	ctx, cancel := context.WithCancel(t.Context())
	done := runAsync(func() error { return m.runWhileLeading(ctx, []string{"good"}) })
	waitClosed(t, ctrl.ran, "the controller runs")
	cancel()
	if err := waitResult(t, done); err != nil {
		t.Fatalf("runWhileLeading = %v, want nil when its context is done", err)
	}
	select {
	case <-ctrl.stopped:
	default:
		t.Error("runWhileLeading returned while the controller still ran")
	}
	requireLeaseReleased(t, m, kube)
}

func TestRunWhileLeadingReturnsWhenDoneWhileCampaigning(t *testing.T) {
	ctrl := newBlockingController()
	m, kube := testManager(map[string]initFunc{"good": builds(ctrl)})
	// Another replica holds the Lease and keeps it.
	kube.PrependReactor("*", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := waitResult(t, runAsync(func() error { return m.runWhileLeading(ctx, []string{"good"}) })); err != nil {
		t.Fatalf("runWhileLeading = %v, want nil when its context is done before it leads", err)
	}
	select {
	case <-ctrl.ran:
		t.Error("the controller ran without the Lease")
	default:
	}
}

// TestRunReturnsWhyTheManagerCannotStart: the public Run, with real clients (of an address nothing
// listens on), returns the error of a manager that cannot start instead of logging it, for the server to
// exit on (cmd/tapp-apiserver/app.Run; test/e2e TestServerExitsWhenTheControllersCannotStart).
func TestRunReturnsWhyTheManagerCannotStart(t *testing.T) {
	o := NewOptions()
	o.LeaderElection.ResourceLock = "no-such-lock"
	unreachable := &rest.Config{Host: "https://127.0.0.1:1"}
	err := waitResult(t, runAsync(func() error { return Run(t.Context(), o, unreachable, unreachable) }))
	if err == nil || !strings.Contains(err.Error(), "leader election lock") {
		t.Fatalf("Run = %v, want the error of the leader election lock", err)
	}
}
