#!/usr/bin/env bash
# Memory growth per training step: runs `attnlab train` for a long run, samples its resident
# memory (RSS) against the step it has reached, and prints the KiB per step over the second half
# of the run (a least-squares slope; warm-up, allocator pools and caches settle in the first).
# A leak per step shows as a constant slope (LibTorch 1.13's leaked generator per step was
# 2.9 KiB/step); a bounded history or cache as a slope near 0.
# usage: bench/memory_growth.sh [options]
#   --bin PATH            attnlab executable (default build/app/attnlab); repeat it to compare
#                         builds (e.g. before and after a fix) with the same command
#   --config FILE         experiment (default: a tiny dot-attention copy task, ~1000 steps/s on
#                         one core, so that the per-step cost dominates)
#   --steps N             training steps (default 20000)
#   --threads N           torch threads (default 1)
#   --interval SECONDS    RSS sample interval (default 0.2)
#   --max-kib-per-step X  exit 1 if any binary grows more than this (default: only report)
# Output: "rss <label> step=<n> <MiB>" lines at every tenth of the run, then one
# "memory_growth <label>: ..." line per binary with its KiB per step.
set -euo pipefail
cd "$(dirname "$0")/.."
bins=() config="" steps=20000 threads=1 interval=0.2 max_kib=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bins+=("$2"); shift 2 ;;
    --config) config=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --max-kib-per-step) max_kib=$2; shift 2 ;;
    *) echo "memory_growth.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ ${#bins[@]} -eq 0 ] && bins=(build/app/attnlab)
work=$(mktemp -d)
child=""
cleanup() {
  if [ -n "$child" ]; then kill "$child" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$config" ]; then
  config=$work/tiny.json
  cat >"$config" <<'JSON'
{"name": "memory_growth", "seed": 1, "task": {"name": "copy", "length": 8, "vocab": 10},
 "model": {"d_model": 16, "heads": 2, "layers": 1, "attention": "dot"},
 "train": {"steps": 20000, "batch_size": 8, "lr": 3e-3, "warmup": 50, "eval_every": 50}}
JSON
fi

# The step the run has reached: the last complete row of metrics.csv (one per eval).
last_step() {
  [ -f "$1" ] || { echo 0; return; }
  tail -n 2 "$1" | awk -F, '$1 ~ /^[0-9]+$/ && NF == 6 { s = $1 } END { print s + 0 }'
}

failed=0
for i in "${!bins[@]}"; do
  bin=$(realpath "${bins[$i]}")
  label=${bins[$i]}
  out=$work/run-$i
  samples=$work/rss-$i
  : >"$samples"
  start=$(date +%s.%N)
  "$bin" train --config "$config" --steps "$steps" --threads "$threads" --out "$out" -q \
    >"$work/log-$i" 2>&1 &
  child=$!
  next_report=1
  while kill -0 "$child" 2>/dev/null; do
    kib=$(awk '/^VmRSS:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
    step=$(last_step "$out/metrics.csv")
    # Rows at the final step are followed by the checkpoint save: not training any more.
    if [ -n "$kib" ] && [ "$step" -lt "$steps" ]; then
      echo "$step $kib" >>"$samples"
      if [ "$step" -ge "$next_report" ]; then
        awk -v l="$label" -v s="$step" -v k="$kib" 'BEGIN { printf "rss %s step=%d %.1f MiB\n", l, s, k / 1024 }'
        next_report=$((step + steps / 10))
      fi
    fi
    sleep "$interval"
  done
  rc=0
  wait "$child" || rc=$?
  child=""
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  if [ "$rc" -ne 0 ]; then
    echo "memory_growth $label: attnlab train exited $rc:" >&2
    tail -5 "$work/log-$i" >&2
    exit 1
  fi
  python3 - "$samples" "$steps" "$label" "$seconds" "${max_kib:-}" <<'PY' || failed=1
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
steps, label, seconds = int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
limit = float(sys.argv[5]) if sys.argv[5] else None
half = [(s, k) for s, k in rows if s >= steps // 2]
if len(half) < 5 or half[-1][0] - half[0][0] < steps // 4:
    print(f"memory_growth {label}: too few samples in the second half ({len(half)}); "
          f"lower --interval or raise --steps")
    sys.exit(1)
n = len(half)
ms = sum(s for s, _ in half) / n
mk = sum(k for _, k in half) / n
slope = sum((s - ms) * (k - mk) for s, k in half) / sum((s - ms) ** 2 for s, _ in half)
print(f"memory_growth {label}: {steps} steps in {seconds:.0f} s; RSS {half[0][1] / 1024:.1f} MiB "
      f"at step {half[0][0]} -> {half[-1][1] / 1024:.1f} MiB at step {half[-1][0]}; "
      f"{slope:.3f} KiB per step over the second half ({n} samples; "
      f"{slope * 1e6 / 1024:.0f} MiB per 1e6 steps at that rate)")
if limit is not None and slope > limit:
    print(f"memory_growth {label}: FAIL: {slope:.3f} KiB per step is over {limit}")
    sys.exit(1)
PY
done
exit $failed
