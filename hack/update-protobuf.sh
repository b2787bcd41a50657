#!/usr/bin/env bash
# Regenerates generated.proto and generated.pb.go of every API version package marked
# `+k8s:protobuf-gen=package` in its doc.go, with k8s.io/code-generator's go-to-protobuf, and the protobuf
# struct tags of their types. Called by hack/update-codegen.sh; installs protoc (hack/install-protoc.sh),
# go-to-protobuf, protoc-gen-gogo and goimports when they are missing.
#
# Field numbers are kept: a field that has a protobuf tag keeps its number, a field without one gets the next
# number above the highest of its message (docs/protobuf.md, "Field numbers are an API").
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
MODULE=$(go list -m)
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"

"${ROOT}/hack/install-protoc.sh"

# The generators, at the versions the module pins (code-generator from its own module, goimports at the
# golang.org/x/tools version of go.mod), into a directory of their own.
go mod download k8s.io/code-generator github.com/gogo/protobuf
CODEGEN_PKG=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
TOOLS_BIN="$(go env GOPATH)/bin/tapp-apiserver-protobuf"
mkdir -p "${TOOLS_BIN}"
(cd "${CODEGEN_PKG}" && GOBIN="${TOOLS_BIN}" go install ./cmd/go-to-protobuf ./cmd/go-to-protobuf/protoc-gen-gogo)
GOBIN="${TOOLS_BIN}" go install "golang.org/x/tools/cmd/goimports@$(go list -m -f '{{.Version}}' golang.org/x/tools)"

# The packages to generate, and every package they import that has a generated.proto of its own (core/v1,
# apps/v1, ...): those are read, never written.
mapfile -t api_dirs < <(grep -rl --include=doc.go '^// +k8s:protobuf-gen=package$' pkg/apis | xargs -n1 dirname | LC_ALL=C sort)
if [[ ${#api_dirs[@]} -eq 0 ]]; then
  echo "update-protobuf: no package is marked +k8s:protobuf-gen=package" >&2
  exit 1
fi
outputs=()
for dir in "${api_dirs[@]}"; do
  outputs+=("${MODULE}/${dir}")
  # Regenerated in full; a stale one (a field since removed) would keep the package from compiling.
  rm -f "${dir}/generated.pb.go"
done
mapfile -t imports < <(go list -f '{{join .Imports "\n"}}' "${api_dirs[@]/#/./}" | LC_ALL=C sort -u)
inputs=()
for pkg in "${imports[@]}"; do
  [[ " ${outputs[*]} " == *" ${pkg} "* ]] && continue
  dir=$(go list -f '{{.Dir}}' "${pkg}")
  if [[ -f "${dir}/generated.proto" && "${pkg}" != k8s.io/apimachinery/* ]]; then
    inputs+=("-${pkg}")
  fi
done
apimachinery=(
  -k8s.io/apimachinery/pkg/util/intstr
  -k8s.io/apimachinery/pkg/api/resource
  -k8s.io/apimachinery/pkg/runtime/schema
  -k8s.io/apimachinery/pkg/runtime
  -k8s.io/apimachinery/pkg/apis/meta/v1
)

# go-to-protobuf and protoc address .proto files by Go import path: a tree of import paths with this module
# and the modules of the imported .proto files (and gogo.proto, descriptor.proto) under it.
PROTO_ROOT=$(mktemp -d)
trap 'rm -rf "${PROTO_ROOT}"' EXIT
link_module() {
  mkdir -p "${PROTO_ROOT}/$(dirname "$1")"
  ln -s "$2" "${PROTO_ROOT}/$1"
}
link_module "${MODULE}" "${ROOT}"
for mod in k8s.io/api k8s.io/apiextensions-apiserver k8s.io/apimachinery github.com/gogo/protobuf; do
  link_module "${mod}" "$(go list -m -f '{{.Dir}}' "${mod}")"
done

PATH="${TOOLS_BIN}:${PATH}" go-to-protobuf \
  --go-header-file "${BOILERPLATE}" \
  --output-dir "${PROTO_ROOT}" \
  --proto-import "${PROTO_ROOT}" \
  --proto-import "${PROTO_ROOT}/github.com/gogo/protobuf/protobuf" \
  --apimachinery-packages "$(IFS=,; echo "${apimachinery[*]}")" \
  --packages "$(IFS=,; echo "${inputs[*]+${inputs[*]},}${outputs[*]}")"
