package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	sigsjson "sigs.k8s.io/json"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/tkestack/tapp"
)

// Strategic merge patches pass through strategicMergeFront before k8s.io/apiserver's PATCH handler
// (handlers/patch.go), which applies them with strategicpatch.StrategicMergeMapPatch and a schema taken from
// the versioned Go type. That handler has two gaps this front closes, for the resources of this server only:
//
//   - It cannot merge an existing spec.templatePool entry of a TApp (upstream cannot walk a map of structs)
//     and answers 500. The front reads the TApp, merges the pool with tapp.StrategicMerge (each entry as
//     spec.template is merged) and forwards the patch with spec.templatePool replaced by the merged pool
//     ("$patch": "replace"), so everything else (admission, managedFields, dry-run, field validation) is the
//     upstream path unchanged. Unless the client set one, the forwarded patch carries the resourceVersion it
//     was computed from, and the front recomputes it when that write loses a race (409), at most
//     maxPoolPatchAttempts times.
//   - It answers 500 for patch documents the merge code refuses but does not classify (an unknown $patch
//     directive, a $setElementOrder list that is not a list) or panics on (a merge key whose value is an
//     object). The front tries the patch on the stored object first and answers 400 with the merge error.
//
// Anything the front cannot judge (an unreadable body, a missing object, a wrong Content-Type) is forwarded
// unchanged, so the upstream answer stands.

// maxPoolPatchAttempts bounds how often one templatePool patch is recomputed after losing a race.
const maxPoolPatchAttempts = 20

// objectGetter reads a stored object and makes empty ones; the registry stores implement it.
type objectGetter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
	New() runtime.Object
}

// strategicMergeFront holds what the front needs; targets is filled once the storage exists, before serving.
type strategicMergeFront struct {
	scheme  *runtime.Scheme
	codecs  runtime.NegotiatedSerializer
	maxBody int64
	// targets maps "<group>/<resource>" and "<group>/<resource>/scale" to the storage a patch applies to
	// (the status subresource patches the whole object, as the main resource does).
	targets map[string]patchTarget
}

// patchTarget is the storage of a patched resource and the version its patches are written in.
type patchTarget struct {
	store objectGetter
	// version is the group-version of the patched document when it is not the request's (a Scale).
	version schema.GroupVersion
}

// targetKey names the patchTarget of a request.
func targetKey(info *request.RequestInfo) string {
	key := info.APIGroup + "/" + info.Resource
	if info.Subresource == "scale" {
		key += "/scale"
	}
	return key
}

// handler wraps next, the API handler.
func (f *strategicMergeFront) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok || !info.IsResourceRequest || info.Verb != "patch" || info.Name == "" || !isStrategicMerge(r) {
			next.ServeHTTP(w, r)
			return
		}
		target, ok := f.targets[targetKey(info)]
		if !ok || (info.Subresource != "" && info.Subresource != "status" && info.Subresource != "scale") {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, f.maxBody+1))
		if err != nil || int64(len(body)) > f.maxBody {
			// Let the upstream handler read (and refuse) the body: give back what was read.
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		f.serve(w, r, next, info, target, body)
	})
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

func isStrategicMerge(r *http.Request) bool {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == string(types.StrategicMergePatchType)
}

// serve judges one strategic merge patch of body and forwards it, rewritten when it patches a TApp's pool.
func (f *strategicMergeFront) serve(w http.ResponseWriter, r *http.Request, next http.Handler, info *request.RequestInfo, target patchTarget, body []byte) {
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	if !target.version.Empty() {
		gv = target.version
	}
	store := target.store
	isTApp := info.APIGroup == tkestack.GroupName && info.Resource == "tapps" && info.Subresource != "scale"
	for attempt := 1; ; attempt++ {
		forward := body
		current, err := f.current(r.Context(), info, gv, store)
		if err != nil {
			forwardBody(next, w, r, body)
			return
		}
		var patch map[string]any
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &patch); err != nil {
			forwardBody(next, w, r, body) // the upstream handler answers 400 for a malformed document
			return
		}
		preconditioned := false
		if isTApp {
			merged, err := tapp.StrategicMerge(current, patch)
			if err != nil {
				f.refuse(w, r, gv, err)
				return
			}
			if rewritten, changed := rewritePoolPatch(patch, current, merged); changed {
				preconditioned = setResourceVersionIfAbsent(rewritten, current)
				if forward, err = json.Marshal(rewritten); err != nil {
					forwardBody(next, w, r, body)
					return
				}
			}
		} else if err := f.tryPatch(current, patch, gv, store); err != nil {
			f.refuse(w, r, gv, err)
			return
		}
		if !preconditioned {
			forwardBody(next, w, r, forward)
			return
		}
		recorder := &responseRecorder{header: http.Header{}}
		forwardBody(next, recorder, r, forward)
		if recorder.code == http.StatusConflict && attempt < maxPoolPatchAttempts && r.Context().Err() == nil {
			continue
		}
		recorder.replay(w)
		return
	}
}

