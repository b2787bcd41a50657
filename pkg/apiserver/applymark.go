package apiserver

import (
	"mime"
	"net/http"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/registry"
)

// markApply marks the context of a server-side apply request, so that the registry measures applied objects
// with their managedFields (registry.WithServerSideApply).
func markApply(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && isApplyPatch(r) {
			r = r.WithContext(registry.WithServerSideApply(r.Context()))
		}
		next.ServeHTTP(w, r)
	})
}

func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func isApplyPatch(r *http.Request) bool {
	switch mediaType(r) {
	case string(types.ApplyYAMLPatchType), string(types.ApplyCBORPatchType):
		return true
	}
	return false
}
