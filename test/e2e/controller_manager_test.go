//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestControllerManager checks what an operator of tapp-apiserver sees of its embedded controllers: the
// Lease that elects the replica running them, held and renewed, and the controllers' workqueue, sync and
// action metrics on the server's own /metrics, where a TApp's sync shows up.
func TestControllerManager(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)

	lease, err := kubeClient.CoordinationV1().Leases("kube-system").Get(ctx, "tapp-apiserver-controllers", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the controllers' Lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Fatalf("the Lease has no holder: %+v", lease.Spec)
	}
	holder, renewed := *lease.Spec.HolderIdentity, lease.Spec.RenewTime
	eventually(t, 30*time.Second, "the leader renews the Lease", func() error {
		l, err := kubeClient.CoordinationV1().Leases("kube-system").Get(ctx, "tapp-apiserver-controllers", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.RenewTime == nil || renewed == nil || !l.Spec.RenewTime.After(renewed.Time) {
			return fmt.Errorf("renewTime still %v", l.Spec.RenewTime)
		}
		if got := *l.Spec.HolderIdentity; got != holder {
			return fmt.Errorf("holder changed from %s to %s with a single replica", holder, got)
		}
		return nil
	})

	// One TApp synced by the controller.
	ns := controllerNamespace(t, "metrics")
	mustKubectlIn(t, nginxTApp("counted", 1, "nginx:1.25", ""), "apply", "-n", ns, "-f", "-")
	waitInstances(t, ns, "counted", images(1, "nginx:1.25"))

	// /metrics straight from tapp-apiserver, as the cluster admin (delegated authentication and authorization).
	cfg := rest.CopyConfig(cluster.AdminConfig)
	cfg.Host, cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.CAData = cluster.ServerURL, cluster.ServerCAFile, nil
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	metrics := string(raw)
	if _, ok := sampleValue(metrics, `workqueue_depth{name="yurtappdaemon"}`); !ok {
		t.Error(`no workqueue_depth{name="yurtappdaemon"}: the YurtAppDaemon controller's queue is not exposed`)
	}
	for _, want := range []struct{ what, series string }{
		{"TApp workqueue adds", `workqueue_adds_total{name="tapp"}`},
		{"NodePool workqueue adds", `workqueue_adds_total{name="nodepool"}`},
		{"successful TApp syncs", `tapp_controller_sync_duration_seconds_count{result="success"}`},
		{"pods created by the TApp controller", `tapp_controller_actions_total{action="create",result="success"}`},
		{"NodePool syncs", `nodepool_controller_sync_duration_seconds_count{result="success"}`},
		{"leadership of the controllers", `leader_election_master_status{name="tapp-apiserver-controllers"}`},
	} {
		if v, ok := sampleValue(metrics, want.series); !ok || v <= 0 {
			t.Errorf("%s: %s = %v (found %v), want > 0", want.what, want.series, v, ok)
		}
	}
}

// sampleValue is the value of the series (name and labels exactly as exposed) in a Prometheus text exposition.
func sampleValue(exposition, series string) (float64, bool) {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(exposition)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}