// current reads the stored object and returns it in the request's version as JSON.
func (f *strategicMergeFront) current(ctx context.Context, info *request.RequestInfo, gv schema.GroupVersion, store objectGetter) (map[string]any, error) {
	ctx = request.WithNamespace(ctx, info.Namespace)
	obj, err := store.Get(ctx, info.Name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	versioned, err := f.scheme.ConvertToVersion(obj, gv)
	if err != nil {
		return nil, err
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
}

// tryPatch applies the patch as the upstream handler will, only to see whether the merge code refuses it.
func (f *strategicMergeFront) tryPatch(current, patch map[string]any, gv schema.GroupVersion, store objectGetter) error {
	kinds, _, err := f.scheme.ObjectKinds(store.New())
	if err != nil || len(kinds) == 0 {
		return nil
	}
	versioned, err := f.scheme.New(gv.WithKind(kinds[0].Kind))
	if err != nil {
		return nil
	}
	_, err = tapp.MergeWithStruct(current, runtime.DeepCopyJSON(patch), versioned)
	return err
}

// refuse answers a patch the merge code refused: 422 for the errors the upstream handler classifies so, else
// 400 (a malformed patch document).
func (f *strategicMergeFront) refuse(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion, err error) {
	var status error = apierrors.NewBadRequest("strategic merge patch: " + err.Error())
	if errors.Is(err, mergepatch.ErrNoListOfLists) || errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys) {
		status = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	responsewriters.ErrorNegotiated(status, f.codecs, gv, w, r)
}

// rewritePoolPatch returns patch with spec.templatePool replaced by the merged object's whole pool
// ("$patch": "replace", or null when the pool is empty) when the patch merges into pool entries, and whether
// it did so. Patches that leave the pool alone, or only set it to null, are forwarded as sent. When the
// stored object has no pool, the merged pool is sent without the directive: the upstream merge copies a
// field the original lacks as sent, so a directive there would be stored as a pool entry named "$patch".
func rewritePoolPatch(patch, current, merged map[string]any) (map[string]any, bool) {
	spec, ok := patch["spec"].(map[string]any)
	if !ok {
		return patch, false
	}
	if _, ok := spec["templatePool"].(map[string]any); !ok {
		return patch, false
	}
	rewritten := runtime.DeepCopyJSON(patch)
	rewrittenSpec := rewritten["spec"].(map[string]any)
	var pool map[string]any
	if mergedSpec, ok := merged["spec"].(map[string]any); ok {
		pool, _ = mergedSpec["templatePool"].(map[string]any)
	}
	if len(pool) == 0 {
		rewrittenSpec["templatePool"] = nil
		return rewritten, true
	}
	replacement := runtime.DeepCopyJSON(pool)
	if hasPool(current) {
		replacement["$patch"] = "replace"
	}
	rewrittenSpec["templatePool"] = replacement
	return rewritten, true
}

// hasPool reports whether a TApp in its JSON form has a spec.templatePool object.
func hasPool(tappJSON map[string]any) bool {
	spec, ok := tappJSON["spec"].(map[string]any)
	if !ok {
		return false
	}
	_, ok = spec["templatePool"].(map[string]any)
	return ok
}

// setResourceVersionIfAbsent makes the patch apply only to the object version it was computed from, unless
// the client already named one; it reports whether it set it.
func setResourceVersionIfAbsent(patch, current map[string]any) bool {
	metadata, ok := patch["metadata"].(map[string]any)
	if !ok {
		if patch["metadata"] != nil {
			return false
		}
		metadata = map[string]any{}
		patch["metadata"] = metadata
	}
	if _, set := metadata["resourceVersion"]; set {
		return false
	}
	currentMeta, _ := current["metadata"].(map[string]any)
	rv, _ := currentMeta["resourceVersion"].(string)
	if rv == "" {
		return false
	}
	metadata["resourceVersion"] = rv
	return true
}

func forwardBody(next http.Handler, w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	next.ServeHTTP(w, r2)
}

// responseRecorder keeps a response so that a lost race can be retried before the client sees it.
type responseRecorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (rr *responseRecorder) Header() http.Header { return rr.header }

func (rr *responseRecorder) WriteHeader(code int) {
	if rr.code == 0 {
		rr.code = code
	}
}

func (rr *responseRecorder) Write(p []byte) (int, error) {
	if rr.code == 0 {
		rr.code = http.StatusOK
	}
	return rr.body.Write(p)
}

// replay sends the kept response.
func (rr *responseRecorder) replay(w http.ResponseWriter) {
	for key, values := range rr.header {
		w.Header()[key] = values
	}
	if rr.code == 0 {
		rr.code = http.StatusOK
	}
	w.WriteHeader(rr.code)
	_, _ = w.Write(rr.body.Bytes())
}
