package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

// Server-side apply past the storage limit. The upstream handlers retry a create, update or patch without
// managedFields when etcd refuses the object, but never an apply: an applied object that fits only without
// its managedFields must be refused with 413 naming them (it was a 500 from etcd or gRPC), while the same
// object written any other way is still stored.

// szResult is the outcome of one request.
type szResult struct {
	code int
	err  error
	body []byte
}

// szDo sends body with the content type to path.
func szDo(t *testing.T, rc rest.Interface, method, path, ctype string, body []byte, params map[string]string) szResult {
	t.Helper()
	req := rc.Verb(method).AbsPath(path).SetHeader("Content-Type", ctype).Body(body)
	for k, v := range params {
		req = req.Param(k, v)
	}
	result := req.Do(testContext(t))
	var r szResult
	result.StatusCode(&r.code)
	r.err = result.Error()
	r.body, _ = result.Raw()
	return r
}

// szPoolTApp is a TApp with n templatePool entries (each about 150 bytes, as in the manifest, and
// about 270 bytes of managedFields when applied) and
// the given extra metadata.
func szPoolTApp(name string, n int, metadata map[string]any) []byte {
	pool := make(map[string]any, n)
	for i := 0; i < n; i++ {
		pool[fmt.Sprintf("pool-%04d", i)] = map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "big", "v": "1"}},
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": "nginx", "image": fmt.Sprintf("nginx:1.%d", i),
				"ports":     []any{map[string]any{"containerPort": 80}},
				"resources": map[string]any{"limits": map[string]any{"cpu": "1"}},
			}}},
		}
	}
	meta := map[string]any{"name": name}
	for k, v := range metadata {
		meta[k] = v
	}
	obj := map[string]any{
		"apiVersion": "apps.tkestack.io/v1",
		"kind":       "TApp",
		"metadata":   meta,
		"spec": map[string]any{
			"replicas": 1,
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "big"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx"}}},
			},
			"templatePool": pool,
		},
	}
	out, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return out
}

// szManyLabels is n labels with 55-character values: about 1.3 MB of object and 280 KB of managedFields.
func szManyLabels(n int) map[string]any {
	labels := make(map[string]any, n)
	for i := 0; i < n; i++ {
		labels[fmt.Sprintf("l%05d", i)] = fmt.Sprintf("%05d", i) + strings.Repeat("v", 50)
	}
	return labels
}

// szRequireApplyTooLarge checks a 413 that names metadata.managedFields and says why.
func szRequireApplyTooLarge(t *testing.T, what string, r szResult) {
	t.Helper()
	if r.code != http.StatusRequestEntityTooLarge || !apierrors.IsRequestEntityTooLargeError(r.err) {
		t.Fatalf("%s: code=%d err=%v, want 413", what, r.code, r.err)
	}
	se := statusError(t, r.err)
	if !hasCause(se, "metadata.managedFields", metav1.CauseTypeTooLong) {
		t.Errorf("%s: causes %v, want metadata.managedFields", what, causeFields(se))
	}
	for _, want := range []string{"managedFields", "server-side apply", fmt.Sprint(registry.MaxStoredObjectBytes)} {
		if !strings.Contains(se.ErrStatus.Message, want) {
			t.Errorf("%s: message %q does not mention %q", what, se.ErrStatus.Message, want)
		}
	}
}

func szRequireCode(t *testing.T, what string, r szResult, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: code=%d err=%v, want %d", what, r.code, r.err, code)
	}
}

