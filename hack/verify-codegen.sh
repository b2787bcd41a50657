#!/usr/bin/env bash
# Fails when the committed generated code or API-rule report differs from what hack/update-codegen.sh produces.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
WORK=$(mktemp -d)
trap 'rm -rf "${WORK}"' EXIT

# Generate into a copy of the tree so the work tree is never touched.
tar -C "${ROOT}" --exclude=./_output --exclude=./bin --exclude=./.git -cf - . | tar -C "${WORK}" -xf -
(cd "${WORK}" && ./hack/update-codegen.sh >/dev/null)
# Compare only generated files: zz_generated.* anywhere under pkg/, pkg/generated/, the API-rule report and
# every file of pkg/apis (generated.proto, generated.pb.go, and the protobuf struct tags go-to-protobuf writes
# into types.go).
generated_files() {
  (cd "$1" && { find pkg -name 'zz_generated.*' -type f; find pkg/generated pkg/apis -type f; echo hack/api-violations.list; } | LC_ALL=C sort -u)
}
status=0
if ! diff <(generated_files "${ROOT}") <(generated_files "${WORK}"); then
  echo "The set of generated files differs." >&2
  status=1
fi
while read -r path; do
  if [[ -f "${WORK}/${path}" ]] && ! diff -Nau "${ROOT}/${path}" "${WORK}/${path}"; then
    status=1
  fi
done < <(generated_files "${ROOT}")
if [[ ${status} -ne 0 ]]; then
  echo "Generated code is out of date: run hack/update-codegen.sh" >&2
  exit 1
fi
echo "Generated code is up to date."
