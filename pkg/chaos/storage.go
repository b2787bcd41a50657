package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	yurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// StoreCluster is what the storage scenario needs besides Cluster: tapp-apiserver stopped and started
// again around a change of its embedded etcd's data directory. *localcluster.Cluster has it.
type StoreCluster interface {
	Cluster
	StopTAppAPIServer() error
	StartTAppAPIServer() error
	TAppAPIServerDataDir() string
}

// StorageResult are the figures of the storage scenario.
type StorageResult struct {
	// Window is how long each wrong store is watched.
	Window time.Duration  `json:"window"`
	Phases []StoragePhase `json:"phases"`
}

// StoragePhase is one wrong store: tapp-apiserver restarted on it, watched for the window, then put back on
// its own store.
type StoragePhase struct {
	Name string `json:"name"`
	// Watched counts the pods, claims and Deployments watched.
	Watched int `json:"watched"`
	// Served is whether the TApps of the scenario were served from the wrong store at any time (they must not
	// be); Refused whether the API answered 503 meanwhile.
	Served  bool `json:"served"`
	Refused bool `json:"refused"`
	// Deleted are the workloads deleted (or being deleted) while the wrong store was there, and DeletedAfter
	// those deleted once the right store was back.
	Deleted      []string `json:"deleted"`
	DeletedAfter []string `json:"deletedAfter"`
	// Recovered is how long the right store took to be served again, from the start of the server on it.
	Recovered time.Duration `json:"recovered"`
}

