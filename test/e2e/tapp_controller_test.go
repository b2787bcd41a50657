//go:build e2e

package e2e

// End-to-end tests of the TApp controller embedded in tapp-apiserver: every example of the TApp tutorial
// (artifacts/examples/tutorial, unchanged) and the behaviour the controller issue asks for, driven
// with kubectl as a user would and checked precisely with client-go. Each test works in a namespace of its
// own, so all of them share the one local cluster. Pods are run by the local cluster's pod simulator
// (pkg/localcluster/kubelet.go): they become Ready at once unless a readiness gate is False, and a container
// whose image changes in place restarts with the new image, a new imageID and restartCount+1.

import (
	"context"
	"fmt"
	tkestack "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/tapppod"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp/policy"
)

// TestTAppCreate: the tutorial's first TApp runs pods example-tapp-0..2 with the controller's labels and
// controller reference, and its status and `kubectl get tapp` report them.
func TestTAppCreate(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-create")
	out := mustKubectlIn(t, tutorialTApp(t, "tutorial-same-template.yaml"), "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply", out, "tapp.apps.tkestack.io/example-tapp created")

	pods, tapp := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
	for id, pod := range pods {
		checkIdentity(t, tapp, id, pod)
	}
	s := tapp.Status
	if s.Replicas != 3 || s.ReadyReplicas != 3 || s.UpdatedReplicas != 3 || s.AppStatus != policy.AppRunning {
		t.Errorf("status: %s; want replicas, readyReplicas and updatedReplicas 3, appStatus Running", describeStatus(tapp))
	}
	if len(s.Statuses) != 3 {
		t.Errorf("status.statuses = %v, want the instances 0, 1 and 2", s.Statuses)
	}
	if s.ScaleLabelSelector != "app=example-tapp" {
		t.Errorf("status.scaleLabelSelector = %q, want app=example-tapp", s.ScaleLabelSelector)
	}
	if len(s.Conditions) == 0 {
		t.Errorf("status.conditions is empty, want the controller's conditions (e.g. Available/Progressing)")
	}
	for _, c := range s.Conditions {
		t.Logf("condition %s=%s reason=%s message=%q observedGeneration=%d", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
		if c.Type == "Available" && c.Status != metav1.ConditionTrue {
			t.Errorf("condition Available = %s (%s: %s) with every pod ready", c.Status, c.Reason, c.Message)
		}
	}

	// What a user sees.
	pollUntil(t, ctrlTimeout, "kubectl get tapp shows 3 ready instances", func() error {
		tb := parseTable(t, mustKubectl(t, "get", "-n", ns, "tapp", "example-tapp"))
		got := []string{tb.cell(t, "example-tapp", "DESIRED"), tb.cell(t, "example-tapp", "CURRENT"),
			tb.cell(t, "example-tapp", "READY"), tb.cell(t, "example-tapp", "APPSTATUS")}
		if strings.Join(got, " ") != "3 3 3 Running" {
			return fmt.Errorf("DESIRED CURRENT READY APPSTATUS = %q, want 3 3 3 Running", got)
		}
		return nil
	})
	tb := parseTable(t, mustKubectl(t, "get", "pods", "-n", ns, "-l", "app=example-tapp"))
	if len(tb.rows) != 3 {
		t.Errorf("kubectl get pods -l app=example-tapp lists %d pods, want 3: %q", len(tb.rows), tb.rows)
	}
	for id := 0; id < 3; id++ {
		name := podName("example-tapp", id)
		if got := tb.cell(t, name, "STATUS"); got != "Running" {
			t.Errorf("kubectl get pods: %s STATUS = %q, want Running", name, got)
		}
		if got := tb.cell(t, name, "READY"); got != "1/1" {
			t.Errorf("kubectl get pods: %s READY = %q, want 1/1", name, got)
		}
	}
	// The instance label selects one pod, as Services built on it expect.
	if got := mustKubectl(t, "get", "pods", "-n", ns, "-l", "tapp_instance_key=1", "-o", "name"); got != "pod/example-tapp-1\n" {
		t.Errorf("kubectl get pods -l tapp_instance_key=1 = %q, want pod/example-tapp-1", got)
	}
	out = mustKubectl(t, "describe", "-n", ns, "tapp", "example-tapp")
	requireContains(t, "kubectl describe tapp", out, "Status:", "Running")
}

// TestTAppDifferentTemplates: instances listed in spec.templates, and all instances when
// defaultTemplateName names a pool entry, run the pool template.
func TestTAppDifferentTemplates(t *testing.T) {
	t.Parallel()
	t.Run("tutorial defaultTemplateName", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-templates")
		mustKubectlIn(t, tutorialTApp(t, "tutorial-different-templates.yaml"), "apply", "-n", ns, "-f", "-")
		pods, tapp := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
		test := tapp.Spec.TemplatePool["test"]
		for id, pod := range pods {
			checkIdentity(t, tapp, id, pod)
			if got, want := pod.Labels[tkestack.TemplateHashLabel], tapppod.TemplateHash(&test); got != want {
				t.Errorf("pod %s runs template hash %s, want %s of the pool template test", pod.Name, got, want)
			}
		}
	})
	t.Run("templates pin one instance", func(t *testing.T) {
		t.Parallel()
		ns := controllerNamespace(t, "tapp-templates")
		// The notes' variant: spec.template runs nginx:1.8.1, the pool template test nginx:1.7.9, instance 1 runs test.
		mustKubectlIn(t, tutorialTApp(t, "notes-zh-different-templates.yaml"), "apply", "-n", ns, "-f", "-")
		pods, tapp := waitInstances(t, ns, "example-tapp", map[int]string{0: "nginx:1.8.1", 1: "nginx:1.7.9", 2: "nginx:1.8.1"})
		for id, pod := range pods {
			checkIdentity(t, tapp, id, pod)
		}
		test := tapp.Spec.TemplatePool["test"]
		if got, want := pods[1].Labels[tkestack.TemplateHashLabel], tapppod.TemplateHash(&test); got != want {
			t.Errorf("pod example-tapp-1 runs template hash %s, want %s of the pool template test", got, want)
		}
		if got, want := pods[0].Labels[tkestack.TemplateHashLabel], tapppod.TemplateHash(&tapp.Spec.Template); got != want {
			t.Errorf("pod example-tapp-0 runs template hash %s, want %s of spec.template", got, want)
		}
	})
}

