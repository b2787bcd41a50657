package bench

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

const (
	fanOutNamespace = "fanout"
	fanOutLabel     = "bench.tkestack.io/fanout"
	fanOutTimeout   = 2 * time.Minute
)

// knownControllers lists the controllers a tapp-apiserver binary can run (from its --help).
func knownControllers(serverBinary string) []string {
	out, _ := exec.Command(serverBinary, "--help").CombinedOutput()
	m := regexp.MustCompile(`Known controllers: ([a-z0-9, -]+)\.`).FindSubmatch(out)
	if m == nil {
		return nil
	}
	var names []string
	for _, n := range strings.Split(string(m[1]), ",") {
		names = append(names, strings.TrimSpace(n))
	}
	return names
}

// runFanOut is section 5: a YurtAppDaemon over N NodePools, until N Deployments exist and the status
// says WorkLoadProvisioned=True over N pools.
func (b *bench) runFanOut(ctx context.Context, registered bool) (*FanOutResult, error) {
	n := b.count(100, 5)
	res := &FanOutResult{NodePools: n, Registered: registered}
	if !registered {
		return res, fmt.Errorf("the YurtAppDaemon controller is not registered in this tapp-apiserver binary")
	}
	client, err := versioned.NewForConfig(b.clientConfig)
	if err != nil {
		return res, err
	}
	if err := b.ensureNamespace(ctx, fanOutNamespace); err != nil {
		return res, err
	}
	var yadCreated, poolsCreated []float64
	for r := 0; r < b.opts.repeats; r++ {
		for _, variant := range []string{"yad-created", "pools-created"} {
			run, err := b.fanOutOnce(ctx, client, variant, n, r)
			res.Runs = append(res.Runs, run)
			if err != nil {
				b.fail("fan-out %s #%d: %v", variant, r+1, err)
			}
			if run.Completed {
				if variant == "yad-created" {
					yadCreated = append(yadCreated, run.ProvisionedSeconds)
				} else {
					poolsCreated = append(poolsCreated, run.ProvisionedSeconds)
				}
			}
			b.logf("fan-out %-13s #%d: %d workloads in %.2fs, provisioned in %.2fs, completed=%v", variant, r+1, n, run.WorkloadsSeconds, run.ProvisionedSeconds, run.Completed)
		}
	}
	res.YADCreated = spread(yadCreated)
	res.PoolsCreated = spread(poolsCreated)
	return res, nil
}