// runStorage restarts tapp-apiserver on a wiped store, then on a rewound one (a copy of its data directory
// taken before more TApps were created), and counts the pods, claims and Deployments deleted meanwhile and
// after its own store is back; nothing is accepted, so the target is 0.
func runStorage(ctx context.Context, cluster StoreCluster, c *clients, opts Options) (*StorageResult, error) {
	res := &StorageResult{Window: opts.StorageWindow}
	ns, err := newNamespace(ctx, c, "chaos-storage")
	if err != nil {
		return nil, err
	}
	opts.Log("storage: namespace %s", ns)
	if err := retry(ctx, time.Minute, func(ctx context.Context) error {
		_, err := c.tapp.OpenYurtAppsV1alpha1().NodePools().Create(ctx, &yurtv1alpha1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{poolSelectLabel: ns}},
			Spec:       yurtv1alpha1.NodePoolSpec{Type: "Edge"},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}); err != nil {
		return nil, err
	}
	create := func(obj *tkestackv1.TApp) error {
		return retry(ctx, time.Minute, func(ctx context.Context) error {
			_, err := c.tapp.TKEStackAppsV1().TApps(ns).Create(ctx, obj, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	}
	if err := create(storageTApp("stored", 4)); err != nil {
		return nil, err
	}
	if err := retry(ctx, time.Minute, func(ctx context.Context) error {
		_, err := c.tapp.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(ctx, chaosYAD(ns), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}); err != nil {
		return nil, err
	}
	// 4 pods and 4 claims of the TApp, 1 Deployment of the YurtAppDaemon.
	baseline, err := waitWorkloads(ctx, c, ns, 9, opts.PhaseTimeout)
	if err != nil {
		return nil, err
	}

	dataDir := cluster.TAppAPIServerDataDir()
	aside := dataDir + ".chaos"

	// Wiped: an empty data directory.
	if err := cluster.StopTAppAPIServer(); err != nil {
		return nil, err
	}
	if err := os.Rename(dataDir, aside); err != nil {
		return nil, err
	}
	phase, err := watchWrongStore(ctx, cluster, c, ns, "store wiped", baseline, aside, opts)
	if err != nil {
		return nil, err
	}
	res.Phases = append(res.Phases, phase)

	// Rewound: a copy taken before another TApp was created (and the high-water mark moved past it).
	copyDir := dataDir + ".snapshot"
	if err := cluster.StopTAppAPIServer(); err != nil {
		return nil, err
	}
	if out, err := exec.Command("cp", "-a", dataDir, copyDir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copying the data directory: %v: %s", err, out)
	}
	if err := cluster.StartTAppAPIServer(); err != nil {
		return nil, err
	}
	if _, err := waitServed(ctx, c, ns, opts.PhaseTimeout); err != nil {
		return nil, err
	}
	if err := create(storageTApp("later", 2)); err != nil {
		return nil, err
	}
	if baseline, err = waitWorkloads(ctx, c, ns, 13, opts.PhaseTimeout); err != nil {
		return nil, err
	}
	time.Sleep(15 * time.Second) // the servers move the mark every 10 s
	if err := cluster.StopTAppAPIServer(); err != nil {
		return nil, err
	}
	if err := os.Rename(dataDir, aside); err != nil {
		return nil, err
	}
	if err := os.Rename(copyDir, dataDir); err != nil {
		return nil, err
	}
	phase, err = watchWrongStore(ctx, cluster, c, ns, "store rewound", baseline, aside, opts)
	if err != nil {
		return nil, err
	}
	res.Phases = append(res.Phases, phase)

	if err := c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		opts.Log("storage: deleting namespace %s: %v", ns, err)
	}
	_ = c.tapp.OpenYurtAppsV1alpha1().NodePools().Delete(ctx, ns, metav1.DeleteOptions{})
	return res, nil
}

// watchWrongStore starts tapp-apiserver on the data directory as it is (the wrong store), watches the
// baseline for the window, then puts the right store (aside) back and watches until it is served and for
// a few seconds more. The server is running when it returns.
func watchWrongStore(ctx context.Context, cluster StoreCluster, c *clients, ns, name string, baseline map[string]types.UID, aside string, opts Options) (StoragePhase, error) {
	phase := StoragePhase{Name: name, Watched: len(baseline)}
	dataDir := cluster.TAppAPIServerDataDir()
	if err := cluster.StartTAppAPIServer(); err != nil {
		return phase, err
	}
	opts.Log("storage: %s: watching %d workloads for %s", name, len(baseline), opts.StorageWindow)
	deleted := map[string]bool{}
	deadline := time.Now().Add(opts.StorageWindow)
	for time.Now().Before(deadline) {
		_, err := c.tapp.TKEStackAppsV1().TApps(ns).Get(ctx, "stored", metav1.GetOptions{})
		switch {
		case err == nil || apierrors.IsNotFound(err):
			phase.Served = true
		case apierrors.IsServiceUnavailable(err):
			phase.Refused = true
		}
		gone(ctx, c, ns, baseline, deleted)
		time.Sleep(time.Second)
	}
	phase.Deleted = sortedKeys(deleted)

	if err := cluster.StopTAppAPIServer(); err != nil {
		return phase, err
	}
	if err := os.RemoveAll(dataDir); err != nil {
		return phase, err
	}
	if err := os.Rename(aside, dataDir); err != nil {
		return phase, err
	}
	if err := cluster.StartTAppAPIServer(); err != nil {
		return phase, err
	}
	var err error
	if phase.Recovered, err = waitServed(ctx, c, ns, opts.PhaseTimeout); err != nil {
		return phase, err
	}
	after := map[string]bool{}
	for i := 0; i < 10; i++ {
		gone(ctx, c, ns, baseline, after)
		time.Sleep(time.Second)
	}
	phase.DeletedAfter = sortedKeys(after)
	opts.Log("storage: %s: served %v, refused %v, deleted %d, deleted after %d, recovered in %s",
		name, phase.Served, phase.Refused, len(phase.Deleted), len(phase.DeletedAfter), phase.Recovered.Round(time.Millisecond))
	return phase, nil
}

// workloads lists the pods, claims and Deployments of ns by kind/name; those being deleted are left out.
func workloads(ctx context.Context, c *clients, ns string) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range pods.Items {
		if o.DeletionTimestamp == nil {
			out["pod/"+o.Name] = o.UID
		}
	}
	claims, err := c.kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range claims.Items {
		if o.DeletionTimestamp == nil {
			out["pvc/"+o.Name] = o.UID
		}
	}
	deployments, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range deployments.Items {
		if o.DeletionTimestamp == nil {
			out["deployment/"+o.Name] = o.UID
		}
	}
	return out, nil
}

// gone adds to deleted the baseline workloads that are missing, being deleted or replaced.
func gone(ctx context.Context, c *clients, ns string, baseline map[string]types.UID, deleted map[string]bool) {
	now, err := workloads(ctx, c, ns)
	if err != nil {
		return
	}
	for key, uid := range baseline {
		if now[key] != uid {
			deleted[key] = true
		}
	}
}

func waitWorkloads(ctx context.Context, c *clients, ns string, n int, timeout time.Duration) (map[string]types.UID, error) {
	var out map[string]types.UID
	err := retry(ctx, timeout, func(ctx context.Context) error {
		got, err := workloads(ctx, c, ns)
		if err != nil {
			return err
		}
		if len(got) != n {
			return fmt.Errorf("%d pods, claims and Deployments in %s, want %d", len(got), ns, n)
		}
		out = got
		return nil
	})
	return out, err
}

// waitServed waits until the TApps of ns are served through the aggregator and returns how long it took.
func waitServed(ctx context.Context, c *clients, ns string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	err := retry(ctx, timeout, func(ctx context.Context) error {
		_, err := c.tapp.TKEStackAppsV1().TApps(ns).Get(ctx, "stored", metav1.GetOptions{})
		return err
	})
	return time.Since(start), err
}

// storageTApp is a TApp of replicas instances with a volume claim each.
func storageTApp(name string, replicas int32) *tkestackv1.TApp {
	labels := map[string]string{"app": name}
	return &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tkestackv1.TAppSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{{Name: "app", Image: imageV1, VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
					TerminationGracePeriodSeconds: ptr.To[int64](0),
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}