// TestTAppDelete: deleting a TApp garbage-collects its pods, in the background (kubectl's default) and in
// the foreground; the controller creates nothing meanwhile.
func TestTAppDelete(t *testing.T) {
	t.Parallel()
	noPods := func(ctx context.Context, ns string) func() error {
		return func() error {
			pods, err := instancePods(ctx, ns, "gc")
			if err != nil {
				return err
			}
			if len(pods) != 0 {
				return fmt.Errorf("pods left:\n%s", describePods(pods))
			}
			return nil
		}
	}
	for _, cascade := range []string{"background", "foreground"} {
		cascade := cascade
		t.Run(cascade, func(t *testing.T) {
			t.Parallel()
			ns := controllerNamespace(t, "tapp-delete")
			ctx := testContext(t, 3*ctrlTimeout)
			mustKubectlIn(t, nginxTApp("gc", 3, "nginx:1.7.9", ""), "apply", "-n", ns, "-f", "-")
			waitInstances(t, ns, "gc", images(3, "nginx:1.7.9"))
			out := mustKubectl(t, "delete", "-n", ns, "tapp", "gc", "--cascade="+cascade)
			requireContains(t, "kubectl delete", out, `tapp.apps.tkestack.io "gc" deleted`)
			if cascade == "foreground" {
				// The TApp goes only once its pods (blockOwnerDeletion) are gone.
				pods, err := instancePods(ctx, ns, "gc")
				if err != nil {
					t.Fatal(err)
				}
				for _, pod := range pods {
					if pod.DeletionTimestamp == nil {
						t.Errorf("foreground deletion returned while pod %s is not being deleted", pod.Name)
					}
				}
			}
			pollUntil(t, ctrlTimeout, "the garbage collector deletes the pods", noPods(ctx, ns))
			holdsFor(t, ctrlHold, "no pod comes back", noPods(ctx, ns))
		})
	}
}

