#!/usr/bin/env bash
# Fails when artifacts/deploy differs from what hack/render-deploy.sh renders from the chart.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "${WORK}"' EXIT
"${ROOT}/hack/render-deploy.sh" "${WORK}"
if ! diff -Nru "${ROOT}/artifacts/deploy" "${WORK}"; then
  echo "artifacts/deploy is out of date with artifacts/chart: run hack/render-deploy.sh" >&2
  exit 1
fi
echo "artifacts/deploy matches the chart."
