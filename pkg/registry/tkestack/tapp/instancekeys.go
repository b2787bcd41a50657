package tapp

import (
	"encoding/json"
	"net/http"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	sigsjson "sigs.k8s.io/json"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/errorlimit"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/validation"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// Large TApp bodies (main resource and status) pass through instanceKeys before the generic handlers
// (requestpath.go declares it).
//
// The generic create, update and patch handlers compute managedFields before validation runs, and that costs
// the square of the number of map keys (sigs.k8s.io/structured-merge-diff inserts every key into a sorted
// set, fieldpath.PathElementSet.Insert): a TApp with 150,000 keys in spec.statuses took more than 10 s to be
// refused. The maps keyed by instance id (spec.templates, spec.statuses, status.statuses) hold at most
// MaxReplicas keys that can be instances, so the front refuses, before the handler, a body whose maps name
// keys that can never be an instance, and a full object (create or replace) whose spec.templates name
// templates it does not define: with the same errors validation gives, so no request that validation would
// accept is refused. Bodies below instanceKeysMinBody are not looked at.

// instanceKeysMinBody is the body size from which the front reads TApp writes.
const instanceKeysMinBody = 64 * 1024

// instanceMaps is the part of a TApp (or a merge patch of one) the front reads. A nil value is a deletion in
// a patch.
type instanceMaps struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Templates    map[string]*string          `json:"templates"`
		Statuses     map[string]*json.RawMessage `json:"statuses"`
		TemplatePool map[string]*json.RawMessage `json:"templatePool"`
	} `json:"spec"`
	Status struct {
		Statuses map[string]*json.RawMessage `json:"statuses"`
	} `json:"status"`
}

// instanceKeys is the request-path step of the instance-key checks.
type instanceKeys struct{}

// Wrap implements requestpath.Step.
func (instanceKeys) Wrap(env requestpath.Env, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok || !info.IsResourceRequest || info.APIGroup != tkestack.GroupName || info.Resource != "tapps" ||
			(info.Verb != "create" && info.Verb != "update" && info.Verb != "patch") ||
			(info.Subresource != "" && info.Subresource != "status") ||
			r.ContentLength >= 0 && r.ContentLength < instanceKeysMinBody {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := requestpath.ReadBody(r, env.MaxBody)
		if !ok || len(body) < instanceKeysMinBody {
			next.ServeHTTP(w, r)
			return
		}
		var maps instanceMaps
		if requestpath.MediaType(r) == runtime.ContentTypeProtobuf {
			if !protobufInstanceMaps(env, body, &maps) {
				next.ServeHTTP(w, r) // not a TApp: the handler decides
				return
			}
		} else if sigsjson.UnmarshalCaseSensitivePreserveInts(body, &maps) != nil {
			next.ServeHTTP(w, r) // not JSON (YAML, a JSON patch): the handler decides
			return
		}
		fullObject := info.Verb != "patch"
		var errs field.ErrorList
		if info.Subresource == "status" {
			errs = instanceKeyErrors(maps.Status.Statuses, field.NewPath("status", "statuses"))
		} else {
			errs = append(instanceKeyErrors(maps.Spec.Statuses, field.NewPath("spec", "statuses")),
				instanceKeyErrors(maps.Spec.Templates, field.NewPath("spec", "templates"))...)
			if fullObject && len(errs) == 0 {
				errs = missingTemplates(maps.Spec.Templates, maps.Spec.TemplatePool)
			}
		}
		if len(errs) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		name := info.Name
		if name == "" {
			name = maps.Metadata.Name
		}
		status := apierrors.NewInvalid(tkestack.Kind("TApp"), name, errorlimit.Limit(errs))
		responsewriters.ErrorNegotiated(status, env.Codecs, schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}, w, r)
	})
}

// protobufInstanceMaps reads the instance maps of a TApp sent in protobuf (a create or an update: patches
// are never protobuf), in time linear in its size; false when body is no TApp.
func protobufInstanceMaps(env requestpath.Env, body []byte, maps *instanceMaps) bool {
	info, ok := runtime.SerializerInfoForMediaType(env.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return false
	}
	var tapp tkestackv1.TApp
	if _, _, err := info.Serializer.Decode(body, nil, &tapp); err != nil {
		return false
	}
	present := json.RawMessage("true") // only whether an entry is there matters
	maps.Metadata.Name = tapp.Name
	maps.Spec.Templates = make(map[string]*string, len(tapp.Spec.Templates))
	for id, name := range tapp.Spec.Templates {
		maps.Spec.Templates[id] = &name
	}
	maps.Spec.Statuses = make(map[string]*json.RawMessage, len(tapp.Spec.Statuses))
	for id := range tapp.Spec.Statuses {
		maps.Spec.Statuses[id] = &present
	}
	maps.Spec.TemplatePool = make(map[string]*json.RawMessage, len(tapp.Spec.TemplatePool))
	for name := range tapp.Spec.TemplatePool {
		maps.Spec.TemplatePool[name] = &present
	}
	maps.Status.Statuses = make(map[string]*json.RawMessage, len(tapp.Status.Statuses))
	for id := range tapp.Status.Statuses {
		maps.Status.Statuses[id] = &present
	}
	return true
}

// instanceKeyErrors is validation's error for the keys of m with a value that can never be instance ids.
func instanceKeyErrors[V any](m map[string]*V, fldPath *field.Path) field.ErrorList {
	keys := make([]string, 0, len(m))
	for key, value := range m {
		if value != nil {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return validation.ValidateInstanceKeys(keys, fldPath)
}

// missingTemplates is validation's NotFound for every spec.templates value that names no template of the object.
func missingTemplates(templates map[string]*string, pool map[string]*json.RawMessage) field.ErrorList {
	ids := make([]string, 0, len(templates))
	for id := range templates {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var errs field.ErrorList
	for _, id := range ids {
		name := templates[id]
		if name == nil || *name == tkestack.DefaultTemplateName {
			continue
		}
		if _, ok := pool[*name]; !ok {
			errs = append(errs, field.NotFound(field.NewPath("spec", "templates").Key(id), *name))
		}
	}
	return errs
}
