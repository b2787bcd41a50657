// Command tapp-bench runs the benchmarks of pkg/bench on the local cluster and writes <out>/results.json
// and results.md; `make bench` builds and runs it, docs/benchmarks.md records the latest run.
package main

import (
	"os"

	"github.com/tapp-io/tapp-apiserver/pkg/bench"
)

func main() {
	os.Exit(bench.Main())
}
