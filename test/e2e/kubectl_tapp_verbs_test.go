//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/kubectltapp"
)

// verbsTApp is a TApp of two instances: instance 0 on spec.template (container nginx with port 80 named
// http), instance 1 on the templatePool entry canary (containers nginx and sidecar).
func verbsTApp(name string) string {
	return fmt.Sprintf(`apiVersion: apps.tkestack.io/v1
kind: TApp
metadata:
  name: %[1]s
spec:
  replicas: 2
  templates:
    "1": canary
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - name: http
          containerPort: 80
        env:
        - name: GREETING
          value: hello from the template
  templatePool:
    canary:
      metadata:
        labels:
          app: %[1]s
      spec:
        containers:
        - name: nginx
          image: nginx:1.25
          ports:
          - containerPort: 80
        - name: sidecar
          image: busybox:1.36
`, name)
}

// runPlugin runs kubectl with args (kubectl's own verbs, `tapp ...` or `__complete tapp ...`) with the
// plugin and its completion executable on PATH and KUBECONFIG set (so that nothing needs to follow a `--`),
// feeding stdin; it returns stdout and stderr.
func runPlugin(t testing.TB, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary, args...)
	cmd.Env = pluginEnv(t)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("kubectl %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String(), stderr.String(), err
}

// pluginEnv is the environment of runPlugin: the shared plugin directory, with kubectl_complete-tapp
// linked to the plugin as README tells users to install it, first on PATH.
func pluginEnv(t testing.TB) []string {
	t.Helper()
	dir := pluginPath(t)
	link := filepath.Join(dir, kubectltapp.CompletionExecutable)
	if _, err := os.Lstat(link); os.IsNotExist(err) {
		if err := os.Symlink("kubectl-tapp", link); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	return append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cluster.Kubeconfig)
}

