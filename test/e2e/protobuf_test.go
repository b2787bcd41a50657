//go:build e2e

package e2e

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// TestProtobufThroughAggregator: through kube-apiserver's aggregator, a client that speaks protobuf only reads
// TApps as it reads Deployments (200, protobuf; this server answered 406 before it had protobuf), as does the
// metadata-only protobuf request of the garbage collector and the namespace controller; the generated
// clientset (protobuf) creates a TApp that the controllers (protobuf clients of this server) run.
func TestProtobufThroughAggregator(t *testing.T) {
	ns := controllerNamespace(t, "protobuf")
	ctx := testContext(t, 2*time.Minute)
	tapp := &tkestackv1.TApp{}
	if err := yaml.Unmarshal([]byte(nginxTApp("pb", 1, "nginx:1.25", "")), tapp); err != nil {
		t.Fatal(err)
	}
	if _, err := tappClient.TKEStackAppsV1().TApps(ns).Create(ctx, tapp, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a TApp with the generated clientset (protobuf): %v", err)
	}
	waitInstances(t, ns, "pb", images(1, "nginx:1.25"))

	client, err := rest.HTTPClientFor(cluster.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	const protobuf = "application/vnd.kubernetes.protobuf"
	for _, tc := range []struct{ path, accept string }{
		{"/apis/apps/v1/namespaces/" + ns + "/deployments", protobuf}, // the reference: a built-in workload
		{"/apis/apps.tkestack.io/v1/namespaces/" + ns + "/tapps/pb", protobuf},
		{"/apis/apps.tkestack.io/v1/namespaces/" + ns + "/tapps", protobuf},
		{"/apis/apps.tkestack.io/v1/namespaces/" + ns + "/tapps/pb/scale", protobuf},
		{"/apis/apps.tkestack.io/v1/namespaces/" + ns + "/tapps", protobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"},
		{"/apis/apps.openyurt.io/v1beta1/nodepools", protobuf},
		{"/apis/apps.openyurt.io/v1beta2/nodepools", protobuf},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cluster.AdminConfig.Host+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", tc.accept)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != protobuf || !bytes.HasPrefix(body, []byte("k8s\x00")) {
			t.Errorf("GET %s (Accept %s): %d %s, want 200 in protobuf: %.200q", tc.path, tc.accept, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}
