package tapp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// bigMap is a JSON object of n entries key(i): value, large enough for the step to read.
func bigMap(n int, key func(i int) string, value string) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf("%q:%s", key(i), value)
	}
	return "{" + strings.Join(entries, ",") + "}"
}

func TestInstanceKeysFront(t *testing.T) {
	ids := func(i int) string { return fmt.Sprint(i) }
	noIDs := func(i int) string { return fmt.Sprintf("x%d", i) }
	tapp := func(spec string) string {
		return `{"apiVersion":"apps.tkestack.io/v1","kind":"TApp","metadata":{"name":"web"},"spec":` + spec + `}`
	}
	cases := []struct {
		name, verb, resource, subresource, body string
		refused                                 bool
		message                                 string
	}{
		{name: "small body", verb: "create", resource: "tapps", body: tapp(`{"statuses":{"x":"Killed"}}`)},
		{name: "create, keys no ids", verb: "create", resource: "tapps", body: tapp(`{"statuses":` + bigMap(5000, noIDs, `"Killed"`) + `}`), refused: true, message: "5000 keys are not instance ids"},
		{name: "create, missing templates", verb: "create", resource: "tapps", body: tapp(`{"templates":` + bigMap(5000, ids, `"missing"`) + `}`), refused: true, message: "and 4990 more errors"},
		{name: "create, templates in the pool", verb: "create", resource: "tapps", body: tapp(`{"templatePool":{"p":{}},"templates":` + bigMap(5000, ids, `"p"`) + `}`)},
		{name: "create, templates default", verb: "create", resource: "tapps", body: tapp(`{"templates":` + bigMap(5000, ids, `"default"`) + `}`)},
		{name: "patch, missing templates (the pool is stored)", verb: "patch", resource: "tapps", body: `{"spec":{"templates":` + bigMap(5000, ids, `"missing"`) + `}}`},
		{name: "patch, deleting keys that are no ids", verb: "patch", resource: "tapps", body: `{"spec":{"statuses":` + bigMap(5000, noIDs, `null`) + `}}`},
		{name: "patch, keys no ids", verb: "patch", resource: "tapps", body: `{"spec":{"templates":` + bigMap(10000, noIDs, `"p"`) + `}}`, refused: true, message: "spec.templates"},
		{name: "status, keys no ids", verb: "patch", resource: "tapps", subresource: "status", body: `{"status":{"statuses":` + bigMap(5000, noIDs, `"Running"`) + `}}`, refused: true, message: "status.statuses"},
		{name: "status ignores spec", verb: "patch", resource: "tapps", subresource: "status", body: `{"spec":{"statuses":` + bigMap(5000, noIDs, `"Killed"`) + `}}`},
		{name: "main resource ignores status", verb: "update", resource: "tapps", body: `{"status":{"statuses":` + bigMap(5000, noIDs, `"Running"`) + `}}`},
		{name: "case matters", verb: "create", resource: "tapps", body: `{"Spec":{"statuses":` + bigMap(5000, noIDs, `"Killed"`) + `}}`},
		{name: "a JSON patch", verb: "patch", resource: "tapps", body: `[{"op":"add","path":"/spec/statuses","value":` + bigMap(5000, noIDs, `"Killed"`) + `}]`},
		{name: "another resource", verb: "create", resource: "yurtappdaemons", body: tapp(`{"statuses":` + bigMap(5000, noIDs, `"Killed"`) + `}`)},
		{name: "the scale subresource", verb: "patch", resource: "tapps", subresource: "scale", body: tapp(`{"statuses":` + bigMap(5000, noIDs, `"Killed"`) + `}`)},
	}
	env := testEnv()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forwarded := false
			var forwardedBody bytes.Buffer
			handler := instanceKeys{}.Wrap(env, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				forwarded = true
				_, _ = forwardedBody.ReadFrom(r.Body)
			}))
			group := "apps.tkestack.io"
			if tc.resource != "tapps" {
				group = "apps.openyurt.io"
			}
			req := httptest.NewRequest(http.MethodPost, "/apis/x", strings.NewReader(tc.body))
			req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
				IsResourceRequest: true, Verb: tc.verb, APIGroup: group, APIVersion: "v1", Resource: tc.resource,
				Subresource: tc.subresource, Namespace: "default", Name: "web",
			}))
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if forwarded == tc.refused {
				t.Fatalf("forwarded %v, want refused %v (answer %d %.300s)", forwarded, tc.refused, rec.Code, rec.Body.String())
			}
			if tc.refused {
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), tc.message) || rec.Body.Len() > 16*1024 {
					t.Errorf("answer %d (%d bytes) %.400s, want a 422 naming %q", rec.Code, rec.Body.Len(), rec.Body.String(), tc.message)
				}
				return
			}
			if forwardedBody.String() != tc.body {
				t.Errorf("the forwarded body differs from the request's")
			}
		})
	}
}

// A TApp sent in protobuf (create or update) is read as one sent in JSON: keys that can never be instance ids
// are refused before the handler, in the answer's media type; valid ones are forwarded unchanged.
func TestInstanceKeysFrontProtobuf(t *testing.T) {
	env := testEnv()
	info, ok := runtime.SerializerInfoForMediaType(env.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	encode := func(key func(i int) string) []byte {
		tapp := &tkestackv1.TApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
		tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{}
		for i := range 10000 {
			tapp.Spec.Statuses[key(i)] = "Killed"
		}
		body, err := runtime.Encode(env.Codecs.EncoderForVersion(info.Serializer, tkestackv1.SchemeGroupVersion), tapp)
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	for _, tc := range []struct {
		name    string
		body    []byte
		refused bool
	}{
		{"keys no ids", encode(func(i int) string { return fmt.Sprintf("x%d", i) }), true},
		{"ids", encode(func(i int) string { return fmt.Sprint(i) }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.body) < instanceKeysMinBody {
				t.Fatalf("a body of %d bytes is not read by the step", len(tc.body))
			}
			var forwarded []byte
			handler := instanceKeys{}.Wrap(env, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				forwarded, _ = io.ReadAll(r.Body)
			}))
			req := httptest.NewRequest(http.MethodPost, "/apis/x", bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", runtime.ContentTypeProtobuf)
			req.Header.Set("Accept", runtime.ContentTypeJSON)
			req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
				IsResourceRequest: true, Verb: "create", APIGroup: "apps.tkestack.io", APIVersion: "v1", Resource: "tapps",
				Namespace: "default",
			}))
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if tc.refused {
				if forwarded != nil || rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "10000 keys are not instance ids") {
					t.Errorf("answer %d %.300s, want a 422 before the handler", rec.Code, rec.Body.String())
				}
				return
			}
			if !bytes.Equal(forwarded, tc.body) {
				t.Errorf("the body was not forwarded unchanged (%d bytes of %d)", len(forwarded), len(tc.body))
			}
		})
	}
}
