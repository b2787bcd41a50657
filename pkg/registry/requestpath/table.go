package requestpath

import (
	"net/http"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// DefaultMaxBody is the body limit of the steps when the server's configuration sets none (k8s.io/apiserver's
// default MaxRequestBodyBytes).
const DefaultMaxBody = 3 * 1024 * 1024

// Env is what the server gives every step.
type Env struct {
	// Scheme converts stored objects to the request's version.
	Scheme *runtime.Scheme
	// Codecs encode the errors a step answers with.
	Codecs runtime.NegotiatedSerializer
	// MaxBody is the largest body a step reads; larger ones go to the generic handler unread, which refuses
	// them.
	MaxBody int64
}

// Step handles the requests of one resource before the generic handler: it calls next, with the request as
// sent or rewritten, or answers itself.
type Step interface {
	Wrap(env Env, next http.Handler) http.Handler
}

// StepFunc is a Step that is a function.
type StepFunc func(env Env, next http.Handler) http.Handler

// Wrap implements Step.
func (f StepFunc) Wrap(env Env, next http.Handler) http.Handler { return f(env, next) }

// Provider is implemented by storage whose requests pass through steps before the generic handler.
type Provider interface {
	// RequestPath lists the steps, outermost first.
	RequestPath() []Step
}

// key names the requests of one storage: a resource, or a resource and a subresource, of a group-version.
type key struct {
	group, version, resource, subresource string
}

func (k key) String() string {
	s := k.group + "/" + k.version + "/" + k.resource
	if k.subresource != "" {
		s += "/" + k.subresource
	}
	return s
}

// Table maps each served storage that is a Provider to its steps.
type Table struct {
	env   Env
	paths map[key][]Step
}

// NewTable returns an empty table whose steps get env.
func NewTable(env Env) *Table {
	if env.MaxBody <= 0 {
		env.MaxBody = DefaultMaxBody
	}
	return &Table{env: env, paths: map[key][]Step{}}
}

// Add registers the steps of storage, served as resource ("<resource>" or "<resource>/<subresource>", as in
// an APIGroupInfo's storage map) of gv, when storage is a Provider with steps; it reports whether it was.
func (t *Table) Add(gv schema.GroupVersion, resource string, storage any) bool {
	provider, ok := storage.(Provider)
	if !ok {
		return false
	}
	steps := provider.RequestPath()
	if len(steps) == 0 {
		return false
	}
	name, sub, _ := strings.Cut(resource, "/")
	t.paths[key{gv.Group, gv.Version, name, sub}] = steps
	return true
}

// Paths lists the registered storage as "<group>/<version>/<resource>[/<subresource>]", sorted.
func (t *Table) Paths() []string {
	out := make([]string, 0, len(t.paths))
	for k := range t.paths {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return out
}

// Handler returns api behind the steps of every registered storage: a resource request goes through the steps
// of its storage, if any, then to api.
func (t *Table) Handler(api http.Handler) http.Handler {
	chains := make(map[key]http.Handler, len(t.paths))
	for k, steps := range t.paths {
		h := api
		for i := len(steps) - 1; i >= 0; i-- {
			h = steps[i].Wrap(t.env, h)
		}
		chains[k] = h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, ok := request.RequestInfoFrom(r.Context()); ok && info.IsResourceRequest {
			if h, ok := chains[key{info.APIGroup, info.APIVersion, info.Resource, info.Subresource}]; ok {
				h.ServeHTTP(w, r)
				return
			}
		}
		api.ServeHTTP(w, r)
	})
}
