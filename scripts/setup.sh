#!/usr/bin/env bash
# Installs the Debian 12 packages attnlab needs (as root; otherwise prints the one apt-get line
# to run) and builds Release into build/. usage: scripts/setup.sh [--tests]
# The build is the CUDA variant (kernels, GPU training) where scripts/detect_torch.sh finds an
# NVIDIA GPU, a CUDA LibTorch and nvcc, and Debian's CPU LibTorch otherwise, with one line saying
# which and why. ATTN_FORCE_CPU=1 builds for the CPU; ATTN_DEPS_PREFIX names a prefix holding the
# libraries a machine without apt lacks (scripts/device_deps.sh makes one).
set -euo pipefail
cd "$(dirname "$0")/.."

IFS=$'\t' read -r variant torch_detail torch_found < <(scripts/detect_torch.sh)
if [ "$variant" = cuda ]; then
  echo "attnlab setup: building for CUDA: $torch_found"
else
  echo "attnlab setup: building for the CPU: $torch_detail"
fi

packages=(cmake g++ make pkg-config ccache
  libimgui-dev libglfw3-dev libglm-dev libepoxy-dev
  doctest-dev nlohmann-json3-dev libcli11-dev libmuparser-dev zlib1g-dev
  libcairo2-dev libfreetype-dev libpng-dev  # figure export (PDF, PNG, SVG)
  fortunes-min fortunes fonts-dejavu-core
  dataset-fashion-mnist)  # the image task's data (gzip IDX files, read with zlib)
[ "$variant" = cpu ] && packages+=(libtorch-dev
  libopenblas0-openmp)  # OpenBLAS: Debian's LibTorch is ~25x slower on reference BLAS
target=attnlab
if [ "${1:-}" = "--tests" ]; then
  packages+=(xvfb xauth libgl1-mesa-dri python3 python3-torch xdotool poppler-utils libxml2-utils
    python3-venv python3-pip  # pip install ./python in a venv (tests/python/test_install.py)
    clang-14 libclang-rt-14-dev  # libFuzzer targets (fuzz/, scripts/fuzz.sh)
    slurm-wlm munge)  # a one-node Slurm for sweep --slurm (tests/e2e/slurm_test.sh)
  target=all
fi

missing=()
if [ -n "${ATTN_DEPS_PREFIX:-}" ]; then
  # A machine without Debian's packages (the GPU machine's image) brings them in a prefix.
  echo "attnlab setup: packages not checked: ATTN_DEPS_PREFIX=$ATTN_DEPS_PREFIX provides them"
elif ! command -v dpkg-query >/dev/null; then
  # Not Debian (the GPU machine's image has no apt): CMake says what is missing.
  echo "attnlab setup: no dpkg here, so packages are not checked${ATTN_DEPS_PREFIX:+ (using $ATTN_DEPS_PREFIX)}"
else
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
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

flags=()
if [ "$variant" = cuda ]; then
  prefix=$torch_detail
  if [ -n "${ATTN_DEPS_PREFIX:-}" ]; then
    prefix="$prefix;$ATTN_DEPS_PREFIX"
    export LIBRARY_PATH="$ATTN_DEPS_PREFIX/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$ATTN_DEPS_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  nvcc=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
  flags+=(-DATTN_WITH_CUDA=ON "-DCMAKE_PREFIX_PATH=$prefix" "-DTorch_DIR=$torch_detail/Torch"
    "-DCMAKE_CUDA_COMPILER=$nvcc")
  if ! pkg-config --exists imgui glfw3 epoxy 2>/dev/null; then
    echo "attnlab setup: no window in this build (imgui, glfw3 or epoxy missing): the CLI only"
    flags+=(-DATTN_BUILD_GUI=OFF)
  else
    flags+=(-DATTN_BUILD_GUI=ON)
  fi
else
  # Named explicitly so that a build/ configured for CUDA earlier switches back.
  torch_config=$(dpkg -L libtorch-dev 2>/dev/null | grep -m1 '/Torch/TorchConfig.cmake$' || true)
  torch_dir=${torch_config%/TorchConfig.cmake}
  flags+=(-DATTN_WITH_CUDA=OFF -DATTN_BUILD_GUI=ON ${torch_dir:+"-DTorch_DIR=$torch_dir"})
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=ON "${flags[@]}" >/dev/null
cmake --build build --target "$target" -j "$jobs"
