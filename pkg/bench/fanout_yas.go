package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	openyurtv1beta1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

// yasFanOutName is the YurtAppSet of section 5's YurtAppSet runs.
const yasFanOutName = "bench-yas"

// controllerWrites sums the successful API actions of a controller (<name>_controller_actions_total of
// tapp-apiserver's /metrics: workload and revision writes, adoptions, status writes).
func controllerWrites(ctx context.Context, direct *rest.Config, controller string) (float64, error) {
	samples, err := scrapeCounter(ctx, direct, controller+"_controller_actions_total")
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, s := range samples {
		if s.labels["result"] == "success" {
			total += s.value
		}
	}
	return total, nil
}

// runYASFanOut is section 5's YurtAppSet part: the pools exist, a YurtAppSet selecting them with three
// tweaks (replicas for every pool, an image for every other pool, a label patch for the pools of one in
// ten) is created; until N Deployments exist and the status counts N workloads with PoolFound and
// AppDispatched True; and the controller's API writes per pool over the run.
func (b *bench) runYASFanOut(ctx context.Context, registered bool) (*YASFanOutResult, error) {
	n := b.count(100, 5)
	res := &YASFanOutResult{NodePools: n, Registered: registered}
	if !registered {
		return res, fmt.Errorf("the YurtAppSet controller is not registered in this tapp-apiserver binary")
	}
	client, err := versioned.NewForConfig(b.clientConfig)
	if err != nil {
		return res, err
	}
	if err := b.ensureNamespace(ctx, fanOutNamespace); err != nil {
		return res, err
	}
	direct := directConfig(b.cluster, b.clientConfig)
	var created []float64
	for r := 0; r < b.opts.repeats; r++ {
		run, err := b.yasFanOutOnce(ctx, client, direct, n, r)
		res.Runs = append(res.Runs, run)
		if err != nil {
			b.fail("YurtAppSet fan-out #%d: %v", r+1, err)
		}
		if run.Completed {
			created = append(created, run.ProvisionedSeconds)
		}
		b.logf("fan-out yas-created #%d: %d workloads in %.2fs, dispatched in %.2fs, %.2f writes per pool, completed=%v",
			r+1, n, run.WorkloadsSeconds, run.ProvisionedSeconds, run.WritesPerPool, run.Completed)
	}
	res.Created = spread(created)
	return res, nil
}

// yasFanOutObject is the YurtAppSet of a run.
func yasFanOutObject(poolNames []string) *openyurtv1beta1.YurtAppSet {
	labels := map[string]string{"app": "bench-fanout-yas"}
	var everyOther, oneInTen []string
	for i, p := range poolNames {
		if i%2 == 0 {
			everyOther = append(everyOther, p)
		}
		if i%10 == 0 {
			oneInTen = append(oneInTen, p)
		}
	}
	return &openyurtv1beta1.YurtAppSet{
		ObjectMeta: metav1.ObjectMeta{Name: yasFanOutName},
		Spec: openyurtv1beta1.YurtAppSetSpec{
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{fanOutLabel: "true"}},
			Workload: openyurtv1beta1.Workload{
				WorkloadTemplate: openyurtv1beta1.WorkloadTemplate{DeploymentTemplate: &openyurtv1beta1.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: appsv1.DeploymentSpec{
						Replicas: ptr.To[int32](1),
						Selector: &metav1.LabelSelector{MatchLabels: labels},
						Template: corev1.PodTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: labels},
							Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: imageV1}}},
						},
					},
				}},
				WorkloadTweaks: []openyurtv1beta1.WorkloadTweak{
					{NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{fanOutLabel: "true"}},
						Tweaks: openyurtv1beta1.Tweaks{Replicas: ptr.To[int32](0)}},
					{Pools: everyOther, Tweaks: openyurtv1beta1.Tweaks{ContainerImages: []openyurtv1beta1.ContainerImage{{Name: "app", TargetImage: imageV2}}}},
					{Pools: oneInTen, Tweaks: openyurtv1beta1.Tweaks{Patches: []openyurtv1beta1.Patch{{
						Path: "/metadata/labels/bench.tkestack.io~1pool", Operation: "add", Value: &apiextensionsv1.JSON{Raw: []byte(`"{{nodepool-name}}"`)}}}}},
				},
			},
		},
	}
}

