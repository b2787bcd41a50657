#!/usr/bin/env bash
# Regenerates protobuf (hack/update-protobuf.sh), deepcopy, defaulters, conversions, OpenAPI definitions, the
# typed clientset (protobuf on the wire), listers, informers and apply configurations. Generated code lives in
# zz_generated.* files, generated.proto and generated.pb.go of the API versions (plus the protobuf struct tags
# of their types) and pkg/generated/.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
MODULE=$(go list -m)
# `go list -m` does not download: on a machine whose module cache lacks code-generator, fetch it first.
go mod download k8s.io/code-generator
CODEGEN_PKG=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ -z "${CODEGEN_PKG}" || ! -f "${CODEGEN_PKG}/kube_codegen.sh" ]]; then
  echo "k8s.io/code-generator is not in the module cache (go mod download k8s.io/code-generator)" >&2
  exit 1
fi
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

"${ROOT}/hack/update-protobuf.sh"

kube::codegen::gen_helpers --boilerplate "${BOILERPLATE}" "${ROOT}/pkg/apis"

report_args=(--report-filename "${ROOT}/hack/api-violations.list")
if [[ "${UPDATE_API_KNOWN_VIOLATIONS:-}" == "true" ]]; then
  report_args+=(--update-report)
fi
kube::codegen::gen_openapi \
  --output-dir "${ROOT}/pkg/generated/openapi" \
  --output-pkg "${MODULE}/pkg/generated/openapi" \
  --output-model-name-file zz_generated.model_name.go \
  --extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
  --extra-pkgs k8s.io/api/core/v1 \
  --extra-pkgs k8s.io/api/apps/v1 \
  --extra-pkgs k8s.io/api/autoscaling/v1 \
  --extra-pkgs k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1 \
  "${report_args[@]}" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/pkg/apis"

externals=(
  k8s.io/api/core/v1.PodTemplateSpec:k8s.io/client-go/applyconfigurations/core/v1
  k8s.io/api/core/v1.PersistentVolumeClaim:k8s.io/client-go/applyconfigurations/core/v1
  k8s.io/api/core/v1.Taint:k8s.io/client-go/applyconfigurations/core/v1
  k8s.io/api/apps/v1.DeploymentSpec:k8s.io/client-go/applyconfigurations/apps/v1
  k8s.io/api/apps/v1.StatefulSetSpec:k8s.io/client-go/applyconfigurations/apps/v1
  k8s.io/api/autoscaling/v1.Scale:k8s.io/client-go/applyconfigurations/autoscaling/v1
)
schema=$(mktemp)
trap 'rm -f "${schema}"' EXIT
go run "${MODULE}/pkg/generated/openapi/cmd/models-schema" > "${schema}"
kube::codegen::gen_client \
  --with-watch \
  --with-applyconfig \
  --prefers-protobuf \
  --applyconfig-openapi-schema "${schema}" \
  --applyconfig-externals "$(IFS=,; echo "${externals[*]}")" \
  --output-dir "${ROOT}/pkg/generated" \
  --output-pkg "${MODULE}/pkg/generated" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/pkg/apis"
