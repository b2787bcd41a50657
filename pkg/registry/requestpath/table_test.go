package requestpath

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// tag is a step that records its name in the response header X-Path.
func tag(name string) Step {
	return StepFunc(func(_ Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("X-Path", name)
			next.ServeHTTP(w, r)
		})
	})
}

type provider []Step

func (p provider) RequestPath() []Step { return p }

func TestTable(t *testing.T) {
	table := NewTable(Env{})
	gv := schema.GroupVersion{Group: "apps.example.io", Version: "v1"}
	if !table.Add(gv, "things", provider{tag("a"), tag("b")}) || !table.Add(gv, "things/status", provider{tag("s")}) {
		t.Fatal("a provider was not added")
	}
	if table.Add(gv, "others", struct{}{}) || table.Add(gv, "empty", provider{}) {
		t.Fatal("storage without steps was added")
	}
	if got, want := table.Paths(), []string{"apps.example.io/v1/things", "apps.example.io/v1/things/status"}; !slices.Equal(got, want) {
		t.Errorf("Paths() = %q, want %q", got, want)
	}
	handler := table.Handler(tag("api").Wrap(Env{}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	for _, c := range []struct {
		name string
		info *request.RequestInfo
		want string
	}{
		{"main resource", &request.RequestInfo{IsResourceRequest: true, APIGroup: gv.Group, APIVersion: "v1", Resource: "things"}, "a,b,api"},
		{"subresource", &request.RequestInfo{IsResourceRequest: true, APIGroup: gv.Group, APIVersion: "v1", Resource: "things", Subresource: "status"}, "s,api"},
		{"another subresource", &request.RequestInfo{IsResourceRequest: true, APIGroup: gv.Group, APIVersion: "v1", Resource: "things", Subresource: "scale"}, "api"},
		{"another version", &request.RequestInfo{IsResourceRequest: true, APIGroup: gv.Group, APIVersion: "v2", Resource: "things"}, "api"},
		{"another resource", &request.RequestInfo{IsResourceRequest: true, APIGroup: gv.Group, APIVersion: "v1", Resource: "others"}, "api"},
		{"not a resource request", &request.RequestInfo{APIGroup: gv.Group, APIVersion: "v1", Resource: "things"}, "api"},
		{"no request info", nil, "api"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		if c.info != nil {
			req = req.WithContext(request.WithRequestInfo(req.Context(), c.info))
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if got := strings.Join(rec.Header().Values("X-Path"), ","); got != c.want {
			t.Errorf("%s: path %q, want %q", c.name, got, c.want)
		}
	}
}

func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		body   string
		limit  int64
		wantOK bool
	}{
		{"0123456789", 10, true},
		{"0123456789", 9, false},
		{"", 9, true},
	} {
		req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(c.body))
		body, ok := ReadBody(req, c.limit)
		if ok != c.wantOK || (ok && string(body) != c.body) {
			t.Errorf("ReadBody(%q, %d) = %q, %v; want ok %v", c.body, c.limit, body, ok, c.wantOK)
		}
		again, err := io.ReadAll(req.Body)
		if err != nil || string(again) != c.body {
			t.Errorf("after ReadBody(%q, %d) the request reads %q, %v; want the whole body", c.body, c.limit, again, err)
		}
	}
}
