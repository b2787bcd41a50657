package stablehash

import "testing"

func TestCanonicalJSONDropsNullsAndEmptyArrays(t *testing.T) {
	type inner struct {
		Items []string `json:"items"`
		Ptr   *int     `json:"ptr"`
	}
	a, err := CanonicalJSON(map[string]interface{}{"b": 1, "a": inner{}, "c": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{},"b":1}`; string(a) != want {
		t.Errorf("CanonicalJSON = %s, want %s", a, want)
	}
	if Object(inner{}) != Object(inner{Items: []string{}}) {
		t.Errorf("nil and empty slices must hash the same")
	}
	if Object(inner{Items: []string{"x"}}) == Object(inner{}) {
		t.Errorf("different content must hash differently")
	}
}

func TestGolden(t *testing.T) {
	// A change here changes every hash label the controllers have written: pods would be updated again.
	// The expected value is the first 10 hex characters of `printf tapp | sha256sum`.
	if got, want := String("tapp"), "e797e883cd"; got != want {
		t.Errorf("String(tapp) = %s, want %s", got, want)
	}
	if len(Object(struct{}{})) != Length {
		t.Errorf("hash length is not %d", Length)
	}
}
