package errorlimit

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestGeneric(t *testing.T) {
	for in, want := range map[string]string{
		"spec.replicas":                           "spec.replicas",
		"spec.templates[3]":                       "spec.templates[*]",
		"spec.templatePool[a].spec.containers[2]": "spec.templatePool[*].spec.containers[*]",
		"spec.templates[a[b]":                     "spec.templates[*]",
		"":                                        "",
	} {
		if got := Generic(in); got != want {
			t.Errorf("Generic(%q) = %q, want %q", in, got, want)
		}
	}
}

func errorsOn(n int, path func(i int) *field.Path) field.ErrorList {
	var out field.ErrorList
	for i := 0; i < n; i++ {
		out = append(out, field.Invalid(path(i), i, "bad"))
	}
	return out
}

func TestLimit(t *testing.T) {
	templates := func(i int) *field.Path { return field.NewPath("spec", "templates").Key(fmt.Sprint(i)) }
	cases := []struct {
		name      string
		in        field.ErrorList
		wantLen   int
		wantLast  string
		unchanged bool
	}{
		{name: "few", in: errorsOn(PerPath, templates), wantLen: PerPath, unchanged: true},
		{name: "one over", in: errorsOn(PerPath+1, templates), wantLen: PerPath + 1, wantLast: "and 1 more errors on spec.templates[*]"},
		{name: "many", in: errorsOn(50000, templates), wantLen: PerPath + 1, wantLast: "and 49990 more errors on spec.templates[*]"},
		{name: "two paths", in: append(errorsOn(5, templates), errorsOn(5, func(i int) *field.Path { return field.NewPath("spec", "statuses").Key(fmt.Sprint(i)) })...), wantLen: 10, unchanged: true},
		{name: "unique paths", in: errorsOn(5000, func(i int) *field.Path { return field.NewPath(fmt.Sprintf("f%d", i)) }), wantLen: Total + 1, wantLast: "and 4900 more errors"},
		{name: "many overflowing paths", in: func() field.ErrorList {
			var out field.ErrorList
			for p := 0; p < 500; p++ {
				out = append(out, errorsOn(PerPath+2, func(i int) *field.Path { return field.NewPath(fmt.Sprintf("p%d", p)).Index(i) })...)
			}
			return out
		}(), wantLen: Total + PerPath + 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Limit(c.in)
			if len(got) != c.wantLen {
				t.Fatalf("len = %d, want %d", len(got), c.wantLen)
			}
			if c.unchanged {
				for i := range got {
					if got[i] != c.in[i] {
						t.Fatalf("error %d changed", i)
					}
				}
			}
			if c.wantLast != "" && !strings.Contains(got[len(got)-1].Detail, c.wantLast) {
				t.Errorf("last error %q, want %q", got[len(got)-1].Detail, c.wantLast)
			}
			if agg := got.ToAggregate(); agg == nil {
				t.Errorf("no aggregate")
			}
		})
	}
}
