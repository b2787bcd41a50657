//go:build tools

// Package kwok pins kwok, which runs the local cluster's fake nodes and moves their pods through their lifecycle.
package kwok

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
