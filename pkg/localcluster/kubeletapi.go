package localcluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// The kubelet API of the fake nodes. kube-apiserver answers pods/log, pods/exec, pods/attach and
// pods/portforward by calling the kubelet of the pod's node at the node's InternalIP and
// status.daemonEndpoints.kubeletEndpoint.Port; every kwok node reports 127.0.0.1 and the port of this one
// server (kwok's --node-port), which serves those four endpoints for the simulated pods of all nodes.
//
// Nothing a request asks for runs on the host:
//   - logs are written from the pod's status, one line per container start (its image and restart count);
//   - exec runs a simulated command: true, false, echo, hostname, env (the container's literal env values)
//     and cat (stdin to stdout); any other command exits 127;
//   - attach joins the container's simulated main process, which prints a line and then echoes stdin
//     until it ends;
//   - port-forward reaches a simulated HTTP server on every containerPort the pod declares, which answers
//     every request with the pod, container and port; other ports refuse.
//
// The server listens on 127.0.0.1 with a serving certificate of the cluster CA that kube-apiserver checks
// (--kubelet-certificate-authority) and accepts only kube-apiserver's kubelet client certificate.

// kubeletClientName is the common name of kube-apiserver's client certificate for kubelets.
const kubeletClientName = "kube-apiserver-kubelet-client"

// kubeletAPI serves the kubelet endpoints of the fake nodes.
type kubeletAPI struct {
	client   kubernetes.Interface
	server   *http.Server
	listener net.Listener
	done     chan struct{}
}

// startKubeletAPI listens on a free loopback port and serves the kubelet API with the given serving
// certificate, reading pods with config and trusting client certificates of clientCAFile whose common name is kubeletClientName.
func startKubeletAPI(config *rest.Config, serving certFiles, clientCAFile string, port int) (*kubeletAPI, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return serveKubeletAPI(client, serving, clientCAFile, port)
}

// serveKubeletAPI is startKubeletAPI with a client.
func serveKubeletAPI(client kubernetes.Interface, serving certFiles, clientCAFile string, port int) (*kubeletAPI, error) {
	cert, err := tls.LoadX509KeyPair(serving.CertFile, serving.KeyFile)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(clientCAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", clientCAFile)
	}
	listener, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	k := &kubeletAPI{client: client, listener: listener, done: make(chan struct{})}
	k.server = &http.Server{
		Handler:           k,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    pool,
			// SPDY upgrades need HTTP/1.1.
			NextProtos: []string{"http/1.1"},
		},
	}
	go func() {
		defer close(k.done)
		_ = k.server.ServeTLS(listener, "", "")
	}()
	return k, nil
}

// port is the port the server listens on.
func (k *kubeletAPI) port() int { return k.listener.Addr().(*net.TCPAddr).Port }

func (k *kubeletAPI) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := k.server.Shutdown(ctx); err != nil {
		_ = k.server.Close()
	}
	<-k.done
}

// streamIdleTimeout ends an exec, attach or port-forward session that has not moved a byte for this long.
const streamIdleTimeout = 10 * time.Minute

