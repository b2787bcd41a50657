//go:build tools

// Package tools pins the code generators used by hack/update-codegen.sh in go.mod.
package tools

import (
	_ "k8s.io/code-generator"
)
