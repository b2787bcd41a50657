#!/usr/bin/env bash
# Fails when a Kubernetes staging module is not on the release line the server is built for, or when the
# module imports k8s.io/kubernetes. `go mod tidy` can silently move k8s.io modules to a newer line.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
WANT=${KUBE_STAGING_VERSION:-v0.36.3}
STAGING='^k8s\.io/(api|apimachinery|apiserver|client-go|code-generator|component-base|kms|kube-aggregator|apiextensions-apiserver|metrics)$'

status=0
while read -r path version; do
  if [[ "${path}" =~ ${STAGING} && "${version}" != "${WANT}" ]]; then
    echo "${path} is at ${version}, want ${WANT}" >&2
    status=1
  fi
done < <(go list -m -f '{{.Path}} {{.Version}}' all)
if go list -m all | grep -q '^k8s.io/kubernetes '; then
  echo "k8s.io/kubernetes must not be a dependency of this module" >&2
  status=1
fi
if [[ ${status} -eq 0 ]]; then
  echo "Kubernetes modules are pinned to ${WANT}."
fi
exit ${status}
