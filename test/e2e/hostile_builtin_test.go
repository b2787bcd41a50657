//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// TestHostileClientsVsBuiltin sends the client mistakes that the generic apiserver code answers with 500 to
// a TApp through the aggregator and to a Deployment on kube-apiserver. The TApp must get a 4xx; what
// kube-apiserver answers for the Deployment is logged (docs/reliability.md lists it).
func TestHostileClientsVsBuiltin(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "hostile")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	labels := map[string]string{"app": "web"}
	if _, err := kubeClient.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.25"}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustKubectlIn(t, nginxTApp("web", 1, "nginx:1.25", ""), "apply", "-n", ns, "-f", "-")

	big := strings.Repeat("x", 2*1024*1024)
	type target struct {
		name, base, apiVersion, kind, spec string
	}
	targets := []target{
		{"TApp", fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns), "apps.tkestack.io/v1", "TApp",
			`{"replicas":1,"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25","args":[%q]}]}}}`},
		{"Deployment", fmt.Sprintf("/apis/apps/v1/namespaces/%s/deployments", ns), "apps/v1", "Deployment",
			`{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25","args":[%q]}]}}}`},
	}
	object := func(tg target, name, extraMeta, arg string) string {
		return fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q%s},"spec":%s}`, tg.apiVersion, tg.kind, name, extraMeta, fmt.Sprintf(tg.spec, arg))
	}
	cases := []struct {
		name    string
		request func(c rest.Interface, tg target) *rest.Request
	}{
		{"resourceVersion on create", func(c rest.Interface, tg target) *rest.Request {
			return c.Post().AbsPath(tg.base).SetHeader("Content-Type", "application/json").Body([]byte(object(tg, "rv", `,"resourceVersion":"12"`, "a")))
		}},
		{"resourceVersion abc in a merge patch", func(c rest.Interface, tg target) *rest.Request {
			return c.Patch(types.MergePatchType).AbsPath(tg.base, "web").Body([]byte(`{"metadata":{"resourceVersion":"abc"}}`))
		}},
		{"resourceVersion abc in a JSON patch", func(c rest.Interface, tg target) *rest.Request {
			return c.Patch(types.JSONPatchType).AbsPath(tg.base, "web").Body([]byte(`[{"op":"replace","path":"/metadata/resourceVersion","value":"abc"}]`))
		}},
		{"unknown $patch directive", func(c rest.Interface, tg target) *rest.Request {
			return c.Patch(types.StrategicMergePatchType).AbsPath(tg.base, "web").Body([]byte(`{"spec":{"template":{"spec":{"$patch":"frobnicate"}}}}`))
		}},
		{"$setElementOrder not a list", func(c rest.Interface, tg target) *rest.Request {
			return c.Patch(types.StrategicMergePatchType).AbsPath(tg.base, "web").Body([]byte(`{"spec":{"template":{"spec":{"$setElementOrder/containers":"nginx","containers":[{"name":"nginx","image":"x"}]}}}}`))
		}},
		{"merge key an object", func(c rest.Interface, tg target) *rest.Request {
			return c.Patch(types.StrategicMergePatchType).AbsPath(tg.base, "web").Body([]byte(`{"spec":{"template":{"spec":{"containers":[{"name":{}}]}}}}`))
		}},
		{"watch resourceVersion=abc", func(c rest.Interface, tg target) *rest.Request {
			return c.Get().AbsPath(tg.base).Param("watch", "true").Param("resourceVersion", "abc").Timeout(5 * time.Second)
		}},
		{"apply replicas: true", func(c rest.Interface, tg target) *rest.Request {
			return c.Patch(types.ApplyPatchType).AbsPath(tg.base, "web").Param("fieldManager", "hostile").
				Body([]byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":"web"},"spec":{"replicas":true}}`, tg.apiVersion, tg.kind)))
		}},
		{"apply unknown field", func(c rest.Interface, tg target) *rest.Request {
			return c.Patch(types.ApplyPatchType).AbsPath(tg.base, "web").Param("fieldManager", "hostile").
				Body([]byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":"web"},"spec":{"bogus":1}}`, tg.apiVersion, tg.kind)))
		}},
		{"2 MiB object", func(c rest.Interface, tg target) *rest.Request {
			return c.Post().AbsPath(tg.base).SetHeader("Content-Type", "application/json").Body([]byte(object(tg, "big", "", big)))
		}},
	}
	client := kubeClient.CoreV1().RESTClient()
	var report []string
	for _, c := range cases {
		codes := map[string]int{}
		for _, tg := range targets {
			var code int
			result := c.request(client, tg).Do(ctx)
			result.StatusCode(&code)
			codes[tg.name] = code
		}
		report = append(report, fmt.Sprintf("%-40s TApp %d, Deployment %d", c.name, codes["TApp"], codes["Deployment"]))
		if codes["TApp"] < 400 || codes["TApp"] >= 500 {
			t.Errorf("%s: TApp answered %d, want 4xx", c.name, codes["TApp"])
		}
	}
	version, err := kubeClient.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("answers (kube-apiserver %s):\n%s", version.GitVersion, strings.Join(report, "\n"))
}
