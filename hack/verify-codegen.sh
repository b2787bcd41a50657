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
status=0
for path in pkg hack/api-violations.list; do
  if ! diff -Naupr "${ROOT}/${path}" "${WORK}/${path}"; then
    status=1
  fi
done
if [[ ${status} -ne 0 ]]; then
  echo "Generated code is out of date: run hack/update-codegen.sh" >&2
  exit 1
fi
echo "Generated code is up to date."
