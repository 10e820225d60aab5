#!/usr/bin/env bash
# One GPU lease, in one call (issue 50): the cold build as a user runs it (scripts/setup.sh picks
# the CUDA variant by itself; with the carried window libraries it builds the window too), the GPU
# test cases, the speed table (attnlab's graphed step, dropout included, against PyTorch eager on
# the same GPU and models, and torch.compile where time allows), pack scaling (1, 4, 16, 64 runs
# of fortunes in one process), the window's frame times rendered by the GPU, and a slice of the
# suite's reference tier. Each stage writes into OUT_DIR as it goes and is skipped when the
# lease's budget (BUDGET_S, default 560 s from the start) would not hold it, so a stage cut off
# still leaves the earlier ones. The last lines printed are the summary tables.
# usage: bench/gpu_session.sh OUT_DIR
# Needs .devcarry/ (carried to the machine): deps/ from scripts/device_deps.sh, gl.tar.xz from
# scripts/device_gl.sh (gl/gl.tar.xz: the window; optional), and copies of /usr/share/games/fortunes and
# /usr/share/datasets/fashion-mnist, which it puts in place.
# DRY=1 runs every stage on this machine's CPU build with tiny sizes (no build, no GPU).
# Follow-up calls on the warm machine: name .devcarry in every call's carry (a call that does not
# removes it there, and with it the libraries the build links), and export LD_LIBRARY_PATH as
# this script does before running build/app/attnlab by hand.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/gpu_session.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)
budget=${BUDGET_S:-560}
el() { echo "$(($(date +%s) - start))"; }
left() { echo "$((budget - $(el)))"; }
stage() { echo "== $1 ($(el) s)"; }
# stage_fits NEED: whether NEED seconds are left in the budget; says so when not.
fits() {
  [ "$(left)" -ge "$1" ] && return 0
  echo "   skipped: $(left) s left, needs $1"
  return 1
}
dry=${DRY:-0}
bin=build/app/attnlab

