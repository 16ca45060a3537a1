#!/usr/bin/env bash
# Installs the Debian 12 packages xattn needs to build and test. Idempotent: installs only what
# is missing, runs `apt-get update` only then. Uses sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsimgrid-dev libboost-graph-dev libyaml-cpp-dev catch2
  libcli11-dev libfmt-dev nlohmann-json3-dev libeigen3-dev libabsl-dev
  zlib1g-dev liblzma-dev libzstd-dev
  python3-matplotlib  # `xattn report` draws its plots with it
  clang-format-14  # pinned: .ci/format-check.sh fails on a file another version would format
)
# Extra packages a caller may ask for (e.g. "slurm-wlm munge" for the Slurm tests).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