// TestKubectlTAppWorkloadVerbs runs kubectl's workload verbs on TApp instances through the plugin, against
// the local cluster's kubelet API: logs, exec, attach, port-forward, set image with the rollout that
// follows, and shell completion through kubectl.
func TestKubectlTAppWorkloadVerbs(t *testing.T) {
	ns := newNamespace(t, "verbs")
	const name = "web"
	waitDefaultServiceAccount(t, ns)
	mustKubectlIn(t, verbsTApp(name), "apply", "-n", ns, "-f", "-")
	mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")

	t.Run("kubectl itself refuses the TApp", func(t *testing.T) {
		for _, args := range [][]string{
			{"logs", "tapp/" + name},
			{"exec", "tapp/" + name, "--", "true"},
			{"port-forward", "tapp/" + name, ":80"},
			{"set", "image", "tapp/" + name, "nginx=nginx:1.27"},
			{"rollout", "status", "tapp/" + name},
		} {
			_, stderr, err := runPlugin(t, "", append([]string{"-n", ns}, args...)...)
			if err == nil || !strings.Contains(stderr, `no kind "TApp" is registered`) {
				t.Errorf("kubectl %s: err %v, stderr %q; want kubectl's refusal (the reason for the plugin's verbs)", args[0], err, stderr)
			}
		}
	})

	t.Run("kubectl verbs that work directly", func(t *testing.T) {
		// The README's table lists these as working without the plugin: through discovery and the scale
		// subresource, and on the instances' pods by name.
		requireContains(t, "describe", mustKubectl(t, "describe", "tapp", name, "-n", ns), "Name:         "+name)
		requireContains(t, "autoscale", mustKubectl(t, "autoscale", "tapp/"+name, "--min=2", "--max=2", "-n", ns), "horizontalpodautoscaler.autoscaling/"+name+" autoscaled")
		mustKubectl(t, "delete", "hpa", name, "-n", ns)
		requireContains(t, "logs of the pod", mustKubectl(t, "logs", "pod/"+name+"-0", "-n", ns), "simulated container nginx")
		out, _, err := runPlugin(t, "", "exec", name+"-0", "-n", ns, "--", "hostname")
		if err != nil || out != name+"-0\n" {
			t.Errorf("kubectl exec %s-0 -- hostname: %q, %v", name, out, err)
		}
	})

	t.Run("logs", func(t *testing.T) {
		out := mustKubectlTApp(t, "logs", name, "0", "-n", ns)
		requireContains(t, "logs", out, fmt.Sprintf("simulated container nginx of pod %s/web-0 started with image nginx:1.25 (restart 0)", ns))
		out = mustKubectlTApp(t, "logs", name, "1", "-c", "sidecar", "--timestamps", "-n", ns)
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+Z simulated container sidecar of pod \S+/web-1 started with image busybox:1.36`).MatchString(out) {
			t.Errorf("logs -c sidecar --timestamps = %q", out)
		}
		out = mustKubectlTApp(t, "logs", name, "1", "--all-containers", "--prefix", "-n", ns)
		requireContains(t, "logs --all-containers --prefix", out, "[pod/web-1/nginx]", "[pod/web-1/sidecar]")
		if _, err := kubectlTApp(t, "logs", name, "1", "-c", "nope", "-n", ns); err == nil || !strings.Contains(err.Error(), "container nope is not valid for pod web-1") {
			t.Errorf("logs of an unknown container: err = %v", err)
		}
		if _, err := kubectlTApp(t, "logs", name, "2", "-n", ns); err == nil || !strings.Contains(err.Error(), `has no instance ["2"]: its ids are 0..1`) {
			t.Errorf("logs of an unknown instance: err = %v", err)
		}
	})

	t.Run("exec", func(t *testing.T) {
		out, _, err := runPlugin(t, "", "tapp", "exec", name, "0", "-n", ns, "--", "echo", "hello", "world")
		if err != nil || out != "hello world\n" {
			t.Errorf("exec echo: %q, %v", out, err)
		}
		if _, _, err := runPlugin(t, "", "tapp", "exec", name, "0", "-n", ns, "--", "true"); err != nil {
			t.Errorf("exec true: %v", err)
		}
		out, _, err = runPlugin(t, "", "tapp", "exec", name, "0", "-n", ns, "--", "env")
		if err != nil || !strings.Contains(out, "HOSTNAME=web-0\n") || !strings.Contains(out, "GREETING=hello from the template\n") {
			t.Errorf("exec env: %q, %v", out, err)
		}
		out, _, err = runPlugin(t, "line one\nline two\n", "tapp", "exec", "-i", name, "1", "-c", "sidecar", "-n", ns, "--", "cat")
		if err != nil || out != "line one\nline two\n" {
			t.Errorf("exec -i cat: %q, %v", out, err)
		}
		// Exit codes come back as kubectl's.
		_, stderr, err := runPlugin(t, "", "tapp", "exec", name, "0", "-n", ns, "--", "false")
		if code := exitCode(err); code != 1 || !strings.Contains(stderr, "command terminated with exit code 1") {
			t.Errorf("exec false: exit %d, stderr %q", code, stderr)
		}
		_, stderr, err = runPlugin(t, "", "tapp", "exec", name, "0", "-n", ns, "--", "sh", "-c", "id")
		if code := exitCode(err); code != 127 || !strings.Contains(stderr, "sh: command not found") {
			t.Errorf("exec sh (not a simulated command): exit %d, stderr %q", code, stderr)
		}
		if _, stderr, err := runPlugin(t, "", "tapp", "exec", name, "0", "-n", ns); err == nil || !strings.Contains(stderr, "you must specify at least one command for the container") {
			t.Errorf("exec without a command: err %v, stderr %q", err, stderr)
		}
	})

	t.Run("attach", func(t *testing.T) {
		out, _, err := runPlugin(t, "typed into the process\n", "tapp", "attach", "-i", "-q", name, "0", "-n", ns)
		if err != nil {
			t.Fatalf("attach -i: %v", err)
		}
		requireContains(t, "attach -i", out, "attached to the simulated main process of container nginx of pod "+ns+"/web-0",
			"typed into the process\n")
	})

	t.Run("port-forward", func(t *testing.T) {
		for _, port := range []string{"80", "http"} {
			body := portForwardGet(t, ns, name, "0", ":"+port)
			requireContains(t, "port-forward :"+port, body, "pod "+ns+"/web-0 container nginx port 80")
		}
		if _, stderr, err := runPlugin(t, "", "tapp", "port-forward", name, "0", ":nope", "-n", ns); err == nil || !strings.Contains(stderr, "nope") {
			t.Errorf("port-forward to an unknown port name: err %v, stderr %q", err, stderr)
		}
	})

	t.Run("set image", func(t *testing.T) {
		before := getPod(t, ns, name+"-0")
		out := mustKubectlTApp(t, "set", "image", name, "nginx=nginx:1.27", "-n", ns)
		requireContains(t, "set image", out,
			"tapp.apps.tkestack.io/web template default container nginx image updated: nginx:1.25 -> nginx:1.27",
			"the TApp controller updates instance(s) 0 to the new image(s)", "kubectl tapp rollout status web")
		if got := jsonpath(t, ns, "tapp/"+name, "{.spec.template.spec.containers[0].image} {.spec.templatePool.canary.spec.containers[0].image}"); got != "nginx:1.27 nginx:1.25" {
			t.Errorf("images after set image (default template) = %q", got)
		}
		mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")
		after := getPod(t, ns, name+"-0")
		if after == nil || after.UID != before.UID || after.Spec.Containers[0].Image != "nginx:1.27" {
			t.Errorf("instance 0 after the rollout: %s, want the same pod (uid %s) with nginx:1.27", describePod(after), before.UID)
		}
		// The kubelet API reports the restarted container.
		out = mustKubectlTApp(t, "logs", name, "0", "-n", ns)
		requireContains(t, "logs after set image", out, "started with image nginx:1.27 (restart 1)")

		out = mustKubectlTApp(t, "set", "image", name, "*=registry.example/base:2", "--template=canary", "-n", ns)
		requireContains(t, "set image --template=canary", out,
			"template canary container nginx image updated: nginx:1.25 -> registry.example/base:2",
			"template canary container sidecar image updated: busybox:1.36 -> registry.example/base:2",
			"instance(s) 1 to the new image(s)")
		mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")

		out = mustKubectlTApp(t, "set", "image", name, "nginx=nginx:1.28", "--template=all", "-n", ns)
		requireContains(t, "set image --template=all", out, "template default container nginx", "template canary container nginx", "instance(s) 0,1")
		if got := jsonpath(t, ns, "tapp/"+name, "{.spec.template.spec.containers[0].image} {.spec.templatePool.canary.spec.containers[0].image}"); got != "nginx:1.28 nginx:1.28" {
			t.Errorf("images after set image --template=all = %q", got)
		}
		mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")

		if _, err := kubectlTApp(t, "set", "image", name, "sidecar=x:1", "-n", ns); err == nil || !strings.Contains(err.Error(), `no container ["sidecar"] in template(s) default (containers: default: nginx)`) {
			t.Errorf("set image of a container the default template lacks: err = %v", err)
		}
		if _, err := kubectlTApp(t, "set", "image", name, "nginx=x:1", "--template=nosuch", "-n", ns); err == nil || !strings.Contains(err.Error(), `has no template "nosuch": its templates are default, canary`) {
			t.Errorf("set image of an unknown template: err = %v", err)
		}
		if _, err := kubectlTApp(t, "set", "image", name, "nginx", "-n", ns); err == nil || !strings.Contains(err.Error(), `"nginx" is not CONTAINER=IMAGE`) {
			t.Errorf("set image without =: err = %v", err)
		}
	})

	t.Run("completion", func(t *testing.T) {
		// kubectl completes a plugin's arguments by running kubectl_complete-tapp.
		out, _, err := runPlugin(t, "", "__complete", "tapp", "logs", "-n", ns, "")
		if err != nil || !strings.Contains(out, name+"\n") {
			t.Errorf("completion of TAPP: %q, %v", out, err)
		}
		out, _, err = runPlugin(t, "", "__complete", "tapp", "exec", "-n", ns, name, "")
		if err != nil || !strings.Contains(out, "0\ttemplate default, pod web-0") || !strings.Contains(out, "1\ttemplate canary, pod web-1") {
			t.Errorf("completion of ID: %q, %v", out, err)
		}
		out, _, err = runPlugin(t, "", "__complete", "tapp", "kill", "-n", ns, name, "0", "")
		if err != nil || strings.Contains(out, "0\t") || !strings.Contains(out, "1\t") {
			t.Errorf("completion of a second ID of kill: %q, %v", out, err)
		}
		out, _, err = runPlugin(t, "", "__complete", "tapp", "port-forward", "-n", ns, name, "0", "")
		if err != nil || !strings.Contains(out, "80\tcontainer nginx\n") || !strings.Contains(out, "http\tcontainer nginx\n") {
			t.Errorf("completion of the ports of port-forward: %q, %v", out, err)
		}
		out, _, err = runPlugin(t, "", "__complete", "tapp", "set", "image", "-n", ns, "--template=canary", name, "")
		if err != nil || !strings.Contains(out, "nginx=\n") || !strings.Contains(out, "sidecar=\n") {
			t.Errorf("completion of CONTAINER= of set image: %q, %v", out, err)
		}
		out, _, err = runPlugin(t, "", "__complete", "tapp", "")
		if err != nil || !strings.Contains(out, "port-forward") || !strings.Contains(out, "set") {
			t.Errorf("completion of the plugin's commands: %q, %v", out, err)
		}
		script := mustKubectlTApp(t, "completion", "bash")
		requireContains(t, "completion bash", script, "__start_kubectl-tapp")
	})
}

// exitCode is the exit code of a finished command's error (0 for nil, -1 if it did not exit).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	return -1
}

var forwardingRE = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) ->`)

// portForwardGet runs `kubectl tapp port-forward TAPP ID PORT` to a random local port, makes an HTTP request
// through the tunnel, stops the plugin and returns the response body.
func portForwardGet(t *testing.T, ns, tapp, id, port string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary, "tapp", "port-forward", tapp, id, port, "-n", ns)
	cmd.Env = pluginEnv(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	local := ""
	lines := bufio.NewScanner(stdout)
	for local == "" && lines.Scan() {
		t.Logf("port-forward: %s", lines.Text())
		if m := forwardingRE.FindStringSubmatch(lines.Text()); m != nil {
			local = m[1]
		}
	}
	if local == "" {
		t.Fatalf("port-forward %s %s %s printed no local port; stderr: %s", tapp, id, port, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + local + "/")
	if err != nil {
		t.Fatalf("GET through port-forward: %v; stderr: %s", err, stderr.String())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET through port-forward: %s %s", resp.Status, body)
	}
	return string(body)
}
