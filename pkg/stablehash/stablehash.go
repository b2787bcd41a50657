// Package stablehash owns the hashes the controllers put into names and labels: sha256 over a canonical
// JSON form of an API object, so a hash only changes when the object's content does, not when a library
// upgrade adds optional fields or changes Go struct layout.
package stablehash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Length is the number of hex characters of the sha256 kept in a hash (40 bits).
const Length = 10

// Bytes hashes data.
func Bytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:Length]
}

// String hashes s.
func String(s string) string { return Bytes([]byte(s)) }

// Object hashes the canonical JSON of obj.
func Object(obj interface{}) string {
	data, err := CanonicalJSON(obj)
	if err != nil {
		// API objects always encode; keep the function total anyway.
		data = []byte(fmt.Sprintf("%#v", obj))
	}
	return Bytes(data)
}

// CanonicalJSON encodes obj with encoding/json, then drops nulls and empty arrays so that a nil and an
// empty slice, or a zero metav1.Time, encode the same. Map keys come out sorted.
func CanonicalJSON(obj interface{}) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(raw))
	if err := canonicalize(&out, raw); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
