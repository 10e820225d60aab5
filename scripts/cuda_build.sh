#!/usr/bin/env bash
# The CUDA build: core, CLI, tests and benchmarks (no window) against the CUDA LibTorch that
# ships inside Python's torch, kernels for Hopper (sm_90) plus portable PTX.
# usage: scripts/cuda_build.sh [BUILD_DIR]   (default build-cuda)
# ATTN_DEPS_PREFIX: an extra install prefix for the header-only packages and muparser where the
# machine has no Debian packages (the GPU machine: see scripts/device_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}
torch_prefix=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)")
prefix="$torch_prefix"
if [ -n "${ATTN_DEPS_PREFIX:-}" ]; then
  prefix="$prefix;$ATTN_DEPS_PREFIX"
  export LIBRARY_PATH="$ATTN_DEPS_PREFIX/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$ATTN_DEPS_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DATTN_WITH_CUDA=ON \
  -DATTN_BUILD_GUI=OFF -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_COMPILER="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
cmake --build "$build" -j "$(nproc)" "${@:2}"
