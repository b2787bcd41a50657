package registry

import (
	"net/http"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// ApplyMark is the request-path half of the size guard (clienterrors.go): it marks the context of a
// server-side apply request, so that the guard measures applied objects with their managedFields
// (WithServerSideApply). REST and StatusREST put it first on their request path; storage that updates a store
// itself through SizeCheckedUpdateValidation (a scale subresource) declares it on its own.
var ApplyMark requestpath.Step = requestpath.StepFunc(func(_ requestpath.Env, next http.Handler) http.Handler {
	return markApply(next)
})

// markApply marks the context of a server-side apply request, so that the registry measures applied objects
// with their managedFields (WithServerSideApply).
func markApply(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && isApplyPatch(r) {
			r = r.WithContext(WithServerSideApply(r.Context()))
		}
		next.ServeHTTP(w, r)
	})
}

func isApplyPatch(r *http.Request) bool {
	switch requestpath.MediaType(r) {
	case string(types.ApplyYAMLPatchType), string(types.ApplyCBORPatchType):
		return true
	}
	return false
}