if [ "$dry" = 0 ]; then
  export ATTN_DEPS_PREFIX=$PWD/.devcarry/deps
  export LD_LIBRARY_PATH="$ATTN_DEPS_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$ATTN_DEPS_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  sed -i "s|^prefix=.*|prefix=$ATTN_DEPS_PREFIX|" "$ATTN_DEPS_PREFIX"/lib/pkgconfig/*.pc
  # The prefix's copies of libraries this machine already has would shadow its own: drop them,
  # and point the prefix's link-time names (libz.so, ...) at the machine's copy instead.
  for f in "$ATTN_DEPS_PREFIX"/lib/lib*.so.*; do
    name=$(basename "$f")
    case $name in libcairo.*|libfreetype.*|libpng16.*|libfontconfig.*|libmuparser.*) continue ;; esac
    sys=$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')
    [ -n "$sys" ] || continue
    rm -f "$f"
    for link in "$ATTN_DEPS_PREFIX"/lib/*.so; do
      [ "$(readlink "$link")" = "$name" ] && ln -sf "$sys" "$link"
    done
  done
  mkdir -p /usr/share/games /usr/share/datasets
  [ -e /usr/share/games/fortunes ] || cp -r .devcarry/fortunes /usr/share/games/fortunes
  [ -e /usr/share/datasets/fashion-mnist ] || cp -r .devcarry/fashion-mnist /usr/share/datasets/fashion-mnist
  # The window's build libraries, X server and glvnd (scripts/device_gl.sh), when carried: the
  # exports make setup.sh find ImGui, GLFW and epoxy, and so build the window.
  if [ -f .devcarry/gl/gl.tar.xz ]; then
    gl_exports=$(bench/gpu_window.sh --unpack 2>"$out/gl_unpack.log") && eval "$gl_exports" ||
      echo "window libraries: not unpacked ($(tail -1 "$out/gl_unpack.log"))"
  fi
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
  python3 -c "import torch; print('python torch', torch.__version__)"
else
  echo "dry run on $(nproc) CPU cores" | tee "$out/device.txt"
fi
echo "cores: $(nproc)"

# ---- 1. the cold build ----------------------------------------------------------------------
if [ "$dry" = 0 ]; then
  stage "command 1's build: scripts/setup.sh"
  t0=$(date +%s)
  timeout "${BUILD_S:-330}" scripts/setup.sh >"$out/setup.log" 2>&1
  rc=$?
  grep "attnlab setup" "$out/setup.log"
  if [ $rc != 0 ] && grep -q "graphed_step" "$out/setup.log"; then
    grep -E "error" "$out/setup.log" | head -8
    echo "== graphed_step.cpp failed: again without graph dropout and the fused AdamW ($(el) s)"
    sed -i '1i #define ATTN_NO_FUSED_ADAMW 1\n#define ATTN_NO_GRAPH_DROPOUT 1' core/training/session/graphed_step.cpp
    timeout 150 cmake --build build --target attnlab -j "$(nproc)" >>"$out/setup.log" 2>&1
    rc=$?
  fi
  echo "build exit $rc: $(($(date +%s) - t0)) s cold (attnlab$(grep -q 'BUILD_GUI=ON\|window' "$out/setup.log" && echo ', window'))" | tee "$out/build_time.txt"
  [ $rc != 0 ] && { grep -E "error" "$out/setup.log" | head -30; exit 1; }
  stage "GPU test cases (test_gpu_cases)"
  timeout 120 cmake --build build --target test_gpu_cases -j "$(nproc)" >"$out/build_tests.log" 2>&1 ||
    { echo "test build failed or cut off"; grep -E "error" "$out/build_tests.log" | head -10; }
  if [ -x build/tests/test_gpu_cases ]; then
    timeout 90 build/tests/test_gpu_cases >"$out/test_gpu.log" 2>&1
    echo "gpu cases exit $?"
    grep -E "MESSAGE|largest|against|ERROR|test cases|assertions" "$out/test_gpu.log" | head -24
  fi
fi

# ---- 2. the speed table ---------------------------------------------------------------------
W=${WINDOW:-100}
[ "$dry" = 1 ] && W=5
configs="copy fortunes ky_fortunes neural_fortunes conn_recall fmnist_dot"
cfgdir=$out/configs
mkdir -p "$cfgdir"
shrink() {  # config file, out file, steps per window
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); w = int(sys.argv[3])
t, task = c.setdefault("train", {}), c.setdefault("task", {})
t["warmup"] = int(t.get("warmup", 100) * 4 * w / t.get("steps", 2000))
t["steps"], t["eval_every"], t["eval_batches"] = 4 * w, w, 1
t["record_every"] = 0
if task.get("name") == "fashion-mnist":
    task["test_examples"] = t.get("batch_size", 32)
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
stage "training steps/s: attnlab (graphed, dropout in the graph)"
for c in $configs; do shrink "assets/configs/$c.json" "$cfgdir/$c.json" "$W"; done
if fits 60; then
  for c in $configs; do
    timeout 60 $bin train --config "$cfgdir/$c.json" --out "$out/runs/$c-graph" --force -q \
      >"$out/runs-$c-graph.log" 2>&1 || { echo "$c failed:"; tail -3 "$out/runs-$c-graph.log"; }
  done
fi
stage "training steps/s: PyTorch eager"
args=()
for c in $configs; do args+=(--config "$cfgdir/$c.json"); done
dev=cuda
[ "$dry" = 1 ] && dev=cpu
if fits 60; then
  timeout 150 python3 bench/pytorch_models.py "${args[@]}" --device $dev --warmup "$W" \
    --steps $((3 * W)) --windows 3 >"$out/pytorch.jsonl" 2>"$out/pytorch.log" ||
    { echo "PyTorch failed:"; tail -3 "$out/pytorch.log"; }
fi

# ---- 3. pack scaling ------------------------------------------------------------------------
stage "pack scaling: fortunes, N runs in one process"
packs=${PACKS:-"1 16 4 64"}
[ "$dry" = 1 ] && packs="1 2"
shrink assets/configs/fortunes.json "$cfgdir/pack_fortunes.json" "$((W * 2))"
for n in $packs; do
  fits 45 || break
  timeout 150 $bin sweep --config "$cfgdir/pack_fortunes.json" --seeds "$n" --pack "$n" \
    --out "$out/pack$n" -q >"$out/pack$n.log" 2>&1 || { echo "pack $n failed:"; tail -3 "$out/pack$n.log"; }
done

# ---- 4. the window, rendered by the GPU -------------------------------------------------------
if [ "$dry" = 0 ] && [ -f .devcarry/gl/gl.tar.xz ]; then
  stage "window frame times (GLX on the GPU)"
  fits 60 && timeout -k 5 100 bench/gpu_window.sh "$out/window" 2>&1 | tail -14
fi

# ---- 5. the uncaptured step and torch's step, for fortunes -----------------------------------
stage "training steps/s: fortunes uncaptured (ATTN_CUDA_GRAPH=eager) and torch's step (=0)"
if fits 60; then
  for mode in eager 0; do
    ATTN_CUDA_GRAPH=$mode timeout 60 $bin train --config "$cfgdir/fortunes.json" \
      --out "$out/runs/fortunes-mode$mode" --force -q >"$out/runs-fortunes-mode$mode.log" 2>&1 ||
      { echo "fortunes ATTN_CUDA_GRAPH=$mode failed:"; tail -3 "$out/runs-fortunes-mode$mode.log"; }
  done
fi

# ---- 6. torch.compile, for the configs time allows ------------------------------------------
stage "training steps/s: torch.compile (${COMPILE_CONFIGS:-copy fortunes})"
for c in ${COMPILE_CONFIGS:-copy fortunes}; do
  fits 70 || break
  timeout 90 python3 bench/pytorch_models.py --config "$cfgdir/$c.json" --device $dev --compile \
    --warmup "$W" --steps $((3 * W)) --windows 3 >>"$out/pytorch.jsonl" 2>>"$out/pytorch_compile.log" ||
    { echo "torch.compile $c failed:"; tail -2 "$out/pytorch_compile.log"; }
done

# ---- 7. a slice of the reference tier -----------------------------------------------------------
if [ "$dry" = 0 ]; then
  stage "reference tier slice: mqar-64, every mechanism, ${REF_STEPS:-1250} of 12,500 steps"
  if fits 70; then
    t0=$(date +%s)
    timeout $(($(left) - 25)) $bin suite --tier reference --tasks mqar-64 --pack 0 \
      --set train.steps="${REF_STEPS:-1250}" --set train.eval_every="${REF_STEPS:-1250}" \
      --out "$out/reference" >"$out/reference.log" 2>&1
    echo "reference slice exit $?: $(($(date +%s) - t0)) s"
    tail -4 "$out/reference.log"
  fi
fi

# ---- summary --------------------------------------------------------------------------------
stage "summary"
python3 bench/gpu_summary.py "$out" $configs | tee "$out/speed.md"
echo "done ($(el) s)"