func (b *bench) fanOutOnce(ctx context.Context, client versioned.Interface, variant string, n, repeat int) (FanOutRun, error) {
	run := FanOutRun{Variant: variant}
	pools := client.OpenYurtAppsV1alpha1().NodePools()
	yads := client.OpenYurtAppsV1alpha1().YurtAppDaemons(fanOutNamespace)
	poolName := func(i int) string { return fmt.Sprintf("bench-%d-%03d", repeat, i) }
	createPools := func() error {
		_, errs, firstErr, _ := runOps(ctx, n, 16, func(ctx context.Context, i int) error {
			_, err := pools.Create(ctx, &openyurtv1alpha1.NodePool{
				ObjectMeta: metav1.ObjectMeta{Name: poolName(i), Labels: map[string]string{fanOutLabel: "true"}},
				Spec:       openyurtv1alpha1.NodePoolSpec{Type: "Edge"},
			}, metav1.CreateOptions{})
			return err
		})
		if errs > 0 {
			return fmt.Errorf("%d NodePool creates failed, first: %w", errs, firstErr)
		}
		return nil
	}
	replicas := int32(0)
	labels := map[string]string{"app": "bench-fanout"}
	yad := &openyurtv1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: openyurtv1alpha1.YurtAppDaemonSpec{
			Selector:         &metav1.LabelSelector{MatchLabels: labels},
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{fanOutLabel: "true"}},
			WorkloadTemplate: openyurtv1alpha1.WorkloadTemplate{DeploymentTemplate: &openyurtv1alpha1.DeploymentTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: &replicas,
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: imageV1}}},
					},
				},
			}},
		},
	}
	defer b.cleanFanOut(client, n, poolName)

	direct := directConfig(b.cluster, b.clientConfig)
	writesBefore, writesErr := controllerWrites(ctx, direct, "yurtappdaemon")
	var start time.Time
	var uid types.UID
	switch variant {
	case "yad-created":
		if err := createPools(); err != nil {
			return run, err
		}
		sleepCtx(ctx, time.Second)
		start = time.Now()
		created, err := yads.Create(ctx, yad, metav1.CreateOptions{})
		if err != nil {
			return run, err
		}
		uid = created.UID
	default:
		created, err := yads.Create(ctx, yad, metav1.CreateOptions{})
		if err != nil {
			return run, err
		}
		uid = created.UID
		sleepCtx(ctx, 2*time.Second)
		start = time.Now()
		if err := createPools(); err != nil {
			return run, err
		}
	}
	deadline := start.Add(fanOutTimeout)
	var workloadsAt time.Time
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if workloadsAt.IsZero() {
			list, err := b.kube.AppsV1().Deployments(fanOutNamespace).List(ctx, metav1.ListOptions{})
			if err == nil && countOwned(list.Items, uid) >= n {
				workloadsAt = time.Now()
				run.WorkloadsSeconds = round(workloadsAt.Sub(start).Seconds(), 3)
			}
		}
		if !workloadsAt.IsZero() {
			got, err := yads.Get(ctx, "bench", metav1.GetOptions{})
			if err == nil && provisioned(got, n) {
				run.ProvisionedSeconds = round(time.Since(start).Seconds(), 3)
				run.Completed = true
				// Let the controller settle before counting its writes.
				sleepCtx(ctx, 2*time.Second)
				if after, err := controllerWrites(ctx, direct, "yurtappdaemon"); err == nil && writesErr == nil {
					run.WritesPerPool = round((after-writesBefore)/float64(n), 2)
				}
				return run, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, _ := yads.Get(ctx, "bench", metav1.GetOptions{})
	status := ""
	if got != nil {
		status = fmt.Sprintf("%d pools in status, conditions %+v", len(got.Status.NodePools), got.Status.Conditions)
	}
	return run, fmt.Errorf("not provisioned after %s: %s", fanOutTimeout, status)
}

func countOwned(deployments []appsv1.Deployment, uid types.UID) int {
	n := 0
	for _, d := range deployments {
		if ref := metav1.GetControllerOf(&d); ref != nil && ref.UID == uid {
			n++
		}
	}
	return n
}

func provisioned(yad *openyurtv1alpha1.YurtAppDaemon, n int) bool {
	if len(yad.Status.NodePools) != n {
		return false
	}
	for _, c := range yad.Status.Conditions {
		if string(c.Type) == "WorkLoadProvisioned" {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// cleanFanOut deletes the YurtAppDaemon, its Deployments and the pools, and waits until they are gone.
func (b *bench) cleanFanOut(client versioned.Interface, n int, poolName func(int) string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = client.OpenYurtAppsV1alpha1().YurtAppDaemons(fanOutNamespace).Delete(ctx, "bench", metav1.DeleteOptions{})
	runOps(ctx, n, 16, func(ctx context.Context, i int) error {
		return ignoreNotFound(client.OpenYurtAppsV1alpha1().NodePools().Delete(ctx, poolName(i), metav1.DeleteOptions{}))
	})
	// The garbage collector removes the Deployments; do it now so the next run starts from nothing.
	_ = b.kube.AppsV1().Deployments(fanOutNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	for ctx.Err() == nil {
		d, err1 := b.kube.AppsV1().Deployments(fanOutNamespace).List(ctx, metav1.ListOptions{})
		y, err2 := client.OpenYurtAppsV1alpha1().YurtAppDaemons(fanOutNamespace).List(ctx, metav1.ListOptions{})
		p, err3 := client.OpenYurtAppsV1alpha1().NodePools().List(ctx, metav1.ListOptions{LabelSelector: fanOutLabel})
		if err1 == nil && err2 == nil && err3 == nil && len(d.Items) == 0 && len(y.Items) == 0 && len(p.Items) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.logf("fan-out cleanup did not finish")
}
