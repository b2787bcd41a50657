package nodepool

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	openyurtinstall "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/install"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// storedPool serves validPool.
type storedPool struct{}

func (storedPool) New() runtime.Object { return &openyurt.NodePool{} }

func (storedPool) Get(context.Context, string, *metav1.GetOptions) (runtime.Object, error) {
	return validPool(), nil
}

// BenchmarkStrategicMergePatch measures the strategic merge patch step of NodePools (the trial merge of
// requestpath.StrictMerge on the stored pool, in v1beta1), and the generic handler alone for the cost of the
// request itself.
func BenchmarkStrategicMergePatch(b *testing.B) {
	scheme := runtime.NewScheme()
	openyurtinstall.Install(scheme)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Version: "v1"}, &metav1.Status{})
	env := requestpath.Env{Scheme: scheme, Codecs: serializer.NewCodecFactory(scheme), MaxBody: requestpath.DefaultMaxBody}
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})
	step := requestpath.StrategicMergePatch{Store: storedPool{}, Merge: requestpath.StrictMerge}
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "patch", APIGroup: openyurt.GroupName, APIVersion: "v1beta1",
		Resource: "nodepools", Name: "hangzhou"}
	body := []byte(`{"spec":{"labels":{"zone":"b"},"taints":[{"key":"example.com/edge","value":"false","effect":"NoSchedule"}]}}`)
	for _, c := range []struct {
		name    string
		handler http.Handler
	}{
		{"step", step.Wrap(env, drain)},
		{"generic handler alone", drain},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPatch, "/apis/apps.openyurt.io/v1beta1/nodepools/hangzhou", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/strategic-merge-patch+json")
				req = req.WithContext(request.WithRequestInfo(req.Context(), info))
				rec := httptest.NewRecorder()
				c.handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("answer %d: %.300s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}
