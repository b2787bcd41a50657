package tapp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/requestpath"
)

// fakeTApps serves one TApp whose resourceVersion moves on every read, as if another client wrote between.
type fakeTApps struct {
	reads int
	gone  bool
}

func (f *fakeTApps) New() runtime.Object { return &tkestack.TApp{} }

func (f *fakeTApps) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if f.gone {
		return nil, apierrors.NewNotFound(tkestack.Resource("tapps"), name)
	}
	f.reads++
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "nginx", Image: "nginx:1"}, {Name: "sidecar", Image: "busybox"},
		}},
	}
	return &tkestack.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: strings.Repeat("1", f.reads)},
		Spec: tkestack.TAppSpec{
			Template:     ptr.To(template),
			TemplatePool: map[string]corev1.PodTemplateSpec{"test": template, "other": template},
		},
	}, nil
}

func TestStrategicMergeFront(t *testing.T) {
	cases := []struct {
		name        string
		body        string
		subresource string
		gone        bool
		conflicts   int // answers 409 to this many forwarded patches first
		wantCode    int
		wantCalls   int
		check       func(t *testing.T, forwarded map[string]any)
	}{
		{
			name: "a patch without a pool goes as sent", body: `{"spec":{"replicas":3}}`, wantCode: 200, wantCalls: 1,
			check: func(t *testing.T, fwd map[string]any) {
				if _, ok := fwd["metadata"]; ok {
					t.Errorf("a resourceVersion was added: %v", fwd)
				}
			},
		},
		{
			name: "a pool entry is merged and the pool replaced", body: `{"spec":{"templatePool":{"test":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}}`,
			wantCode: 200, wantCalls: 1,
			check: func(t *testing.T, fwd map[string]any) {
				pool := fwd["spec"].(map[string]any)["templatePool"].(map[string]any)
				if pool["$patch"] != "replace" || pool["other"] == nil {
					t.Errorf("forwarded pool %v, want the whole pool with $patch: replace", pool)
				}
				containers := pool["test"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
				if len(containers) != 2 || containers[0].(map[string]any)["image"] != "nginx:2" {
					t.Errorf("templatePool[test] containers %v, want nginx:2 and the sidecar", containers)
				}
				if rv := fwd["metadata"].(map[string]any)["resourceVersion"]; rv != "1" {
					t.Errorf("resourceVersion %v, want the one read (1)", rv)
				}
			},
		},
		{
			name: "the last entry deleted", body: `{"spec":{"templatePool":{"test":{"$patch":"delete"},"other":null}}}`, wantCode: 200, wantCalls: 1,
			check: func(t *testing.T, fwd map[string]any) {
				if pool, ok := fwd["spec"].(map[string]any)["templatePool"]; !ok || pool != nil {
					t.Errorf("templatePool %v, want null", pool)
				}
			},
		},
		{
			name: "a lost race is recomputed", body: `{"spec":{"templatePool":{"test":{"metadata":{"labels":{"x":"y"}}}}}}`, conflicts: 2,
			wantCode: 200, wantCalls: 3,
			check: func(t *testing.T, fwd map[string]any) {
				if rv := fwd["metadata"].(map[string]any)["resourceVersion"]; rv != "111" {
					t.Errorf("resourceVersion %v, want the third read's (111)", rv)
				}
			},
		},
		{
			name: "races are given up after a bound", body: `{"spec":{"templatePool":{"test":{"metadata":{"labels":{"x":"y"}}}}}}`, conflicts: 1000,
			wantCode: 409, wantCalls: requestpath.MaxPatchAttempts,
		},
		{
			name: "the client's resourceVersion is kept and a conflict returned", body: `{"metadata":{"resourceVersion":"7"},"spec":{"templatePool":{"test":{}}}}`, conflicts: 1,
			wantCode: 409, wantCalls: 1,
		},
		{name: "an unknown directive is a 400", body: `{"spec":{"templatePool":{"test":{"spec":{"$patch":"frobnicate"}}}}}`, wantCode: 400},
		{name: "a merge key that is an object is a 400", body: `{"spec":{"template":{"spec":{"containers":[{"name":{}}]}}}}`, wantCode: 400},
		{name: "status patches are merged too", subresource: "status", body: `{"spec":{"templatePool":{"test":{"spec":{"$patch":"frobnicate"}}}}}`, wantCode: 400},
		{name: "a missing TApp goes as sent", gone: true, body: `{"spec":{"templatePool":{"test":{}}}}`, wantCode: 200, wantCalls: 1},
		{name: "a malformed document goes as sent", body: `{"spec":`, wantCode: 200, wantCalls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &fakeTApps{gone: tc.gone}
			front := requestpath.StrategicMergePatch{Store: store, Merge: mergePoolPatch}
			calls := 0
			var forwarded map[string]any
			handler := front.Wrap(testEnv(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				body, _ := io.ReadAll(r.Body)
				forwarded = nil
				_ = json.Unmarshal(body, &forwarded)
				if calls <= tc.conflicts {
					w.WriteHeader(http.StatusConflict)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			req := httptest.NewRequest(http.MethodPatch, "/apis/apps.tkestack.io/v1/namespaces/default/tapps/web", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/strategic-merge-patch+json")
			req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{
				IsResourceRequest: true, Verb: "patch", APIGroup: tkestack.GroupName, APIVersion: "v1",
				Resource: "tapps", Subresource: tc.subresource, Namespace: "default", Name: "web",
			}))
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode || calls != tc.wantCalls {
				t.Fatalf("answer %d after %d forwarded patches, want %d after %d: %.300s", rec.Code, calls, tc.wantCode, tc.wantCalls, rec.Body.String())
			}
			if tc.check != nil {
				tc.check(t, forwarded)
			}
		})
	}
}
