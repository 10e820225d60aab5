#!/usr/bin/env bash
# Installs the Debian 12 packages attnlab needs (as root; otherwise prints the one apt-get line
# to run) and builds Release into build/. usage: scripts/setup.sh [--tests]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config ccache
  libtorch-dev libopenblas0-openmp  # OpenBLAS: Debian's LibTorch is ~25x slower on reference BLAS
  libimgui-dev libglfw3-dev libglm-dev libepoxy-dev
  doctest-dev nlohmann-json3-dev libcli11-dev libmuparser-dev zlib1g-dev
  libcairo2-dev libfreetype-dev libpng-dev  # figure export (PDF, PNG, SVG)
  fortunes-min fortunes fonts-dejavu-core
  dataset-fashion-mnist)  # the image task's data (gzip IDX files, read with zlib)
target=attnlab
if [ "${1:-}" = "--tests" ]; then
  packages+=(xvfb xauth libgl1-mesa-dri python3 xdotool poppler-utils libxml2-utils
    clang-14 libclang-rt-14-dev)  # libFuzzer targets (fuzz/, scripts/fuzz.sh)
  target=all
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "attnlab setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "attnlab setup: missing packages. Run this, then run me again:"
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=ON >/dev/null
cmake --build build --target "$target" -j "$jobs"
