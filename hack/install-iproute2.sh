#!/usr/bin/env bash
# Installs iproute2 (the `ip` command) from Debian's packages when it is missing. The HA form of the local
# cluster runs its tapp-apiserver replicas in a network namespace of its own (pkg/localcluster/netns.go).
set -o errexit -o nounset -o pipefail

if command -v ip >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-iproute2: the HA form needs iproute2's ip and root; install the iproute2 package" >&2
  exit 1
fi
echo "[install-iproute2] installing iproute2 from Debian's packages" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
