package tapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/yaml"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// TApp bodies that use the capitalised key "DefaultTemplateName" pass through legacyAlias, which folds the key
// into spec.defaultTemplateName before the generic handlers see the request (requestpath.go declares it).
//
// The versioned TApp declares the capitalised key as a field of its own (so that manifests using it decode),
// and field management works on the request as sent: a server-side apply of "DefaultTemplateName: x" owned a
// field of that name, never conflicted with the owner of defaultTemplateName, and overwrote it once the
// strategy moved the value across; a JSON patch adding /spec/DefaultTemplateName recorded ownership of a field
// that is never stored. Folded before the handler, every write (create, update, apply, merge, strategic merge
// and JSON patch) is exactly a write of defaultTemplateName: same ownership, conflicts and managedFields.
//
// The rules, for the spec of a body:
//   - a string alias alone is renamed; beside an equal defaultTemplateName (or one set to null, as kubectl's
//     client-side apply sends when a manifest moves from one spelling to the other) it replaces it;
//   - beside a different defaultTemplateName it is refused (422 on spec.DefaultTemplateName), except in a
//     full update (PUT) whose defaultTemplateName is the stored one: there the alias is the user's edit and
//     wins, as it always has;
//   - an empty alias is dropped (the type always treated it as unset); a null alias (a deletion in a patch)
//     deletes defaultTemplateName when the body does not set it;
//   - an alias that is neither a string nor null is left to the handler, which refuses it.
//
// A JSON patch has its operations on /spec/DefaultTemplateName moved to /spec/defaultTemplateName, and the
// values of operations on /spec or the whole object folded as above; setting both spellings to different
// values is refused. Bodies that cannot be read (not JSON or YAML, too large) are forwarded unchanged: the
// strategy still moves the alias across for them.

const (
	legacyKey    = "DefaultTemplateName"
	canonicalKey = "defaultTemplateName"
	// legacyConflictMsg is validation's message for the two spellings with different values.
	legacyConflictMsg = "conflicts with spec.defaultTemplateName; set only defaultTemplateName"
)

var (
	legacyPath    = field.NewPath("spec", legacyKey)
	legacyPointer = "/spec/" + legacyKey
	canonPointer  = "/spec/" + canonicalKey
)

// legacyAlias is the request-path step that folds the alias; store reads the stored TApp for a full update.
type legacyAlias struct {
	store requestpath.ObjectGetter
}

// Wrap implements requestpath.Step.
func (a legacyAlias) Wrap(env requestpath.Env, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok || !info.IsResourceRequest || info.APIGroup != tkestack.GroupName || info.Resource != "tapps" ||
			info.Subresource != "" || (info.Verb != "create" && info.Verb != "update" && info.Verb != "patch") {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := requestpath.ReadBody(r, env.MaxBody)
		if !ok || !mayNameAlias(body) {
			next.ServeHTTP(w, r)
			return
		}
		var stored func() (string, bool)
		if info.Verb == "update" {
			stored = func() (string, bool) { return a.storedDefaultTemplateName(r, info) }
		}
		folded, err := foldLegacyAlias(requestpath.MediaType(r), body, info.Name, stored)
		if err != nil {
			gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
			responsewriters.ErrorNegotiated(err, env.Codecs, gv, w, r)
			return
		}
		if folded.body == nil {
			next.ServeHTTP(w, r)
			return
		}
		for _, msg := range folded.warnings {
			warning.AddWarning(r.Context(), "", msg)
		}
		r2 := requestpath.WithBody(r, folded.body)
		if folded.contentType != "" {
			r2.Header.Set("Content-Type", folded.contentType)
		}
		next.ServeHTTP(w, r2)
	})
}

// mayNameAlias reports whether body can hold the alias as a key: it spells the key out, or it has an escape
// that can stand for a letter of it (JSON's and YAML's \u, YAML's \x and \U) or join two lines of a
// double-quoted YAML key (a backslash before a line break). Other escapes, such as the \" of the list keys in
// every managedFields entry, cannot make the key.
func mayNameAlias(body []byte) bool {
	if bytes.Contains(body, []byte(legacyKey)) {
		return true
	}
	for rest := body; ; {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 || i == len(rest)-1 {
			return false
		}
		switch rest[i+1] {
		case 'u', 'U', 'x', '\n', '\r':
			return true
		case '\\':
			i++ // an escaped backslash escapes nothing after it
		}
		rest = rest[i+1:]
	}
}

