#!/usr/bin/env bash
# Builds the Helm v3 and v4 clients the chart tests run (artifacts/chart) from the Go module proxy into a cache
# outside the work tree, keyed by version, and prints the directory that holds them (helm3 and helm4). Binaries
# already in the cache are not rebuilt. A cold build takes a few minutes per version on 2 cores.
#
#   hack/build-helm.sh             build what is missing, print the bin directory on the last line
#   hack/build-helm.sh helm3       only Helm v3 (what hack/render-deploy.sh needs)
#   TOOLS_CACHE_DIR=...            override the cache root (default: $XDG_CACHE_HOME or ~/.cache)
set -o errexit -o nounset -o pipefail

HELM3_VERSION=v3.22.0
HELM4_VERSION=v4.3.1
CACHE_ROOT=${TOOLS_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/tapp-apiserver/tools}
BIN_DIR="${CACHE_ROOT}/helm-${HELM3_VERSION}_helm-${HELM4_VERSION}/bin"
mkdir -p "${BIN_DIR}"

log() { echo "[build-helm $(date +%H:%M:%S)] $*" >&2; }

# build NAME MAJOR VERSION: go install helm.sh/helm/vMAJOR/cmd/helm@VERSION into the cache as NAME, unless present.
build() {
  local name=$1 major=$2 version=$3
  if [[ -x "${BIN_DIR}/${name}" ]]; then
    log "${name}: cached"
    return
  fi
  log "${name}: building helm.sh/helm/${major}/cmd/helm@${version} (this takes a few minutes the first time)"
  local start=${SECONDS}
  # GOBIN of this run's own, so that two runs building at once never move each other's file.
  local gobin="${BIN_DIR}/.${name}.tmp.$$"
  mkdir -p "${gobin}"
  # The version `helm version` prints, as a release build stamps it.
  CGO_ENABLED=0 GOBIN="${gobin}" GOFLAGS= go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/${major}/internal/version.version=${version}" \
    "helm.sh/helm/${major}/cmd/helm@${version}"
  mv -f "${gobin}/helm" "${BIN_DIR}/${name}"
  rmdir "${gobin}"
  log "${name}: built in $((SECONDS - start))s"
}

WANT=${1:-all}
case "${WANT}" in
  all | helm3 | helm4) ;;
  *) echo "usage: $0 [helm3|helm4]" >&2; exit 2 ;;
esac
if [[ ${WANT} != helm4 ]]; then build helm3 v3 "${HELM3_VERSION}"; fi
if [[ ${WANT} != helm3 ]]; then build helm4 v4 "${HELM4_VERSION}"; fi
echo "${BIN_DIR}"
