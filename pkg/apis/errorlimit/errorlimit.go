// Package errorlimit bounds the validation errors of one request, so that the cost of a refusal (building,
// encoding and sending the Status) grows with the request body and not with the product of its entries and
// the rules they break.
package errorlimit

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// PerPath is how many errors Limit keeps for one field path, list indices and map keys aside.
	PerPath = 10
	// Total is how many errors Limit keeps in all, whatever their paths (map keys can make every path unique).
	Total = 100
)

// Limit keeps the first PerPath errors of each field path, where the paths spec.templates[3] and
// spec.templates[7] are one path (indices and keys do not count), and replaces the rest of each path by one
// error "and N more errors"; past Total kept errors, the rest are one error "and N more errors" on the first
// of them. Order is kept. A list without more than PerPath errors on any path is returned unchanged.
func Limit(errs field.ErrorList) field.ErrorList {
	if len(errs) <= PerPath {
		return errs
	}
	counts := make(map[string]int, 8)
	firstOver := make(map[string]string)
	var overflowOrder []string
	out := make(field.ErrorList, 0, min(len(errs), 4*PerPath))
	var beyondTotal int
	var firstBeyond string
	for _, err := range errs {
		key := Generic(err.Field)
		counts[key]++
		switch n := counts[key]; {
		case n <= PerPath && len(out) >= Total:
			if beyondTotal == 0 {
				firstBeyond = err.Field
			}
			beyondTotal++
		case n <= PerPath:
			out = append(out, err)
		case n == PerPath+1:
			firstOver[key] = err.Field
			overflowOrder = append(overflowOrder, key)
		}
	}
	for _, key := range overflowOrder {
		more := counts[key] - PerPath
		if len(out) >= Total+PerPath {
			if beyondTotal == 0 {
				firstBeyond = firstOver[key]
			}
			beyondTotal += more
			continue
		}
		out = append(out, &field.Error{
			Type:     field.ErrorTypeInvalid,
			Field:    firstOver[key],
			BadValue: field.OmitValueType{},
			Detail:   fmt.Sprintf("and %d more errors on %s", more, key),
		})
	}
	if beyondTotal > 0 {
		out = append(out, &field.Error{
			Type:     field.ErrorTypeInvalid,
			Field:    firstBeyond,
			BadValue: field.OmitValueType{},
			Detail:   fmt.Sprintf("and %d more errors", beyondTotal),
		})
	}
	return out
}

// Generic returns path with every list index and map key replaced by "[*]": "spec.templates[3]" and
// "spec.templates[7]" both become "spec.templates[*]".
func Generic(path string) string {
	if !strings.Contains(path, "[") {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	depth := 0
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '[':
			if depth == 0 {
				b.WriteString("[*]")
			}
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}
