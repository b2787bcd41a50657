#!/usr/bin/env bash
# Installs protoc (Debian's protobuf-compiler, pinned below) when it is missing: hack/update-codegen.sh needs it
# for go-to-protobuf. The generated generated.pb.go files depend on protoc's version only through the
# descriptor it hands to protoc-gen-gogo, so any 3.x protoc produces the same files; the pin keeps runs alike.
set -o errexit -o nounset -o pipefail

PROTOC_DEBIAN_VERSION=${PROTOC_DEBIAN_VERSION:-3.21.12-3+deb12u1}

if command -v protoc >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-protoc: generating protobuf needs protoc; install Debian's protobuf-compiler (${PROTOC_DEBIAN_VERSION})" >&2
  exit 1
fi
echo "[install-protoc] installing protobuf-compiler ${PROTOC_DEBIAN_VERSION} from Debian's packages" >&2
apt-get update -qq
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "protobuf-compiler=${PROTOC_DEBIAN_VERSION}" >/dev/null; then
  echo "[install-protoc] ${PROTOC_DEBIAN_VERSION} is not available; installing the candidate version" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends protobuf-compiler >/dev/null
fi