func TestApplyPastStorageLimit(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	rc := cs.TKEStackAppsV1().RESTClient()
	ns := newNamespace(t)
	tapps := fmt.Sprintf("/apis/apps.tkestack.io/v1/namespaces/%s/tapps", ns)
	apply := map[string]string{"fieldManager": "size-test"}
	force := map[string]string{"fieldManager": "size-test-2", "force": "true"}
	applyType := string(types.ApplyPatchType)

	t.Run("apply creating 4000 pool entries", func(t *testing.T) {
		r := szDo(t, rc, "PATCH", tapps+"/apply4000", applyType, szPoolTApp("apply4000", 4000, nil), apply)
		szRequireApplyTooLarge(t, "apply of 4000 pool entries", r)
		if _, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "apply4000", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("refused apply stored the TApp: %v", err)
		}
		// Under the dry run too: the refusal happens before storage.
		r = szDo(t, rc, "PATCH", tapps+"/apply4000", applyType, szPoolTApp("apply4000", 4000, nil),
			map[string]string{"fieldManager": "size-test", "dryRun": "All"})
		szRequireApplyTooLarge(t, "dry-run apply of 4000 pool entries", r)
	})

	// The same manifest by POST is stored (without managedFields); applying it afterwards is refused and
	// leaves the stored object alone, with or without force.
	body4000 := szPoolTApp("big", 4000, nil)
	szRequireCode(t, "create of 4000 pool entries", szDo(t, rc, "POST", tapps, "application/json", body4000, nil), http.StatusCreated)
	stored, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "big", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Spec.TemplatePool) != 4000 {
		t.Fatalf("stored pool has %d entries, want 4000", len(stored.Spec.TemplatePool))
	}

	t.Run("apply to the stored object", func(t *testing.T) {
		szRequireApplyTooLarge(t, "apply of the stored manifest", szDo(t, rc, "PATCH", tapps+"/big", applyType, body4000, apply))
		szRequireApplyTooLarge(t, "forced apply of 5000 pool entries", szDo(t, rc, "PATCH", tapps+"/big", applyType, szPoolTApp("big", 5000, nil), force))
		// The object was stored without managedFields (they did not fit); its first apply records ownership
		// of all its fields, which does not fit either, however small the applied body.
		small := []byte(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"big"},"spec":{"replicas":2}}`)
		szRequireApplyTooLarge(t, "apply of spec.replicas alone", szDo(t, rc, "PATCH", tapps+"/big", applyType, small, force))
		got, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "big", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Replicas != 1 || len(got.Spec.TemplatePool) != 4000 || got.ResourceVersion != stored.ResourceVersion {
			t.Errorf("after the refused applies: replicas=%d pool=%d resourceVersion=%s, want 1, 4000 and %s unchanged",
				got.Spec.Replicas, len(got.Spec.TemplatePool), got.ResourceVersion, stored.ResourceVersion)
		}
		if managerEntry(got.ManagedFields, "size-test") != nil || managerEntry(got.ManagedFields, "size-test-2") != nil {
			t.Errorf("refused appliers own fields: %+v", got.ManagedFields)
		}
	})

	// Every other verb on the large object is stored, never a 5xx.
	t.Run("other verbs on the large object", func(t *testing.T) {
		for _, c := range []struct {
			name, method, path, ctype, body string
			code                            int
		}{
			{"merge patch", "PATCH", "/big", string(types.MergePatchType), `{"spec":{"templatePool":{"pool-0001":{"spec":{"containers":[{"name":"nginx","image":"nginx:mp"}]}}}}}`, 200},
			{"strategic merge patch", "PATCH", "/big", string(types.StrategicMergePatchType), `{"spec":{"templatePool":{"pool-0002":{"spec":{"containers":[{"name":"nginx","image":"nginx:smp"}]}}}}}`, 200},
			{"json patch", "PATCH", "/big", string(types.JSONPatchType), `[{"op":"replace","path":"/spec/templatePool/pool-0003/spec/containers/0/image","value":"nginx:jp"}]`, 200},
			{"scale merge patch", "PATCH", "/big/scale", string(types.MergePatchType), `{"spec":{"replicas":3}}`, 200},
			{"scale apply", "PATCH", "/big/scale", applyType, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"big"},"spec":{"replicas":4}}`, 200},
			{"status merge patch", "PATCH", "/big/status", string(types.MergePatchType), `{"status":{"statuses":{"0":"Running"}}}`, 200},
			{"status apply", "PATCH", "/big/status", applyType, `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"big"},"status":{"statuses":{"0":"Running","1":"Pending"}}}`, 200},
		} {
			params := map[string]string(nil)
			if c.ctype == applyType {
				params = map[string]string{"fieldManager": "verbs", "force": "true"}
			}
			szRequireCode(t, c.name, szDo(t, rc, c.method, tapps+c.path, c.ctype, []byte(c.body), params), c.code)
		}
		got, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "big", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		images := []string{
			got.Spec.TemplatePool["pool-0001"].Spec.Containers[0].Image,
			got.Spec.TemplatePool["pool-0002"].Spec.Containers[0].Image,
			got.Spec.TemplatePool["pool-0003"].Spec.Containers[0].Image,
		}
		if strings.Join(images, ",") != "nginx:mp,nginx:smp,nginx:jp" || got.Spec.Replicas != 4 || got.Status.Statuses["1"] != "Pending" {
			t.Errorf("after the writes: images=%v replicas=%d statuses=%v", images, got.Spec.Replicas, got.Status.Statuses)
		}
		// A full update (PUT) of the object as read is stored too.
		got.Spec.TemplatePool["pool-0004"].Spec.Containers[0].Image = "nginx:put"
		body, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		szRequireCode(t, "update", szDo(t, rc, "PUT", tapps+"/big", "application/json", body, nil), http.StatusOK)
	})

	// Objects too large even without managedFields: 413 by every patch type, the stored object unchanged.
	t.Run("past the limit without managedFields", func(t *testing.T) {
		twoMiB := strings.Repeat("x", 2<<20)
		var conditions []string
		for i := 0; i < 60; i++ {
			conditions = append(conditions, fmt.Sprintf(`{"type":"Big%d","status":"True","reason":"R","lastTransitionTime":"2026-01-01T00:00:00Z","message":"%s"}`, i, twoMiB[:30000]))
		}
		before, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "big", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ name, path, ctype, body string }{
			{"json patch 2MiB", "/big", string(types.JSONPatchType), `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"` + twoMiB + `"}]`},
			{"merge patch 1.6MB pool", "/big", string(types.MergePatchType), `{"spec":{"templatePool":{"pool-0000":{"spec":{"containers":[{"name":"nginx","image":"` + twoMiB[:1600000] + `"}]}}}}}`},
			{"strategic merge patch 1.6MB pool", "/big", string(types.StrategicMergePatchType), `{"spec":{"templatePool":{"pool-0000":{"spec":{"containers":[{"name":"nginx","image":"` + twoMiB[:1600000] + `"}]}}}}}`},
			{"apply 1.6MB pool", "/big", applyType, `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"big"},"spec":{"templatePool":{"pool-0000":{"spec":{"containers":[{"name":"nginx","image":"` + twoMiB[:1600000] + `"}]}}}}}`},
			{"status apply 1.8MB", "/big/status", applyType, `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"big"},"status":{"conditions":[` + strings.Join(conditions, ",") + `]}}`},
			{"status json patch 1.8MB", "/big/status", string(types.JSONPatchType), `[{"op":"add","path":"/status/conditions","value":[` + strings.Join(conditions, ",") + `]}]`},
		} {
			params := map[string]string(nil)
			if c.ctype == applyType {
				params = map[string]string{"fieldManager": "size-test-3", "force": "true"}
			}
			r := szDo(t, rc, "PATCH", tapps+c.path, c.ctype, []byte(c.body), params)
			if r.code != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), "the storage takes at most") {
				t.Errorf("%s: code=%d err=%v, want 413 naming the storage limit", c.name, r.code, r.err)
			}
		}
		after, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "big", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion {
			t.Errorf("a refused write changed the TApp: resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
		}
	})

	t.Run("apply with many labels", func(t *testing.T) {
		labelled := szPoolTApp("labelled", 1, map[string]any{"labels": szManyLabels(20000)})
		szRequireApplyTooLarge(t, "apply with 20000 labels", szDo(t, rc, "PATCH", tapps+"/labelled", applyType, labelled, apply))
		szRequireCode(t, "create with 20000 labels", szDo(t, rc, "POST", tapps, "application/json", labelled, nil), http.StatusCreated)
	})

	t.Run("apply with a huge annotation", func(t *testing.T) {
		annotated := szPoolTApp("annotated", 1, map[string]any{"annotations": map[string]any{"note": strings.Repeat("a", 300*1024)}})
		r := szDo(t, rc, "PATCH", tapps+"/annotated", applyType, annotated, apply)
		if r.code != http.StatusUnprocessableEntity || !hasCause(statusError(t, r.err), "metadata.annotations", "") {
			t.Errorf("apply with a 300 KiB annotation: code=%d err=%v, want 422 on metadata.annotations", r.code, r.err)
		}
	})

	t.Run("status apply past the limit", func(t *testing.T) {
		szRequireCode(t, "create", szDo(t, rc, "POST", tapps, "application/json", szPoolTApp("conditions", 0, nil), nil), http.StatusCreated)
		// 8000 conditions: about 0.9 MB of status and 1 MB of managedFields (conditions are a map list).
		conditions := make([]any, 0, 8000)
		for i := 0; i < 8000; i++ {
			conditions = append(conditions, map[string]any{"type": fmt.Sprintf("Cond%05d", i), "status": "True",
				"reason": "Reason", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"})
		}
		status, err := json.Marshal(map[string]any{"apiVersion": "apps.tkestack.io/v1", "kind": "TApp",
			"metadata": map[string]any{"name": "conditions"}, "status": map[string]any{"conditions": conditions}})
		if err != nil {
			t.Fatal(err)
		}
		szRequireApplyTooLarge(t, "status apply of 8000 conditions", szDo(t, rc, "PATCH", tapps+"/conditions/status", applyType, status, apply))
		if got, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "conditions", metav1.GetOptions{}); err != nil || len(got.Status.Conditions) != 0 {
			t.Fatalf("after the refused status apply: err=%v conditions=%d, want none", err, len(got.Status.Conditions))
		}
		// The same status by merge patch is stored.
		szRequireCode(t, "status merge patch of 8000 conditions", szDo(t, rc, "PATCH", tapps+"/conditions/status", string(types.MergePatchType), status, nil), http.StatusOK)
		got, err := cs.TKEStackAppsV1().TApps(ns).Get(testContext(t), "conditions", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Status.Conditions) != 8000 {
			t.Errorf("stored %d conditions, want 8000", len(got.Status.Conditions))
		}
	})

	t.Run("nodepool apply with many labels", func(t *testing.T) {
		name := uniqueName(t, "pool")
		body, err := json.Marshal(map[string]any{"apiVersion": "apps.openyurt.io/v1beta1", "kind": "NodePool",
			"metadata": map[string]any{"name": name, "labels": szManyLabels(20000)}, "spec": map[string]any{"type": "Edge"}})
		if err != nil {
			t.Fatal(err)
		}
		prc := cs.OpenYurtAppsV1beta1().RESTClient()
		szRequireApplyTooLarge(t, "nodepool apply with 20000 labels", szDo(t, prc, "PATCH", "/apis/apps.openyurt.io/v1beta1/nodepools/"+name, applyType, body, apply))
		r := szDo(t, prc, "POST", "/apis/apps.openyurt.io/v1beta1/nodepools", "application/json", body, nil)
		szRequireCode(t, "nodepool create with 20000 labels", r, http.StatusCreated)
		t.Cleanup(func() {
			_ = szDo(t, prc, "DELETE", "/apis/apps.openyurt.io/v1beta1/nodepools/"+name, "application/json", nil, nil)
		})
	})
}
