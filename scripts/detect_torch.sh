#!/usr/bin/env bash
# Chooses the LibTorch the two commands build against (scripts/setup.sh calls it): the CUDA
# variant when this machine has all three of an NVIDIA driver with a GPU, a CUDA LibTorch and
# nvcc (the fused kernels are compiled with it), and Debian's CPU LibTorch otherwise.
# Prints one line, tab-separated:
#   cuda<TAB><cmake prefix of the CUDA LibTorch><TAB><what was found>
#   cpu<TAB><why not CUDA, in words>
# Where the CUDA LibTorch comes from, first found wins:
#   $ATTN_LIBTORCH   a LibTorch directory (holding share/cmake/Torch) or its cmake/Torch folder
#   $Torch_DIR       the same, as CMake's variable name
#   python3's torch  when `import torch` has CUDA (torch.version.cuda), its cmake_prefix_path
# ATTN_FORCE_CPU=1 skips the search. ATTN_NVIDIA_PROC (default /proc/driver/nvidia) is where the
# driver is looked for when nvidia-smi is not installed; the tests point it elsewhere.
set -uo pipefail

cpu() { printf 'cpu\t%s\n' "$1"; exit 0; }

[ -n "${ATTN_FORCE_CPU:-}" ] && [ "${ATTN_FORCE_CPU}" != 0 ] && cpu "ATTN_FORCE_CPU is set"

# A LibTorch given as a directory: its cmake prefix (the folder holding Torch/TorchConfig.cmake)
# when it is a CUDA build, else nothing. libc10_cuda.so is in every CUDA LibTorch and in no CPU
# one.
cuda_prefix_of() {
  local dir=$1 prefix=""
  if [ -f "$dir/TorchConfig.cmake" ]; then
    prefix=$(cd "$dir/.." && pwd)                      # <libtorch>/share/cmake/Torch
  elif [ -f "$dir/share/cmake/Torch/TorchConfig.cmake" ]; then
    prefix=$(cd "$dir/share/cmake" && pwd)             # <libtorch>
  elif [ -f "$dir/Torch/TorchConfig.cmake" ]; then
    prefix=$(cd "$dir" && pwd)                         # <libtorch>/share/cmake
  else
    return 2
  fi
  local root
  root=$(cd "$prefix/../.." && pwd)
  ls "$root"/lib/libc10_cuda.so* >/dev/null 2>&1 || return 1
  printf '%s' "$prefix"
}

torch_prefix="" torch_from=""
for var in ATTN_LIBTORCH Torch_DIR; do
  dir=${!var:-}
  [ -z "$dir" ] && continue
  prefix=$(cuda_prefix_of "$dir"); rc=$?
  [ $rc = 2 ] && cpu "$var=$dir holds no LibTorch (no TorchConfig.cmake under it)"
  [ $rc = 1 ] && cpu "$var=$dir is a CPU-only LibTorch (no libc10_cuda.so)"
  torch_prefix=$prefix torch_from="$var=$dir"
  break
done
if [ -z "$torch_prefix" ]; then
  command -v python3 >/dev/null 2>&1 ||
    cpu "no CUDA LibTorch: no python3 with torch, ATTN_LIBTORCH and Torch_DIR unset"
  # torch.version.cuda is None in CPU wheels; importing torch does not need a GPU.
  # One value per line: the CUDA version is empty for CPU wheels (a field split would drop it).
  found=$(python3 -c 'import torch
print(torch.version.cuda or "", torch.utils.cmake_prefix_path, torch.__version__, sep="\n")' \
    2>/dev/null | tail -3)
  [ -z "$found" ] && cpu "no CUDA LibTorch: python3 has no torch, ATTN_LIBTORCH and Torch_DIR unset"
  { read -r cuda_version; read -r prefix; read -r version; } <<<"$found"
  [ -z "$cuda_version" ] && cpu "python3's torch $version is CPU-only, ATTN_LIBTORCH and Torch_DIR unset"
  torch_prefix=$prefix torch_from="python3 torch $version (CUDA $cuda_version)"
fi

# The driver: a GPU that nvidia-smi lists, or the kernel module's GPU entries.
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ "${gpus:-0}" -gt 0 ] || cpu "found $torch_from, but nvidia-smi lists no GPU (driver not loaded?)"
  gpu=$(nvidia-smi -L 2>/dev/null | head -1 | sed 's/ (UUID.*//')
else
  proc=${ATTN_NVIDIA_PROC:-/proc/driver/nvidia}
  ls "$proc"/gpus/* >/dev/null 2>&1 || cpu "found $torch_from, but no NVIDIA driver ($proc has no GPU)"
  gpu="a GPU under $proc"
fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
nvcc=$(command -v nvcc 2>/dev/null || true)
[ -z "$nvcc" ] && [ -x "$cuda_home/bin/nvcc" ] && nvcc=$cuda_home/bin/nvcc
[ -z "$nvcc" ] && cpu "found $torch_from and $gpu, but no nvcc to compile the kernels (PATH, $cuda_home/bin)"

printf 'cuda\t%s\t%s, %s, %s\n' "$torch_prefix" "$torch_from" "$gpu" "$nvcc"
