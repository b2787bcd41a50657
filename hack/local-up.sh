#!/usr/bin/env bash
# Starts a local Kubernetes control plane on loopback with tapp-apiserver registered behind the aggregator,
# in the foreground; Ctrl-C stops every process it started. Binaries are built once into a cache
# (hack/build-tools.sh); tapp-apiserver and the kubectl plugin bin/kubectl-tapp are built at every start.
# Writes _output/local/kubeconfig and logs under _output/local/logs/. A start on a work directory an earlier
# start used restarts that cluster on its data; --fresh removes it first.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
for arg in "$@"; do
  if [[ "${arg}" == "--ha" ]]; then
    ./hack/install-iproute2.sh # the HA form's replicas run in a network namespace of their own
  fi
done
TOOLS_DIR=$(./hack/build-tools.sh | tail -n 1)
go build -o bin/tapp-apiserver ./cmd/tapp-apiserver
go build -o bin/kubectl-tapp ./cmd/kubectl-tapp
go build -o bin/localup ./hack/localup
exec bin/localup --work-dir "${LOCAL_UP_DIR:-_output/local}" --tools-dir "${TOOLS_DIR}" --server-binary bin/tapp-apiserver \
  --plugin-binary bin/kubectl-tapp "$@"
