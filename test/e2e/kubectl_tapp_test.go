//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tapp-io/tapp-apiserver/pkg/kubectltapp"
)

// The kubectl plugin kubectl-tapp (cmd/kubectl-tapp), called through kubectl's plugin mechanism
// (`kubectl tapp ...` with the binary on PATH). `make e2e` builds it with the server and passes it as
// TAPP_E2E_PLUGIN_BINARY; without that variable it is built once per run into a temporary directory.
var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// pluginPath returns a directory holding the plugin as kubectl-tapp, shared by every test of the run and
// removed when the run ends (removePluginDir).
func pluginPath(t testing.TB) string {
	t.Helper()
	pluginOnce.Do(func() {
		if pluginDir, pluginErr = os.MkdirTemp("", "kubectl-tapp-e2e-"); pluginErr != nil {
			return
		}
		target := filepath.Join(pluginDir, "kubectl-tapp")
		if built := os.Getenv("TAPP_E2E_PLUGIN_BINARY"); built != "" {
			pluginErr = os.Symlink(absolute(built), target)
			return
		}
		cmd := exec.Command("go", "build", "-o", target, "./cmd/kubectl-tapp")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			pluginErr = fmt.Errorf("go build ./cmd/kubectl-tapp: %v\n%s", err, out)
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return pluginDir
}

// kubectlTApp runs `kubectl tapp args... --kubeconfig=<admin>` with the plugin on PATH and returns stdout;
// the error carries stderr.
func kubectlTApp(t testing.TB, args ...string) (string, error) {
	t.Helper()
	dir := pluginPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary, append(append([]string{"tapp"}, args...), "--kubeconfig="+cluster.Kubeconfig)...)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("kubectl tapp %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	if err != nil {
		return stdout.String(), fmt.Errorf("kubectl tapp %s: %w\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// removePluginDir removes the directory pluginPath made, once every test is done (TestMain).
func removePluginDir() {
	if pluginDir != "" {
		_ = os.RemoveAll(pluginDir)
	}
}

func mustKubectlTApp(t testing.TB, args ...string) string {
	t.Helper()
	out, err := kubectlTApp(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKubectlTAppPlugin drives a TApp with the kubectl plugin: instances, kill and revive, restart of one
// instance, rollout restart and status, pause and resume around an image change, history and undo, and a
// rollout status that times out.
func TestKubectlTAppPlugin(t *testing.T) {
	ns := newNamespace(t, "plugin")
	const name, image = "plug", "nginx:1.25"
	mustKubectlIn(t, nginxTApp(name, 3, image, ""), "apply", "-n", ns, "-f", "-")

	t.Run("rollout status waits for the instances", func(t *testing.T) {
		out := mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")
		requireContains(t, "rollout status", out, `TApp "plug" successfully rolled out: 3 instances updated and available`)
	})

	t.Run("instances", func(t *testing.T) {
		tb := parseTable(t, mustKubectlTApp(t, "instances", name, "-n", ns))
		tb.requireHeader(t, "ID", "POD", "TEMPLATE", "REVISION", "STATUS", "READY", "NODE", "IMAGES", "RESTARTS", "CLAIMS", "LIFECYCLE")
		if len(tb.rows) != 3 {
			t.Fatalf("rows = %q, want 3", tb.rows)
		}
		for _, id := range []string{"0", "1", "2"} {
			got := []string{tb.cell(t, id, "POD"), tb.cell(t, id, "TEMPLATE"), tb.cell(t, id, "STATUS"),
				tb.cell(t, id, "READY"), tb.cell(t, id, "IMAGES"), tb.cell(t, id, "RESTARTS"), tb.cell(t, id, "LIFECYCLE")}
			want := []string{name + "-" + id, "default", "Running", "1/1", image, "0", "<none>"}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("instance %s: %q, want %q", id, got, want)
			}
			if pod := getPod(t, ns, name+"-"+id); pod == nil || tb.cell(t, id, "NODE") != pod.Spec.NodeName || pod.Spec.NodeName == "" {
				t.Errorf("instance %s: NODE %q, want the pod's node (%s)", id, tb.cell(t, id, "NODE"), describePod(pod))
			}
		}
		// kubectl's connection flags: --context picks a kubeconfig context, and an unknown one is an error.
		current := strings.TrimSpace(mustKubectl(t, "config", "current-context"))
		if tb := parseTable(t, mustKubectlTApp(t, "instances", name, "-n", ns, "--context="+current)); len(tb.rows) != 3 {
			t.Errorf("instances with --context=%s: rows = %q, want 3", current, tb.rows)
		}
		if _, err := kubectlTApp(t, "instances", name, "-n", ns, "--context=no-such-context"); err == nil || !strings.Contains(err.Error(), "no-such-context") {
			t.Errorf("instances with an unknown --context: err = %v", err)
		}
		// Without -n the plugin looks in the kubeconfig's namespace, where there is no such TApp.
		if _, err := kubectlTApp(t, "instances", name); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("instances without -n: err = %v, want not found", err)
		}
	})

	t.Run("kill and revive", func(t *testing.T) {
		out := mustKubectlTApp(t, "kill", name, "1", "-n", ns)
		requireContains(t, "kill", out, "tapp.apps.tkestack.io/plug instance 1 killed")
		if got := jsonpath(t, ns, "tapp/"+name, "{.spec.statuses}"); got != `{"1":"Killed"}` {
			t.Errorf("spec.statuses after kill = %s", got)
		}
		eventually(t, ctrlTimeout, "the killed instance's pod is deleted", func() error {
			tb := parseTable(t, mustKubectlTApp(t, "instances", name, "-n", ns))
			if got := tb.cell(t, "1", "STATUS") + " " + tb.cell(t, "1", "POD"); got != "Killed <none>" {
				return fmt.Errorf("instance 1: %s", got)
			}
			return nil
		})
		out = mustKubectlTApp(t, "kill", name, "1", "-n", ns)
		requireContains(t, "kill again", out, "instance 1 already killed")
		_, err := kubectlTApp(t, "kill", name, "3", "x", "-n", ns)
		if err == nil || !strings.Contains(err.Error(), `has no instance ["3" "x"]: its ids are 0..2`) {
			t.Errorf("kill of unknown ids: err = %v", err)
		}

		out = mustKubectlTApp(t, "revive", name, "1", "-n", ns)
		requireContains(t, "revive", out, "tapp.apps.tkestack.io/plug instance 1 revived")
		if got := jsonpath(t, ns, "tapp/"+name, "{.spec.statuses}"); got != "" && got != "{}" {
			t.Errorf("spec.statuses after revive = %s", got)
		}
		out = mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")
		requireContains(t, "rollout status after revive", out, "successfully rolled out")
		if pod := getPod(t, ns, name+"-1"); !podReady(pod) {
			t.Errorf("revived instance: %s", describePod(pod))
		}
	})

	t.Run("restart an instance", func(t *testing.T) {
		before := getPod(t, ns, name+"-2")
		if before == nil {
			t.Fatal("no pod for instance 2")
		}
		out := mustKubectlTApp(t, "restart", name, "2", "-n", ns)
		requireContains(t, "restart", out, "instance 2 restarted (pod plug-2 deleted)")
		eventually(t, ctrlTimeout, "instance 2 gets a new ready pod", func() error {
			pod := getPod(t, ns, name+"-2")
			if pod == nil || pod.UID == before.UID || !podReady(pod) {
				return fmt.Errorf("pod: %s (old uid %s)", describePod(pod), before.UID)
			}
			return nil
		})
		if _, err := kubectlTApp(t, "restart", name, "5", "-n", ns); err == nil || !strings.Contains(err.Error(), "has no instance") {
			t.Errorf("restart of an unknown id: err = %v", err)
		}
	})

	t.Run("rollout restart", func(t *testing.T) {
		before := map[string]string{}
		for _, id := range []string{"0", "1", "2"} {
			before[id] = string(getPod(t, ns, name+"-"+id).UID)
		}
		out := mustKubectlTApp(t, "rollout", "restart", name, "-n", ns)
		requireContains(t, "rollout restart", out, "tapp.apps.tkestack.io/plug restarted")
		stamp := jsonpath(t, ns, "tapp/"+name, `{.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}`)
		if _, err := time.Parse(time.RFC3339, stamp); err != nil {
			t.Fatalf("restartedAt on spec.template = %q: %v", stamp, err)
		}
		out = mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")
		requireContains(t, "rollout status after restart", out, "successfully rolled out: 3 instances")
		for _, id := range []string{"0", "1", "2"} {
			pod := getPod(t, ns, name+"-"+id)
			if pod == nil || pod.Annotations[kubectltapp.RestartedAtAnnotation] != stamp || !podReady(pod) {
				t.Errorf("instance %s after rollout restart: %s, want annotation restartedAt %s", id, describePod(pod), stamp)
			} else if string(pod.UID) == before[id] {
				// As for a StatefulSet, a restart replaces every pod (README).
				t.Errorf("instance %s after rollout restart: still pod %s, want a new pod", id, pod.UID)
			}
		}
	})

	images := func(t *testing.T) string {
		tb := parseTable(t, mustKubectlTApp(t, "instances", name, "-n", ns))
		return tb.cell(t, "0", "IMAGES") + " " + tb.cell(t, "1", "IMAGES") + " " + tb.cell(t, "2", "IMAGES")
	}

	t.Run("pause and resume", func(t *testing.T) {
		out := mustKubectlTApp(t, "rollout", "pause", name, "-n", ns)
		requireContains(t, "rollout pause", out, "tapp.apps.tkestack.io/plug paused")
		if got := jsonpath(t, ns, "tapp/"+name, "{.spec.updateStrategy.paused}"); got != "true" {
			t.Errorf("spec.updateStrategy.paused after pause = %q", got)
		}
		if _, err := kubectlTApp(t, "rollout", "pause", name, "-n", ns); err == nil || !strings.Contains(err.Error(), "is already paused") {
			t.Errorf("pausing a paused TApp: err = %v", err)
		}
		if _, err := kubectlTApp(t, "rollout", "restart", name, "-n", ns); err == nil || !strings.Contains(err.Error(), "rollout resume") {
			t.Errorf("restarting a paused TApp: err = %v", err)
		}
		// A new image while paused: no instance is updated, and rollout status says why until its timeout.
		mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type=strategic",
			"-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}`)
		_, err := kubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=5s")
		if err == nil || !strings.Contains(err.Error(), "0 out of 3 instances have been updated") ||
			!strings.Contains(err.Error(), "the rollout is paused") || !strings.Contains(err.Error(), "timed out waiting for the condition") {
			t.Errorf("rollout status of a paused rollout: err = %v, want a paused waiting message and a timeout", err)
		}
		if got := images(t); got != "nginx:1.25 nginx:1.25 nginx:1.25" {
			t.Errorf("images while paused = %s, want every instance still on nginx:1.25", got)
		}

		out = mustKubectlTApp(t, "rollout", "resume", name, "-n", ns)
		requireContains(t, "rollout resume", out, "tapp.apps.tkestack.io/plug resumed")
		if got := jsonpath(t, ns, "tapp/"+name, "{.spec.updateStrategy.paused}"); got != "" && got != "false" {
			t.Errorf("spec.updateStrategy.paused after resume = %q", got)
		}
		if _, err := kubectlTApp(t, "rollout", "resume", name, "-n", ns); err == nil || !strings.Contains(err.Error(), "is not paused") {
			t.Errorf("resuming a running TApp: err = %v", err)
		}
		out = mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")
		requireContains(t, "rollout status after resume", out, "successfully rolled out: 3 instances")
		if got := images(t); got != "nginx:1.26 nginx:1.26 nginx:1.26" {
			t.Errorf("images after resume = %s, want nginx:1.26 everywhere", got)
		}
	})

	t.Run("history and undo", func(t *testing.T) {
		// Three template sets so far: the first, the restart's and nginx:1.26.
		out := mustKubectlTApp(t, "rollout", "history", name, "-n", ns)
		object, history, _ := strings.Cut(out, "\n")
		if object != "tapp.apps.tkestack.io/plug" {
			t.Errorf("history starts with %q, want the TApp", object)
		}
		tb := parseTable(t, history)
		tb.requireHeader(t, "REVISION", "NAME", "ROLE", "CHANGE-CAUSE")
		if len(tb.rows) != 3 {
			t.Fatalf("history rows = %q, want 3", tb.rows)
		}
		latest, previous := tb.rows[2], tb.rows[1]
		updateRevision := jsonpath(t, ns, "tapp/"+name, "{.status.updateRevision}")
		if latest[1] != updateRevision || !strings.Contains(latest[2], "update") {
			t.Errorf("newest revision %q, want %s with role update", latest, updateRevision)
		}
		out = mustKubectlTApp(t, "rollout", "history", name, "-n", ns, "--revision="+tb.rows[0][0])
		requireContains(t, "history --revision", out, "image: nginx:1.25", "template:")
		if strings.Contains(out, "restartedAt") {
			t.Errorf("the first revision carries the restart annotation:\n%s", out)
		}

		before := map[string]string{}
		for _, id := range []string{"0", "1", "2"} {
			before[id] = string(getPod(t, ns, name+"-"+id).UID)
		}
		out = mustKubectlTApp(t, "rollout", "undo", name, "-n", ns)
		requireContains(t, "rollout undo", out, "rolled back to revision "+previous[0]+" ("+previous[1]+")")
		out = mustKubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=2m")
		requireContains(t, "rollout status after undo", out, "successfully rolled out: 3 instances")
		if got := images(t); got != "nginx:1.25 nginx:1.25 nginx:1.25" {
			t.Errorf("images after undo = %s, want nginx:1.25 everywhere", got)
		}
		for id, uid := range before {
			// Only the image differs between the two revisions: the instances are updated in place.
			if pod := getPod(t, ns, name+"-"+id); pod == nil || string(pod.UID) != uid {
				t.Errorf("instance %s after undo: %s, want the pod %s updated in place", id, describePod(pod), uid)
			}
		}
		if got := jsonpath(t, ns, "tapp/"+name, "{.status.updateRevision}"); got != previous[1] {
			t.Errorf("status.updateRevision after undo = %s, want the revision rolled back to (%s)", got, previous[1])
		}
		if _, err := kubectlTApp(t, "rollout", "undo", name, "-n", ns, "--to-revision=999"); err == nil || !strings.Contains(err.Error(), "unable to find revision 999") {
			t.Errorf("undo to an unknown revision: err = %v", err)
		}
	})

	t.Run("rollout status times out", func(t *testing.T) {
		// A template whose pods no node accepts (a node selector no node has): the rollout cannot finish,
		// and rollout status gives up at its timeout with a non-zero exit.
		mustKubectl(t, "patch", "-n", ns, "tapp", name, "--type=merge",
			"-p", `{"spec":{"template":{"spec":{"nodeSelector":{"e2e.tapp.io/none":"x"}}}}}`)
		_, err := kubectlTApp(t, "rollout", "status", name, "-n", ns, "--timeout=5s")
		if err == nil || !strings.Contains(err.Error(), "timed out waiting for the condition") || !strings.Contains(err.Error(), "Waiting for TApp") {
			t.Errorf("rollout status of a stuck rollout: err = %v, want a timeout after a waiting message", err)
		}
	})
}
