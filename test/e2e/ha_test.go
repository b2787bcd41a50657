//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/manager"
	"github.com/tapp-io/tapp-apiserver/pkg/etcdpki"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
	"github.com/tapp-io/tapp-apiserver/pkg/localcluster"
)

// TestHA runs the HA form of the local cluster (three etcd members, two tapp-apiserver replicas behind one
// Service with an EndpointSlice per replica, kube-apiserver routing to endpoints) and checks that requests
// through kube-apiserver keep working while either replica is stopped and started again, that a restarted
// replica serves every object, that the controllers' leader moves to the other replica within the Lease's
// duration after a SIGKILL, and that a rolling update under way then finishes with every instance updated
// in place exactly once.
func TestHA(t *testing.T) {
	c, kube, tapps := startHACluster(t)
	ctx := context.Background()
	const ns = "ha"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	haWaitServiceAccount(t, kube, ns)

	// Both replicas, started at once on one store, agree on its identity: one of them recorded it, and the
	// storage fence's verdict is to serve.
	certs := func(name string) string { return filepath.Join(c.HAEtcdCertDir(), name) }
	status, err := exec.Command(absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")), "storage", "status",
		"--kubeconfig="+c.Kubeconfig, "--etcd-servers="+strings.Join(c.HAEtcdURLs(), ","),
		"--etcd-cafile="+certs(etcdpki.CAFile), "--etcd-certfile="+certs(etcdpki.ClientCertFile),
		"--etcd-keyfile="+certs(etcdpki.ClientKeyFile)).Output()
	if err != nil || !strings.Contains(string(status), "Verdict: Serve") {
		t.Fatalf("storage status of the HA store: %v\n%s", err, status)
	}
	recorded := 0
	for i := 0; i < c.Replicas(); i++ {
		log, err := os.ReadFile(c.ReplicaLog(i))
		if err != nil {
			t.Fatal(err)
		}
		// One replica creates the identity; when the other records the store's identity in the cluster
		// first (a race the fence resolves), that one says so instead.
		recorded += strings.Count(string(log), "Recorded a new storage identity") +
			strings.Count(string(log), "Recorded the store's identity in the cluster")
	}
	if recorded != 1 {
		t.Errorf("the replicas recorded %d storage identities, want 1", recorded)
	}

	t.Run("replica stopped and started", func(t *testing.T) {
		load := haStartLoad(tapps, ns, "load")
		for i := 0; i < c.Replicas(); i++ {
			took, err := c.StopReplica(i)
			if err != nil {
				t.Fatal(err)
			}
			before := load.acknowledged()
			time.Sleep(2 * time.Second) // requests keep flowing to the other replica only
			if err := c.StartReplica(ctx, i); err != nil {
				t.Fatal(err)
			}
			// A replica restarted on the same etcd serves every object acknowledged before and while it was away.
			seen := haReplicaTAppNames(t, c, i, ns)
			for _, name := range load.acknowledged() {
				if !seen[name] {
					t.Errorf("%s, restarted, does not serve TApp %s/%s", localcluster.ReplicaName(i), ns, name)
				}
			}
			t.Logf("%s stopped in %s; %d TApps acknowledged before its stop, %d after its start, all served by it",
				localcluster.ReplicaName(i), took.Round(time.Millisecond), len(before), len(load.acknowledged()))
			haWaitEndpointReady(t, kube, i)
		}
		requests, failures := load.stop()
		if len(failures) != 0 {
			t.Errorf("%d of %d requests through kube-apiserver failed while a replica was stopped: %v", len(failures), requests, failures)
		}
		t.Logf("%d requests through kube-apiserver, %d failed", requests, len(failures))
		// Both replicas serve the same objects at the same resourceVersions: one store.
		a, b := haReplicaTApps(t, c, 0, ns), haReplicaTApps(t, c, 1, ns)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("the replicas serve different TApps:\n%v\n%v", a, b)
		}
	})

	t.Run("leader killed during a rolling update", func(t *testing.T) {
		const name, replicas, oldImage, newImage = "roll", 6, "nginx:1.24", "nginx:1.25"
		tapp := haTApp(name, oldImage)
		tapp.Spec.Replicas = replicas
		one := intstr.FromInt32(1)
		tapp.Spec.UpdateStrategy.MaxUnavailable = &one
		if _, err := tapps.TKEStackAppsV1().TApps(ns).Create(ctx, tapp, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		before := haWaitPods(t, kube, ns, name, replicas, oldImage)
		leader, lease, err := c.LeadingReplica(ctx)
		if err != nil || leader < 0 {
			t.Fatalf("no replica leads (%v): Lease %v", err, lease)
		}
		history := haWatchPodImages(t, kube, ns, name)
		// Requests are routed to the killed replica until the endpoints keeper finds it gone (no readiness
		// fails first, unlike a stop): counted, not a failure of the test.
		load := haStartLoad(tapps, ns, "kill")
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, newImage)
		if _, err := tapps.TKEStackAppsV1().TApps(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-history.firstChange:
		case <-time.After(time.Minute):
			t.Fatalf("no pod got %s within a minute", newImage)
		}
		updatedAtKill := history.updated()
		lastRenew := lease.Spec.RenewTime.Time
		if err := c.KillReplica(leader); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		if current, l, err := c.LeadingReplica(ctx); err == nil && current < 0 && l.Spec.RenewTime != nil {
			lastRenew = l.Spec.RenewTime.Time // the last renewal of the killed leader
		}
		var moved time.Duration
		var holder string
		pollUntil(t, time.Minute, "the other replica to lead", func() error {
			current, l, err := c.LeadingReplica(ctx)
			if err != nil {
				return err
			}
			if current != 1-leader {
				return fmt.Errorf("holder %v", l.Spec.HolderIdentity)
			}
			moved, holder = time.Since(killed), *l.Spec.HolderIdentity
			return nil
		})
		// The other replica takes the Lease once it has seen it unrenewed for the Lease duration. It reads the
		// Lease every retry period, jittered up to 2.2 times (client-go's leader election): it sees the last
		// renewal up to one such period late, and the expiry up to one such period late.
		le := manager.NewOptions().LeaderElection
		bound := le.LeaseDuration.Duration + 2*le.RetryPeriod.Duration*22/10 - killed.Sub(lastRenew)
		if moved > bound {
			t.Errorf("%s took the Lease %s after the SIGKILL, want within the Lease duration %s after its last renewal "+
				"(%s before the kill) and two jittered retry periods", holder, moved.Round(time.Millisecond),
				le.LeaseDuration.Duration, killed.Sub(lastRenew).Round(time.Millisecond))
		}
		t.Logf("SIGKILL of %s with %d of %d pods updated: %s took the Lease after %s (Lease duration %s, last renewal %s before the kill)",
			localcluster.ReplicaName(leader), updatedAtKill, replicas, localcluster.ReplicaName(1-leader),
			moved.Round(time.Millisecond), le.LeaseDuration.Duration, killed.Sub(lastRenew).Round(time.Millisecond))
		if err := c.StartReplica(ctx, leader); err != nil {
			t.Fatal(err)
		}
		requests, failures := load.stop()
		t.Logf("%d of %d requests through kube-apiserver failed from just before the SIGKILL until the killed replica was back: %q",
			len(failures), requests, failures)
		if updatedAtKill == replicas {
			t.Errorf("all %d pods were updated before the leader was killed: the update was not in progress", replicas)
		}

		after := haWaitPods(t, kube, ns, name, replicas, newImage)
		history.stop()
		for id, pod := range before {
			now := after[id]
			if now.UID != pod.UID {
				t.Errorf("pod %s was recreated (uid %s → %s), want one in-place update", pod.Name, pod.UID, now.UID)
				continue
			}
			old, cur := pod.Status.ContainerStatuses[0].RestartCount, now.Status.ContainerStatuses[0].RestartCount
			if cur != old+1 {
				t.Errorf("pod %s: restartCount %d → %d, want one restart (one in-place update)", pod.Name, old, cur)
			}
		}
		changes, deleted, created := history.result()
		for pod, n := range changes {
			if n != 1 {
				t.Errorf("pod %s: image changed %d times, want once", pod, n)
			}
		}
		if len(changes) != replicas || len(deleted) != 0 || len(created) != 0 {
			t.Errorf("image changes %v, pods deleted %v, pods created %v; want each of %d pods changed once, none deleted or created",
				changes, deleted, created, replicas)
		}
	})

	t.Run("etcd quorum lost and back", func(t *testing.T) {
		const name = "roll"
		before := haWaitPods(t, kube, ns, name, 6, "nginx:1.25")
		for _, m := range []int{1, 2} {
			if err := c.KillEtcdMember(m); err != nil {
				t.Fatal(err)
			}
		}
		lost := time.Now()
		// Writes answer 5xx: a timeout while etcd cannot commit, then 503 once the replicas find their store
		// unreadable and fail their readiness.
		timed := rest.CopyConfig(c.AdminConfig)
		timed.Timeout = 15 * time.Second
		timedTApps := versioned.NewForConfigOrDie(timed)
		var codes []string
		pollUntil(t, 2*time.Minute, "writes to answer 503 with both replicas unready", func() error {
			_, err := timedTApps.TKEStackAppsV1().TApps(ns).Create(ctx, haTApp(fmt.Sprintf("quorum-%d", len(codes)), "nginx:1.24"), metav1.CreateOptions{})
			status, ok := err.(apierrors.APIStatus)
			if err == nil || !ok {
				t.Fatalf("a create without etcd quorum answered %v, want a 5xx status", err)
			}
			code := status.Status().Code
			if codes = append(codes, fmt.Sprintf("%d (%v)", code, err)); code < 500 {
				t.Fatalf("a create without etcd quorum answered %d (%v), want 5xx", code, err)
			}
			if code != http.StatusServiceUnavailable {
				return err
			}
			return nil
		})
		t.Logf("without quorum, writes answered %q; 503 after %s", codes, time.Since(lost).Round(time.Second))
		// The controllers have stopped: an instance whose pod is deleted gets no new one, and nothing else is
		// deleted while the API is unavailable.
		victim := before[0]
		if err := kube.CoreV1().Pods(ns).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		holdsFor(t, 20*time.Second, "the controllers stopped and nothing deleted", func() error {
			for id, pod := range before {
				now, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
				switch {
				case id == 0 && apierrors.IsNotFound(err):
				case id == 0 && err == nil && now.UID != pod.UID:
					return fmt.Errorf("pod %s was recreated without etcd quorum", pod.Name)
				case id != 0 && (err != nil || now.UID != pod.UID):
					return fmt.Errorf("pod %s was deleted or replaced without etcd quorum: %v", pod.Name, err)
				}
			}
			return nil
		})
		if err := c.StartEtcdMembers(ctx, 1, 2); err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		pollUntil(t, 2*time.Minute, "a write through kube-apiserver", func() error {
			_, err := timedTApps.TKEStackAppsV1().TApps(ns).Create(ctx, haTApp("quorum-back", "nginx:1.24"), metav1.CreateOptions{})
			return err
		})
		t.Logf("writes succeed %s after quorum is back", time.Since(back).Round(time.Second))
		after := haWaitPods(t, kube, ns, name, 6, "nginx:1.25")
		for id, pod := range before {
			if id != 0 && after[id].UID != pod.UID {
				t.Errorf("pod %s was replaced (uid %s → %s)", pod.Name, pod.UID, after[id].UID)
			}
		}
		if after[0].UID == victim.UID {
			t.Errorf("pod %s was not recreated after quorum came back", victim.Name)
		}
		for i := 0; i < c.Replicas(); i++ {
			seen := haReplicaTAppNames(t, c, i, ns)
			if !seen[name] || !seen["quorum-back"] {
				t.Errorf("%s does not serve %s and quorum-back", localcluster.ReplicaName(i), name)
			}
		}
	})
}