// ServeHTTP routes /containerLogs/{ns}/{pod}/{container}, /exec|attach/{ns}/{pod}[/{uid}]/{container} and
// /portForward/{ns}/{pod}[/{uid}].
func (k *kubeletAPI) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 || req.TLS.PeerCertificates[0].Subject.CommonName != kubeletClientName {
		http.Error(w, "only kube-apiserver may call the kubelet API", http.StatusForbidden)
		return
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) < 3 {
		http.NotFound(w, req)
		return
	}
	endpoint, namespace, podName, rest := parts[0], parts[1], parts[2], parts[3:]
	pod, err := k.client.CoreV1().Pods(namespace).Get(req.Context(), podName, metav1.GetOptions{})
	if err != nil {
		code := http.StatusInternalServerError
		if apierrors.IsNotFound(err) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return
	}
	uid := ""
	if len(rest) == 2 {
		uid, rest = rest[0], rest[1:]
	}
	if uid != "" && uid != string(pod.UID) {
		http.Error(w, fmt.Sprintf("pod %s/%s has UID %s, not %s", namespace, podName, pod.UID, uid), http.StatusNotFound)
		return
	}
	switch {
	case endpoint == "portForward" && len(rest) == 0:
		options, err := portforward.NewV4Options(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		portforward.ServePortForward(w, req, simulatedPorts{pod}, podName, string(pod.UID), options,
			streamIdleTimeout, remotecommandconsts.DefaultStreamCreationTimeout, portforward.SupportedProtocols)
		return
	case len(rest) != 1:
		http.NotFound(w, req)
		return
	}
	container := rest[0]
	if err := checkRunning(pod, container); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch endpoint {
	case "containerLogs":
		k.serveLogs(w, req, pod, container)
	case "exec", "attach":
		options, err := remotecommand.NewOptions(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		process := simulatedProcess{pod: pod}
		if endpoint == "exec" {
			remotecommand.ServeExec(w, req, process, podName, string(pod.UID), container, req.URL.Query()["command"], options,
				streamIdleTimeout, remotecommandconsts.DefaultStreamCreationTimeout, remotecommandconsts.SupportedStreamingProtocols)
		} else {
			remotecommand.ServeAttach(w, req, process, podName, string(pod.UID), container, options,
				streamIdleTimeout, remotecommandconsts.DefaultStreamCreationTimeout, remotecommandconsts.SupportedStreamingProtocols)
		}
	default:
		http.NotFound(w, req)
	}
}

// checkRunning returns an error unless the pod has the container and it is running.
func checkRunning(pod *corev1.Pod, container string) error {
	if findContainer(pod.Spec.Containers, container) == nil {
		return fmt.Errorf("container %s is not valid for pod %s", container, pod.Name)
	}
	status := findContainerStatus(pod.Status.ContainerStatuses, container)
	if status == nil || status.State.Running == nil {
		return fmt.Errorf("container %s of pod %s/%s is not running", container, pod.Namespace, pod.Name)
	}
	return nil
}

// logLines are the simulated log of a container: a line for the start before the last restart, if any,
// and one for the running start.
func logLines(pod *corev1.Pod, container string, previous bool) ([]logLine, error) {
	status := findContainerStatus(pod.Status.ContainerStatuses, container)
	line := func(t metav1.Time, image string, restart int32) logLine {
		return logLine{at: t.Time, text: fmt.Sprintf("simulated container %s of pod %s/%s started with image %s (restart %d)",
			container, pod.Namespace, pod.Name, image, restart)}
	}
	if previous {
		if status.LastTerminationState.Terminated == nil {
			return nil, fmt.Errorf("previous terminated container %q in pod %q not found", container, pod.Name)
		}
		t := status.LastTerminationState.Terminated
		return []logLine{line(t.StartedAt, status.Image, status.RestartCount-1)}, nil
	}
	return []logLine{line(status.State.Running.StartedAt, status.Image, status.RestartCount)}, nil
}

type logLine struct {
	at   time.Time
	text string
}

// serveLogs writes the container's simulated log, honouring tailLines, limitBytes, sinceSeconds,
// timestamps, previous and follow (which keeps the stream open, as nothing more is logged, until the
// client goes).
func (k *kubeletAPI) serveLogs(w http.ResponseWriter, req *http.Request, pod *corev1.Pod, container string) {
	query := req.URL.Query()
	lines, err := logLines(pod, container, query.Get("previous") == "true")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s := query.Get("sinceSeconds"); s != "" {
		seconds, err := strconv.ParseInt(s, 10, 64)
		if err != nil || seconds <= 0 {
			http.Error(w, "sinceSeconds must be a positive integer", http.StatusBadRequest)
			return
		}
		since := time.Now().Add(-time.Duration(seconds) * time.Second)
		kept := lines[:0]
		for _, l := range lines {
			if !l.at.Before(since) {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	if s := query.Get("tailLines"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			http.Error(w, "tailLines must be a non-negative integer", http.StatusBadRequest)
			return
		}
		if n < len(lines) {
			lines = lines[len(lines)-n:]
		}
	}
	var text strings.Builder
	for _, l := range lines {
		if query.Get("timestamps") == "true" {
			text.WriteString(l.at.UTC().Format(time.RFC3339Nano) + " ")
		}
		text.WriteString(l.text + "\n")
	}
	out := text.String()
	if s := query.Get("limitBytes"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			http.Error(w, "limitBytes must be a positive integer", http.StatusBadRequest)
			return
		}
		if n < len(out) {
			out = out[:n]
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, out)
	if query.Get("follow") != "true" {
		return
	}
	if flusher, ok := w.(http.Flusher); ok {
		flusher.Flush()
	}
	<-req.Context().Done()
}

// simulatedProcess runs exec's simulated commands and is the main process attach joins.
type simulatedProcess struct {
	pod *corev1.Pod
}

// simulatedCommands are the commands exec knows.
const simulatedCommands = "true, false, echo, hostname, env, cat"

func (p simulatedProcess) ExecInContainer(ctx context.Context, _ string, _ string, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize, _ time.Duration) error {
	if len(cmd) == 0 {
		return fmt.Errorf("no command")
	}
	write := func(w io.Writer, s string) {
		if w != nil {
			_, _ = io.WriteString(w, s)
		}
	}
	switch cmd[0] {
	case "true":
		return nil
	case "false":
		return utilexec.CodeExitError{Err: errors.New("false"), Code: 1}
	case "echo":
		write(out, strings.Join(cmd[1:], " ")+"\n")
		return nil
	case "hostname":
		write(out, p.pod.Name+"\n")
		return nil
	case "env":
		write(out, "HOSTNAME="+p.pod.Name+"\n")
		if c := findContainer(p.pod.Spec.Containers, container); c != nil {
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					write(out, e.Name+"="+e.Value+"\n")
				}
			}
		}
		return nil
	case "cat":
		if len(cmd) > 1 {
			write(errOut, "cat: the simulated containers have no files\n")
			return utilexec.CodeExitError{Err: errors.New("cat"), Code: 1}
		}
		return copyUntil(ctx, out, in)
	}
	write(errOut, fmt.Sprintf("%s: command not found (the local cluster's simulated containers run only %s)\n", cmd[0], simulatedCommands))
	return utilexec.CodeExitError{Err: fmt.Errorf("%s: command not found", cmd[0]), Code: 127}
}

func (p simulatedProcess) AttachContainer(ctx context.Context, _ string, _ string, container string, in io.Reader, out, errOut io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize) error {
	w := out
	if w == nil {
		w = errOut
	}
	if w != nil {
		_, _ = fmt.Fprintf(w, "attached to the simulated main process of container %s of pod %s/%s, which echoes its stdin\n",
			container, p.pod.Namespace, p.pod.Name)
	}
	if in == nil {
		// Without stdin there is nothing more to do until the client goes. A hijacked connection's
		// context is not cancelled when the client closes it, so the wait is bounded like an idle stream.
		select {
		case <-ctx.Done():
		case <-time.After(streamIdleTimeout):
		}
		return nil
	}
	return copyUntil(ctx, out, in)
}

// copyUntil copies in to out until in ends or ctx is done.
func copyUntil(ctx context.Context, out io.Writer, in io.Reader) error {
	if in == nil {
		return nil
	}
	if out == nil {
		out = io.Discard
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, in)
		copied <- err
	}()
	select {
	case err := <-copied:
		return err
	case <-ctx.Done():
		return nil
	}
}

// simulatedPorts answers port-forward streams: every containerPort of the pod serves HTTP.
type simulatedPorts struct {
	pod *corev1.Pod
}

func (s simulatedPorts) PortForward(ctx context.Context, _ string, _ string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	container := ""
	for _, c := range s.pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.ContainerPort == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
				container = c.Name
			}
		}
	}
	if container == "" {
		return fmt.Errorf("connection refused: no container of pod %s/%s declares TCP port %d", s.pod.Namespace, s.pod.Name, port)
	}
	body := fmt.Sprintf("pod %s/%s container %s port %d (simulated by the local cluster)\n", s.pod.Namespace, s.pod.Name, container, port)
	reader := bufio.NewReader(stream)
	// One request after another on the connection, until the client closes it.
	for ctx.Err() == nil {
		req, err := http.ReadRequest(reader)
		if err != nil {
			return nil
		}
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
		resp := &http.Response{
			StatusCode: http.StatusOK, ProtoMajor: 1, ProtoMinor: 1, Request: req,
			Header:        http.Header{"Content-Type": []string{"text/plain"}},
			ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(body)),
		}
		if err := resp.Write(stream); err != nil || req.Close {
			return nil
		}
	}
	return nil
}
