#!/usr/bin/env bash
# On the GPU machine: the CUDA build, the kernel tests, bench_gpu, and two short training runs on
# the GPU through the real CLI (ky and neural attention, fused kernels in the training loop).
# usage: bench/run_gpu.sh OUT_DIR   (ATTN_DEPS_PREFIX as for scripts/cuda_build.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/run_gpu.sh OUT_DIR}
mkdir -p "$out"
[ -n "${ATTN_DEPS_PREFIX:-}" ] && export LD_LIBRARY_PATH="$ATTN_DEPS_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
if ! scripts/cuda_build.sh build-cuda --target test_core bench_gpu attnlab >"$out/build.log" 2>&1; then
  grep -E "error" "$out/build.log" | head -30
  exit 1
fi
echo "== kernel tests"
./build-cuda/tests/test_core -tc='cuda*' >"$out/test_cuda.log" 2>&1
tail -3 "$out/test_cuda.log"
grep -B3 -A12 "ERROR" "$out/test_cuda.log" | head -60
if command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer memcheck on the kernel tests"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 ./build-cuda/tests/test_core \
    -tc='cuda*' >"$out/memcheck.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|Invalid|Status" "$out/memcheck.log" | head -5
fi
echo "== mechanism suites on this machine (CPU and GPU builds must agree)"
./build-cuda/tests/test_core -tc='*ky*,*neural*,*kernel*,*Gaussian*,*gaussian*' 2>&1 | tail -2
echo "== training on the GPU through the CLI"
tmp=$(mktemp -d)
sed 's/"name": "copy_gap_mixed"/"name": "gpu_ky_mixed"/' assets/configs/copy_gap_mixed.json >"$tmp/ky.json"
python3 - "$tmp/neural.json" <<'PY'
import json, sys
json.dump({"name": "gpu_neural", "seed": 1, "task": {"name": "copy", "length": 8, "vocab": 10},
           "model": {"d_model": 64, "heads": 4, "layers": 2, "attention": "neural",
                     "attention_options": {"neural": {"down": "none", "hidden": 32,
                                                       "placement": "all-layers"}}},
           "train": {"steps": 400, "batch_size": 64, "lr": 3e-3, "warmup": 50,
                     "eval_every": 100}}, open(sys.argv[1], "w"))
PY
for c in ky neural; do
  ./build-cuda/app/attnlab train --config "$tmp/$c.json" --out "$tmp/run-$c" -q >"$out/train_$c.log" 2>&1
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(sys.argv[2], {k: s.get(k) for k in ('device','eval_accuracy','eval_loss','steps_per_second','steps')})" "$tmp/run-$c/summary.json" "$c" || tail -5 "$out/train_$c.log"
done
echo "== bench_gpu"
./build-cuda/bench/bench_gpu --json "$out/bench_gpu.json" 2>&1 | tee "$out/bench_gpu.txt"
