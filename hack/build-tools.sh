#!/usr/bin/env bash
# Builds the binaries the local cluster runs (kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, etcd, etcdutl, kwok) from the Go module proxy into a cache outside the work tree, keyed by version, and
# prints the directory that holds them. Binaries already in the cache are not rebuilt, so a fresh clone on
# the same machine reuses them. A cold build takes roughly 10-15 minutes on 2 cores.
#
#   hack/build-tools.sh            build what is missing, print the bin directory on the last line
#   TOOLS_CACHE_DIR=...            override the cache root (default: $XDG_CACHE_HOME or ~/.cache)
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUBE_VERSION=v1.36.3
ETCD_VERSION=v3.6.8
KWOK_VERSION=v0.8.0
CACHE_ROOT=${TOOLS_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/tapp-apiserver/tools}
BIN_DIR="${CACHE_ROOT}/kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}/bin"
mkdir -p "${BIN_DIR}"

log() { echo "[build-tools $(date +%H:%M:%S)] $*" >&2; }

# Version information kubectl version and /version report, as a release build would stamp it.
kube_ldflags() {
  local major minor
  major=$(cut -d. -f1 <<<"${KUBE_VERSION#v}")
  minor=$(cut -d. -f2 <<<"${KUBE_VERSION#v}")
  local flags=()
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=("-X ${pkg}.gitVersion=${KUBE_VERSION}" "-X ${pkg}.gitMajor=${major}" "-X ${pkg}.gitMinor=${minor}"
      "-X ${pkg}.gitTreeState=clean" "-X ${pkg}.gitCommit=0000000000000000000000000000000000000000"
      "-X ${pkg}.buildDate=1970-01-01T00:00:00Z")
  done
  echo "-s -w ${flags[*]}"
}

# build NAME MODULE_DIR PACKAGE [LDFLAGS]: go build PACKAGE inside MODULE_DIR into the cache, unless present.
build() {
  local name=$1 dir=$2 pkg=$3 ldflags=${4:-"-s -w"}
  if [[ -x "${BIN_DIR}/${name}" ]]; then
    log "${name}: cached"
    return
  fi
  log "${name}: building ${pkg} (this takes a few minutes the first time)"
  local start=${SECONDS}
  # A temporary name of this run's own, so that two runs building at once never move each other's file.
  local tmp="${BIN_DIR}/${name}.tmp.$$"
  (cd "${dir}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "${ldflags}" -o "${tmp}" "${pkg}")
  mv -f "${tmp}" "${BIN_DIR}/${name}"
  log "${name}: built in $((SECONDS - start))s"
}

KUBE_MOD="${ROOT}/hack/tools/kube"
build etcd "${KUBE_MOD}" ./cmd/etcd
build etcdutl "${KUBE_MOD}" go.etcd.io/etcd/etcdutl/v3
build kube-apiserver "${KUBE_MOD}" k8s.io/kubernetes/cmd/kube-apiserver "$(kube_ldflags)"
build kube-controller-manager "${KUBE_MOD}" k8s.io/kubernetes/cmd/kube-controller-manager "$(kube_ldflags)"
build kube-scheduler "${KUBE_MOD}" k8s.io/kubernetes/cmd/kube-scheduler "$(kube_ldflags)"
build kubectl "${KUBE_MOD}" k8s.io/kubernetes/cmd/kubectl "$(kube_ldflags)"
build kwok "${ROOT}/hack/tools/kwok" sigs.k8s.io/kwok/cmd/kwok
echo "${BIN_DIR}"