// startHACluster starts the HA form of the local cluster in a directory of its own.
func startHACluster(t *testing.T) (*localcluster.Cluster, kubernetes.Interface, versioned.Interface) {
	t.Helper()
	dir, err := os.MkdirTemp("", "tapp-e2e-ha-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Config{
		WorkDir:      dir,
		ToolsDir:     absolute(os.Getenv("TAPP_E2E_TOOLS_DIR")),
		ServerBinary: absolute(os.Getenv("TAPP_E2E_SERVER_BINARY")),
		Nodes:        2,
		HA:           true,
		Log:          func(format string, args ...interface{}) { t.Logf("[ha cluster] "+format, args...) },
	})
	if err != nil {
		t.Fatalf("starting the HA cluster: %v (logs in %s)", err, filepath.Join(dir, "logs"))
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			t.Logf("the HA cluster's logs are in %s", filepath.Join(dir, "logs"))
			return
		}
		_ = os.RemoveAll(dir)
	})
	// Runs before the cleanup above: after the test's load, every process of the HA form (the replicas in the
	// cluster's network namespace) and this program still listen on loopback or inside that namespace only.
	t.Cleanup(func() {
		if err := c.CheckLoopbackOnly(); err != nil {
			t.Error(err)
		}
		// And the check saw the replicas: each running one listens in the cluster's namespace, not on the host.
		listeners, err := c.Listeners()
		if err != nil {
			t.Error(err)
			return
		}
		for i := 0; i < c.Replicas(); i++ {
			if c.PID(localcluster.ReplicaName(i)) == 0 {
				continue
			}
			found := false
			for _, l := range listeners {
				if l.Process == localcluster.ReplicaName(i) {
					found = true
					if l.Namespace == "host" || l.Address.IsLoopback() {
						t.Errorf("%v: a replica must listen on its network namespace's address", l)
					}
				}
			}
			if !found {
				t.Errorf("no listener of %s among %v", localcluster.ReplicaName(i), listeners)
			}
		}
	})
	kube, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	tapps, err := versioned.NewForConfig(c.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return c, kube, tapps
}

