package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	utilexec "k8s.io/utils/exec"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// runningPod is pod web-0 with container app (port 80, env GREETING) running nginx:2 after one restart.
func runningPod() *corev1.Pod {
	started := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "uid-0"},
		Spec: corev1.PodSpec{NodeName: "node-0", Containers: []corev1.Container{{
			Name: "app", Image: "nginx:2", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
			Env: []corev1.EnvVar{{Name: "GREETING", Value: "hi"}, {Name: "FROM", ValueFrom: &corev1.EnvVarSource{}}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: "nginx:2", RestartCount: 1,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: started}},
		}}},
	}
}

func TestSimulatedExec(t *testing.T) {
	p := simulatedProcess{pod: runningPod()}
	for _, tc := range []struct {
		cmd         []string
		stdin       string
		out, errOut string
		code        int
	}{
		{cmd: []string{"true"}},
		{cmd: []string{"false"}, code: 1},
		{cmd: []string{"echo", "a", "b"}, out: "a b\n"},
		{cmd: []string{"hostname"}, out: "web-0\n"},
		{cmd: []string{"env"}, out: "HOSTNAME=web-0\nGREETING=hi\n"},
		{cmd: []string{"cat"}, stdin: "x\ny\n", out: "x\ny\n"},
		{cmd: []string{"cat", "/etc/passwd"}, errOut: "cat: the simulated containers have no files\n", code: 1},
		{cmd: []string{"/bin/sh", "-c", "id"}, errOut: "/bin/sh: command not found", code: 127},
	} {
		var out, errOut bytes.Buffer
		err := p.ExecInContainer(context.Background(), "", "", "app", tc.cmd, strings.NewReader(tc.stdin),
			nopWriteCloser{&out}, nopWriteCloser{&errOut}, false, nil, 0)
		code := 0
		var exit utilexec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitStatus()
		} else if err != nil {
			t.Errorf("%q: %v", tc.cmd, err)
		}
		if code != tc.code || out.String() != tc.out || !strings.HasPrefix(errOut.String(), tc.errOut) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q...", tc.cmd, code, out.String(), errOut.String(), tc.code, tc.out, tc.errOut)
		}
	}
}

// kubeletRequest sends a request to the kubelet API as kube-apiserver would (its client certificate's
// common name) or as cn.
func kubeletRequest(k *kubeletAPI, cn, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{Subject: pkix.Name{CommonName: cn}}}}
	rec := httptest.NewRecorder()
	k.ServeHTTP(rec, req)
	return rec
}

func TestKubeletAPILogs(t *testing.T) {
	k := &kubeletAPI{client: fake.NewSimpleClientset(runningPod())}
	line := "simulated container app of pod ns/web-0 started with image nginx:2 (restart 1)\n"
	for _, tc := range []struct {
		path, want string
		code       int
	}{
		{"/containerLogs/ns/web-0/app", line, 200},
		{"/containerLogs/ns/web-0/app?timestamps=true", "2026-01-02T03:04:05Z " + line, 200},
		{"/containerLogs/ns/web-0/app?tailLines=0", "", 200},
		{"/containerLogs/ns/web-0/app?limitBytes=9", "simulated", 200},
		{"/containerLogs/ns/web-0/app?previous=true", strings.Replace(line, "restart 1", "restart 0", 1), 200},
		{"/containerLogs/ns/web-0/app?sinceSeconds=60", "", 200},
		{"/containerLogs/ns/web-0/app?tailLines=x", "tailLines must be a non-negative integer\n", 400},
		{"/containerLogs/ns/web-0/nope", "container nope is not valid for pod web-0\n", 400},
		{"/containerLogs/ns/web-9/app", `pods "web-9" not found` + "\n", 404},
		{"/exec/ns/web-0/other-uid/app?command=true", "pod ns/web-0 has UID uid-0, not other-uid\n", 404},
		{"/run/ns/web-0/app", "404 page not found\n", 404},
	} {
		rec := kubeletRequest(k, kubeletClientName, tc.path)
		if rec.Code != tc.code || rec.Body.String() != tc.want {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, rec.Code, rec.Body.String(), tc.code, tc.want)
		}
	}
	if rec := kubeletRequest(k, "admin", "/containerLogs/ns/web-0/app"); rec.Code != http.StatusForbidden {
		t.Errorf("a client certificate other than kube-apiserver's: %d %q, want 403", rec.Code, rec.Body.String())
	}
}

func TestSimulatedPortForward(t *testing.T) {
	ports := simulatedPorts{pod: runningPod()}
	var out bytes.Buffer
	stream := &fakeStream{in: strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /again HTTP/1.1\r\nHost: x\r\n\r\n"), out: &out}
	if err := ports.PortForward(context.Background(), "", "", 80, stream); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "HTTP/1.1 200 OK"); got != 2 || !strings.Contains(out.String(), "pod ns/web-0 container app port 80") {
		t.Errorf("two requests on port 80: %q", out.String())
	}
	if err := ports.PortForward(context.Background(), "", "", 81, &fakeStream{in: strings.NewReader(""), out: io.Discard}); err == nil || !strings.Contains(err.Error(), "no container of pod ns/web-0 declares TCP port 81") {
		t.Errorf("port 81: %v", err)
	}
}

type fakeStream struct {
	in  io.Reader
	out io.Writer
}

func (s *fakeStream) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s *fakeStream) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s *fakeStream) Close() error                { return nil }

// TestKubeletAPIListener checks the real listener: loopback, TLS, and a client certificate of the CA required.
func TestKubeletAPIListener(t *testing.T) {
	dir := t.TempDir()
	ca, err := loadOrNewAuthority(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.issue(dir, "serving", pkix.Name{CommonName: "kubelet"}, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.issue(dir, "client", pkix.Name{CommonName: kubeletClientName})
	if err != nil {
		t.Fatal(err)
	}
	k, err := serveKubeletAPI(fake.NewSimpleClientset(runningPod()), serving, ca.CertFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer k.stop()
	if addr := k.listener.Addr().String(); !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("listens on %s, want loopback", addr)
	}
	caPEM, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	get := func(certs []tls.Certificate) (string, error) {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		resp, err := c.Get("https://127.0.0.1:" + strconv.Itoa(k.port()) + "/containerLogs/ns/web-0/app")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body), err
	}
	cert, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := get([]tls.Certificate{cert}); err != nil || !strings.HasPrefix(got, "200 OK simulated container app") {
		t.Errorf("with kube-apiserver's certificate: %q, %v", got, err)
	}
	if got, err := get(nil); err == nil {
		t.Errorf("without a client certificate: %q, want a TLS error", got)
	}
}
