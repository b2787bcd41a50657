package app

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// ParseNamespacedName parses namespace/name: both parts set, the name without a further slash.
func ParseNamespacedName(s string) (types.NamespacedName, error) {
	namespace, name, ok := strings.Cut(s, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("must be namespace/name, not %q", s)
	}
	return types.NamespacedName{Namespace: namespace, Name: name}, nil
}

// NamespacedName is the value of a namespace/name flag, parsed once, when it is set. Set never fails: a value
// that is not namespace/name is kept with its error, which Validate reports together with the other flags'.
type NamespacedName struct {
	raw    string
	parsed types.NamespacedName
	err    error
}

// NewNamespacedName returns a flag value holding def.
func NewNamespacedName(def types.NamespacedName) NamespacedName {
	var n NamespacedName
	_ = n.Set(def.String())
	return n
}

// Set parses s (pflag.Value).
func (n *NamespacedName) Set(s string) error {
	n.raw = s
	n.parsed, n.err = ParseNamespacedName(s)
	return nil
}

// String returns the value as given (pflag.Value).
func (n *NamespacedName) String() string { return n.raw }

// Type is how help output names the value (pflag.Value).
func (n *NamespacedName) Type() string { return "string" }

// Value is the parsed value; it is only meaningful when Err is nil.
func (n *NamespacedName) Value() types.NamespacedName { return n.parsed }

// Err says why the value is not namespace/name, for Validate; nil when it is.
func (n *NamespacedName) Err() error {
	if n.err == nil && n.parsed == (types.NamespacedName{}) {
		// Never set: the zero value is no namespace/name either.
		_, err := ParseNamespacedName(n.raw)
		return err
	}
	return n.err
}
