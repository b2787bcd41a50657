//go:build e2e

package e2e

import (
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestServerRequestsHaveControllerManagerPriority: kube-apiserver classifies tapp-apiserver's requests (user
// "tapp-apiserver" in the local cluster) under the FlowSchema tapp-apiserver into the priority level
// workload-high, kube-controller-manager's, and its pods/status writes under tapp-apiserver-pod-status, a flow
// of their own in the same level, as the response headers of API Priority and Fairness say.
func TestServerRequestsHaveControllerManagerPriority(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	level, err := kubeClient.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "workload-high", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := kubeClient.FlowcontrolV1().FlowSchemas().Get(ctx, "tapp-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cluster.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "tapp-apiserver"}
	var header http.Header
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil {
				header = resp.Header.Clone()
			}
			return resp, err
		})
	})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if got := header.Get("X-Kubernetes-PF-FlowSchema-UID"); got != string(schema.UID) {
		t.Errorf("FlowSchema of the list: uid %q, want tapp-apiserver's %q", got, schema.UID)
	}
	if got := header.Get("X-Kubernetes-PF-PriorityLevel-UID"); got != string(level.UID) {
		t.Errorf("priority level of the list: uid %q, want workload-high's %q", got, level.UID)
	}

	statusSchema, err := kubeClient.FlowcontrolV1().FlowSchemas().Get(ctx, "tapp-apiserver-pod-status", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	header = nil
	// A pod that does not exist: classified like any other, answered 404.
	_, err = client.CoreV1().Pods("default").Patch(ctx, "no-such-pod", types.MergePatchType, []byte(`{"status":{}}`), metav1.PatchOptions{}, "status")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("status patch of a missing pod: %v, want NotFound", err)
	}
	if got := header.Get("X-Kubernetes-PF-FlowSchema-UID"); got != string(statusSchema.UID) {
		t.Errorf("FlowSchema of the pods/status patch: uid %q, want tapp-apiserver-pod-status's %q", got, statusSchema.UID)
	}
	if got := header.Get("X-Kubernetes-PF-PriorityLevel-UID"); got != string(level.UID) {
		t.Errorf("priority level of the pods/status patch: uid %q, want workload-high's %q", got, level.UID)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