// TestTAppEvents: the controller records events on the TApp that name the pods it creates.
func TestTAppEvents(t *testing.T) {
	t.Parallel()
	// controllerNamespace waits for the ServiceAccount: a FailedCreate warning for a pod created before it
	// exists would be right, but is not what this test looks at.
	ns := controllerNamespace(t, "tapp-events")
	mustKubectlIn(t, tutorialTApp(t, "tutorial-same-template.yaml"), "apply", "-n", ns, "-f", "-")
	waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
	var out string
	pollUntil(t, ctrlTimeout, "events on the TApp name every created pod", func() error {
		var err error
		out, err = kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=TApp,involvedObject.name=example-tapp",
			"-o", `jsonpath={range .items[*]}{.type} {.reason} {.source.component}: {.message}{"\n"}{end}`)
		if err != nil {
			return err
		}
		for id := 0; id < 3; id++ {
			if !strings.Contains(out, podName("example-tapp", id)) {
				return fmt.Errorf("no event mentions %s:\n%s", podName("example-tapp", id), out)
			}
		}
		return nil
	})
	t.Logf("events of the TApp:\n%s", out)
	if strings.Contains(out, "Warning") {
		t.Errorf("warning events while creating a TApp:\n%s", out)
	}
	// kubectl describe shows them too.
	requireContains(t, "kubectl describe tapp", mustKubectl(t, "describe", "-n", ns, "tapp", "example-tapp"), "Events:", "example-tapp-0")
}

// headlessService is the Service of the tutorial's "stable, unique network identifiers" example.
const headlessService = `apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app: example-tapp
spec:
  ports:
  - port: 80
    name: web
  clusterIP: None
  selector:
    app: example-tapp
`

// TestTAppHeadlessService: with spec.serviceName every pod gets hostname <pod> and subdomain <service>,
// which the headless Service's EndpointSlices publish as the pods' DNS names.
func TestTAppHeadlessService(t *testing.T) {
	t.Parallel()
	ns := controllerNamespace(t, "tapp-dns")
	manifest := headlessService + "---\n" + tutorialTApp(t, "tutorial-headless-service.yaml")
	out := mustKubectlIn(t, manifest, "apply", "-n", ns, "-f", "-")
	requireContains(t, "kubectl apply", out, "service/nginx created", "tapp.apps.tkestack.io/example-tapp created")
	pods, _ := waitInstances(t, ns, "example-tapp", images(3, "nginx:1.7.9"))
	for _, pod := range pods {
		if pod.Spec.Hostname != pod.Name || pod.Spec.Subdomain != "nginx" {
			t.Errorf("pod %s: hostname %q subdomain %q, want %q and nginx", pod.Name, pod.Spec.Hostname, pod.Spec.Subdomain, pod.Name)
		}
	}
	ctx := testContext(t, ctrlTimeout+30*time.Second)
	pollUntil(t, ctrlTimeout, "the EndpointSlices of the Service name every pod", func() error {
		slices, err := kubeClient.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=nginx"})
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Hostname != nil && e.Conditions.Ready != nil && *e.Conditions.Ready && len(e.Addresses) > 0 {
					got[*e.Hostname] = e.Addresses[0]
				}
			}
		}
		for _, pod := range pods {
			if got[pod.Name] != pod.Status.PodIP {
				return fmt.Errorf("ready endpoints by hostname %v, want %s → %s (DNS %s.nginx.%s.svc)", got, pod.Name, pod.Status.PodIP, pod.Name, ns)
			}
		}
		return nil
	})
}
