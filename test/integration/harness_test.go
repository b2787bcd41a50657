// Package integration runs tapp-apiserver in-process (standalone mode, embedded etcd) and exercises it
// through real HTTP clients: the generated clientset, the dynamic and scale clients, discovery and raw
// REST requests.
package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/cmd/tapp-apiserver/app"
	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

const (
	startTimeout = 60 * time.Second
	// requestTimeout bounds every single test's API calls.
	requestTimeout = 30 * time.Second
)

// testServer is a running tapp-apiserver.
type testServer struct {
	// Config reaches the server; copy it (rest.CopyConfig) before changing it.
	Config *rest.Config
	// URL is https://127.0.0.1:<port>.
	URL string

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error
	runErr   error
}

// stop cancels the server's context and waits for app.Run to return. It is safe to call more than once.
func (s *testServer) stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		select {
		case s.runErr = <-s.done:
		case <-time.After(60 * time.Second):
			s.runErr = errors.New("app.Run did not return within 60s of its context being cancelled")
		}
	})
	return s.runErr
}

// startServer starts a server persisting into dataDir and stops it when the test ends.
func startServer(t testing.TB, dataDir string) *testServer {
	t.Helper()
	certDir := t.TempDir()
	s, err := launch(dataDir, certDir)
	if err != nil {
		t.Fatalf("starting tapp-apiserver: %v", err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("stopping tapp-apiserver: %v", err)
		}
	})
	return s
}

// launch starts a server with fresh options and waits until /readyz answers 200.
func launch(dataDir, certDir string) (*testServer, error) {
	return launchWith(dataDir, certDir, nil)
}

// launchWith is launch with options changed by configure (when not nil) before the server starts.
func launchWith(dataDir, certDir string, configure func(*app.Options)) (*testServer, error) {
	opts := app.NewOptions()
	opts.Standalone = true
	opts.Store.EmbeddedEtcd.DataDir = dataDir
	opts.Store.EmbeddedEtcd.UnsafeNoFsync = true
	opts.Store.EmbeddedEtcd.LogLevel = "error"

	listener, port, err := genericoptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{})
	if err != nil {
		return nil, fmt.Errorf("creating listener: %w", err)
	}
	opts.Recommended.SecureServing.Listener = listener
	opts.Recommended.SecureServing.BindPort = port
	opts.Recommended.SecureServing.ServerCert.CertDirectory = certDir
	if configure != nil {
		configure(opts)
	}

	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{
		URL:    fmt.Sprintf("https://127.0.0.1:%d", port),
		cancel: cancel,
		done:   make(chan error, 1),
	}
	go func() { s.done <- app.Run(ctx, opts) }()

	client := insecureHTTPClient()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case err := <-s.done:
			cancel()
			_ = listener.Close()
			return nil, fmt.Errorf("app.Run returned before the server was ready: %v", err)
		default:
		}
		resp, err := client.Get(s.URL + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = s.stop()
			return nil, fmt.Errorf("/readyz did not return 200 within %v (last error: %v)", startTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	s.Config = &rest.Config{
		Host:            s.URL,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		BearerToken:     "x",
		QPS:             100,
		Burst:           200,
		UserAgent:       "tapp-apiserver-integration-test",
		WarningHandler:  rest.NoWarnings{},
	}
	return s, nil
}

func insecureHTTPClient() *http.Client {
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed test server
	}
}

var (
	sharedOnce   sync.Once
	shared       *testServer
	sharedErr    error
	sharedDirs   []string
	sharedDirsMu sync.Mutex
)