// storedDefaultTemplateName reads the stored TApp's spec.defaultTemplateName.
func (a legacyAlias) storedDefaultTemplateName(r *http.Request, info *request.RequestInfo) (string, bool) {
	ctx := request.WithNamespace(r.Context(), info.Namespace)
	obj, err := a.store.Get(ctx, info.Name, &metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	t, ok := obj.(*tkestack.TApp)
	if !ok {
		return "", false
	}
	return t.Spec.DefaultTemplateName, true
}

// foldResult is a body rewritten by foldLegacyAlias; body is nil when it needs no change.
type foldResult struct {
	body []byte
	// contentType replaces the request's when the body was converted from YAML to JSON.
	contentType string
	warnings    []string
}

// foldLegacyAlias rewrites a TApp write of the given media type so that it no longer names the alias. name is
// the object's name when the request path has it; stored, for a full update, returns the stored
// defaultTemplateName. The error is an API status error.
func foldLegacyAlias(mt string, body []byte, name string, stored func() (string, bool)) (foldResult, error) {
	switch mt {
	case string(types.JSONPatchType):
		return foldJSONPatch(body, name)
	case "application/json", string(types.MergePatchType), string(types.StrategicMergePatchType),
		string(types.ApplyYAMLPatchType), "application/yaml":
	default:
		return foldResult{}, nil // CBOR and anything else: left to the handler and the strategy
	}
	var obj map[string]json.RawMessage
	contentType := ""
	if err := json.Unmarshal(body, &obj); err != nil {
		if mt != "application/yaml" && mt != string(types.ApplyYAMLPatchType) {
			return foldResult{}, nil // malformed: the handler answers 400
		}
		js, yerr := yaml.YAMLToJSON(body)
		if yerr != nil || json.Unmarshal(js, &obj) != nil {
			return foldResult{}, nil
		}
		if mt == "application/yaml" {
			contentType = "application/json"
		}
	}
	if name == "" {
		name = objectName(obj)
	}
	changed, warnings, errs := foldObject(obj, stored)
	if len(errs) > 0 {
		return foldResult{}, apierrors.NewInvalid(tkestack.Kind("TApp"), name, errs)
	}
	if !changed {
		return foldResult{}, nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return foldResult{}, nil
	}
	return foldResult{body: out, contentType: contentType, warnings: warnings}, nil
}

// objectName is metadata.name of a JSON object, or "".
func objectName(obj map[string]json.RawMessage) string {
	var meta struct {
		Name string `json:"name"`
	}
	if raw, ok := obj["metadata"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	return meta.Name
}

// foldObject folds the alias in the spec of obj (a TApp or a patch of one) in place.
func foldObject(obj map[string]json.RawMessage, stored func() (string, bool)) (bool, []string, field.ErrorList) {
	raw, ok := obj["spec"]
	if !ok {
		return false, nil, nil
	}
	var spec map[string]json.RawMessage
	if json.Unmarshal(raw, &spec) != nil || spec == nil {
		return false, nil, nil // not an object: the handler refuses it
	}
	changed, warnings, errs := foldSpec(spec, stored)
	if !changed || len(errs) > 0 {
		return false, warnings, errs
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return false, nil, nil
	}
	obj["spec"] = out
	return true, warnings, nil
}

// stringOrNull decodes a JSON string or null; ok is false for any other value.
func stringOrNull(raw json.RawMessage) (value *string, ok bool) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return &s, true
}

// foldSpec applies the rules of this file to one spec (see the top of the file).
func foldSpec(spec map[string]json.RawMessage, stored func() (string, bool)) (bool, []string, field.ErrorList) {
	aliasRaw, ok := spec[legacyKey]
	if !ok {
		return false, nil, nil
	}
	alias, ok := stringOrNull(aliasRaw)
	if !ok {
		return false, nil, nil
	}
	var canonical *string
	canonRaw, hasCanon := spec[canonicalKey]
	if hasCanon {
		if canonical, ok = stringOrNull(canonRaw); !ok {
			return false, nil, nil // the handler refuses defaultTemplateName
		}
	}
	switch {
	case alias == nil:
		delete(spec, legacyKey)
		if hasCanon {
			// The client moved from the alias to defaultTemplateName (kubectl's client-side apply deletes
			// the key the manifest no longer has): nothing to warn about.
			return true, nil, nil
		}
		spec[canonicalKey] = json.RawMessage("null")
		return true, []string{"spec.DefaultTemplateName is a deprecated spelling; null there is null of spec.defaultTemplateName"}, nil
	case *alias == "":
		delete(spec, legacyKey)
		return true, []string{"spec.DefaultTemplateName is a deprecated spelling; its empty value is ignored"}, nil
	case canonical != nil && *canonical != *alias:
		current, found := "", false
		if stored != nil {
			current, found = stored()
		}
		if !found || current != *canonical {
			return false, nil, field.ErrorList{field.Invalid(legacyPath, *alias, legacyConflictMsg)}
		}
	}
	delete(spec, legacyKey)
	value, _ := json.Marshal(*alias)
	spec[canonicalKey] = value
	return true, []string{storedAsWarning(*alias)}, nil
}

// storedAsWarning is the strategy's warning for the alias.
func storedAsWarning(value string) string {
	return fmt.Sprintf("spec.DefaultTemplateName is a deprecated spelling; stored as spec.defaultTemplateName=%q", value)
}

// foldJSONPatch moves a JSON patch's operations on the alias to defaultTemplateName.
func foldJSONPatch(body []byte, name string) (foldResult, error) {
	var ops []map[string]json.RawMessage
	if json.Unmarshal(body, &ops) != nil {
		return foldResult{}, nil // the handler answers 400
	}
	changed := false
	var warnings []string
	var errs field.ErrorList
	var aliasValue, canonValue *string // the last string each spelling is set to by add or replace
	for _, op := range ops {
		var kind, path, from string
		_ = json.Unmarshal(op["op"], &kind)
		_ = json.Unmarshal(op["path"], &path)
		_ = json.Unmarshal(op["from"], &from)
		setsValue := kind == "add" || kind == "replace"
		if from == legacyPointer {
			op["from"], _ = json.Marshal(canonPointer)
			changed = true
		}
		switch path {
		case legacyPointer:
			if setsValue {
				value, ok := stringOrNull(op["value"])
				if !ok || value == nil {
					continue // the handler refuses it
				}
				aliasValue = value
				warnings = append(warnings, storedAsWarning(*value))
			}
			op["path"], _ = json.Marshal(canonPointer)
			changed = true
		case canonPointer:
			if setsValue {
				if value, ok := stringOrNull(op["value"]); ok && value != nil {
					canonValue = value
				}
			}
		case "/spec", "":
			if !setsValue {
				continue
			}
			var value map[string]json.RawMessage
			if json.Unmarshal(op["value"], &value) != nil || value == nil {
				continue
			}
			var c bool
			var w []string
			var e field.ErrorList
			if path == "" {
				c, w, e = foldObject(value, nil)
			} else {
				c, w, e = foldSpec(value, nil)
			}
			errs = append(errs, e...)
			if c {
				op["value"], _ = json.Marshal(value)
				changed = true
				warnings = append(warnings, w...)
			}
		}
	}
	if aliasValue != nil && canonValue != nil && *aliasValue != *canonValue {
		errs = append(errs, field.Invalid(legacyPath, *aliasValue, legacyConflictMsg))
	}
	if len(errs) > 0 {
		return foldResult{}, apierrors.NewInvalid(tkestack.Kind("TApp"), name, errs)
	}
	if !changed {
		return foldResult{}, nil
	}
	out, err := json.Marshal(ops)
	if err != nil {
		return foldResult{}, nil
	}
	return foldResult{body: out, warnings: warnings}, nil
}