func haWaitServiceAccount(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	pollUntil(t, time.Minute, "the default service account of "+ns, func() error {
		_, err := kube.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
		return err
	})
}

// haTApp is a TApp with one container.
func haTApp(name, image string) *tkestackv1.TApp {
	return &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tkestackv1.TAppSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		}},
	}
}

// haLoad creates TApps (no instances) and lists them through kube-apiserver until stopped, keeping the
// names of the acknowledged creates and the failures.
type haLoad struct {
	mu       sync.Mutex
	acked    []string
	failures []string
	requests int
	done     chan struct{}
	finished chan struct{}
}

func haStartLoad(tapps versioned.Interface, ns, prefix string) *haLoad {
	l := &haLoad{done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(l.finished)
		ctx := context.Background()
		for n := 0; n < 10000; n++ { // bounded: the test stops it within a minute
			select {
			case <-l.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			name := fmt.Sprintf("%s-%d", prefix, n)
			_, err := tapps.TKEStackAppsV1().TApps(ns).Create(ctx, haTApp(name, "nginx:1.24"), metav1.CreateOptions{})
			if err == nil {
				_, err = tapps.TKEStackAppsV1().TApps(ns).List(ctx, metav1.ListOptions{})
			}
			l.mu.Lock()
			l.requests += 2
			switch {
			case err != nil:
				l.failures = append(l.failures, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
			default:
				l.acked = append(l.acked, name)
			}
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *haLoad) acknowledged() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

func (l *haLoad) stop() (int, []string) {
	close(l.done)
	<-l.finished
	return l.requests, l.failures
}

// haReplicaClient reaches replica i directly, bypassing the aggregator, as the admin user.
func haReplicaClient(t *testing.T, c *localcluster.Cluster, i int) versioned.Interface {
	t.Helper()
	cfg := rest.CopyConfig(c.AdminConfig)
	cfg.Host = c.ReplicaURL(i)
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, c.ReplicaCAFile(i)
	cfg.TLSClientConfig.ServerName = "localhost"
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func haReplicaTAppNames(t *testing.T, c *localcluster.Cluster, i int, ns string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, name := range haReplicaTApps(t, c, i, ns) {
		names[name[:len(name)-len(filepath.Ext(name))]] = true
	}
	return names
}

// haReplicaTApps lists the TApps of ns on replica i as sorted "<name>.<resourceVersion>".
func haReplicaTApps(t *testing.T, c *localcluster.Cluster, i int, ns string) []string {
	t.Helper()
	// A replica that has just started may not have read kube-apiserver's client CA yet (k8s.io/apiserver loads
	// it from kube-system/extension-apiserver-authentication in the background): until then a client
	// certificate sent to it directly is anonymous for a moment.
	var list *tkestackv1.TAppList
	pollUntil(t, 30*time.Second, "listing TApps on "+localcluster.ReplicaName(i), func() error {
		var err error
		list, err = haReplicaClient(t, c, i).TKEStackAppsV1().TApps(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil && !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
			t.Fatalf("listing TApps on %s: %v", localcluster.ReplicaName(i), err)
		}
		return err
	})
	var out []string
	for _, tapp := range list.Items {
		out = append(out, tapp.Name+"."+tapp.ResourceVersion)
	}
	sort.Strings(out)
	return out
}

// haWaitEndpointReady waits until replica i's EndpointSlice says it is ready, so that the aggregator routes to
// it again.
func haWaitEndpointReady(t *testing.T, kube kubernetes.Interface, i int) {
	t.Helper()
	pollUntil(t, time.Minute, localcluster.ReplicaName(i)+"'s endpoint to be ready", func() error {
		slice, err := kube.DiscoveryV1().EndpointSlices("tapp-system").Get(context.Background(), localcluster.ReplicaName(i), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if r := slice.Endpoints[0].Conditions.Ready; r == nil || !*r {
			return fmt.Errorf("not ready")
		}
		return nil
	})
}

// haWaitPods waits until the TApp's instances 0..replicas-1 each have a Ready pod with image, and returns
// them by instance id.
func haWaitPods(t *testing.T, kube kubernetes.Interface, ns, name string, replicas int, image string) map[int]*corev1.Pod {
	t.Helper()
	out := map[int]*corev1.Pod{}
	pollUntil(t, 3*time.Minute, fmt.Sprintf("%d Ready pods of %s with %s", replicas, name, image), func() error {
		for id := 0; id < replicas; id++ {
			pod, err := kube.CoreV1().Pods(ns).Get(context.Background(), podName(name, id), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pod.Spec.Containers[0].Image != image || len(pod.Status.ContainerStatuses) == 0 ||
				pod.Status.ContainerStatuses[0].Image != image || !podReady(pod) {
				return fmt.Errorf("pod %s: %s", pod.Name, describePod(pod))
			}
			out[id] = pod
		}
		return nil
	})
	return out
}

// haPodImages counts, from a pod watch, the image changes of each pod and the pods deleted and created.
type haPodImages struct {
	mu      sync.Mutex
	image   map[string]string
	changes map[string]int
	deleted []string
	created []string
	w       watch.Interface
	done    chan struct{}
	// firstChange is closed at the first image change.
	firstChange chan struct{}
}

func haWatchPodImages(t *testing.T, kube kubernetes.Interface, ns, name string) *haPodImages {
	t.Helper()
	ctx := context.Background()
	list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		t.Fatal(err)
	}
	h := &haPodImages{image: map[string]string{}, changes: map[string]int{}, done: make(chan struct{}), firstChange: make(chan struct{})}
	for _, pod := range list.Items {
		h.image[pod.Name] = pod.Spec.Containers[0].Image
	}
	if h.w, err = kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=" + name, ResourceVersion: list.ResourceVersion}); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.done)
		for ev := range h.w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			h.mu.Lock()
			switch ev.Type {
			case watch.Added:
				h.created = append(h.created, pod.Name)
			case watch.Deleted:
				h.deleted = append(h.deleted, pod.Name)
			case watch.Modified:
				if image := pod.Spec.Containers[0].Image; image != h.image[pod.Name] {
					h.image[pod.Name] = image
					if h.changes[pod.Name]++; len(h.changes) == 1 && h.changes[pod.Name] == 1 {
						close(h.firstChange)
					}
				}
			}
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *haPodImages) updated() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.changes)
}

func (h *haPodImages) stop() {
	h.w.Stop()
	<-h.done
}

func (h *haPodImages) result() (changes map[string]int, deleted, created []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changes, h.deleted, h.created
}
