package history

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tapp-io/tapp-apiserver/pkg/stablehash"
)

func TestHash(t *testing.T) {
	zero, one, two := int32(0), int32(1), int32(2)
	data := []byte(`{"a":1}`)
	for _, tc := range []struct {
		name           string
		collisionCount *int32
		want           string
	}{
		{"no collision count", nil, stablehash.Bytes(data)},
		{"a zero collision count", &zero, stablehash.Bytes(data)},
		{"collision count 1", &one, stablehash.Bytes([]byte(`{"a":1}/1`))},
		{"collision count 2", &two, stablehash.Bytes([]byte(`{"a":1}/2`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(make([]byte, 0, 64), data...)
			if got := Hash(in, tc.collisionCount); got != tc.want {
				t.Errorf("Hash = %q, want %q", got, tc.want)
			}
			if string(in) != string(data) || string(in[:cap(in)][len(in):len(in)+1]) == "/" {
				t.Errorf("Hash wrote into the caller's data")
			}
		})
	}
}

func TestName(t *testing.T) {
	cutDashes := func(s string, n int) string { return strings.TrimRight(s[:n], "-") }
	cut := func(s string, n int) string { return s[:n] }
	long := strings.Repeat("a", 51) + "-b-tail"
	for _, tc := range []struct {
		name, owner, hash string
		cut               func(string, int) string
		want              string
	}{
		{"short", "web", "0123456789", cut, "web-0123456789"},
		{"exactly 63", strings.Repeat("w", 52), "0123456789", cut, strings.Repeat("w", 52) + "-0123456789"},
		{"too long, cut", long, "0123456789", cut, long[:52] + "-" + stablehash.String(long+"/0123456789")},
		{"too long, cut by the owner's rule", long, "0123456789", cutDashes, strings.Repeat("a", 51) + "-" + stablehash.String(long+"/0123456789")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Name(tc.owner, tc.hash, tc.cut)
			if got != tc.want {
				t.Errorf("Name = %q, want %q", got, tc.want)
			}
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Errorf("Name = %q is not a label value: %v", got, errs)
			}
		})
	}
	// Two long names with a common prefix get different names.
	a, b := strings.Repeat("x", 60)+"a", strings.Repeat("x", 60)+"b"
	if Name(a, "h", cut) == Name(b, "h", cut) {
		t.Error("long names with a common prefix got the same revision name")
	}
}
