//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/cert"
)

// metricsAPI is the test's own resource metrics API (metrics.k8s.io/v1beta1), registered behind
// kube-apiserver's aggregator like metrics-server, so that the HPA controller of kube-controller-manager reads
// pod metrics through the real aggregation path. It reports for every running pod of a namespace the memory
// usage "total load / running pods" of its first container: a service whose load spreads over its pods, so
// that the HPA converges instead of growing without end.
type metricsAPI struct {
	namespace string

	mu          sync.Mutex
	totalMemory resource.Quantity
	served      int
}

const (
	metricsAPIServiceName = "v1beta1.metrics.k8s.io"
	metricsServiceName    = "e2e-metrics-api"
)

var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// startMetricsAPI serves pod metrics of namespace ns on loopback and registers the APIService
// v1beta1.metrics.k8s.io for it, until the test ends; it returns once the APIService is Available.
func startMetricsAPI(t *testing.T, ns string) *metricsAPI {
	t.Helper()
	m := &metricsAPI{namespace: ns}
	const serviceHost = metricsServiceName + ".kube-system.svc"
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(serviceHost, []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	keyPair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	server := &http.Server{
		Handler:           m,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{keyPair}, MinVersion: tls.VersionTLS12},
	}
	go func() { _ = server.ServeTLS(listener, "", "") }()
	t.Cleanup(func() { _ = server.Close() })

	port := listener.Addr().(*net.TCPAddr).Port
	ctx := testContext(t, 2*time.Minute)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServiceName, Namespace: "kube-system"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	if _, err := kubeClient.CoreV1().Services("kube-system").Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	apiService := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]interface{}{"name": metricsAPIServiceName},
		"spec": map[string]interface{}{
			"group": "metrics.k8s.io", "version": "v1beta1",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"service":  map[string]interface{}{"namespace": "kube-system", "name": metricsServiceName, "port": int64(port)},
			"caBundle": base64.StdEncoding.EncodeToString(certPEM),
		},
	}}
	if _, err := dynamicClient.Resource(apiServicesGVR).Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Registered after the server's Close, so it runs before it: an APIService whose backend is gone would
	// make discovery, namespace deletion and garbage collection fail for the rest of the suite.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = dynamicClient.Resource(apiServicesGVR).Delete(ctx, metricsAPIServiceName, metav1.DeleteOptions{})
		_ = kubeClient.CoreV1().Services("kube-system").Delete(ctx, metricsServiceName, metav1.DeleteOptions{})
	})
	mustKubectl(t, "wait", "--for=condition=Available", "--timeout=90s", "apiservice/"+metricsAPIServiceName)
	return m
}

// setTotalMemory sets the load the pods share.
func (m *metricsAPI) setTotalMemory(q string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.totalMemory = resource.MustParse(q)
}

// requests is the number of pod metrics lists served so far.
func (m *metricsAPI) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.served
}

func (m *metricsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const version = "/apis/metrics.k8s.io/v1beta1"
	switch path := strings.TrimSuffix(r.URL.Path, "/"); {
	case path == version:
		writeJSON(w, metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "metrics.k8s.io/v1beta1",
			APIResources: []metav1.APIResource{
				{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: metav1.Verbs{"get", "list"}},
				{Name: "nodes", Namespaced: false, Kind: "NodeMetrics", Verbs: metav1.Verbs{"get", "list"}},
			},
		})
	case path == version+"/namespaces/"+m.namespace+"/pods":
		list, err := m.podMetrics(r.Context(), r.URL.Query().Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, list)
	default:
		// Everything else, aggregated discovery at /apis included, is not served: the aggregator then falls
		// back to this group version's own discovery document above.
		http.NotFound(w, r)
	}
}

// podMetricsList is metrics.k8s.io/v1beta1 PodMetricsList, written out to keep k8s.io/metrics out of the module.
type podMetricsList struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ListMeta `json:"metadata"`
	Items           []podMetrics    `json:"items"`
}

type podMetrics struct {
	Metadata   metav1.ObjectMeta  `json:"metadata"`
	Timestamp  metav1.Time        `json:"timestamp"`
	Window     metav1.Duration    `json:"window"`
	Containers []containerMetrics `json:"containers"`
}

type containerMetrics struct {
	Name  string              `json:"name"`
	Usage corev1.ResourceList `json:"usage"`
}

func (m *metricsAPI) podMetrics(ctx context.Context, selector string) (*podMetricsList, error) {
	pods, err := kubeClient.CoreV1().Pods(m.namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var running []corev1.Pod
	for _, pod := range pods.Items {
		if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
			running = append(running, pod)
		}
	}
	m.mu.Lock()
	m.served++
	total := m.totalMemory.DeepCopy()
	m.mu.Unlock()

	list := &podMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: "metrics.k8s.io/v1beta1"}, Items: []podMetrics{}}
	if len(running) == 0 {
		return list, nil
	}
	perPod := resource.NewQuantity(total.Value()/int64(len(running)), resource.BinarySI)
	now := metav1.Now()
	for _, pod := range running {
		list.Items = append(list.Items, podMetrics{
			Metadata:  metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels},
			Timestamp: now,
			Window:    metav1.Duration{Duration: 15 * time.Second},
			Containers: []containerMetrics{{
				Name:  pod.Spec.Containers[0].Name,
				Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: *perPod},
			}},
		})
	}
	return list, nil
}

func writeJSON(w http.ResponseWriter, v interface{}) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}
