package tapp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// storedTApp serves one TApp, the same on every read.
type storedTApp struct{ tapp *tkestack.TApp }

func (s storedTApp) New() runtime.Object { return &tkestack.TApp{} }

func (s storedTApp) Get(context.Context, string, *metav1.GetOptions) (runtime.Object, error) {
	return s.tapp.DeepCopy(), nil
}

// benchServe sends body to handler as a request of info, n times, and fails unless the answer is want.
func benchServe(b *testing.B, handler http.Handler, info *request.RequestInfo, contentType string, body []byte, want int) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPatch, "/apis/apps.tkestack.io/v1/namespaces/default/tapps/web", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req = req.WithContext(request.WithRequestInfo(req.Context(), info))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("answer %d, want %d: %.300s", rec.Code, want, rec.Body.String())
		}
	}
}

// drain is the generic handler of the benchmarks: it reads the body and answers 200.
var drain = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusOK)
})

// BenchmarkStrategicMergePatch measures the strategic merge patch step of TApps (what a patch costs before
// the generic handler): a patch of a templatePool entry (merged and rewritten), a patch that leaves the pool
// alone, and the generic handler alone for the cost of the request itself.
func BenchmarkStrategicMergePatch(b *testing.B) {
	stored := validTApp()
	stored.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{}
	for i := range 10 {
		stored.Spec.TemplatePool[fmt.Sprintf("pool-%d", i)] = testPodTemplate(fmt.Sprintf("nginx:%d", i))
	}
	step := requestpath.StrategicMergePatch{Store: storedTApp{stored}, Merge: mergePoolPatch}
	handler := step.Wrap(testEnv(), drain)
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "patch", APIGroup: tkestack.GroupName, APIVersion: "v1",
		Resource: "tapps", Namespace: "default", Name: "web"}
	const smp = "application/strategic-merge-patch+json"
	b.Run("templatePool entry", func(b *testing.B) {
		benchServe(b, handler, info, smp, []byte(`{"spec":{"templatePool":{"pool-3":{"spec":{"containers":[{"name":"main","image":"nginx:new"}]}}}}}`), http.StatusOK)
	})
	b.Run("spec.template", func(b *testing.B) {
		benchServe(b, handler, info, smp, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:new"}]}}}}`), http.StatusOK)
	})
	b.Run("generic handler alone", func(b *testing.B) {
		benchServe(b, drain, info, smp, []byte(`{"spec":{"templatePool":{"pool-3":{"spec":{"containers":[{"name":"main","image":"nginx:new"}]}}}}}`), http.StatusOK)
	})
}

// BenchmarkInstanceKeys measures the instance-key checks: a small body (not read), a create of a TApp whose
// spec.statuses has 5000 instance ids (read, checked and forwarded) and one whose 5000 keys are no instance ids
// (refused with 422).
func BenchmarkInstanceKeys(b *testing.B) {
	handler := instanceKeys{}.Wrap(testEnv(), drain)
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "create", APIGroup: tkestack.GroupName, APIVersion: "v1",
		Resource: "tapps", Namespace: "default"}
	tapp := func(spec string) []byte {
		return []byte(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"web"},"spec":` + spec + `}`)
	}
	ids := func(i int) string { return fmt.Sprint(i) }
	noIDs := func(i int) string { return fmt.Sprintf("x%d", i) }
	b.Run("small body", func(b *testing.B) {
		benchServe(b, handler, info, "application/json", tapp(`{"replicas":3,"statuses":{"1":"Killed"}}`), http.StatusOK)
	})
	b.Run("5000 instance ids", func(b *testing.B) {
		benchServe(b, handler, info, "application/json", tapp(`{"replicas":5000,"statuses":`+bigMap(5000, ids, `"Killed"`)+`}`), http.StatusOK)
	})
	b.Run("5000 keys no ids", func(b *testing.B) {
		benchServe(b, handler, info, "application/json", tapp(`{"statuses":`+bigMap(5000, noIDs, `"Killed"`)+`}`), http.StatusUnprocessableEntity)
	})
}

// BenchmarkLegacyAlias measures the alias step on a full update of a TApp as a client sends back what it read:
// its managedFields name list items by key ("k:{\"name\":\"nginx\"}"), escapes that cannot spell the alias,
// so the body is forwarded unread; then the same body with the alias, which is folded; and the generic handler
// alone for the cost of the request itself.
func BenchmarkLegacyAlias(b *testing.B) {
	handler := legacyAlias{store: storedTApp{validTApp()}}.Wrap(testEnv(), drain)
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "update", APIGroup: tkestack.GroupName, APIVersion: "v1",
		Resource: "tapps", Namespace: "default", Name: "web"}
	body := func(alias string) []byte {
		return []byte(`{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"web","namespace":"default",` +
			`"annotations":{"sent":"1764290000000000000"},"managedFields":[{"manager":"bench","operation":"Update",` +
			`"apiVersion":"apps.tkestack.io/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:template":{"f:spec":` +
			`{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}}]},"spec":{"replicas":3,` +
			alias + `"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.7.9"}]}}}}`)
	}
	b.Run("managedFields, no alias", func(b *testing.B) {
		benchServe(b, handler, info, "application/json", body(""), http.StatusOK)
	})
	b.Run("alias", func(b *testing.B) {
		benchServe(b, handler, info, "application/json", body(`"DefaultTemplateName":"default",`), http.StatusOK)
	})
	b.Run("generic handler alone", func(b *testing.B) {
		benchServe(b, drain, info, "application/json", body(""), http.StatusOK)
	})
}
