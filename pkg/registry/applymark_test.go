package registry

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestMarkApply checks that only apply patches are marked for the registry's size check.
func TestMarkApply(t *testing.T) {
	for ctype, want := range map[string]bool{
		string(types.ApplyYAMLPatchType):             true,
		string(types.ApplyYAMLPatchType) + "; x=1":   true,
		string(types.ApplyCBORPatchType):             true,
		string(types.MergePatchType):                 false,
		string(types.StrategicMergePatchType):        false,
		string(types.JSONPatchType):                  false,
		"application/json":                           false,
		"":                                           false,
		"application/apply-patch+yaml; charset=utf8": true,
	} {
		var got bool
		handler := markApply(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			got = IsServerSideApply(r.Context())
		}))
		req := httptest.NewRequest(http.MethodPatch, "/apis/apps.tkestack.io/v1/namespaces/n/tapps/a", nil)
		req.Header.Set("Content-Type", ctype)
		handler.ServeHTTP(httptest.NewRecorder(), req)
		if got != want {
			t.Errorf("Content-Type %q: marked %v, want %v", ctype, got, want)
		}
	}
	var got bool
	handler := markApply(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = IsServerSideApply(r.Context()) }))
	req := httptest.NewRequest(http.MethodPut, "/x", nil)
	req.Header.Set("Content-Type", string(types.ApplyYAMLPatchType))
	handler.ServeHTTP(httptest.NewRecorder(), req)
	if got {
		t.Errorf("a PUT was marked as an apply")
	}
}
