package requestpath

import (
	"context"
	"encoding/json"
	"errors"
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
)

// Strategic merge patches of a storage that declares StrategicMergePatch pass through it before
// k8s.io/apiserver's PATCH handler (handlers/patch.go), which applies them with
// strategicpatch.StrategicMergeMapPatch and a schema taken from the versioned Go type. The step reads the
// stored object in the request's version and hands it, with the patch, to the resource's MergeFunc, which
// either
//
//   - refuses the patch: the step answers 400 with the merge error (422 for the errors the upstream handler
//     classifies so), where the upstream handler answers 500 for patch documents its merge code refuses but
//     does not classify (an unknown $patch directive, a $setElementOrder list that is not a list) or panics on
//     (a merge key whose value is an object); StrictMerge tries upstream's merge for exactly that;
//   - rewrites the patch (a TApp's spec.templatePool, which upstream cannot merge): the step forwards the
//     rewritten patch with, unless the client set one, the resourceVersion it was computed from, and
//     recomputes it when that write loses a race (409), at most MaxPatchAttempts times;
//   - or lets it pass as sent.
//
// Everything else (admission, managedFields, dry-run, field validation) is the upstream path unchanged.
// Anything the step cannot judge (an unreadable body, a missing object, a wrong Content-Type) is forwarded
// unchanged, so the upstream answer stands.

// MaxPatchAttempts bounds how often one rewritten patch is recomputed after losing a race.
const MaxPatchAttempts = 20

// ObjectGetter reads a stored object and makes empty ones; the registry's storage implements it.
type ObjectGetter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
	New() runtime.Object
}

// MergeFunc judges a strategic merge patch of current, both in the JSON form of the patched version, of which
// versioned is an empty object (nil when the scheme has none). It returns the patch to forward instead of the
// client's (nil: the client's, as sent), or an error when the patch is at fault. current is read for this call
// alone: it may be modified, except for its metadata.resourceVersion, which a rewritten patch is made to
// require; patch must not be modified.
type MergeFunc func(current, patch map[string]any, versioned runtime.Object) (rewritten map[string]any, err error)

// StrictMerge applies the patch as the upstream handler will, only to see whether the merge code refuses it;
// it never rewrites the patch.
func StrictMerge(current, patch map[string]any, versioned runtime.Object) (map[string]any, error) {
	if versioned == nil {
		return nil, nil
	}
	_, err := MergeWithStruct(current, runtime.DeepCopyJSON(patch), versioned)
	return nil, err
}

// StrategicMergePatch is the step in front of the strategic merge patches of one storage, its main resource or
// a subresource (see the top of this file).
type StrategicMergePatch struct {
	// Store reads the patched object: for the status subresource the whole object, for scale the Scale.
	Store ObjectGetter
	// Merge judges each patch.
	Merge MergeFunc
	// Version is the group-version of the patched document when it is not the request's (autoscaling/v1 for
	// a Scale).
	Version schema.GroupVersion
}

// Wrap implements Step.
func (p StrategicMergePatch) Wrap(env Env, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok || !info.IsResourceRequest || info.Verb != "patch" || info.Name == "" ||
			MediaType(r) != string(types.StrategicMergePatchType) {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := ReadBody(r, env.MaxBody)
		if !ok {
			next.ServeHTTP(w, r) // the upstream handler reads (and refuses) the body
			return
		}
		p.serve(env, w, r, next, info, body)
	})
}

// serve judges one strategic merge patch of body and forwards it, rewritten when Merge rewrote it.
func (p StrategicMergePatch) serve(env Env, w http.ResponseWriter, r *http.Request, next http.Handler, info *request.RequestInfo, body []byte) {
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	if !p.Version.Empty() {
		gv = p.Version
	}
	versioned := p.versioned(env.Scheme, gv)
	for attempt := 1; ; attempt++ {
		forward := body
		current, err := p.current(r.Context(), env.Scheme, info, gv)
		if err != nil {
			Forward(next, w, r, body)
			return
		}
		var patch map[string]any
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &patch); err != nil {
			Forward(next, w, r, body) // the upstream handler answers 400 for a malformed document
			return
		}
		rewritten, err := p.Merge(current, patch, versioned)
		if err != nil {
			refuse(env, w, r, gv, err)
			return
		}
		preconditioned := false
		if rewritten != nil {
			preconditioned = setResourceVersionIfAbsent(rewritten, current)
			if forward, err = json.Marshal(rewritten); err != nil {
				Forward(next, w, r, body)
				return
			}
		}
		if !preconditioned {
			Forward(next, w, r, forward)
			return
		}
		recorder := &responseRecorder{header: http.Header{}}
		Forward(next, recorder, r, forward)
		if recorder.code == http.StatusConflict && attempt < MaxPatchAttempts && r.Context().Err() == nil {
			continue
		}
		recorder.replay(w)
		return
	}
}

// versioned is an empty object of the stored kind in gv, or nil.
func (p StrategicMergePatch) versioned(scheme *runtime.Scheme, gv schema.GroupVersion) runtime.Object {
	kinds, _, err := scheme.ObjectKinds(p.Store.New())
	if err != nil || len(kinds) == 0 {
		return nil
	}
	obj, err := scheme.New(gv.WithKind(kinds[0].Kind))
	if err != nil {
		return nil
	}
	return obj
}

// current reads the stored object and returns it in gv as JSON.
func (p StrategicMergePatch) current(ctx context.Context, scheme *runtime.Scheme, info *request.RequestInfo, gv schema.GroupVersion) (map[string]any, error) {
	ctx = request.WithNamespace(ctx, info.Namespace)
	obj, err := p.Store.Get(ctx, info.Name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	versioned, err := scheme.ConvertToVersion(obj, gv)
	if err != nil {
		return nil, err
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
}

// refuse answers a patch the merge code refused: 422 for the errors the upstream handler classifies so, else
// 400 (a malformed patch document).
func refuse(env Env, w http.ResponseWriter, r *http.Request, gv schema.GroupVersion, err error) {
	var status error = apierrors.NewBadRequest("strategic merge patch: " + err.Error())
	if errors.Is(err, mergepatch.ErrNoListOfLists) || errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys) {
		status = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	responsewriters.ErrorNegotiated(status, env.Codecs, gv, w, r)
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
