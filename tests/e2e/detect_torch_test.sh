#!/usr/bin/env bash
# scripts/detect_torch.sh, the two commands' choice between the CUDA and the CPU build, on
# machines made of stubs: a fake nvidia-smi, nvcc and python3 and fake LibTorch directories in a
# PATH that holds nothing else, so the answer does not depend on this machine's own GPU or CUDA.
# usage: detect_torch_test.sh <source dir>
set -u
src=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; w=$E2E_TMP
detect=$src/scripts/detect_torch.sh

# The tools the script uses, and nothing else (no real nvidia-smi, nvcc or python3).
mkdir -p "$w/sys" "$w/stub" "$w/none"
for t in bash ls grep sed head tail cat tr; do ln -s "$(command -v $t)" "$w/sys/$t"; done
cat >"$w/stub/nvidia-smi" <<'EOF'
#!/bin/sh
[ -n "$STUB_GPUS" ] && echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"
exit 0
EOF
printf '#!/bin/sh\nexit 0\n' >"$w/stub/nvcc"
# python3 -c '...': prints what the script's one-liner prints for the torch named by STUB_TORCH.
cat >"$w/stub/python3" <<'EOF'
#!/bin/sh
case "$STUB_TORCH" in
  cuda) printf '13.0\n%s\n2.11.0\n' "$STUB_TORCH_PREFIX" ;;
  cpu)  printf '\n%s\n2.11.0+cpu\n' "$STUB_TORCH_PREFIX" ;;
  *)    echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1 ;;
esac
EOF
chmod +x "$w"/stub/*
# Fake LibTorch trees: the CUDA one has libc10_cuda.so, the CPU one only libc10.so.
for kind in cuda cpu; do
  mkdir -p "$w/$kind/share/cmake/Torch" "$w/$kind/lib"
  touch "$w/$kind/share/cmake/Torch/TorchConfig.cmake" "$w/$kind/lib/libc10.so"
done
touch "$w/cuda/lib/libc10_cuda.so"
mkdir -p "$w/proc_gpu/gpus/0000:01:00.0" "$w/proc_none"

# run VAR=VALUE...: detect_torch.sh with only these variables set besides PATH; output in $out.
run() {
  out=$(env -i PATH="$w/stub:$w/sys" CUDA_HOME="$w/none" ATTN_NVIDIA_PROC="$w/proc_none" \
    STUB_GPUS=1 "$@" "$w/sys/bash" "$detect" 2>&1)
}
# expect WHAT PATTERN: the output matches the extended regular expression PATTERN.
expect() {
  if [[ $out =~ $2 ]]; then ok "$1"; else bad "$1: got '$out'"; fi
}
tab=$'\t'

run ATTN_LIBTORCH="$w/cuda"
expect "ATTN_LIBTORCH=<CUDA libtorch>, a GPU and nvcc: the CUDA build" "^cuda${tab}$w/cuda/share/cmake${tab}ATTN_LIBTORCH=$w/cuda, GPU 0: NVIDIA H100"
run ATTN_LIBTORCH="$w/cuda/share/cmake/Torch"
expect "ATTN_LIBTORCH given as its cmake/Torch folder: the same prefix" "^cuda${tab}$w/cuda/share/cmake${tab}"
run Torch_DIR="$w/cuda/share/cmake/Torch"
expect "Torch_DIR is read like ATTN_LIBTORCH" "^cuda${tab}$w/cuda/share/cmake${tab}Torch_DIR="
run ATTN_LIBTORCH="$w/cpu" STUB_TORCH=cuda STUB_TORCH_PREFIX="$w/cuda/share/cmake"
expect "a CPU-only ATTN_LIBTORCH: the CPU build, saying so (python's torch is not tried over it)" "^cpu${tab}ATTN_LIBTORCH=$w/cpu is a CPU-only LibTorch"
run ATTN_LIBTORCH="$w/missing"
expect "ATTN_LIBTORCH naming no LibTorch: the CPU build, naming the variable" "^cpu${tab}ATTN_LIBTORCH=$w/missing holds no LibTorch"

run STUB_TORCH=cuda STUB_TORCH_PREFIX=/site/torch/share/cmake
expect "python3's CUDA torch: its cmake prefix" "^cuda${tab}/site/torch/share/cmake${tab}python3 torch 2.11.0 \(CUDA 13.0\)"
run STUB_TORCH=cpu STUB_TORCH_PREFIX=/site/torch/share/cmake
expect "python3's CPU-only torch: the CPU build" "^cpu${tab}python3's torch 2.11.0\+cpu is CPU-only"
run STUB_TORCH=none
expect "python3 without torch: the CPU build" "^cpu${tab}no CUDA LibTorch: python3 has no torch"

run ATTN_LIBTORCH="$w/cuda" STUB_GPUS=
expect "nvidia-smi lists no GPU: the CPU build, saying the driver" "^cpu${tab}found ATTN_LIBTORCH=.*, but nvidia-smi lists no GPU"
rm "$w/stub/nvidia-smi"
run ATTN_LIBTORCH="$w/cuda"
expect "no nvidia-smi and no driver entries: the CPU build" "^cpu${tab}found .*, but no NVIDIA driver \($w/proc_none has no GPU\)"
run ATTN_LIBTORCH="$w/cuda" ATTN_NVIDIA_PROC="$w/proc_gpu"
expect "no nvidia-smi but the driver's GPU entries: the CUDA build" "^cuda${tab}$w/cuda/share/cmake${tab}.*a GPU under $w/proc_gpu"
rm "$w/stub/nvcc"
run ATTN_LIBTORCH="$w/cuda" ATTN_NVIDIA_PROC="$w/proc_gpu"
expect "no nvcc: the CPU build, saying where it looked" "^cpu${tab}found .*, but no nvcc to compile the kernels \(PATH, $w/none/bin\)"
mkdir -p "$w/cudahome/bin" && printf '#!/bin/sh\n' >"$w/cudahome/bin/nvcc" && chmod +x "$w/cudahome/bin/nvcc"
run ATTN_LIBTORCH="$w/cuda" ATTN_NVIDIA_PROC="$w/proc_gpu" CUDA_HOME="$w/cudahome"
expect "nvcc under CUDA_HOME/bin, off the PATH: the CUDA build" "^cuda${tab}.*, $w/cudahome/bin/nvcc$"
run ATTN_LIBTORCH="$w/cuda" ATTN_NVIDIA_PROC="$w/proc_gpu" CUDA_HOME="$w/cudahome" ATTN_FORCE_CPU=1
expect "ATTN_FORCE_CPU=1 wins over a usable GPU" "^cpu${tab}ATTN_FORCE_CPU is set"

# This machine, for the log: whichever way it goes, one line of one of the two forms.
out=$(bash "$detect" 2>&1)
expect "this machine: one well-formed line ($out)" "^(cuda${tab}[^${tab}]+${tab}.+|cpu${tab}.+)$"
finish