func (b *bench) yasFanOutOnce(ctx context.Context, client versioned.Interface, direct *rest.Config, n, repeat int) (FanOutRun, error) {
	run := FanOutRun{Variant: "yas-created"}
	pools := client.OpenYurtAppsV1alpha1().NodePools()
	sets := client.OpenYurtAppsV1beta1().YurtAppSets(fanOutNamespace)
	poolName := func(i int) string { return fmt.Sprintf("bench-yas-%d-%03d", repeat, i) }
	defer b.cleanYASFanOut(client, n, poolName)
	names := make([]string, n)
	for i := range names {
		names[i] = poolName(i)
	}
	_, errs, firstErr, _ := runOps(ctx, n, 16, func(ctx context.Context, i int) error {
		_, err := pools.Create(ctx, &openyurtv1alpha1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: poolName(i), Labels: map[string]string{fanOutLabel: "true"}},
			Spec:       openyurtv1alpha1.NodePoolSpec{Type: "Edge"},
		}, metav1.CreateOptions{})
		return err
	})
	if errs > 0 {
		return run, fmt.Errorf("%d NodePool creates failed, first: %w", errs, firstErr)
	}
	sleepCtx(ctx, time.Second)
	writesBefore, writesErr := controllerWrites(ctx, direct, "yurtappset")
	start := time.Now()
	created, err := sets.Create(ctx, yasFanOutObject(names), metav1.CreateOptions{})
	if err != nil {
		return run, err
	}
	deadline := start.Add(fanOutTimeout)
	var workloadsAt time.Time
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if workloadsAt.IsZero() {
			list, err := b.kube.AppsV1().Deployments(fanOutNamespace).List(ctx, metav1.ListOptions{})
			if err == nil && countOwned(list.Items, created.UID) >= n {
				workloadsAt = time.Now()
				run.WorkloadsSeconds = round(workloadsAt.Sub(start).Seconds(), 3)
			}
		}
		if !workloadsAt.IsZero() {
			got, err := sets.Get(ctx, yasFanOutName, metav1.GetOptions{})
			if err == nil && yasDispatched(got, n) {
				run.ProvisionedSeconds = round(time.Since(start).Seconds(), 3)
				run.Completed = true
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !run.Completed {
		got, _ := sets.Get(ctx, yasFanOutName, metav1.GetOptions{})
		status := ""
		if got != nil {
			status = fmt.Sprintf("%d workloads in status, conditions %+v", got.Status.TotalWorkloads, got.Status.Conditions)
		}
		return run, fmt.Errorf("not dispatched after %s: %s", fanOutTimeout, status)
	}
	// Let the controller settle (status writes of the last workloads) before counting its writes.
	sleepCtx(ctx, 2*time.Second)
	if after, err := controllerWrites(ctx, direct, "yurtappset"); err == nil && writesErr == nil {
		run.WritesPerPool = round((after-writesBefore)/float64(n), 2)
	}
	return run, nil
}

func yasDispatched(yas *openyurtv1beta1.YurtAppSet, n int) bool {
	if int(yas.Status.TotalWorkloads) != n || yas.Status.ObservedGeneration != yas.Generation {
		return false
	}
	ok := 0
	for _, c := range yas.Status.Conditions {
		if (c.Type == "PoolFound" || c.Type == "AppDispatched") && c.Status == corev1.ConditionTrue {
			ok++
		}
	}
	return ok == 2
}

// cleanYASFanOut deletes the YurtAppSet, its Deployments and the pools, and waits until they are gone.
func (b *bench) cleanYASFanOut(client versioned.Interface, n int, poolName func(int) string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = client.OpenYurtAppsV1beta1().YurtAppSets(fanOutNamespace).Delete(ctx, yasFanOutName, metav1.DeleteOptions{})
	runOps(ctx, n, 16, func(ctx context.Context, i int) error {
		return ignoreNotFound(client.OpenYurtAppsV1alpha1().NodePools().Delete(ctx, poolName(i), metav1.DeleteOptions{}))
	})
	_ = b.kube.AppsV1().Deployments(fanOutNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	for ctx.Err() == nil {
		d, err1 := b.kube.AppsV1().Deployments(fanOutNamespace).List(ctx, metav1.ListOptions{})
		y, err2 := client.OpenYurtAppsV1beta1().YurtAppSets(fanOutNamespace).List(ctx, metav1.ListOptions{})
		p, err3 := client.OpenYurtAppsV1alpha1().NodePools().List(ctx, metav1.ListOptions{LabelSelector: fanOutLabel})
		if err1 == nil && err2 == nil && err3 == nil && len(d.Items) == 0 && len(y.Items) == 0 && len(p.Items) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.logf("YurtAppSet fan-out cleanup did not finish")
}
