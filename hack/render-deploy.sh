#!/usr/bin/env bash
# Renders the chart's default profile (artifacts/chart/profiles/default.yaml, with the Namespace object) into
# artifacts/deploy, the manifests for `kubectl apply -k` / `apply -R -f`, with Helm v3 from the tools cache
# (hack/build-helm.sh). The chart is the one source of the deployment manifests: change it, then run this.
#
#   hack/render-deploy.sh            rewrite artifacts/deploy
#   hack/render-deploy.sh DIR        render into DIR instead (hack/verify-deploy.sh compares)
#   HELM=/path/to/helm               use this helm instead of the cached v3
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-${ROOT}/artifacts/deploy}
HELM=${HELM:-$("${ROOT}/hack/build-helm.sh" helm3 | tail -n 1)/helm3}
CHART="${ROOT}/artifacts/chart/tapp-apiserver"
WORK=$(mktemp -d)
trap 'rm -rf "${WORK}"' EXIT

"${HELM}" template tapp-apiserver "${CHART}" --namespace tapp-system \
  --values "${ROOT}/artifacts/chart/profiles/default.yaml" --set namespace.create=true \
  --output-dir "${WORK}" >/dev/null

mkdir -p "${OUT}"
rm -f "${OUT}"/*.yaml "${OUT}/Kustomization"
files=()
for f in "${WORK}"/tapp-apiserver/templates/*.yaml; do
  name=$(basename "${f}")
  files+=("${name}")
  {
    echo "# Rendered from artifacts/chart/tapp-apiserver (profile default) by hack/render-deploy.sh: do not edit."
    # Helm's "# Source:" lines name the template, which the header already does; the first "---" is redundant.
    # Helm v4 ends each document with an empty line, v3 does not: drop those, so both render the same files.
    grep -v '^# Source: ' "${f}" | sed '1{/^---$/d}' | awk '
      /^$/ { blank++; next }
      { if ($0 != "---") { for (; blank > 0; blank--) print "" } ; blank = 0; print }'
  } >"${OUT}/${name}"
done

{
  cat <<'HEAD'
# Rendered by hack/render-deploy.sh: do not edit.
#
# kubectl apply -k artifacts/deploy
#
# This file is named "Kustomization" (one of the names kustomize accepts) rather than kustomization.yaml so
# that `kubectl apply -R -f artifacts/deploy/` skips it: kubectl -f reads only *.yaml, *.yml and *.json and
# would otherwise try to create a Kustomization object.
#
# No namespace: here on purpose: it would also move the RoleBinding that must live in kube-system. For another
# namespace, an external etcd or other settings, render the chart yourself (helm template, docs/install.md).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
HEAD
  for name in "${files[@]}"; do
    if [[ ${name} == 10-etcd.yaml ]]; then
      echo "- ${name}          # the bundled etcd"
    else
      echo "- ${name}"
    fi
  done
  cat <<'TAIL'
images:
# The image `make image` built and you pushed: its last line of output is the reference, repository:tag@digest,
# e.g. registry.example.com/tapp-apiserver:v0.1.0@sha256:...; set newName to the repository, newTag to the tag
# and add digest: sha256:... (docs/install.md, step 1).
- name: tapp-apiserver
  newName: tapp-apiserver
  newTag: latest
TAIL
} >"${OUT}/Kustomization"
