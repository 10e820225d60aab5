#!/usr/bin/env bash
# One GPU lease, in one call: command 1's build as a user runs it (scripts/setup.sh, which picks
# the CUDA variant by itself), whole-training-step speed of the shipped small configs -- attnlab
# with its graphed step, attnlab eager (ATTN_CUDA_GRAPH=0) and PyTorch eager
# (bench/pytorch_models.py) on the same GPU -- and then the GPU test suite. Each stage writes
# into OUT_DIR as it goes, so a stage cut off by the lease still leaves the earlier ones.
# usage: bench/gpu_session.sh OUT_DIR
# Needs .devcarry/ (carried to the machine): deps/ from scripts/device_deps.sh, and copies of
# /usr/share/games/fortunes and /usr/share/datasets/fashion-mnist, which it puts in place.
# WINDOW (default 100) steps per timed window, 3 timed windows after one warm-up window.
# SPEED=0 skips the speed stage; REPRO_QUICK="neural kernel ..." runs those papers'
# `reproduce --quick` after the build (the reproduction pipeline on this LibTorch).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/gpu_session.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)
el() { echo "$(($(date +%s) - start)) s"; }
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
echo "prefix libraries kept: $(cd "$ATTN_DEPS_PREFIX/lib" && ls lib*.so.* | tr '\n' ' ')"
mkdir -p /usr/share/games /usr/share/datasets
[ -e /usr/share/games/fortunes ] || cp -r .devcarry/fortunes /usr/share/games/fortunes
[ -e /usr/share/datasets/fashion-mnist ] || cp -r .devcarry/fashion-mnist /usr/share/datasets/fashion-mnist
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "cores: $(nproc); python3: $(command -v python3)"

echo "== command 1's build: scripts/setup.sh ($(el))"
timeout "${BUILD_S:-280}" scripts/setup.sh >"$out/setup.log" 2>&1
rc=$?
grep "attnlab setup" "$out/setup.log"
if [ $rc != 0 ] && grep -q "graphed_step" "$out/setup.log"; then
  grep -E "error" "$out/setup.log" | head -8
  echo "== graphed_step.cpp failed: again without the fused AdamW ($(el))"
  sed -i '1i #define ATTN_NO_FUSED_ADAMW 1' core/training/session/graphed_step.cpp
  timeout 150 cmake --build build --target attnlab -j "$(nproc)" >>"$out/setup.log" 2>&1
  rc=$?
fi
echo "build exit $rc ($(el))"
[ $rc != 0 ] && { grep -E "error" "$out/setup.log" | head -30; exit 1; }

for paper in ${REPRO_QUICK:-}; do
  echo "== reproduce --paper $paper --quick ($(el))"
  timeout "${REPRO_S:-240}" build/app/attnlab reproduce --paper "$paper" --quick -j 4 --out "$out/repro-$paper" \
    >"$out/repro-$paper.log" 2>&1
  echo "reproduce $paper exit $?"
  grep -E "^\| .*\*\*(held|did not hold|not resolved)" "$out/repro-$paper/report.md" | cut -c1-160
done

if [ "${SPEED:-1}" = 1 ]; then
echo "== training steps/s ($(el))"
W=${WINDOW:-100}
cfgdir=$out/configs
mkdir -p "$cfgdir"
configs="copy fortunes ky_fortunes neural_fortunes conn_recall fmnist_dot"
for c in $configs; do
  python3 - "assets/configs/$c.json" "$cfgdir/$c.json" "$W" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); w = int(sys.argv[3])
t, task = c.setdefault("train", {}), c.setdefault("task", {})
t["warmup"] = int(t.get("warmup", 100) * 4 * w / t.get("steps", 2000))
t["steps"], t["eval_every"], t["eval_batches"] = 4 * w, w, 1
if task.get("name") == "fashion-mnist":
    task["test_examples"] = t.get("batch_size", 32)
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
  for mode in graph eager; do
    g=1; [ $mode = eager ] && g=0
    ATTN_CUDA_GRAPH=$g timeout 60 build/app/attnlab train --config "$cfgdir/$c.json" \
      --out "$out/runs/$c-$mode" --force -q >"$out/runs-$c-$mode.log" 2>&1 ||
      { echo "$c $mode failed:"; tail -3 "$out/runs-$c-$mode.log"; }
  done
done
args=()
for c in $configs; do args+=(--config "$cfgdir/$c.json"); done
timeout 150 python3 bench/pytorch_models.py "${args[@]}" --device cuda --warmup "$W" \
  --steps $((3 * W)) --windows 3 >"$out/pytorch.jsonl" 2>"$out/pytorch.log" ||
  { echo "PyTorch failed:"; tail -3 "$out/pytorch.log"; }
python3 - "$out" $configs <<'PY' | tee "$out/speed.md"
import csv, json, os, statistics, sys
out, configs = sys.argv[1], sys.argv[2:]
py = {}
for line in open(os.path.join(out, "pytorch.jsonl")) if os.path.exists(os.path.join(out, "pytorch.jsonl")) else []:
    if line.strip():
        r = json.loads(line); py[r["config"]] = r
def run(c, mode):
    d = os.path.join(out, "runs", f"{c}-{mode}")
    try:
        s = json.load(open(os.path.join(d, "summary.json")))
        rows = list(csv.DictReader(open(os.path.join(d, "metrics.csv"))))
        rates = [float(r["steps_per_s"]) for r in rows[1:]]
        return statistics.median(rates), s
    except Exception as e:
        return None, {"error": str(e)}
print(open(os.path.join(out, "device.txt")).read().strip())
print("| config | attnlab graphed steps/s | attnlab eager | PyTorch eager | graphed / PyTorch | eager / PyTorch | step path | eval loss graphed / eager |")
print("|---|---|---|---|---|---|---|---|")
for c in configs:
    name = json.load(open(os.path.join(out, "configs", c + ".json")))["name"]
    g, gs = run(c, "graph"); e, es = run(c, "eager")
    p = py.get(name, {}).get("steps_per_s")
    f = lambda x: "-" if x is None else f"{x:.1f}"
    r = lambda a, b: "-" if not a or not b else f"{a / b:.2f}x"
    print(f"| {c} | {f(g)} | {f(e)} | {f(p)} | {r(g, p)} | {r(e, p)} | {gs.get('step_path', gs.get('error', '?'))} |"
          f" {gs.get('eval_loss', '-')} / {es.get('eval_loss', '-')} |")
PY

fi

echo "== GPU tests ($(el))"
timeout 200 cmake --build build --target test_core -j "$(nproc)" >"$out/build_tests.log" 2>&1 ||
  { echo "test build failed or cut off"; grep -E "error" "$out/build_tests.log" | head -10; }
if [ -x build/tests/test_core ]; then
  timeout 60 build/tests/test_core --test-suite=gpu >"$out/test_gpu.log" 2>&1
  echo "gpu suite exit $?"; grep -E "MESSAGE|largest|ERROR|test cases|assertions" "$out/test_gpu.log" | head -20
  timeout 30 build/tests/test_core -tc='graphed*' 2>&1 | tail -3
fi
echo "done ($(el))"