// sharedServer returns the server most tests share, starting it on first use. Tests isolate themselves
// with their own namespaces and unique cluster-scoped names.
func sharedServer(t testing.TB) *testServer {
	t.Helper()
	sharedOnce.Do(func() {
		dataDir, err := os.MkdirTemp("", "tapp-apiserver-it-etcd-")
		if err != nil {
			sharedErr = err
			return
		}
		certDir, err := os.MkdirTemp("", "tapp-apiserver-it-certs-")
		if err != nil {
			sharedErr = err
			return
		}
		sharedDirsMu.Lock()
		sharedDirs = append(sharedDirs, dataDir, certDir)
		sharedDirsMu.Unlock()
		shared, sharedErr = launch(dataDir, certDir)
	})
	if sharedErr != nil {
		t.Fatalf("starting the shared tapp-apiserver: %v", sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the shared tapp-apiserver: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	sharedDirsMu.Lock()
	for _, dir := range sharedDirs {
		_ = os.RemoveAll(dir)
	}
	sharedDirsMu.Unlock()
	os.Exit(code)
}

// clientset returns a generated clientset for s.
func clientset(t testing.TB, s *testServer) *versioned.Clientset {
	t.Helper()
	cs, err := versioned.NewForConfig(rest.CopyConfig(s.Config))
	if err != nil {
		t.Fatalf("creating clientset: %v", err)
	}
	return cs
}

// testContext returns a context that ends with the test or after requestTimeout.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	t.Cleanup(cancel)
	return ctx
}

var (
	nameCounter atomic.Int64
	nonDNS      = regexp.MustCompile(`[^a-z0-9-]+`)
)

// uniqueName returns a DNS label derived from the test name and prefix, unique in this process.
func uniqueName(t testing.TB, prefix string) string {
	base := nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-")
	base = strings.Trim(strings.TrimPrefix(base, "test"), "-")
	if len(base) > 30 {
		base = base[:30]
	}
	name := fmt.Sprintf("%s-%s-%d", prefix, base, nameCounter.Add(1))
	name = strings.Trim(regexp.MustCompile(`-+`).ReplaceAllString(name, "-"), "-")
	return name
}

// newNamespace returns a fresh namespace name. The server runs without namespace lifecycle admission,
// so namespaces need not exist.
func newNamespace(t testing.TB) string { return uniqueName(t, "ns") }

// newTApp returns a minimal valid TApp whose pods are labelled app=<name>.
func newTApp(namespace, name string, replicas int32) *tkestackv1.TApp {
	return &tkestackv1.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: tkestackv1.TAppSpec{
			Replicas: replicas,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9"}},
				},
			},
		},
	}
}

// newYurtAppDaemon returns a minimal valid YurtAppDaemon rendering a Deployment per pool labelled pool=edge.
func newYurtAppDaemon(namespace, name string) *openyurtv1alpha1.YurtAppDaemon {
	labels := map[string]string{"app": name}
	return &openyurtv1alpha1.YurtAppDaemon{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: openyurtv1alpha1.YurtAppDaemonSpec{
			Selector:         &metav1.LabelSelector{MatchLabels: labels},
			NodePoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "edge"}},
			WorkloadTemplate: openyurtv1alpha1.WorkloadTemplate{
				DeploymentTemplate: &openyurtv1alpha1.DeploymentTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       appsv1DeploymentSpec(labels),
				},
			},
		},
	}
}

// appsv1DeploymentSpec returns a Deployment spec whose pods carry labels. Its selector is left for
// defaulting to copy from the YurtAppDaemon's.
func appsv1DeploymentSpec(labels map[string]string) appsv1.DeploymentSpec {
	return appsv1.DeploymentSpec{
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.7.9"}},
			},
		},
	}
}

// newNodePool returns a NodePool with everything but the name left to defaulting.
func newNodePool(name string) *openyurtv1alpha1.NodePool {
	return &openyurtv1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// statusError returns err as an API status error or fails the test.
func statusError(t testing.TB, err error) *apierrors.StatusError {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an API error, got nil")
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("expected an *errors.StatusError, got %T: %v", err, err)
	}
	return se
}

// causeFields lists the fields of the causes of an API error.
func causeFields(se *apierrors.StatusError) []string {
	var out []string
	if se.ErrStatus.Details == nil {
		return nil
	}
	for _, c := range se.ErrStatus.Details.Causes {
		out = append(out, c.Field)
	}
	return out
}

// hasCause reports whether an API error has a cause on field, of causeType when it is not empty.
func hasCause(se *apierrors.StatusError, field string, causeType metav1.CauseType) bool {
	if se.ErrStatus.Details == nil {
		return false
	}
	for _, c := range se.ErrStatus.Details.Causes {
		if c.Field == field && (causeType == "" || c.Type == causeType) {
			return true
		}
	}
	return false
}

// fieldsV1Has reports whether a managedFields entry's fieldsV1 contains the nested path, e.g. f:spec, f:replicas.
func fieldsV1Has(t testing.TB, f *metav1.FieldsV1, path ...string) bool {
	t.Helper()
	if f == nil {
		return false
	}
	var m map[string]interface{}
	if err := json.Unmarshal(f.Raw, &m); err != nil {
		t.Fatalf("decoding fieldsV1 %s: %v", f.Raw, err)
	}
	for _, p := range path {
		next, ok := m[p]
		if !ok {
			return false
		}
		m, _ = next.(map[string]interface{})
	}
	return true
}

// warningCollector records the warnings a client receives.
type warningCollector struct {
	mu       sync.Mutex
	warnings []string
}

func (c *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warnings = append(c.warnings, text)
}

// take returns the warnings collected so far and forgets them.
func (c *warningCollector) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.warnings
	c.warnings = nil
	return out
}

// httpGet does a GET with the insecure client and returns the status code and body.
func httpGet(t testing.TB, url, accept string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	client := insecureHTTPClient()
	client.Timeout = requestTimeout
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading GET %s: %v", url, err)
	}
	return resp.StatusCode, body
}
