#!/usr/bin/env bash
# Copies the Debian packages the CUDA build needs but the GPU machine lacks (header-only
# nlohmann-json, CLI11, doctest, and muparser) into DIR as an install prefix, to carry there.
# usage: scripts/device_deps.sh DIR   (then ATTN_DEPS_PREFIX=DIR scripts/cuda_build.sh there)
set -euo pipefail
dir=${1:?usage: scripts/device_deps.sh DIR}
mkdir -p "$dir/include" "$dir/lib" "$dir/share/cmake" "$dir/lib/cmake"
cp -r /usr/include/nlohmann /usr/include/CLI /usr/include/doctest "$dir/include/"
cp /usr/include/muParser*.h "$dir/include/"
cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 "$dir/share/cmake/"
cp -r /usr/lib/cmake/doctest "$dir/lib/cmake/"
cp -L /usr/lib/x86_64-linux-gnu/libmuparser.so.2 "$dir/lib/"
ln -sf libmuparser.so.2 "$dir/lib/libmuparser.so"
