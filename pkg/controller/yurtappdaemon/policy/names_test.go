package policy

import (
	"strings"
	"testing"

	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestChildName(t *testing.T) {
	long := strings.Repeat("p", 80)
	cases := []struct {
		yad, pool string
		want      string // exact, or a prefix when hashed is true
		hashed    bool
	}{
		{"web", "beijing", "web-beijing", false},
		{"web", "edge-1", "web-edge-1", false},
		{strings.Repeat("y", 30), strings.Repeat("p", 21), strings.Repeat("y", 30) + "-" + strings.Repeat("p", 21), false}, // 52
		{strings.Repeat("y", 30), strings.Repeat("p", 22), strings.Repeat("y", 30) + "-" + strings.Repeat("p", 10), true},  // 53 → hashed
		{"web", "pool.example.com", "web-pool-example-com", true},
		{"web", long, "web-" + strings.Repeat("p", 37), true},
		{"web.v1", "a", "web-v1-a", true},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		got := ChildName(tc.yad, tc.pool)
		if !tc.hashed && got != tc.want {
			t.Errorf("ChildName(%q, %q) = %q, want %q", tc.yad, tc.pool, got, tc.want)
		}
		if tc.hashed {
			if !strings.HasPrefix(got, tc.want+"-") || len(got) != len(tc.want)+1+stablehash.Length {
				t.Errorf("ChildName(%q, %q) = %q, want %q-<%d hex>", tc.yad, tc.pool, got, tc.want, stablehash.Length)
			}
			if got != tc.want+"-"+stablehash.String(tc.yad+"/"+tc.pool) {
				t.Errorf("ChildName(%q, %q) = %q: suffix is not the hash of the pair", tc.yad, tc.pool, got)
			}
		}
		if len(got) > MaxChildNameLength || len(validation.IsDNS1123Label(got)) > 0 {
			t.Errorf("ChildName(%q, %q) = %q (%d) is not a DNS-1123 label of ≤ %d", tc.yad, tc.pool, got, len(got), MaxChildNameLength)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("ChildName %q for %s/%s and %s", got, tc.yad, tc.pool, prev)
		}
		seen[got] = tc.yad + "/" + tc.pool
		if again := ChildName(tc.yad, tc.pool); again != got {
			t.Errorf("ChildName is not deterministic: %q then %q", got, again)
		}
	}
	if MaxChildNameLength != 52 {
		t.Errorf("MaxChildNameLength = %d, want 52", MaxChildNameLength)
	}
}

// Long YurtAppDaemon and pool names that only differ at the end still give distinct names, and a
// StatefulSet of that name keeps its pod names and revision label within 63 characters.
func TestChildNameLongUnique(t *testing.T) {
	yad := strings.Repeat("y", 60)
	pools := []string{strings.Repeat("p", 60) + "-a", strings.Repeat("p", 60) + "-b", "p.a", "p-a"}
	seen := map[string]bool{}
	for _, p := range pools {
		n := ChildName(yad, p)
		if seen[n] {
			t.Errorf("ChildName(%q) = %q is not unique", p, n)
		}
		seen[n] = true
		if l := len(n + "-" + strings.Repeat("h", 10)); l > 63 {
			t.Errorf("StatefulSet revision label of %q would be %d characters", n, l)
		}
		if l := len(n + "-99999999"); l > 63 {
			t.Errorf("StatefulSet pod name of %q would be %d characters", n, l)
		}
	}
}
