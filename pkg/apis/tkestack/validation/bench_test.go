package validation

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/install"
	v1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// BenchmarkRefusal measures what the server does with a refused TApp body, from decoding to the aggregated
// error message, for bodies of growing size: spec.templates with n keys naming a missing template, and
// spec.statuses with n keys that are no instance ids. MB/s stays about the same across sizes when the cost is
// linear in the body (it was quadratic in the number of errors before errors were limited per path).
func BenchmarkRefusal(b *testing.B) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	for _, kind := range []string{"templates", "statuses"} {
		for _, n := range []int{1000, 10000, 50000} {
			body := refusedBody(kind, n)
			b.Run(fmt.Sprintf("%s=%d", kind, n), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					versioned := &v1.TApp{}
					if err := json.Unmarshal(body, versioned); err != nil {
						b.Fatal(err)
					}
					scheme.Default(versioned)
					internal := &tkestack.TApp{}
					if err := scheme.Convert(versioned, internal, nil); err != nil {
						b.Fatal(err)
					}
					errs := ValidateTApp(internal)
					if len(errs) == 0 {
						b.Fatal("accepted")
					}
					_ = errs.ToAggregate().Error()
				}
			})
		}
	}
}

// refusedBody is a TApp whose spec.templates (or spec.statuses) has n keys, each of them an error.
func refusedBody(kind string, n int) []byte {
	tapp := map[string]any{
		"apiVersion": "apps.tkestack.io/v1", "kind": "TApp",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"replicas": 1,
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	}
	m := map[string]any{}
	for i := 0; i < n; i++ {
		if kind == "templates" {
			m[strconv.Itoa(i)] = "missing"
		} else {
			m["x"+strconv.Itoa(i)] = "Killed"
		}
	}
	tapp["spec"].(map[string]any)[kind] = m
	body, _ := json.Marshal(tapp)
	return body
}
