package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned"
)

// postJSON POSTs body to path and returns the status code and error.
func postJSON(t testing.TB, rc rest.Interface, path string, body []byte, params map[string]string) (int, error) {
	t.Helper()
	req := rc.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(body)
	for k, v := range params {
		req = req.Param(k, v)
	}
	result := req.Do(testContext(t))
	code := 0
	result.StatusCode(&code)
	return code, result.Error()
}

func TestErrors(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)
	rc := cs.TKEStackAppsV1().RESTClient()
	tappsPath := fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)

	t.Run("malformed JSON", func(t *testing.T) {
		code, err := postJSON(t, rc, tappsPath, []byte(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":`), nil)
		if code != http.StatusBadRequest || !apierrors.IsBadRequest(err) {
			t.Errorf("malformed JSON: code=%d err=%v, want 400 BadRequest", code, err)
		}
	})

	t.Run("wrong kind", func(t *testing.T) {
		body := []byte(`{"apiVersion":"apps.openyurt.io/v1alpha1","kind":"NodePool","metadata":{"name":"x"}}`)
		code, err := postJSON(t, rc, tappsPath, body, nil)
		if code != http.StatusBadRequest {
			t.Errorf("posting a NodePool to tapps: code=%d err=%v, want 400", code, err)
		}
	})

	t.Run("missing template", func(t *testing.T) {
		in := newTApp(ns, "bad-ref", 2)
		in.Spec.Templates = map[string]string{"1": "missing"}
		_, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, in, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("templates {1: missing}: got %v, want 422 Invalid", err)
		}
		se := statusError(t, err)
		if se.ErrStatus.Code != http.StatusUnprocessableEntity {
			t.Errorf("code = %d, want 422", se.ErrStatus.Code)
		}
		if !hasCause(se, "spec.templates[1]", metav1.CauseTypeFieldValueNotFound) {
			t.Errorf("causes = %+v, want FieldValueNotFound on spec.templates[1]", se.ErrStatus.Details.Causes)
		}
		if se.ErrStatus.Details.Kind != "TApp" || se.ErrStatus.Details.Group != "apps.tkestack.io" || se.ErrStatus.Details.Name != "bad-ref" {
			t.Errorf("details = %+v, want TApp apps.tkestack.io bad-ref", se.ErrStatus.Details)
		}
		if _, err := cs.TKEStackAppsV1().TApps(ns).Get(ctx, "bad-ref", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("an invalid TApp was stored: get returned %v", err)
		}
	})

	t.Run("negative replicas", func(t *testing.T) {
		_, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, newTApp(ns, "neg", -1), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "spec.replicas", "") {
			t.Errorf("replicas -1: got %v, want 422 on spec.replicas", err)
		}
	})

	t.Run("unknown field strict", func(t *testing.T) {
		body := []byte(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"strict"},
			"spec":{"replicas":1,"bogusField":true,"template":{"metadata":{"labels":{"app":"strict"}},
			"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}}`)
		code, err := postJSON(t, rc, tappsPath, body, map[string]string{"fieldValidation": "Strict"})
		if code != http.StatusBadRequest || !apierrors.IsBadRequest(err) {
			t.Fatalf("unknown field with Strict: code=%d err=%v, want 400 BadRequest", code, err)
		}
		if !strings.Contains(err.Error(), `unknown field "spec.bogusField"`) {
			t.Errorf("strict error = %q, want it to name unknown field \"spec.bogusField\"", err.Error())
		}

		// With the default (Warn) the object is created and the client is warned.
		warnings := &warningCollector{}
		cfg := rest.CopyConfig(s.Config)
		cfg.WarningHandler = warnings
		wcs, err := versioned.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		code, err = postJSON(t, wcs.TKEStackAppsV1().RESTClient(), tappsPath, body, nil)
		if code != http.StatusCreated || err != nil {
			t.Fatalf("unknown field with default validation: code=%d err=%v, want 201", code, err)
		}
		got := warnings.take()
		if len(got) != 1 || !strings.Contains(got[0], `unknown field "spec.bogusField"`) {
			t.Errorf("warnings = %q, want one about unknown field \"spec.bogusField\"", got)
		}
		// Ignore drops it silently.
		body2 := strings.Replace(string(body), `"strict"`, `"ignored"`, 2)
		code, err = postJSON(t, wcs.TKEStackAppsV1().RESTClient(), tappsPath, []byte(body2), map[string]string{"fieldValidation": "Ignore"})
		if code != http.StatusCreated || err != nil {
			t.Fatalf("unknown field with Ignore: code=%d err=%v, want 201", code, err)
		}
		if got := warnings.take(); len(got) != 0 {
			t.Errorf("warnings with fieldValidation=Ignore = %q, want none", got)
		}
	})

	t.Run("yurtappdaemon without workload template", func(t *testing.T) {
		in := newYurtAppDaemon(ns, "no-template")
		in.Spec.WorkloadTemplate = openyurtv1alpha1.WorkloadTemplate{}
		_, err := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(ctx, in, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("YAD without workload template: got %v, want 422 Invalid", err)
		}
		se := statusError(t, err)
		if se.ErrStatus.Code != http.StatusUnprocessableEntity || !hasCause(se, "spec.workloadTemplate", metav1.CauseTypeFieldValueRequired) {
			t.Errorf("code=%d causes=%v, want 422 with FieldValueRequired on spec.workloadTemplate", se.ErrStatus.Code, causeFields(se))
		}
	})

	t.Run("yurtappdaemon template labels not selected", func(t *testing.T) {
		in := newYurtAppDaemon(ns, "mismatch")
		in.Spec.WorkloadTemplate.DeploymentTemplate.Spec.Template.Labels = map[string]string{"app": "other"}
		_, err := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(ctx, in, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err),
			"spec.workloadTemplate.deploymentTemplate.spec.template.metadata.labels", "") {
			t.Errorf("YAD whose pod labels do not match: got %v, want 422 on the template labels", err)
		}
	})

	t.Run("nodepool type Foo", func(t *testing.T) {
		in := newNodePool(uniqueName(t, "pool"))
		in.Spec.Type = "Foo"
		_, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, in, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("NodePool type Foo: got %v, want 422 Invalid", err)
		}
		se := statusError(t, err)
		if !hasCause(se, "spec.type", metav1.CauseTypeFieldValueNotSupported) {
			t.Errorf("causes = %v, want NotSupported on spec.type", causeFields(se))
		}
		if !strings.Contains(se.Error(), `"Edge"`) || !strings.Contains(se.Error(), `"Cloud"`) {
			t.Errorf("message %q does not list the supported types", se.Error())
		}
	})

	t.Run("nodepool invalid name", func(t *testing.T) {
		_, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, newNodePool("Not.A.Label"), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !hasCause(statusError(t, err), "metadata.name", "") {
			t.Errorf("NodePool named Not.A.Label: got %v, want 422 on metadata.name", err)
		}
	})

	t.Run("nodepool defaults", func(t *testing.T) {
		name := uniqueName(t, "pool")
		pools := cs.OpenYurtAppsV1alpha1().NodePools()
		t.Cleanup(func() { _ = pools.Delete(ctx, name, metav1.DeleteOptions{}) })
		pool, err := pools.Create(ctx, newNodePool(name), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if pool.Spec.Type != openyurtv1alpha1.NodePoolType("Edge") {
			t.Errorf("spec.type = %q, want Edge", pool.Spec.Type)
		}
		if pool.Labels["nodepool.openyurt.io/type"] != "edge" {
			t.Errorf("labels = %v, want nodepool.openyurt.io/type=edge", pool.Labels)
		}
		if pool.Spec.Selector == nil || pool.Spec.Selector.MatchLabels["apps.openyurt.io/nodepool"] != name || len(pool.Spec.Selector.MatchExpressions) != 0 {
			t.Errorf("spec.selector = %v, want matchLabels apps.openyurt.io/nodepool=%s", pool.Spec.Selector, name)
		}

		cloudName := uniqueName(t, "pool")
		t.Cleanup(func() { _ = pools.Delete(ctx, cloudName, metav1.DeleteOptions{}) })
		cloud := newNodePool(cloudName)
		cloud.Spec.Type = "Cloud"
		cloud.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "a"}}
		cloud, err = pools.Create(ctx, cloud, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create cloud pool: %v", err)
		}
		if cloud.Labels["nodepool.openyurt.io/type"] != "cloud" {
			t.Errorf("cloud pool labels = %v, want nodepool.openyurt.io/type=cloud", cloud.Labels)
		}
		if len(cloud.Spec.Selector.MatchLabels) != 1 || cloud.Spec.Selector.MatchLabels["zone"] != "a" {
			t.Errorf("cloud pool %s selector = %v, want the given zone=a kept", cloud.Name, cloud.Spec.Selector)
		}
	})

	t.Run("not found and method", func(t *testing.T) {
		_, err := cs.TKEStackAppsV1().TApps(ns).Get(ctx, "does-not-exist", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("get missing: got %v, want 404", err)
		}
		code, _ := httpGet(t, s.URL+"/apis/apps.tkestack.io/v1/namespaces/"+ns+"/nothings", "")
		if code != http.StatusNotFound {
			t.Errorf("GET of an unknown resource = %d, want 404", code)
		}
	})
}
